#!/usr/bin/env python3
"""Fault adapter for the kit's tests (persistent mode), named `fault-ignores_term`.

Ignores SIGTERM and SIGINT, writes its pid to the file named by $PID_FILE when it starts, and
takes a minute over every case. The protocol plumbing is in _fault.py.
"""

import os
import signal
import sys
import time

sys.dont_write_bytecode = True  # leave no __pycache__ beside the fixtures
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import _fault  # noqa: E402


def start(reply):
    _fault.send(reply)


def case(request, number):
    with open(os.environ["PID_FILE"], "w") as out:
        out.write(str(os.getpid()))
    time.sleep(60)
    _fault.answer(request, number)


if __name__ == "__main__":
    signal.signal(signal.SIGTERM, signal.SIG_IGN)
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    _fault.run(__file__, case, start)
