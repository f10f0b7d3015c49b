"""Shared plumbing of the fault adapters in this directory (not an adapter itself).

A fault adapter speaks the persistent mode of the protocol, names itself
`fault-<script stem>` and plays validator. It reads one JSON request a line from stdin:
it answers `start` with `started`, stops on `stop` or at end of input (exit status 0), and
hands every `case` to its own handler; other requests are ignored. Every line it writes to
stdout is flushed at once. When the kit closes its stdout, it leaves quietly: status 0, no
traceback and no last flush. Python 3.11 standard library only.

A fault script imports this module with `sys.dont_write_bytecode = True` set first (no
__pycache__ is left beside the fixtures), and calls `run(__file__, ...)` with only what
makes it misbehave.
"""

import json
import os
import subprocess
import sys


def write(data):
    """Writes bytes to stdout and flushes them."""
    sys.stdout.buffer.write(data)
    sys.stdout.buffer.flush()


def send(message):
    """Writes a message to stdout as one JSON line, and flushes it."""
    write(json.dumps(message).encode() + b"\n")


def started(name):
    """The `started` reply of a validator named `name`."""
    return {"type": "started", "protocol": 1,
            "implementation": {"name": name, "version": "0.1.0", "language": "python"},
            "roles": ["validator"], "formatVersions": ["0.1"]}


def answered(request):
    """The normal `answered` reply to a case request: every stream valid, no diagnostics."""
    streams = [{"valid": True, "diagnostics": []} for _ in request["streams"]]
    return {"type": "answered", "seq": request["seq"], "streams": streams}


def answer(request, number):
    """The normal case handler: answers the case."""
    send(answered(request))


def linger(script, detach=False, hold_stdout=False):
    """Starts a process that sleeps for two minutes and whose command line names `script`, so
    that a test can tell whether it outlived the run.

    `detach`: it leaves this process's group and session, and is re-parented away from this
    process (setsid and a double fork), as a daemon does. `hold_stdout`: it keeps this
    process's stdout open (otherwise its standard streams are /dev/null).
    """
    # The command line names the script and the arguments it was given, as the adapter's does.
    args = [sys.executable, "-c", "import time; time.sleep(120)", os.path.abspath(script)]
    args += sys.argv[1:]
    if not detach:
        subprocess.Popen(args, stdin=subprocess.DEVNULL,
                         stdout=None if hold_stdout else subprocess.DEVNULL,
                         stderr=subprocess.DEVNULL)
        return
    pid = os.fork()
    if pid == 0:
        os.setsid()
        if os.fork() == 0:
            null = os.open(os.devnull, os.O_RDWR)
            os.dup2(null, 0)
            if not hold_stdout:
                os.dup2(null, 1)
            os.dup2(null, 2)
            os.execv(sys.executable, args)
        os._exit(0)
    os.waitpid(pid, 0)


def run(script, case=answer, start=send):
    """Runs the fault adapter named after `script` (its __file__).

    `start(reply)` is called on each `start` request with the `started` reply, which it
    is to send (by default it just sends it). `case(request, number)` is called on each
    `case` request, `number` being how many cases this process has received, this one
    included (1 for the first).
    """
    name = "fault-" + os.path.splitext(os.path.basename(script))[0]
    try:
        _loop(name, case, start)
    except BrokenPipeError:
        # The kit closed our stdout: leave without a traceback (and without a last flush).
        os._exit(0)


def _loop(name, case, start):
    received = 0
    while True:
        line = sys.stdin.buffer.readline()
        if not line:
            return
        request = json.loads(line)
        if request["type"] == "start":
            start(started(name))
        elif request["type"] == "stop":
            return
        elif request["type"] == "case":
            received += 1
            case(request, received)
