#!/usr/bin/env python3
"""A producer that breaks the protocol, or writes a broken stream, as its argument says:

- `streams`: answers with `streams` (a validator's answer) instead of `outputs`;
- `no-outputs`: answers with an empty `outputs`;
- `twice`: writes the golden twice under one name;
- `headless`: writes the golden without its header line (not a valid stream);
- `member`: answers with an output that has a member the reply schema does not define;
- `joined`: writes the golden's first two lines as one entry of `lines`, a newline inside;
- `stdout` (one-shot): prints the golden's first stream itself on stdout, no reply (a
  fixture of several streams gets one of them);
- `outdir` (one-shot): writes every stream of the golden into ASR_CTK_OUTPUT_DIR, as
  stream.jsonl and <name>.jsonl, prints nothing;
- `nothing` (one-shot): exits 0 having written nothing;
- `immutable` (one-shot): as `outdir`, then makes the stream immutable (`chattr +i`), so that
  the kit cannot remove it.

Persistent mode unless the kit's one-shot environment is set. See _producer.py.
"""

import json
import os
import subprocess
import sys

sys.dont_write_bytecode = True  # leave no __pycache__ beside the fixtures
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import _producer  # noqa: E402

MODE = sys.argv[1] if len(sys.argv) > 1 else "streams"
STARTED = {"type": "started", "protocol": 1,
           "implementation": {"name": "faulty-" + MODE, "version": "0.1.0", "language": "python"},
           "roles": ["producer"], "formatVersions": ["0.1"], "capabilities": ["streams-by-path"]}


def golden_text(source_path):
    return _producer.goldens(source_path)[0][1]


def persistent():
    for line in sys.stdin:
        request = json.loads(line)
        if request["type"] == "start":
            reply = STARTED
        elif request["type"] == "case":
            seq = request["seq"]
            if MODE == "member":
                reply = {"type": "answered", "seq": seq,
                         "outputs": [{"name": "", "lines": [], "encoding": "utf-8"}]}
                sys.stdout.write(json.dumps(reply) + "\n")
                sys.stdout.flush()
                continue
            text = golden_text(request["streams"][0]["path"])
            lines = [l for l in text.split("\n") if l]
            if MODE == "streams":
                reply = {"type": "answered", "seq": seq, "streams": [{"valid": True}]}
            elif MODE == "no-outputs":
                reply = {"type": "answered", "seq": seq, "outputs": []}
            elif MODE == "twice":
                reply = {"type": "answered", "seq": seq,
                         "outputs": [{"name": "a", "lines": lines}, {"name": "a", "lines": lines}]}
            elif MODE == "joined":
                reply = {"type": "answered", "seq": seq,
                         "outputs": [{"name": "", "lines": ["\n".join(lines[:2])] + lines[2:]}]}
            else:  # headless
                reply = {"type": "answered", "seq": seq, "outputs": [{"name": "", "lines": lines[1:]}]}
        else:
            break
        sys.stdout.write(json.dumps(reply) + "\n")
        sys.stdout.flush()


def oneshot():
    if os.environ.get("ASR_CTK_HANDSHAKE"):
        print(json.dumps(STARTED))
        return
    # The source was copied for the one-shot run: the golden is found by the case's name.
    cases = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "..", "cases")
    fixture = os.path.join(cases, os.environ["ASR_CTK_CASE"], "source", "x")
    text = golden_text(fixture)
    if MODE == "stdout":
        sys.stdout.write(text)
    elif MODE in ("outdir", "immutable"):
        for name, stream in _producer.goldens(fixture):
            path = os.path.join(os.environ["ASR_CTK_OUTPUT_DIR"], (name or "stream") + ".jsonl")
            with open(path, "w", encoding="utf-8") as out:
                out.write(stream)
            if MODE == "immutable":
                subprocess.run(["chattr", "+i", path], check=True)


if __name__ == "__main__":
    if os.environ.get("ASR_CTK_HANDSHAKE") or os.environ.get("ASR_CTK_ROLE"):
        oneshot()
    else:
        persistent()
