#!/usr/bin/env python3
"""Proxy adapter for the kit's tests (persistent mode): forwards every request to the
kit's reference adapter (`BIN adapter reference`, BIN the first argument) as soon as it is
read, and every reply of the reference back, so it answers what the reference answers.

- PROXY_PIPELINED=1: its `started` declares the `pipelined` capability; otherwise it
  declares none but `streams-by-path`, and the kit must send one case at a time.
- PROXY_LOG=path: for each case it reads, appends a line to the file: how many cases it
  has read whose answers it has not written back yet, this one included (more than 1 only
  when the kit sent a case before the answer to an earlier one came).
- PROXY_EXIT_ONCE=path: on the 5th case of a process, when the file does not exist yet,
  creates it and exits with status 3, the cases it read after that one unanswered: the
  first process alone crashes, once.
- PROXY_HANG_ONCE=path: the same, but it sleeps forever instead of exiting (a hang).

Python 3.11 standard library only.
"""

import json
import os
import subprocess
import sys
import threading
import time

lock = threading.Lock()
unanswered = 0


def relay(reference):
    global unanswered
    for line in reference.stdout:
        reply = json.loads(line)
        if reply.get("type") == "started":
            pipelined = os.environ.get("PROXY_PIPELINED") == "1"
            reply["capabilities"] = ["streams-by-path"] + (["pipelined"] if pipelined else [])
            line = (json.dumps(reply) + "\n").encode()
        elif reply.get("type") in ("answered", "skipped", "error"):
            with lock:
                unanswered -= 1
        sys.stdout.buffer.write(line)
        sys.stdout.buffer.flush()


def main():
    global unanswered
    reference = subprocess.Popen([sys.argv[1], "adapter", "reference"],
                                 stdin=subprocess.PIPE, stdout=subprocess.PIPE)
    relaying = threading.Thread(target=relay, args=(reference,), daemon=True)
    relaying.start()
    log = os.environ.get("PROXY_LOG")
    once = os.environ.get("PROXY_EXIT_ONCE")
    hang = os.environ.get("PROXY_HANG_ONCE")
    cases = 0
    for line in sys.stdin.buffer:
        request = json.loads(line)
        if request.get("type") == "case":
            cases += 1
            if once and cases == 5 and not os.path.exists(once):
                open(once, "w").close()
                os._exit(3)
            if hang and cases == 5 and not os.path.exists(hang):
                open(hang, "w").close()
                while True:
                    time.sleep(3600)
            with lock:
                unanswered += 1
                waiting = unanswered
            if log:
                with open(log, "a") as out:
                    out.write(f"{waiting}\n")
        reference.stdin.write(line)
        reference.stdin.flush()
        if request.get("type") == "stop":
            break
    reference.stdin.close()
    relaying.join(timeout=5)


if __name__ == "__main__":
    try:
        main()
    except BrokenPipeError:
        os._exit(0)
