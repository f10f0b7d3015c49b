#!/usr/bin/env python3
"""A wrong producer: writes `audience: "both"` on every message, as a converter that never
looks at who the source says saw the content: a caveat only the model received, a mirror only
the user saw (ASR-204: audience only as the source indicates it, never both by default).
See _producer.py."""

import os
import sys

sys.dont_write_bytecode = True  # leave no __pycache__ beside the fixtures
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import _producer  # noqa: E402


def mistake(records, _files):
    for record in _producer.messages(records):
        record["audience"] = "both"
    return records


if __name__ == "__main__":
    _producer.run(__file__, mistake)
