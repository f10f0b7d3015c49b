#!/usr/bin/env python3
"""Wrong reader for the kit's tests, named `wrong-skips_byte_order_marks`.

A wrapper around the reference adapter (see _wrapper.py) whose one mistake is reading past
a byte order mark at the start of any line, as a decoder that strips one on every decode
does: a stream refused only for lines that start with one is read. Only the mark before the
header may be read past; on any other line it is no JSON white space (ASR-X-003).
"""

import os
import sys

sys.dont_write_bytecode = True  # leave no __pycache__ beside the fixtures
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import _wrapper  # noqa: E402


def answer(answer, stream):
    if answer.get("valid"):
        return
    lines = [line for line in stream.raw.split(b"\n") if line.strip()]
    bad = [line for line in lines if not _wrapper.is_json(line)]
    bom = len(_wrapper.BOM)
    if bad and all(line.startswith(_wrapper.BOM) and _wrapper.is_json(line[bom:]) for line in bad):
        _wrapper.read_anyway(answer)


if __name__ == "__main__":
    _wrapper.run(__file__, answer=answer)
