#!/usr/bin/env python3
"""Fault adapter for the kit's tests (persistent mode), named `fault-answers_ahead`.

Right after its `started` message, writes answers for seq 1 to 5 before it has read any case;
then answers each case it reads. The protocol plumbing is in _fault.py.
"""

import os
import sys

sys.dont_write_bytecode = True  # leave no __pycache__ beside the fixtures
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import _fault  # noqa: E402


def start(reply):
    _fault.send(reply)
    for seq in range(1, 6):
        _fault.send({"type": "answered", "seq": seq,
                     "streams": [{"valid": True, "diagnostics": []}]})


if __name__ == "__main__":
    _fault.run(__file__, start=start)
