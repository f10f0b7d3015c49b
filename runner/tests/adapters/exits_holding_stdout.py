#!/usr/bin/env python3
"""Fault adapter for the kit's tests (persistent mode), named `fault-exits_holding_stdout`.

On the case named by $FAULT_CASE, starts a process that keeps its stdout open for two
minutes, then exits with status 0 without answering; it answers every other case. The protocol plumbing is in _fault.py.
"""

import os
import sys

sys.dont_write_bytecode = True  # leave no __pycache__ beside the fixtures
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import _fault  # noqa: E402


def case(request, number):
    if request["case"] == os.environ.get("FAULT_CASE"):
        _fault.linger(__file__, hold_stdout=True)
        os._exit(0)
    _fault.answer(request, number)


if __name__ == "__main__":
    _fault.run(__file__, case)
