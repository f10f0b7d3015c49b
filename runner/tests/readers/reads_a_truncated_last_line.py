#!/usr/bin/env python3
"""Wrong reader for the kit's tests, named `wrong-reads_a_truncated_last_line`.

A wrapper around the reference adapter (see _wrapper.py) whose one mistake is dropping a
truncated last line: a stream whose last line has no newline and is not JSON, while every
line before it is, is read (`valid: true`) with the records before it. PROTOCOL.md: a
truncated last line is no JSON object, and such a stream must be refused (ASR-X-003).
"""

import os
import sys

sys.dont_write_bytecode = True  # leave no __pycache__ beside the fixtures
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import _wrapper  # noqa: E402


def answer(answer, stream):
    raw = stream.raw
    if answer.get("valid") or raw.endswith(b"\n") or b"\n" not in raw:
        return
    whole, _, last = raw.rpartition(b"\n")
    if not _wrapper.is_json(last) and all(_wrapper.is_json(line) for line in whole.split(b"\n")):
        _wrapper.read_anyway(answer)


if __name__ == "__main__":
    _wrapper.run(__file__, answer=answer)
