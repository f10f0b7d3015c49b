#!/usr/bin/env python3
"""Fault adapter for the kit's tests (persistent mode), named `fault-errs_with_wrong_seq`.

Answers every case with `error`, echoing seq + 1000 instead of the request's seq: an answer
to no request the kit sent, which every command must call a protocol error. The protocol
plumbing is in _fault.py.
"""

import os
import sys

sys.dont_write_bytecode = True  # leave no __pycache__ beside the fixtures
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import _fault  # noqa: E402


def case(request, number):
    _fault.send({"type": "error", "seq": request["seq"] + 1000, "message": "an error of no case asked"})


if __name__ == "__main__":
    _fault.run(__file__, case)
