#!/usr/bin/env python3
"""A wrong producer: marks a message as a copy of an earlier one (in its own stream or
another written with it) when its text is the same (ASR-414: similar text is never proof of a
copy). See _producer.py."""

import os
import sys

sys.dont_write_bytecode = True  # leave no __pycache__ beside the fixtures
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import _producer  # noqa: E402


def mistake(streams, _files):
    seen = {}  # text -> (session id, messageId) of its first message
    for header, records in _producer.headers(streams):
        session = f"{header.get('agent', {}).get('name', 'agent')}:{header.get('sessionId')}"
        for record in records:
            text = _producer.text_of(record)
            if text is None or "messageId" not in record:
                continue
            if text in seen and "copiedFrom" not in record:
                where, message = seen[text]
                copied = {"record": f"messageId={message}", "proof": "native_field"}
                if where != session:
                    copied = {"session": where, **copied}
                record["copiedFrom"] = copied
            seen.setdefault(text, (session, record["messageId"]))
    return streams


if __name__ == "__main__":
    _producer.run(__file__, mistake, whole=True)
