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
    _wrapper.credit_as_original(reading, stream, "copy")


if __name__ == "__main__":
    _wrapper.run(__file__, mutate)
