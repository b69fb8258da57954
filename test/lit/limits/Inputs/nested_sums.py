"""nested_sums.py N — prints a schedule whose one statement nests N gradient sums inside each
other, `fake_grad(0, {0}) + (fake_grad(0, {0}) + (...))`, all-reduced: N + 2 levels of
operations on one rank's stack, with no block to check its room at."""
import sys

n = int(sys.argv[1])
e = "fake_grad(0, {0})"
for _ in range(n):
    e = f"(fake_grad(0, {{0}}) + {e})"
print("schedule s(layers = 1, batches = 1, ranks = 1) {")
print(f"  gw[0] = allreduce({e});")
print("  free gw[0];")
print("}")
