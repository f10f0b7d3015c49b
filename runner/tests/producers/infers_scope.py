#!/usr/bin/env python3
"""A wrong producer: calls every session whose header names a parent of any kind (a fork, a
continuation, an unknown relation) a subagent's (ASR-410: scope from the source's evidence of
a delegated run, never inferred from a parent facet). See _producer.py."""

import os
import sys

sys.dont_write_bytecode = True  # leave no __pycache__ beside the fixtures
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import _producer  # noqa: E402

PARENTS = ("spawnedBy", "forkedFrom", "continues", "relatedUnknown")


def mistake(records, _files):
    header = records[0] if records and records[0].get("type") == "session" else None
    lineage = header.get("lineage") if header else None
    if isinstance(lineage, dict) and any(facet in lineage for facet in PARENTS):
        header["scope"] = "subagent"
    return records


if __name__ == "__main__":
    _producer.run(__file__, mistake)
