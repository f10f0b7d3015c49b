#!/usr/bin/env python3
"""Fault adapter for the kit's tests (persistent mode), named `fault-floods_stderr`.

Writes 5 MiB to stderr for every case, then answers it normally. A kit that does not
drain stderr while it waits for the answer deadlocks here. The protocol plumbing is in
_fault.py.
"""

import os
import sys

sys.dont_write_bytecode = True  # leave no __pycache__ beside the fixtures
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import _fault  # noqa: E402


def case(request, number):
    line = b"e" * 1023 + b"\n"
    sys.stderr.buffer.write(line * 5 * 1024)
    sys.stderr.buffer.flush()
    _fault.answer(request, number)


if __name__ == "__main__":
    _fault.run(__file__, case)
