#!/usr/bin/env python3
"""long_lines.py DIR — writes the schedules long-lines.test reads: line.sched (an error in
the middle of a 5 000-column line), name.sched (a 2 MB misspelt identifier) and
require.sched (a failed `require` whose message is 2 MB)."""
import os
import sys

d = sys.argv[1]
head = "schedule s(layers = 1, batches = 1, ranks = 1) {\n  act[0] = input({0}); w[0], opt[0] = load(0);\n"
lets = lambda p: " ".join(f"let {p}{i} = {i};" for i in range(300))
with open(os.path.join(d, "line.sched"), "w") as f:
    f.write(head + "  " + lets("a") + " act[1] = forward(0, act[0], wq[0]); " + lets("b") + "\n}\n")
with open(os.path.join(d, "name.sched"), "w") as f:
    f.write(head + "  act[1] = forward(0, act[0], " + "w" * 2_000_000 + "[0]);\n}\n")
with open(os.path.join(d, "require.sched"), "w") as f:
    f.write(head + '  require(layers == 2, "' + "é" * 1_000_000 + '");\n}\n')
