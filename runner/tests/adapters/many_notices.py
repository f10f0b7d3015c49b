#!/usr/bin/env python3
"""Fault adapter for the kit's tests (persistent mode), named `fault-many_notices`.

Answers every case with every stream invalid and as many notices as `ASR_CTK_TEST_NOTICES`
says (300,000 when unset): one legal reply, of a size set by the test, whose findings
are many and small. Last comes one error under ASR-212 on line 2, so that a kit that keeps
only the first findings of a stream and drops the rest unjudged misses it. If the adapter
runs under a cap on its address space (`prlimit --as=SOFT:HARD`), it lifts its own soft cap
to the hard one: the cap is meant for the kit, not for this script building the reply. It
says the size of each reply on stderr (`reply of N bytes`). The protocol plumbing is in
_fault.py.
"""

import json
import os
import resource
import sys

sys.dont_write_bytecode = True  # leave no __pycache__ beside the fixtures
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import _fault  # noqa: E402

COUNT = int(os.environ.get("ASR_CTK_TEST_NOTICES", "300000"))

_, hard = resource.getrlimit(resource.RLIMIT_AS)
resource.setrlimit(resource.RLIMIT_AS, (hard, hard))

# A thousand distinct notices, repeated: the reply is written piece by piece, without a
# Python object for each of its findings nor a copy of the whole line, so that this script
# stays small beside the kit it feeds.
CHUNK = ",".join(json.dumps({"rule": "ASR-406", "severity": "notice", "line": 1 + i})
                 for i in range(1000)).encode()
LAST = json.dumps({"rule": "ASR-212", "severity": "error", "line": 2}).encode()


def diagnostics(count):
    """The pieces of one stream's `diagnostics` array: `count` notices, then LAST."""
    chunks, rest = divmod(count, 1000)
    yield b"["
    for _ in range(chunks):
        yield CHUNK + b","
    for i in range(rest):
        yield json.dumps({"rule": "ASR-406", "severity": "notice", "line": 1 + i}).encode() + b","
    yield LAST + b"]"


def case(request, number):
    pieces = [b'{"type":"answered","seq":%d,"streams":[' % request["seq"]]
    for index, _ in enumerate(request["streams"]):
        pieces.append(b',{"valid":false,"diagnostics":' if index else b'{"valid":false,"diagnostics":')
        pieces.append(diagnostics)
        pieces.append(b"}")
    pieces.append(b"]}\n")
    size = 0
    for piece in pieces:
        size += sum(len(p) for p in piece(COUNT)) if callable(piece) else len(piece)
    sys.stderr.write("reply of %d bytes\n" % size)
    sys.stderr.flush()
    out = sys.stdout.buffer
    for piece in pieces:
        for part in (piece(COUNT) if callable(piece) else [piece]):
            out.write(part)
    out.flush()


if __name__ == "__main__":
    _fault.run(__file__, case)
