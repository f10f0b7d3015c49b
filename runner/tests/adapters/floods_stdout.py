#!/usr/bin/env python3
r"""Fault adapter for the kit's tests (persistent mode), named `fault-floods_stdout`.

On the 1st case it receives, writes a single line of 1 GiB (1 MiB chunks of "x", then
"\n") instead of an answer; answers the others normally. When the kit closes the pipe,
it exits quietly.
"""

import json
import os
import sys

NAME = "fault-floods_stdout"


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
            if received == 1:
                chunk = b"x" * (1 << 20)
                for _ in range(1024):
                    sys.stdout.buffer.write(chunk)
                    sys.stdout.buffer.flush()
                sys.stdout.buffer.write(b"\n")
                sys.stdout.buffer.flush()
            else:
                send(answered(request))


if __name__ == "__main__":
    try:
        main()
    except BrokenPipeError:
        # The kit closed our stdout: leave without a traceback (and without a last flush).
        os._exit(0)
