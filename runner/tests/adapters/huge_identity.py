#!/usr/bin/env python3
"""Fault adapter for the kit's tests (persistent mode).

Its `started` message names it with ten million escape characters (ESC, sixty megabytes
once JSON escapes them), gives a version, a language, a homepage and an issues link of a
megabyte each, and it skips every case with an issue link of a megabyte of escape
characters. The protocol plumbing is in _fault.py.
"""

import os
import sys

sys.dont_write_bytecode = True  # leave no __pycache__ beside the fixtures
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import _fault  # noqa: E402

MEGABYTE = 1 << 20


def start(reply):
    reply["implementation"] = {
        "name": "\x1b" * (10 * MEGABYTE),
        "version": "9" * MEGABYTE,
        "language": "\x1b[2J" * (MEGABYTE // 4),
        "homepage": "https://example.org/" + "h" * MEGABYTE,
        "issues": "https://example.org/" + "\x1b" * MEGABYTE,
    }
    _fault.send(reply)


def case(request, number):
    _fault.send({"type": "skipped", "seq": request["seq"], "reason": "not implemented",
                 "issue": "https://example.org/" + "\x1b" * MEGABYTE})


if __name__ == "__main__":
    _fault.run(__file__, case, start)
