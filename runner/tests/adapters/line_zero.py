#!/usr/bin/env python3
"""Fault adapter for the kit's tests (persistent mode), named `fault-line_zero`.

Rejects every stream with a finding on line 0: JSON the kit's reply types could read, but
that the reply schema refuses (lines are 1-based). Only --validate-protocol catches it.
"""

import json
import os
import sys

NAME = "fault-line_zero"


def send(message):
    sys.stdout.buffer.write(json.dumps(message).encode() + b"\n")
    sys.stdout.buffer.flush()


def main():
    while True:
        line = sys.stdin.buffer.readline()
        if not line:
            return
        request = json.loads(line)
        if request["type"] == "start":
            send({"type": "started", "protocol": 1,
                  "implementation": {"name": NAME, "version": "0.1.0", "language": "python"},
                  "roles": ["validator"], "formatVersions": ["0.1"]})
        elif request["type"] == "stop":
            return
        elif request["type"] == "case":
            finding = {"rule": "ASR-212", "severity": "error", "line": 0}
            streams = [{"valid": False, "diagnostics": [finding]} for _ in request["streams"]]
            send({"type": "answered", "seq": request["seq"], "streams": streams})


if __name__ == "__main__":
    try:
        main()
    except BrokenPipeError:
        os._exit(0)
