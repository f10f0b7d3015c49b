#!/usr/bin/env python3
"""Fault adapter for the kit's tests (persistent mode), named `fault-escape_codes`.

Answers every case with `error`, its message holding terminal escape codes (clear the
screen, move the cursor home, a bell), and writes the same codes to stderr. The protocol
plumbing is in _fault.py.
"""

import os
import sys

sys.dont_write_bytecode = True  # leave no __pycache__ beside the fixtures
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import _fault  # noqa: E402

CODES = "\x1b[2J\x1b[H\x07"


def case(request, number):
    sys.stderr.write(CODES + "stderr of the adapter\n")
    sys.stderr.flush()
    _fault.send({"type": "error", "seq": request["seq"], "message": CODES + "it broke"})


if __name__ == "__main__":
    _fault.run(__file__, case)
