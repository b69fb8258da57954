"""ddp-buckets.test's hardware figures: stdlib ddp on GPT-2 XL over 4 DGX A100 nodes (32
ranks), bf16 + Adam, at buckets of 1 to 48 layers and 32 or 256 micro-batches; prints each
property the test checks, and the trace's bucket starts."""
import json
import os
import subprocess
import sys
import tempfile

schedc, ddp, model = sys.argv[1:4]
BUCKETS = (1, 2, 4, 8, 16, 48)


def run(batches, bucket, trace=None):
    args = [schedc, "check", ddp, f"--model={model}", "--hardware=dgx-a100-80gb", "--precision=bf16",
            "--optimizer=adam", "-D", "layers=48", "-D", "ranks=32", "-D", f"batches={batches}", "-D",
            f"bucket={bucket}", "--format=json"]
    if trace:
        args.append(f"--trace={trace}")
    result = json.loads(subprocess.run(args, check=True, capture_output=True, text=True).stdout)
    assert result["correct"], result["verdict"]
    return result["hardware"]


figures = {(b, k): run(b, k) for b in (32, 256) for k in BUCKETS}
print("parameters", figures[(32, 1)]["parameters"])
rank0 = {key: h["per_rank"][0] for key, h in figures.items()}
print("compute equal across buckets:",
      all(rank0[(b, k)]["compute_busy"] == rank0[(b, 1)]["compute_busy"] for b in (32, 256) for k in BUCKETS))
busy = [rank0[(32, k)]["collectives_busy"] for k in BUCKETS]
print("collectives busy falls with the bucket:", all(a > b for a, b in zip(busy, busy[1:])))
exposed = {key: figures[key]["step_seconds"] - rank0[key]["compute_busy"] for key in figures}
print("one bucket: exposed = collectives busy:",
      all(abs(exposed[(b, 48)] - rank0[(b, 48)]["collectives_busy"]) < 1e-9 for b in (32, 256)))

# In the trace (bucket 4, rank 0): each bucket's all-reduces run back to back, the first
# starting no earlier than the end of the backward of the bucket's lowest layer.
with tempfile.TemporaryDirectory() as tmp:
    path = os.path.join(tmp, "trace.json")
    run(32, 4, path)
    trace = json.load(open(path))
    events = [e for e in (trace["traceEvents"] if isinstance(trace, dict) else trace)
              if e.get("ph") == "X" and e.get("pid") == 0]
    backward_end = {int(e["name"].split()[1]): e["ts"] + e["dur"] for e in events if e["name"].startswith("backward")}
    reduces = sorted((e for e in events if e["name"].startswith("allreduce")), key=lambda e: e["ts"])
    ok = len(reduces) == 48
    for first in range(0, 48, 4):
        bucket = reduces[first:first + 4]
        layers = sorted(int(e["name"].split()[1]) for e in bucket)
        ok &= layers == list(range(44 - first, 48 - first))
        ok &= bucket[0]["ts"] >= backward_end[layers[0]] - 1e-6
        ok &= all(abs(b["ts"] - (a["ts"] + a["dur"])) < 1e-6 for a, b in zip(bucket, bucket[1:]))
    print("buckets start after their lowest layer's backward, one call each:", ok)

for batches in (256, 32):
    fastest = min(BUCKETS, key=lambda k: figures[(batches, k)]["step_seconds"])
    print(f"{batches} micro-batches: fastest bucket {fastest}")
