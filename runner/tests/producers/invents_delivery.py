#!/usr/bin/env python3
"""A wrong producer: writes a `sent` delivery after every assistant message with text, as a
converter that takes an answer's existence for its sending would (ASR-237: deliveries only
from the source's record of an outbound attempt or its outcome). See _producer.py."""

import os
import sys

sys.dont_write_bytecode = True  # leave no __pycache__ beside the fixtures
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import _producer  # noqa: E402


def mistake(records, _files):
    out = []
    for record in records:
        out.append(record)
        texts = [p for p in record.get("content") or [] if isinstance(p, dict) and p.get("type") == "text"]
        if record.get("type") == "message" and record.get("role") == "assistant" and texts:
            delivery = {"type": "delivery", "seq": 0, "id": f"{record['id']}-sent",
                        "message": f"messageId={record['messageId']}", "status": "sent"}
            if "ts" in record:
                delivery["ts"] = record["ts"]
            out.append(delivery)
    return _producer.renumber(out)


if __name__ == "__main__":
    _producer.run(__file__, mistake)
