#!/usr/bin/env python3
"""Wrong reader for the kit's tests, named `wrong-renders_unknown_parts`.

A wrapper around the reference adapter (`python3 renders_unknown_parts.py ASR_CTK`; see
_wrapper.py) whose one mistake is rendering parts of unknown types instead of skipping them:
every part read with `render: "skipped"` becomes `render: "text"`, with an `index` of
one entry, the compact JSON text of the part as it stands in the stream. Breaks ASR-218.
"""

import json
import os
import sys

sys.dont_write_bytecode = True  # leave no __pycache__ beside the fixtures
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import _wrapper  # noqa: E402


def mutate(reading, stream):
    for part, source in _wrapper.parts(reading, stream):
        if part.get("render") != "skipped" or source is None:
            continue
        part["render"] = "text"
        part["index"] = [json.dumps(source, ensure_ascii=False, separators=(",", ":"))]


if __name__ == "__main__":
    _wrapper.run(__file__, mutate)
