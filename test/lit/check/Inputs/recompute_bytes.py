"""recompute_bytes.py TRACE LAYERS SEGMENT BATCHES SEQUENCE HIDDEN — after the first pass of
stdlib recompute under a transformer model (one rank, bf16), each checkpoint is charged its
input tensor alone: the bytes held at the loss exceed those at the first forward (which
holds act[0], a checkpoint) by LAYERS / SEGMENT tensors (act[k], act[2k], ... and the
loss's input), each 2 s b h bytes per micro-batch (Korthikanti et al. 2022, full
recomputation: 2sbh bytes a layer; b = 1). Exit 1 if not."""
import json
import sys

trace, layers, segment, batches, sequence, hidden = sys.argv[1], *map(int, sys.argv[2:])
events = [e for e in json.load(open(trace))["traceEvents"] if e.get("ph") == "X" and e.get("pid") == 0]
first = events[0]["args"]["memory"]
loss = next(e for e in events if e["name"].startswith("loss"))["args"]["memory"]
tensor = 2 * sequence * hidden * batches
expected = layers // segment * tensor
print(f"held at the loss - at the first forward: {loss - first} bytes; {layers // segment} x {tensor} = {expected}")
sys.exit(0 if loss - first == expected else 1)
