#!/usr/bin/env python3
"""Fault adapter for the kit's tests (persistent mode), named `fault-hangs_on_one_case`.

Answers every case but one, on which it sleeps forever: the case named by the
environment variable FAULT_CASE (read at each case) or, when it is unset or empty, the
3rd case it receives. The protocol plumbing is in _fault.py.
"""

import os
import sys
import time

sys.dont_write_bytecode = True  # leave no __pycache__ beside the fixtures
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import _fault  # noqa: E402


def sleep_forever():
    while True:
        time.sleep(3600)


def case(request, number):
    target = os.environ.get("FAULT_CASE")
    if (request["case"] == target) if target else number == 3:
        sleep_forever()
    _fault.answer(request, number)


if __name__ == "__main__":
    _fault.run(__file__, case)
