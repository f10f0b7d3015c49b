#!/usr/bin/env python3
"""Fault adapter for the kit's tests (persistent mode), named `fault-counts_starts`.

A well-behaved validator that appends a line to the file named by $COUNT_FILE each time it
is started. The protocol plumbing is in _fault.py.
"""

import os
import sys

sys.dont_write_bytecode = True  # leave no __pycache__ beside the fixtures
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import _fault  # noqa: E402


if __name__ == "__main__":
    with open(os.environ["COUNT_FILE"], "a") as out:
        out.write("started\n")
    _fault.run(__file__)
