"""call_chain.py N [D [if|for]] — prints a correct schedule whose work is done at the end of a
chain of N procedure calls (p0 calls p1 ... calls pN-1, which trains layer 0), each call inside
D nested `if`s, or one-iteration loops (0 by default: N x D levels of blocks in all)."""
import sys

n = int(sys.argv[1])
d = int(sys.argv[2]) if len(sys.argv) > 2 else 0
loops = len(sys.argv) > 3 and sys.argv[3] == "for"
opening = [f"for k{j} in 0..1 {{ " if loops else "if l >= 0 { " for j in range(d)]
for i in range(n - 1):
    print(f"proc p{i}(l) {{ " + "".join(opening) + f"p{i + 1}(l);" + " }" * d + " }")
print(f"proc p{n - 1}(l) {{\n"
      "  w[l], opt[l] = load(l);\n"
      "  act[0] = input({0});\n"
      "  act[1] = forward(l, act[0], w[l]);\n"
      "  g[1] = loss(act[1]);\n"
      "  gw[l], g[0] = backward(l, act[0], g[1], w[l]);\n"
      "  w[l], opt[l] = update(l, gw[l], w[l], opt[l]);\n"
      "  free act[0], act[1], g[1], g[0], gw[l];\n"
      "}")
print("schedule s(layers = 1, batches = 1, ranks = 1) { p0(0); }")
