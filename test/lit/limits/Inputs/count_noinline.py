"""count_noinline.py FILE.ll — how many procedures the textual IR defines with `noinline`."""
import re
import sys

text = open(sys.argv[1]).read()
groups = dict(re.findall(r"^attributes (#\d+) = \{([^}]*)\}", text, re.M))
procs = re.findall(r"^define internal .*@proc\.\S+\(.*\) .*?(#\d+) \{$", text, re.M)
print("procedures kept out of line:", sum("noinline" in groups.get(g, "") for g in procs))
