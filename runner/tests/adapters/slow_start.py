#!/usr/bin/env python3
"""Fault adapter for the kit's tests (persistent mode), named `fault-slow_start`.

Sleeps 2 seconds before answering `start`, then behaves normally.
"""

import json
import os
import sys
import time

NAME = "fault-slow_start"


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
            time.sleep(2)
            send(started())
        elif request["type"] == "stop":
            return
        elif request["type"] == "case":
            send(answered(request))


if __name__ == "__main__":
    try:
        main()
    except BrokenPipeError:
        # The kit closed our stdout: leave without a traceback (and without a last flush).
        os._exit(0)
