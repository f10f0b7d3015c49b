#!/usr/bin/env python3
"""Fault adapter for the kit's tests (persistent mode), named `fault-detaches`.

On every case, starts a daemon (setsid and a double fork) that sleeps for two minutes, then
answers. The protocol plumbing is in _fault.py.
"""

import os
import sys

sys.dont_write_bytecode = True  # leave no __pycache__ beside the fixtures
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import _fault  # noqa: E402


def case(request, number):
    _fault.linger(__file__, detach=True)
    _fault.answer(request, number)


if __name__ == "__main__":
    _fault.run(__file__, case)
