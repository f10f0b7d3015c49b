#!/usr/bin/env python3
"""Fault adapter for the kit's tests (persistent mode), named `fault-never_reads`.

Reads the `start` request and answers it, then never reads its input again: it writes an
answer for seq 1, 2, 3, ... every 10 ms, guessing the seqs, while the kit's requests pile up
in its full stdin pipe. The protocol plumbing is in _fault.py.
"""

import os
import sys
import time

sys.dont_write_bytecode = True  # leave no __pycache__ beside the fixtures
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import _fault  # noqa: E402


def main():
    sys.stdin.buffer.readline()
    _fault.send(_fault.started("fault-never_reads"))
    seq = 0
    while True:
        time.sleep(0.01)
        seq += 1
        _fault.send({"type": "answered", "seq": seq,
                     "streams": [{"valid": True, "diagnostics": []}]})


if __name__ == "__main__":
    try:
        main()
    except BrokenPipeError:
        os._exit(0)
