#!/usr/bin/env python3
"""Wrong reader for the kit's tests, named `wrong-derived_in_prefix_as_original`.

A wrapper around the reference adapter (see _wrapper.py) whose one mistake is reading a
message with derivedFrom as original wherever it stands, inside the copied prefix too: ASR-426
("new content of its own session") taken over ASR-415 ("every record with a seq at or below
that record's seq ... is a copy"). The kit decides the prefix wins (decision
derived-in-prefix).
"""

import os
import sys

sys.dont_write_bytecode = True  # leave no __pycache__ beside the fixtures
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import _wrapper  # noqa: E402


def mutate(reading, stream):
    for record_id, record in stream.records.items():
        read = reading.get("records", {}).get(record_id)
        if (isinstance(read, dict) and "derivedFrom" in record and "copiedFrom" not in record
                and read.get("originality") == "copy"):
            read["originality"] = "original"
            own = reading.get("totals", {}).get("ownRecords")
            if isinstance(own, list) and record_id not in own:
                own.append(record_id)
                own[:] = stream.order_by_seq(own)


if __name__ == "__main__":
    _wrapper.run(__file__, mutate)
