#!/usr/bin/env python3
"""Wrong reader for the kit's tests, named `wrong-indexes_signatures`.

A wrapper around the reference adapter (`python3 indexes_signatures.py ASR_CTK`; see
_wrapper.py) whose one mistake is indexing reasoning signatures: for every part of type
`reasoning` whose content part in the stream (same record, same index) has a
`signature`, the signature is appended to the part's `index`. Breaks ASR-215.
"""

import os
import sys

sys.dont_write_bytecode = True  # leave no __pycache__ beside the fixtures
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import _wrapper  # noqa: E402


def mutate(reading, stream):
    for part, source in _wrapper.parts(reading, stream):
        if part.get("type") != "reasoning":
            continue
        signature = source.get("signature") if isinstance(source, dict) else None
        if isinstance(signature, str) and isinstance(part.get("index"), list):
            part["index"].append(signature)


if __name__ == "__main__":
    _wrapper.run(__file__, mutate)
