#!/usr/bin/env python3
"""Wrong reader for the kit's tests, named `wrong-keeps_the_last_of_a_repeated_id`.

A wrapper around the reference adapter (see _wrapper.py) whose one mistake is keeping the
last record of an id several lines have, as a map filled line by line does: the record's
type, and its parts' authors and text, are the last line's. PROTOCOL.md: a repeated id keeps
its first record (ASR-X-009).
"""

import os
import sys

sys.dont_write_bytecode = True  # leave no __pycache__ beside the fixtures
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import _wrapper  # noqa: E402


def mutate(reading, stream):
    for record_id, last in stream.repeated.items():
        read = reading.get("records", {}).get(record_id)
        if not isinstance(read, dict):
            continue
        read["type"] = last.get("type")
        content = last.get("content")
        if isinstance(content, list):
            author = last.get("author")
            read["parts"] = [
                {"type": part.get("type"), "author": part.get("author", author),
                 "origin": part.get("origin", last.get("origin")),
                 "phase": part.get("phase", last.get("phase")),
                 "render": "text" if part.get("type") == "text" else "skipped",
                 "index": [part["text"]] if isinstance(part.get("text"), str) else []}
                for part in content if isinstance(part, dict)
            ]


if __name__ == "__main__":
    _wrapper.run(__file__, mutate)
