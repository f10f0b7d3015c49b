#!/usr/bin/env python3
"""Fault adapter for the kit's tests (persistent mode), named `fault-hangs_on_one_case`.

Answers every case but one, on which it sleeps forever: the case named by the
environment variable FAULT_CASE or, when it is unset, the 3rd case it receives.
"""

import json
import os
import sys
import time

NAME = "fault-hangs_on_one_case"


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


def sleep_forever():
    while True:
        time.sleep(3600)


def main():
    received = 0
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
            received += 1
            target = os.environ.get("FAULT_CASE")
            if (request["case"] == target) if target else received == 3:
                sleep_forever()
            send(answered(request))


if __name__ == "__main__":
    try:
        main()
    except BrokenPipeError:
        # The kit closed our stdout: leave without a traceback (and without a last flush).
        os._exit(0)
