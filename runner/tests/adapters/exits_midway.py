#!/usr/bin/env python3
"""Fault adapter for the kit's tests (persistent mode), named `fault-exits_midway`.

Answers 2 cases, then exits with status 3 without answering the third. The protocol
plumbing is in _fault.py.
"""

import os
import sys

sys.dont_write_bytecode = True  # leave no __pycache__ beside the fixtures
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import _fault  # noqa: E402


def case(request, number):
    if number == 3:
        sys.exit(3)
    _fault.answer(request, number)


if __name__ == "__main__":
    _fault.run(__file__, case)
