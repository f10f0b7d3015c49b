#!/usr/bin/env python3
"""Fault adapter for the kit's tests (persistent mode), named `fault-answers_twice`.

Answers every case; its second case (every case, when $TWICE_ALL is set) it answers twice.
The protocol plumbing is in _fault.py.
"""

import os
import sys

sys.dont_write_bytecode = True  # leave no __pycache__ beside the fixtures
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import _fault  # noqa: E402


def case(request, number):
    _fault.answer(request, number)
    if number == 2 or os.environ.get("TWICE_ALL"):
        _fault.answer(request, number)


if __name__ == "__main__":
    _fault.run(__file__, case)
