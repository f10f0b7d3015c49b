#!/usr/bin/env python3
"""Fault adapter for the kit's tests (persistent mode), named `fault-detaches_and_hangs`.

On its first case, starts a daemon (setsid and a double fork) that sleeps for two minutes,
then never answers: the kit is still waiting when a test kills it. The protocol plumbing is
in _fault.py.
"""

import os
import sys
import time

sys.dont_write_bytecode = True  # leave no __pycache__ beside the fixtures
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import _fault  # noqa: E402


def case(request, number):
    _fault.linger(__file__, detach=True)
    time.sleep(300)


if __name__ == "__main__":
    _fault.run(__file__, case)
