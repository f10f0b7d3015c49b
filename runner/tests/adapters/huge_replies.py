#!/usr/bin/env python3
"""Fault adapter for the kit's tests (persistent mode), named `fault-huge_replies`.

Answers every case with every stream invalid and 200,000 findings: one with a message of
4 MB, forty under ids the catalog does not know (ASR-999, ASR-1000, ...), one under an id of
10,000 characters, the rest under ASR-212. It also writes 1 MB to stderr per case. The protocol
plumbing is in _fault.py.
"""

import os
import sys

sys.dont_write_bytecode = True  # leave no __pycache__ beside the fixtures
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import _fault  # noqa: E402


def case(request, number):
    findings = [{"rule": "ASR-212", "severity": "error", "line": 1,
                 "message": "x" * (4 << 20)}]
    findings += [{"rule": "ASR-%d" % (999 + i), "severity": "error", "line": 2}
                 for i in range(40)]
    findings.append({"rule": "R" * 10000, "severity": "error", "line": 3})
    findings += [{"rule": "ASR-212", "severity": "error", "line": line}
                 for line in range(4, 200_000)]
    sys.stderr.write("e" * (1 << 20))
    sys.stderr.flush()
    streams = [{"valid": False, "diagnostics": findings} for _ in request["streams"]]
    _fault.send({"type": "answered", "seq": request["seq"], "streams": streams})


if __name__ == "__main__":
    _fault.run(__file__, case)
