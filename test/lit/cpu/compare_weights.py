#!/usr/bin/env python3
"""compare_weights.py A_DIR B_DIR [TOLERANCE]

Compares two directories of final weights written by `--weights-out` (layer_<l>.npy,
H x H float32) and prints, per layer, the relative error max|a - b| / max|b|. Exits 0 if
every layer is within TOLERANCE (default 1e-5), 1 otherwise. Reads .npy without numpy."""
import array
import ast
import os
import sys

def load(path):
    with open(path, "rb") as f:
        if f.read(6) != b"\x93NUMPY":
            sys.exit(f"{path}: not a .npy file")
        major = f.read(2)[0]
        length = int.from_bytes(f.read(2 if major == 1 else 4), "little")
        header = ast.literal_eval(f.read(length).decode("latin1"))
        if header["descr"] != "<f4" or header["fortran_order"]:
            sys.exit(f"{path}: expected little-endian float32 in C order")
        values = array.array("f")
        values.frombytes(f.read())
        return header["shape"], values

a_dir, b_dir = sys.argv[1:3]
tolerance = float(sys.argv[3]) if len(sys.argv) > 3 else 1e-5
layers = sorted(n for n in os.listdir(b_dir) if n.endswith(".npy"))
if sorted(n for n in os.listdir(a_dir) if n.endswith(".npy")) != layers:
    sys.exit(f"the layers differ: {os.listdir(a_dir)} versus {layers}")
worst = 0.0
for name in layers:
    shape_a, a = load(os.path.join(a_dir, name))
    shape_b, b = load(os.path.join(b_dir, name))
    if shape_a != shape_b:
        sys.exit(f"{name}: shapes {shape_a} and {shape_b} differ")
    scale = max(abs(x) for x in b) or 1.0
    error = max(abs(x - y) for x, y in zip(a, b)) / scale
    worst = max(worst, error)
    print(f"{name}: relative error {error:.3g}")
ok = worst <= tolerance
print(f"{'within' if ok else 'OUTSIDE'} tolerance {tolerance:g}: worst {worst:.3g}")
sys.exit(0 if ok else 1)
