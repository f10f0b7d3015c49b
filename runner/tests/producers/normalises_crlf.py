#!/usr/bin/env python3
"""A wrong producer: converts the CRLF line endings inside text to LF, as a converter that
reads its source in text mode would (ASR-211: text is kept exactly as stored, line endings
included). See _producer.py."""

import os
import sys

sys.dont_write_bytecode = True  # leave no __pycache__ beside the fixtures
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import _producer  # noqa: E402


def mistake(records, _files):
    for part in _producer.text_parts(records):
        part["text"] = part["text"].replace("\r\n", "\n")
    return records


if __name__ == "__main__":
    _producer.run(__file__, mistake)
