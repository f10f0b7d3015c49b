#!/usr/bin/env python3
"""A wrong producer: folds each reasoning-only message into the assistant message that
follows it, its reasoning parts first, and drops its own record and id (ASR-219: a reasoning
item with its own native id stays a reasoning-only message). See _producer.py."""

import os
import sys

sys.dont_write_bytecode = True  # leave no __pycache__ beside the fixtures
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import _producer  # noqa: E402


def reasoning_only(record):
    content = record.get("content")
    return (record.get("type") == "message" and isinstance(content, list) and content
            and all(isinstance(p, dict) and p.get("type") == "reasoning" for p in content))


def mistake(records, _files):
    kept, pending = [], []
    for record in records:
        if reasoning_only(record):
            pending.extend(record["content"])
            continue
        if pending and record.get("type") == "message" and record.get("role") == "assistant":
            record["content"] = pending + (record.get("content") or [])
            pending = []
        kept.append(record)
    if pending:  # nothing followed: the reasoning stays where it was
        return records
    return _producer.renumber(kept)


if __name__ == "__main__":
    _producer.run(__file__, mistake)
