"""Shared plumbing of the deliberately wrong readers in this directory (not a reader itself).

Each reader is a thin wrapper around the kit's reference adapter: it starts
`[ASR_CTK, "adapter", "reference"]` (ASR_CTK is its first argument; a path ending in `.py`
is run with the running Python, so a fake reference can stand in for the kit), forwards
every request line to it and every reply line back, and changes only:

- the `started` reply: implementation name `wrong-<script stem>`, roles validator and reader;
- the `reading` of each stream of an `answered` reply to a `case` request whose role is
  `reader`, through the reader's one mutation;
- for the wrong validators, each stream's answer (`valid`, `diagnostics`) of an `answered`
  reply to a `case` request whose role is `validator`, and the `started` reply itself.

On `stop` or end of input it stops the reference and exits; when the kit closes its end of
a pipe it leaves quietly. Python 3.11 standard library only.
"""

import base64
import copy
import json
import os
import re
import subprocess
import sys
import threading

ROLES = ["validator", "reader"]
NAME_KEY = re.compile(r"^[A-Za-z][A-Za-z0-9_]*$")
BOM = b"\xef\xbb\xbf"


class Stream:
    """A stream of a case request, decoded from its base64 `data` (or read from its `path`
    when the kit sent no data, as it does for a reference that reads streams by path), read
    as the reading section of PROTOCOL.md says: the first line is the header (when it is a `session`), every
    other line with an `id` is a record, and a repeated id keeps its first record. Lines that
    are not JSON objects are left out."""

    def __init__(self, data, path=None):
        self.header = None
        self.records = {}  # id -> record object, in stream order
        self.repeated = {}  # id -> the last record of an id that more than one line has
        try:
            if data is None and path:
                with open(path, "rb") as stream:
                    raw = stream.read()
            else:
                raw = base64.b64decode(data or "", validate=False)
        except (ValueError, TypeError, OSError):
            raw = b""
        first = True
        for line in raw.split(b"\n"):
            if line.endswith(b"\r"):
                line = line[:-1]
            if first and line.startswith(BOM):
                line = line[len(BOM):]
            if not line.strip():
                continue
            try:
                value = json.loads(line)
            except (ValueError, UnicodeDecodeError):
                value = None
            if first:
                first = False
                if isinstance(value, dict) and value.get("type") == "session":
                    self.header = value
                    continue
            if isinstance(value, dict) and isinstance(value.get("id"), str):
                if value["id"] in self.records:
                    self.repeated[value["id"]] = value
                self.records.setdefault(value["id"], value)
        self.raw = raw

    def seq(self, record_id):
        """The record's seq, or None when the stream has no such record or no integer seq."""
        record = self.records.get(record_id)
        seq = record.get("seq") if record is not None else None
        if isinstance(seq, int) and not isinstance(seq, bool):
            return seq
        return None

    def order_by_seq(self, ids):
        """The ids ordered by their records' seq (stable; ids without a seq go last)."""
        def key(record_id):
            seq = self.seq(record_id)
            return (seq is None, seq if seq is not None else 0)
        return sorted(ids, key=key)

    def content_part(self, record_id, index):
        """The record's `content[index]` as it stands in the stream, or None."""
        record = self.records.get(record_id)
        content = record.get("content") if record is not None else None
        if isinstance(content, list) and 0 <= index < len(content):
            return content[index]
        return None

    def resolve(self, reference):
        """The ids of the records a reference (ASR-062) names, in stream order: a native id
        (`messageId=msg_01`) names every record whose member `messageId` is `msg_01`; anything
        else is a record id."""
        if not isinstance(reference, str) or not reference:
            return []
        key, sep, value = reference.partition("=")
        if sep and value and NAME_KEY.match(key):
            named = [rid for rid, record in self.records.items() if record.get(key) == value]
            if named:
                return named
        return [reference] if reference in self.records else []


def parts(reading, stream):
    """Every part of the reading's messages, with the content part it was read from (or
    None), as (part, source) pairs; parts that are not objects are passed over."""
    records = reading.get("records")
    if not isinstance(records, dict):
        return
    for record_id, record in records.items():
        read_parts = record.get("parts") if isinstance(record, dict) else None
        if not isinstance(read_parts, list):
            continue
        for position, part in enumerate(read_parts):
            if isinstance(part, dict):
                yield part, stream.content_part(record_id, position)


def credit_as_original(reading, stream, originality):
    """Reads every record of the given originality as original and adds it to ownRecords,
    in stream order. Returns whether anything changed; a reading without records or
    ownRecords is left alone."""
    records = reading.get("records")
    totals = reading.get("totals")
    if not isinstance(records, dict) or not isinstance(totals, dict):
        return False
    own = totals.get("ownRecords")
    if not isinstance(own, list):
        return False
    own = list(own)
    changed = False
    for record_id, record in records.items():
        if isinstance(record, dict) and record.get("originality") == originality:
            record["originality"] = "original"
            if record_id not in own:
                own.append(record_id)
            changed = True
    if changed:
        totals["ownRecords"] = stream.order_by_seq(own)
    return changed


def _end(reference):
    """Ends the reference process (the wrapper's own child) and reaps it."""
    reference.kill()
    try:
        reference.wait(timeout=5)
    except subprocess.TimeoutExpired:
        pass


def is_json(line):
    """Whether a line of bytes is JSON text, decoded as UTF-8 first (json.loads of bytes
    would itself read past a byte order mark)."""
    try:
        json.loads(line.decode("utf-8"))
        return True
    except (ValueError, UnicodeDecodeError):
        return False


