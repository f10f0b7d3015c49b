#!/usr/bin/env python3
"""Wrong reader for the kit's tests, named `wrong-refuses_crlf`.

A wrapper around the reference adapter (see _wrapper.py) whose one mistake is refusing a
stream with CRLF line endings: the CR is JSON white space, and the stream must be read as
the same stream with LF (ASR-X-019).
"""

import os
import sys

sys.dont_write_bytecode = True  # leave no __pycache__ beside the fixtures
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import _wrapper  # noqa: E402


def answer(answer, stream):
    if b"\r\n" in stream.raw:
        answer["valid"] = False


if __name__ == "__main__":
    _wrapper.run(__file__, answer=answer)
