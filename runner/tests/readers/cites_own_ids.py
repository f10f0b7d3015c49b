#!/usr/bin/env python3
"""Validator for the kit's tests, named `wrong-cites_own_ids`.

A wrapper around the reference adapter (`python3 cites_own_ids.py ASR_CTK [--declare]`; see
_wrapper.py) that cites its own id `BAD-LINE` for the line check ASR-X-003. With
`--declare` its `started` message maps `BAD-LINE` to ASR-X-003 (`ruleAliases`) and the kit
counts its findings as ASR-X-003's; without, they match no expected finding.
"""

import os
import sys

sys.dont_write_bytecode = True  # leave no __pycache__ beside the fixtures
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import _wrapper  # noqa: E402

DECLARE = "--declare" in sys.argv[2:]


def validator(answer, stream):
    for finding in answer.get("diagnostics", []):
        if isinstance(finding, dict) and finding.get("rule") == "ASR-X-003":
            finding["rule"] = "BAD-LINE"


def started(reply):
    if DECLARE:
        reply["ruleAliases"] = {"BAD-LINE": "ASR-X-003"}


if __name__ == "__main__":
    _wrapper.run(__file__, validator=validator, started=started)
