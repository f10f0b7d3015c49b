#!/usr/bin/env python3
r"""Fault adapter for the kit's tests (persistent mode), named `fault-floods_stdout`.

On the 1st case it receives, writes a single line of 1 GiB (1 MiB chunks of "x", each
flushed, then "\n") instead of an answer; answers the others normally. When the kit
closes the pipe, it exits quietly. The protocol plumbing is in _fault.py.
"""

import os
import sys

sys.dont_write_bytecode = True  # leave no __pycache__ beside the fixtures
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import _fault  # noqa: E402


def case(request, number):
    if number == 1:
        chunk = b"x" * (1 << 20)
        for _ in range(1024):
            _fault.write(chunk)
        _fault.write(b"\n")
    else:
        _fault.answer(request, number)


if __name__ == "__main__":
    _fault.run(__file__, case)
