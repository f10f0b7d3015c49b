#!/usr/bin/env python3
"""Fault adapter for the kit's tests (persistent mode), named `fault-reading_not_an_object`.

Answers every stream valid, with a `reading` that is a string: JSON the kit's reply types
read (a reading is any JSON value to them), and that the reply schema refuses (a reading is
an object), so only the schema check of replies catches it. The protocol plumbing is in
_fault.py.
"""

import os
import sys

sys.dont_write_bytecode = True  # leave no __pycache__ beside the fixtures
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import _fault  # noqa: E402


def case(request, number):
    streams = [{"valid": True, "diagnostics": [], "reading": "accepted"}
               for _ in request["streams"]]
    _fault.send({"type": "answered", "seq": request["seq"], "streams": streams})


if __name__ == "__main__":
    _fault.run(__file__, case)
