#!/usr/bin/env python3
"""Fault adapter for the kit's tests (persistent mode), named `fault-slow_start`.

Sleeps 2 seconds before answering `start`, then behaves normally. The protocol plumbing
is in _fault.py.
"""

import os
import sys
import time

sys.dont_write_bytecode = True  # leave no __pycache__ beside the fixtures
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import _fault  # noqa: E402


def start(reply):
    time.sleep(2)
    _fault.send(reply)


if __name__ == "__main__":
    _fault.run(__file__, start=start)
