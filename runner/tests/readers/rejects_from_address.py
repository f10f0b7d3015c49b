#!/usr/bin/env python3
"""Wrong validator for the kit's tests, named `wrong-rejects_from_address`.

A wrapper around the reference adapter (`python3 rejects_from_address.py ASR_CTK`; see
_wrapper.py) that wrongly takes a message's `from` to need a participant: every record whose
`from` is an object with `address` and no `participant` gets an ASR-228 error, and the stream
is rejected. ASR-228 is the rule that fails; the rules of the cases those streams stand in
(ASR-210, -230, -233 among them) must stay conformant.
"""

import os
import sys

sys.dont_write_bytecode = True  # leave no __pycache__ beside the fixtures
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import _wrapper  # noqa: E402


def validator(answer, stream):
    lines = stream_lines(stream)
    for number, record in lines:
        sender = record.get("from")
        if isinstance(sender, dict) and "address" in sender and "participant" not in sender:
            answer["valid"] = False
            answer.setdefault("diagnostics", []).append(
                {"rule": "ASR-228", "severity": "error", "line": number, "pointer": "/from",
                 "message": "from needs a participant"})


def stream_lines(stream):
    """(line number, record) for the stream's records, numbered as in the file: the header is
    line 1 and each record follows in order (the corpus has no blank lines in these cases)."""
    return [(n + 2, record) for n, record in enumerate(stream.records.values())]


if __name__ == "__main__":
    _wrapper.run(__file__, validator=validator)
