#!/usr/bin/env python3
"""Reader for the kit's tests, named `wrong-adds_a_member`.

A wrapper around the reference adapter (`python3 adds_a_member.py ASR_CTK`; see _wrapper.py)
whose reading is right but has a member the reading does not define (`session.mood`). A run
notes it; with --validate-protocol the reading schema refuses it: a protocol error.
"""

import os
import sys

sys.dont_write_bytecode = True  # leave no __pycache__ beside the fixtures
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import _wrapper  # noqa: E402


def mutate(reading, stream):
    session = reading.get("session")
    if isinstance(session, dict):
        session["mood"] = "calm"


if __name__ == "__main__":
    _wrapper.run(__file__, mutate)
