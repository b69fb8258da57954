#!/usr/bin/env python3
"""break_cells.py IN OUT N — writes the PyTorch CSV IN to OUT with N of its cells (every
(cells / N)-th, spread over the rows) made into actions that do not parse (`X` appended).
long-lines.test checks how the diagnostics of such long rows are shown."""
import sys

rows = [line.rstrip("\n").split(",") for line in open(sys.argv[1])]
cells = [(r, c) for r, row in enumerate(rows) for c in range(len(row)) if row[c]]
n = int(sys.argv[3])
for r, c in cells[:: max(1, len(cells) // n)][:n]:
    rows[r][c] += "X"
with open(sys.argv[2], "w") as out:
    out.writelines(",".join(row) + "\n" for row in rows)
