#!/usr/bin/env python3
"""A producer adapter (PROTOCOL.md, one-shot mode) around a converter command: the kit runs
it once per source fixture, with the source's files as arguments. It runs the converter on
the Gemini CLI sessions it reads and skips every other format."""

import json
import os
import subprocess
import sys

CONVERTER = [sys.executable, os.path.join(os.path.dirname(os.path.abspath(__file__)), "gemini_to_asr.py")]


def reply(message):
    print(json.dumps(message))


if os.environ.get("ASR_CTK_HANDSHAKE"):
    reply({"type": "started", "protocol": 1, "roles": ["producer"], "formatVersions": ["0.1"],
           "implementation": {"name": "gemini-to-asr", "version": "0.1.0", "language": "python"}})
elif os.environ.get("ASR_CTK_FORMAT") != "gemini-cli-json":
    reply({"type": "skipped", "reason": f"reads gemini-cli-json, not {os.environ.get('ASR_CTK_FORMAT')}"})
else:
    output = os.path.join(os.environ["ASR_CTK_OUTPUT_DIR"], "stream.jsonl")
    with open(output, "wb") as stream:
        done = subprocess.run(CONVERTER + sys.argv[1:], stdout=stream, stderr=subprocess.PIPE, text=True)
    if done.returncode == 3:
        os.remove(output)
        reply({"type": "skipped", "reason": done.stderr.strip()})
    elif done.returncode != 0:
        os.remove(output)
        reply({"type": "error", "message": done.stderr.strip() or f"exit status {done.returncode}"})
