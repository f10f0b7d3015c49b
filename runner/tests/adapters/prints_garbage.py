#!/usr/bin/env python3
"""Fault adapter for the kit's tests (persistent mode), named `fault-prints_garbage`.

Answers the 2nd case it receives with the line `this is not json`; answers the others
normally. The protocol plumbing is in _fault.py.
"""

import os
import sys

sys.dont_write_bytecode = True  # leave no __pycache__ beside the fixtures
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import _fault  # noqa: E402


def case(request, number):
    if number == 2:
        _fault.write(b"this is not json\n")
    else:
        _fault.answer(request, number)


if __name__ == "__main__":
    _fault.run(__file__, case)
