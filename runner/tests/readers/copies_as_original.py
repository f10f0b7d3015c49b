#!/usr/bin/env python3
"""Wrong reader for the kit's tests, named `wrong-copies_as_original`.

A wrapper around the reference adapter (`python3 copies_as_original.py ASR_CTK`; see
_wrapper.py) whose one mistake is counting copies as original work: in each reading, every
record whose originality is `copy` becomes `original`, and its id joins
`totals.ownRecords` (kept in stream order, by the records' seq). Breaks ASR-416/417; the
kit reports it under ASR-415, -416, -417 or -423, depending on the case.
"""

import os
import sys

sys.dont_write_bytecode = True  # leave no __pycache__ beside the fixtures
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import _wrapper  # noqa: E402


def mutate(reading, stream):
    records = reading.get("records")
    totals = reading.get("totals")
    if not isinstance(records, dict) or not isinstance(totals, dict):
        return
    own = totals.get("ownRecords")
    if not isinstance(own, list):
        return
    own = list(own)
    changed = False
    for record_id, record in records.items():
        if isinstance(record, dict) and record.get("originality") == "copy":
            record["originality"] = "original"
            if record_id not in own:
                own.append(record_id)
            changed = True
    if changed:
        totals["ownRecords"] = stream.order_by_seq(own)


if __name__ == "__main__":
    _wrapper.run(__file__, mutate)
