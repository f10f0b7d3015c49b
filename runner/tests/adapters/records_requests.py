#!/usr/bin/env python3
"""Fault adapter for the kit's tests (persistent mode), named `fault-records_requests`.

A well-behaved validator that declares the streams-by-path capability when $BY_PATH is set,
and appends every case request it gets, as received, to the file named by $REQUESTS_FILE.
The protocol plumbing is in _fault.py.
"""

import json
import os
import sys

sys.dont_write_bytecode = True  # leave no __pycache__ beside the fixtures
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import _fault  # noqa: E402


def start(reply):
    if os.environ.get("BY_PATH"):
        reply["capabilities"] = ["streams-by-path"]
    _fault.send(reply)


def case(request, number):
    with open(os.environ["REQUESTS_FILE"], "a") as out:
        out.write(json.dumps(request) + "\n")
    _fault.answer(request, number)


if __name__ == "__main__":
    _fault.run(__file__, case, start)
