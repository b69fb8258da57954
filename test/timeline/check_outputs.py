#!/usr/bin/env python3
"""check_outputs.py SCHEDC SCHEDULE [-D ...]

Draws SCHEDULE (SVG and HTML) and traces it, then checks the files as a reader would:
- the SVG is well-formed XML (xml.etree) with one `rect.event` per event of the run (the
  events come from `--events`), each with a <title>;
- the HTML parses with html.parser, every tag closed in order, with no external resource;
- the trace is JSON with the documented structure (a process per rank, compute and
  communication tracks, complete events with their arguments, a memory counter per rank),
  and its flows pair every send with exactly one receive;
- the SVG rendered to PNG by rsvg-convert is not blank (many non-white pixels, several colours).
Prints what it checked; exits 1 on the first failure."""
import csv
import html.parser
import json
import os
import struct
import subprocess
import sys
import tempfile
import xml.etree.ElementTree as ET
import zlib

schedc, schedule, params = sys.argv[1], sys.argv[2], sys.argv[3:]
SVG = "{http://www.w3.org/2000/svg}"

def fail(message):
    sys.exit(f"FAIL {os.path.basename(schedule)} {' '.join(params)}: {message}")

with tempfile.TemporaryDirectory() as tmp:
    svg, page, trace, events = (os.path.join(tmp, n) for n in ("t.svg", "t.html", "t.json", "e.csv"))
    for args in (["draw", schedule, "-o", svg, "--trace", trace, "--events", events], ["draw", schedule, "-o", page]):
        run = subprocess.run([schedc] + args + params, capture_output=True, text=True)
        if run.returncode not in (0, 1) or not os.path.exists(args[3]):
            fail(f"schedc {' '.join(args)} exited {run.returncode}: {run.stderr[-500:]}")
    rows = list(csv.DictReader(open(events)))
    ranks = {int(r["rank"]) for r in rows}

    # The SVG: well-formed, one box per event, each with its details.
    root = ET.parse(svg).getroot()
    boxes = [e for e in root.iter(SVG + "rect") if e.get("class") == "event"]
    if len(boxes) != len(rows):
        fail(f"{len(boxes)} event boxes for {len(rows)} events")
    if any(b.find(SVG + "title") is None for b in boxes):
        fail("an event box without its <title>")

    # The HTML page: parses, tags balanced, nothing loaded from elsewhere.
    class Checker(html.parser.HTMLParser):
        VOID = {"meta", "br", "img", "link", "input", "hr", "path", "rect", "line"}
        def __init__(self):
            super().__init__()
            self.stack, self.external, self.boxes = [], [], 0
        def handle_starttag(self, tag, attrs):
            a = dict(attrs)
            if tag == "rect" and a.get("class") == "event":
                self.boxes += 1
            for key in ("src", "href"):
                if key in a and "://" in a[key]:
                    self.external.append(a[key])
            if tag not in self.VOID:
                self.stack.append(tag)
        def handle_startendtag(self, tag, attrs):
            self.handle_starttag(tag, attrs)
            if tag not in self.VOID:
                self.stack.pop()
        def handle_endtag(self, tag):
            if tag in self.VOID:
                return
            if not self.stack or self.stack.pop() != tag:
                fail(f"HTML: unbalanced </{tag}>")
    checker = Checker()
    checker.feed(open(page).read())
    checker.close()
    if checker.stack:
        fail(f"HTML: unclosed {checker.stack}")
    if checker.external:
        fail(f"HTML loads external resources: {checker.external}")
    if checker.boxes != len(rows):
        fail(f"HTML: {checker.boxes} event boxes for {len(rows)} events")

    # The trace.
    doc = json.load(open(trace))
    te = doc["traceEvents"]
    names = {(e["pid"], e.get("tid")): e["args"]["name"] for e in te if e["ph"] == "M" and e["name"] == "thread_name"}
    for r in ranks:
        if names.get((r, 0)) != "compute" or names.get((r, 1)) != "communication":
            fail(f"trace: rank {r} lacks its compute and communication tracks")
    complete = [e for e in te if e["ph"] == "X"]
    if len(complete) != len(rows):
        fail(f"trace: {len(complete)} events for {len(rows)}")
    for e in complete:
        if not all(k in e for k in ("name", "pid", "tid", "ts", "dur", "args")) or "memory" not in e["args"] \
                or "source" not in e["args"]:
            fail(f"trace: malformed event {e}")
    counters = {e["pid"] for e in te if e["ph"] == "C" and e["name"] == "memory"}
    if counters != ranks:
        fail("trace: a rank without its memory counter")
    starts = {e["id"] for e in te if e["ph"] == "s"}
    ends = [e["id"] for e in te if e["ph"] == "f"]
    passes = sum(1 for r in rows if r["typ"] == "pass")
    if sorted(starts) != sorted(ends) or len(ends) != len(set(ends)) or 2 * len(starts) != passes:
        fail(f"trace: {len(starts)} flow starts and {len(ends)} ends for {passes} send/recv events")

    # Rendered, the picture is not blank.
    png = os.path.join(tmp, "t.png")
    subprocess.run(["rsvg-convert", svg, "-o", png], check=True)
    data = open(png, "rb").read()
    width, height, depth, colour = struct.unpack(">IIBB", data[16:26])
    idat, at = b"", 8
    while at < len(data):
        length, kind = struct.unpack(">I4s", data[at:at + 8])
        if kind == b"IDAT":
            idat += data[at + 8:at + 8 + length]
        at += 12 + length
    raw = zlib.decompress(idat)
    channels = {2: 3, 6: 4}.get(colour, 4)
    stride = width * channels + 1
    # Sample every row (filter bytes aside, unfiltered sampling is enough to see ink).
    inked, colours = 0, set()
    for y in range(0, height, 3):
        line = raw[y * stride + 1:(y + 1) * stride]
        for x in range(0, width * channels, channels * 5):
            px = line[x:x + 3]
            colours.add(px)
            if px != b"\xff\xff\xff" and px != b"\x00\x00\x00":
                inked += 1
    if inked < 100 or len(colours) < 6:
        fail(f"the rendered PNG looks blank ({inked} inked samples, {len(colours)} colours)")
    print(f"ok {os.path.basename(schedule)} {' '.join(params)}: {len(rows)} events on {len(ranks)} ranks; "
          f"SVG, HTML and trace valid; {len(starts)} messages paired; PNG {width}x{height} inked")
