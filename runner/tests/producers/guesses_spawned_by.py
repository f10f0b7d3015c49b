#!/usr/bin/env python3
"""A wrong producer: takes two sessions kept in the same working directory for parent and
child: the later one is said spawned by the earlier one, by the converter's inference (ASR-404:
converter_inference only under a rule the registry publishes; ASR-403: facets only from
positive evidence). The working directory is read from the source's records (`cwd`).
See _producer.py."""

import json
import os
import sys

sys.dont_write_bytecode = True  # leave no __pycache__ beside the fixtures
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import _producer  # noqa: E402


def directories(files):
    """Each native session id with the working directory its records name."""
    found = {}
    for data in files.values():
        for line in data.decode("utf-8", "replace").split("\n"):
            try:
                record = json.loads(line)
            except ValueError:
                continue
            if isinstance(record, dict) and isinstance(record.get("cwd"), str):
                found.setdefault(record.get("sessionId"), record["cwd"])
    return found


def mistake(streams, files):
    cwd = directories(files)
    sessions = sorted(_producer.headers(streams), key=lambda h: h[0].get("startedAt", ""))
    for i, (header, _) in enumerate(sessions):
        if "lineage" in header or cwd.get(header.get("sessionId")) is None:
            continue
        for earlier, _ in sessions[:i]:
            if cwd.get(earlier.get("sessionId")) == cwd.get(header.get("sessionId")):
                agent = header.get("agent", {}).get("name", "agent")
                header["lineage"] = {"spawnedBy": {"session": f"{agent}:{earlier['sessionId']}",
                                                   "evidence": "converter_inference"}}
                break
    return streams


if __name__ == "__main__":
    _producer.run(__file__, mistake, whole=True)
