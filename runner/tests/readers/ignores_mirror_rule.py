#!/usr/bin/env python3
"""Wrong reader for the kit's tests, named `wrong-ignores_mirror_rule`.

A wrapper around the reference adapter (`python3 ignores_mirror_rule.py ASR_CTK`; see
_wrapper.py) whose one mistake is ignoring the mirror rule: in a stream whose header has
`authority: "mirror"`, every record whose originality is `unknown` becomes `original`
and joins `totals.ownRecords` (in stream order, by seq); `mayIncludeCopies` becomes false
when no record is left unknown. Breaks ASR-423.
"""

import os
import sys

sys.dont_write_bytecode = True  # leave no __pycache__ beside the fixtures
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import _wrapper  # noqa: E402


def mutate(reading, stream):
    header = stream.header
    if not isinstance(header, dict) or header.get("authority") != "mirror":
        return
    if not _wrapper.credit_as_original(reading, stream, "unknown"):
        return
    totals = reading["totals"]
    left_unknown = any(isinstance(record, dict) and record.get("originality") == "unknown"
                       for record in reading["records"].values())
    if "mayIncludeCopies" in totals and not left_unknown:
        totals["mayIncludeCopies"] = False


if __name__ == "__main__":
    _wrapper.run(__file__, mutate)
