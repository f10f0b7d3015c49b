#!/usr/bin/env python3
"""asr-ctk-python-example-strict: adapter.py, over-strict in one place.

The spec leaves a delivery's status open: queued, sent, delivered, failed, suppressed and
unknown are the values it names, and a vendor may record its own. This variant rejects any
other value under ASR-234, as an implementer who read the list as closed would. Every
stream it rejects for that reason is valid, so the kit reports it as over-strict under
ASR-234 (`asr-ctk fuzz` finds it: the generator writes vendor values in every open set).
"""

import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
sys.dont_write_bytecode = True  # no __pycache__ left in the repository by a run

import adapter  # noqa: E402

adapter.IMPLEMENTATION = dict(adapter.IMPLEMENTATION, name=adapter.IMPLEMENTATION["name"] + "-strict")

LISTED = {"queued", "sent", "delivered", "failed", "suppressed", "unknown"}


def check_delivery_closed(record, report):
    adapter.check_delivery(record, report)
    status = record.get("status")
    if isinstance(status, str) and status and status not in LISTED:
        report("ASR-234", "/status", f"delivery status {status!r} is not one of the listed values")


adapter.RECORD_CHECKS["delivery"] = check_delivery_closed

if __name__ == "__main__":
    adapter.run()