def read_anyway(answer):
    """Turns a refusal into a reading: the reference's reading of what it read is kept."""
    answer["valid"] = True
    answer["diagnostics"] = []


def reference_command(asr_ctk):
    if asr_ctk.endswith(".py"):
        return [sys.executable or "python3", asr_ctk, "adapter", "reference"]
    return [asr_ctk, "adapter", "reference"]


def mutate_streams(reply, request, mutate):
    """Applies `mutate(answer, stream)` to each stream's answer of the reply, given the
    request's Stream; True when the reply changed. A mutation that raises (an answer of an
    unexpected shape) leaves that answer as it was."""
    streams = reply.get("streams")
    requested = request.get("streams")
    if not isinstance(streams, list) or not isinstance(requested, list):
        return False
    changed = False
    for index, (answer, asked) in enumerate(zip(streams, requested)):
        if not isinstance(answer, dict) or not isinstance(asked, dict):
            continue
        before = copy.deepcopy(answer)
        try:
            mutate(answer, Stream(asked.get("data"), asked.get("path")))
        except Exception as error:
            sys.stderr.write(f"wrong implementation: answer left unchanged: {error!r}\n")
            sys.stderr.flush()
            streams[index] = before
            continue
        changed |= answer != before
    return changed


def on_reading(mutate):
    """A stream mutation that changes only the answer's reading, when it has one."""
    def mutate_answer(answer, stream):
        if isinstance(answer.get("reading"), dict):
            mutate(answer["reading"], stream)
    return mutate_answer


def run(script, mutate=None, validator=None, started=None, answer=None):
    """Runs the wrapper named after `script` (its __file__) with the given mutations: `mutate`
    changes a reading (a dict) in place given the request's Stream, `answer` a reader's whole
    answer for one stream (`valid`, `diagnostics`, `reading`) in place of `mutate`,
    `validator` a validator's answer for one stream (a dict with `valid` and `diagnostics`),
    `started` the `started` reply."""
    name = "wrong-" + os.path.splitext(os.path.basename(script))[0]
    if len(sys.argv) < 2:
        sys.stderr.write(f"usage: {os.path.basename(script)} ASR_CTK\n")
        sys.exit(2)
    try:
        reader = answer if answer is not None else (on_reading(mutate) if mutate else None)
        _run(name, sys.argv[1], reader, validator, started)
    except BrokenPipeError:
        os._exit(0)


def _run(name, asr_ctk, mutate, validator, started):
    reference = subprocess.Popen(reference_command(asr_ctk), stdin=subprocess.PIPE,
                                 stdout=subprocess.PIPE)
    pending = {}  # seq -> reader case request awaiting its answer
    lock = threading.Lock()
    out = sys.stdout.buffer

    def transform(line):
        try:
            reply = json.loads(line)
        except (ValueError, UnicodeDecodeError):
            return line
        if not isinstance(reply, dict):
            return line
        kind = reply.get("type")
        if kind == "started":
            implementation = reply.get("implementation")
            if isinstance(implementation, dict):
                implementation["name"] = name
            reply["roles"] = list(ROLES)
            if started is not None:
                started(reply)
        elif kind in ("answered", "skipped", "error"):
            with lock:
                seq = reply.get("seq")
                request = pending.pop(seq, None) if isinstance(seq, int) else None
            if kind != "answered" or request is None:
                return line
            if request.get("role") == "reader":
                changed = mutate is not None and mutate_streams(reply, request, mutate)
            else:
                changed = validator is not None and mutate_streams(reply, request, validator)
            if not changed:
                return line
        else:
            return line
        return json.dumps(reply, ensure_ascii=False, separators=(",", ":")).encode() + b"\n"

    def pump():
        # The reference's replies, back to the kit. When the reference ends its output (it
        # stopped, or died), the wrapper ends too, so that the kit sees what happened.
        try:
            for line in reference.stdout:
                out.write(transform(line))
                out.flush()
        except BrokenPipeError:
            # The kit closed our stdout: end the reference and leave without a traceback.
            _end(reference)
            os._exit(0)
        except Exception as error:  # never hang the kit on a bug of the wrapper
            sys.stderr.write(f"wrong reader: {error!r}\n")
            sys.stderr.flush()
            _end(reference)
            os._exit(1)
        try:
            reference.wait(timeout=5)
        except subprocess.TimeoutExpired:
            _end(reference)
        os._exit(0)

    threading.Thread(target=pump, daemon=True).start()

    stdin = sys.stdin.buffer
    while True:
        line = stdin.readline()
        if not line:
            break
        stop = False
        try:
            request = json.loads(line)
        except (ValueError, UnicodeDecodeError):
            request = None
        if isinstance(request, dict):
            if (request.get("type") == "case" and isinstance(request.get("seq"), int)):
                with lock:
                    pending[request.get("seq")] = request
            stop = request.get("type") == "stop"
        try:
            reference.stdin.write(line)
            reference.stdin.flush()
        except (BrokenPipeError, OSError):
            break
        if stop:
            break
    # stop or end of input: let the reference finish (its `stopped` goes through the pump,
    # which then ends the process), or end it.
    try:
        reference.stdin.close()
    except (BrokenPipeError, OSError):
        pass
    try:
        reference.wait(timeout=5)
    except subprocess.TimeoutExpired:
        _end(reference)
    threading.Event().wait(5)  # the pump exits the process once it has forwarded everything
    os._exit(0)
