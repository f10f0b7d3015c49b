#!/usr/bin/env python3
"""Wrong reader for the kit's tests, named `wrong-first_delivery_revision`.

A wrapper around the reference adapter (`python3 first_delivery_revision.py ASR_CTK`; see
_wrapper.py) whose one mistake is taking each delivery at its FIRST revision instead of its
latest: `delivered` is recomputed for every message of the reading from the stream, true
when some delivery chain for the message has status `sent` or `delivered` at the first
record of the chain. Breaks ASR-237.

A chain ends at a delivery that no other delivery supersedes (its latest revision) and is
followed back through `supersedes` to its first record. Its message is the `message` of
its latest record that has one (a revision without `message` inherits the chain's): a record
id (`r12`) or a native id (`messageId=...`), which names every message with that messageId.
"""

import os
import sys

sys.dont_write_bytecode = True  # leave no __pycache__ beside the fixtures
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import _wrapper  # noqa: E402

CONFIRMED = ("sent", "delivered")


def mutate(reading, stream):
    records = reading.get("records")
    if not isinstance(records, dict):
        return
    deliveries = [record_id for record_id, record in stream.records.items()
                  if record.get("type") == "delivery"]
    delivery_set = set(deliveries)
    previous = {}  # delivery id -> the delivery it supersedes
    for record_id in deliveries:
        named = [target for target in stream.resolve(stream.records[record_id].get("supersedes"))
                 if target in delivery_set and target != record_id]
        if named:
            previous[record_id] = named[-1]  # the latest record the reference names
    superseded = set(previous.values())
    delivered = set()
    for latest in deliveries:
        if latest in superseded:
            continue
        chain = [latest]
        while chain[-1] in previous and previous[chain[-1]] not in chain:
            chain.append(previous[chain[-1]])
        first = stream.records[chain[-1]]
        message = next((stream.records[record_id]["message"] for record_id in chain
                        if isinstance(stream.records[record_id].get("message"), str)), None)
        if first.get("status") in CONFIRMED:
            delivered.update(stream.resolve(message))
    for record_id, record in records.items():
        if isinstance(record, dict) and record.get("type") == "message":
            record["delivered"] = record_id in delivered


if __name__ == "__main__":
    _wrapper.run(__file__, mutate)
