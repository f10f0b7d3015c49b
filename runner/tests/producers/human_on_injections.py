#!/usr/bin/env python3
"""A wrong producer: takes every message under role user for a person's words, hook output,
harness injections and compaction summaries included: `author: "human"` and, where the
golden said it was injected, `origin: "prompt"` (ASR-202: author human only when the source
records that a person wrote it). See _producer.py."""

import os
import sys

sys.dont_write_bytecode = True  # leave no __pycache__ beside the fixtures
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import _producer  # noqa: E402


def mistake(records, _files):
    for record in _producer.messages(records):
        if record.get("role") == "user":
            record["author"] = "human"
            for part in record.get("content") or []:
                if isinstance(part, dict) and "author" in part:
                    part["author"] = "human"
    return records


if __name__ == "__main__":
    _producer.run(__file__, mistake)
