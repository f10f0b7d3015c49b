"""Shared plumbing of the deliberately wrong producers in this directory (not a producer itself).

Each wrong producer plays the producer role in persistent mode (PROTOCOL.md). It converts
nothing: for a producer case it takes the golden output of the kit's source fixture the
source files come from (`<fixture>/expected/*.jsonl`, beside the `source/` directory the
files are in; it declares `streams-by-path` so the kit sends paths), makes one realistic
mistake on it, and answers with the result. Its mistake is a function of the records of each
output stream (a list of dicts, in order) that returns the records to write; it may also
look at the source files. A mistake that finds nothing to change on a fixture writes the
golden unchanged, as a converter whose bug the source does not trigger.

Python 3.11 standard library only.
"""

import json
import os
import sys


def goldens(source_path):
    """The golden streams (name, text) beside the fixture the source file is in."""
    fixture = os.path.dirname(os.path.dirname(os.path.abspath(source_path)))
    expected = os.path.join(fixture, "expected")
    found = []
    for name in sorted(os.listdir(expected)):
        if name.endswith(".jsonl"):
            with open(os.path.join(expected, name), encoding="utf-8") as stream:
                stem = name[: -len(".jsonl")]
                found.append(("" if stem == "stream" else stem, stream.read()))
    return found


def renumber(records):
    """Gives the records seq 0, 1, 2, ... in order (after a mistake that adds or removes
    one), keeping every other member."""
    for seq, record in enumerate(records):
        record["seq"] = seq
    return records


def messages(records):
    return [r for r in records if r.get("type") == "message"]


def text_parts(records):
    """Every text part of every message."""
    for record in messages(records):
        for part in record.get("content") or []:
            if isinstance(part, dict) and part.get("type") == "text" and isinstance(part.get("text"), str):
                yield part


def source_files(request):
    """The request's source files: name -> bytes."""
    files = {}
    for stream in request.get("streams", []):
        with open(stream["path"], "rb") as source:
            files[stream["part"]] = source.read()
    return files


def answer(request, mistake, whole):
    files = source_files(request)
    streams = [(name, [json.loads(line) for line in text.split("\n") if line.strip()])
               for name, text in goldens(request["streams"][0]["path"])]
    if whole:
        streams = mistake(streams, files)
    else:
        streams = [(name, mistake(records, files)) for name, records in streams]
    outputs = [{"name": name,
                "lines": [json.dumps(r, ensure_ascii=False, separators=(",", ":")) for r in records]}
               for name, records in streams]
    return {"type": "answered", "seq": request["seq"], "outputs": outputs}


def headers(streams):
    """The header of each stream that has one, with its records: (header, records)."""
    for _, records in streams:
        if records and records[0].get("type") == "session":
            yield records[0], records


def text_of(record):
    """A message's text parts, joined; None for a message without text."""
    texts = [p["text"] for p in record.get("content") or []
             if isinstance(p, dict) and p.get("type") == "text" and isinstance(p.get("text"), str)]
    return "".join(texts) if record.get("type") == "message" and texts else None


def run(script, mistake, whole=False):
    """Serves the kit: `start`, then each producer case answered with `mistake` made: on each
    stream's records, or (`whole`) on the list of every stream's (name, records)."""
    name = "wrong-" + os.path.splitext(os.path.basename(script))[0]
    out = sys.stdout
    for line in sys.stdin:
        request = json.loads(line)
        kind = request.get("type")
        if kind == "start":
            reply = {"type": "started", "protocol": 1,
                     "implementation": {"name": name, "version": "0.1.0", "language": "python"},
                     "roles": ["producer"], "formatVersions": ["0.1"],
                     "capabilities": ["streams-by-path"]}
        elif kind == "case":
            try:
                reply = answer(request, mistake, whole)
            except (OSError, ValueError, KeyError) as error:
                reply = {"type": "error", "seq": request.get("seq", 0), "message": repr(error)}
        else:
            break
        out.write(json.dumps(reply, ensure_ascii=False) + "\n")
        out.flush()
