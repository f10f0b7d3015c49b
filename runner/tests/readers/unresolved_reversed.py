#!/usr/bin/env python3
"""Reader for the kit's tests, named `wrong-unresolved_reversed`.

A wrapper around the reference adapter (`python3 unresolved_reversed.py ASR_CTK`; see
_wrapper.py) that lists `session.unresolved` in reverse order. The order is a decision of
the kit (`unresolved-form`), not of the spec: the run must call ASR-406 non-strict on that
decision, not non-conformant.
"""

import os
import sys

sys.dont_write_bytecode = True  # leave no __pycache__ beside the fixtures
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import _wrapper  # noqa: E402


def mutate(reading, stream):
    session = reading.get("session")
    if isinstance(session, dict) and isinstance(session.get("unresolved"), list):
        session["unresolved"] = list(reversed(session["unresolved"]))


if __name__ == "__main__":
    _wrapper.run(__file__, mutate)
