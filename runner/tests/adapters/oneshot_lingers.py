#!/usr/bin/env python3
"""Fault adapter for the kit's tests (one-shot mode), named `fault-oneshot_lingers`.

Prints its `started` message for the handshake. For a case, prints a valid answer (every
stream valid), then leaves a process behind before exiting: with $LINGER=stdout one that
keeps its stdout open, with $LINGER=detach a daemon (setsid and a double fork). Both sleep
for two minutes.
"""

import os
import sys

sys.dont_write_bytecode = True  # leave no __pycache__ beside the fixtures
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import _fault  # noqa: E402


if __name__ == "__main__":
    if os.environ.get("ASR_CTK_HANDSHAKE"):
        _fault.send(_fault.started("fault-oneshot_lingers"))
        sys.exit(0)
    sys.stdin.buffer.read()
    _fault.send({"type": "answered", "streams": [{"valid": True, "diagnostics": []}]})
    _fault.linger(__file__, detach=os.environ.get("LINGER") == "detach",
                  hold_stdout=os.environ.get("LINGER") == "stdout")
    os._exit(0)
