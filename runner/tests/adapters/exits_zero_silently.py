#!/usr/bin/env python3
"""Fault adapter for the kit's tests (persistent mode), named `fault-exits_zero_silently`.

Answers `start`, then exits with status 0 on the first case, without answering it. The
protocol plumbing is in _fault.py.
"""

import os
import sys

sys.dont_write_bytecode = True  # leave no __pycache__ beside the fixtures
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import _fault  # noqa: E402


def case(request, number):
    sys.exit(0)


if __name__ == "__main__":
    _fault.run(__file__, case)
