#!/usr/bin/env python3
"""Fault adapter for the kit's tests (persistent mode), named `fault-wrong_seq`.

Answers every case, but with seq + 1000 instead of the request's seq. The protocol
plumbing is in _fault.py.
"""

import os
import sys

sys.dont_write_bytecode = True  # leave no __pycache__ beside the fixtures
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import _fault  # noqa: E402


def case(request, number):
    reply = _fault.answered(request)
    reply["seq"] = request["seq"] + 1000
    _fault.send(reply)


if __name__ == "__main__":
    _fault.run(__file__, case)
