#!/usr/bin/env python3
"""Fault adapter for the kit's tests (persistent mode), named `fault-line_zero`.

Rejects every stream with a finding on line 0: JSON the kit's reply types could read, but
that the reply schema refuses (lines are 1-based), and so does the kit's check of a case's
answer, with or without --validate-protocol.
The protocol plumbing is in _fault.py.
"""

import os
import sys

sys.dont_write_bytecode = True  # leave no __pycache__ beside the fixtures
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import _fault  # noqa: E402


def case(request, number):
    finding = {"rule": "ASR-212", "severity": "error", "line": 0}
    streams = [{"valid": False, "diagnostics": [finding]} for _ in request["streams"]]
    _fault.send({"type": "answered", "seq": request["seq"], "streams": streams})


if __name__ == "__main__":
    _fault.run(__file__, case)
