#!/usr/bin/env python3
"""Fault adapter for the kit's tests (persistent mode), named `fault-exits_zero_silently`.

Answers `start`, then exits with status 0 on the first case, without answering it.
"""

import json
import os
import sys

NAME = "fault-exits_zero_silently"


def send(message):
    sys.stdout.buffer.write(json.dumps(message).encode() + b"\n")
    sys.stdout.buffer.flush()


def started():
    return {"type": "started", "protocol": 1,
            "implementation": {"name": NAME, "version": "0.1.0", "language": "python"},
            "roles": ["validator"], "formatVersions": ["0.1"]}


def answered(request):
    streams = [{"valid": True, "diagnostics": []} for _ in request["streams"]]
    return {"type": "answered", "seq": request["seq"], "streams": streams}


def main():
    while True:
        line = sys.stdin.buffer.readline()
        if not line:
            return
        request = json.loads(line)
        if request["type"] == "start":
            send(started())
        elif request["type"] == "stop":
            return
        elif request["type"] == "case":
            sys.exit(0)


if __name__ == "__main__":
    try:
        main()
    except BrokenPipeError:
        # The kit closed our stdout: leave without a traceback (and without a last flush).
        os._exit(0)
