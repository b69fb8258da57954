#!/usr/bin/env python3
"""diagnostic_coverage.py LIT_DIR SOURCE_DIR...

Checks that every diagnostic the compiler can emit is exercised by at least one lit test.
It finds each place in the compiler's sources that reports an error, warning or note
(`.error(`, `errorWith(`, `.warning(`, `.note(`, `stopAtLimit(`, `stopForWantOf(`,
`usageError(`, `error = "..."`), takes the longest string literal of its message as the
diagnostic's signature, and looks for that text in the lit tests' expectations. A message
no test mentions is listed and the check fails. A site can opt out with a comment
`// diag-coverage: unreachable (why)` on the line before it; use that only for messages no
input can trigger."""
import pathlib
import re
import sys

lit = pathlib.Path(sys.argv[1])
sources = [pathlib.Path(d) for d in sys.argv[2:]]
SITE = re.compile(r'(\berror\(|\berrorWith\(|\bwarning\(|\bnote\(|\bfatal\(|\bfail\(|\brecord\(|\bstopAtLimit\(|\bstopForWantOf\(|usageError\(|\berror = )')
CODE = re.compile(r"^[a-z]+(-[a-z]+)*$")  # an aggregation code like "update-twice", not a message
LITERAL = re.compile(r'"((?:[^"\\]|\\.)*)"')

tests = "\n".join(p.read_text(errors="replace") for p in lit.rglob("*") if p.is_file())

def message_text(src, start):
    """The source of the call's arguments (or the assigned expression), up to its end."""
    depth, i = 0, start
    while i < len(src):
        c = src[i]
        if c == '"':
            i += 1
            while i < len(src) and src[i] != '"':
                i += 2 if src[i] == '\\' else 1
        elif c in "([{":
            depth += 1
        elif c in ")]}":
            depth -= 1
            if depth < 0:
                return src[start:i]
        elif c == ";" and depth <= 0:
            return src[start:i]
        i += 1
    return src[start:]

missing, checked = [], 0
for path in sorted(p for d in sources for p in d.rglob("*.cpp")):
    src = path.read_text()
    for m in SITE.finditer(src):
        line_no = src.count("\n", 0, m.start()) + 1
        prev_line = src.splitlines()[line_no - 2] if line_no > 1 else ""
        if "diag-coverage: unreachable" in prev_line:
            continue
        literals = [s.replace('\\"', '"') for s in LITERAL.findall(message_text(src, m.end()))]
        literals = [s for s in literals if not CODE.match(s)]
        # The signature: the longest constant stretch of the message, with the non-literal
        # parts, every `quoted` span (names, which vary) and fmt's {} fields cut out.
        joined = re.sub(r"`[^`]*`|\{\d*\}", "\0", "\0".join(literals))
        pieces = [p.strip(" `;:,.()") for p in joined.split("\0")]
        pieces = [p for p in pieces if len(p) >= 6]
        if not pieces:
            continue
        signature = max(pieces, key=len)
        checked += 1
        if signature not in tests:
            missing.append(f"{path}:{line_no}: \"{signature}\"")

if missing:
    print(f"{len(missing)} of {checked} diagnostics are not exercised by any lit test:")
    print("\n".join("  " + m for m in missing))
    sys.exit(1)
print(f"all {checked} diagnostics are exercised by lit tests")
