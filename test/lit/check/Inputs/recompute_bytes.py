"""recompute_bytes.py TRACE LAYERS SEGMENT BATCHES SEQUENCE HIDDEN VOCAB — after the first pass
of stdlib recompute under a transformer model (one rank, bf16), each checkpoint is charged
its input tensor alone: the bytes held at the loss exceed those at the first forward (which
holds act[0], a checkpoint) by LAYERS / SEGMENT - 1 tensors (act[k], act[2k], ...), each
2 s b h bytes per micro-batch (Korthikanti et al. 2022, full recomputation: 2sbh bytes a
layer; b = 1), and the loss's input, the last layer's fp32 logits, 4 s b V bytes per
micro-batch. Exit 1 if not."""
import json
import sys

trace, layers, segment, batches, sequence, hidden, vocab = sys.argv[1], *map(int, sys.argv[2:])
events = [e for e in json.load(open(trace))["traceEvents"] if e.get("ph") == "X" and e.get("pid") == 0]
first = events[0]["args"]["memory"]
loss = next(e for e in events if e["name"].startswith("loss"))["args"]["memory"]
tensor = 2 * sequence * hidden * batches
logits = 4 * sequence * vocab * batches
expected = (layers // segment - 1) * tensor + logits
print(f"held at the loss - at the first forward: {loss - first} bytes; "
      f"{layers // segment - 1} x {tensor} + {logits} = {expected}")
sys.exit(0 if loss - first == expected else 1)
