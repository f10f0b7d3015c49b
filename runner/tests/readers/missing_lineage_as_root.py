#!/usr/bin/env python3
"""Wrong reader for the kit's tests, named `wrong-missing_lineage_as_root`.

A wrapper around the reference adapter (`python3 missing_lineage_as_root.py ASR_CTK`; see
_wrapper.py) whose one mistake is reading a missing lineage as root: `session.root`
`unknown` becomes `yes`. Breaks ASR-401 (absence never means root).
"""

import os
import sys

sys.dont_write_bytecode = True  # leave no __pycache__ beside the fixtures
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import _wrapper  # noqa: E402


def mutate(reading, stream):
    session = reading.get("session")
    if isinstance(session, dict) and session.get("root") == "unknown":
        session["root"] = "yes"


if __name__ == "__main__":
    _wrapper.run(__file__, mutate)
