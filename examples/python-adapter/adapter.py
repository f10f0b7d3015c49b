#!/usr/bin/env python3
"""asr-ctk-python-example: a small ASR validator, and a producer around a converter command,
that speak the asr-ctk adapter protocol.

It is written from PROTOCOL.md alone, to show that an adapter needs nothing from the kit
but that page. The validator is deliberately small: it implements a handful of rules and
declines every case that tests anything else, so that each answer it does give is honest.
The producer runs a converter command (gemini_to_asr.py, beside this file) on the Gemini CLI
sessions it is given and declines every other source format.

    persistent mode (default):  python3 adapter.py          # requests on stdin, one per line
    with the broken converter:  python3 adapter.py --broken # gemini_to_asr_broken.py
    one-shot mode:              ASR_CTK_ROLE=validator python3 adapter.py < stream.jsonl
                                ASR_CTK_ROLE=producer ASR_CTK_FORMAT=gemini-cli-json \
                                    python3 adapter.py session.json

Python 3.11, standard library only.
"""

import base64
import json
import os
import subprocess
import sys
import tempfile

IMPLEMENTATION = {
    "name": "asr-ctk-python-example",
    "version": "0.1.0",
    "language": "python",
    "homepage": "https://github.com/asr-ctk/asr-ctk/tree/main/examples/python-adapter",
}
ISSUES = "https://github.com/asr-ctk/asr-ctk/issues"

# The rules this validator checks. A case that tests any other rule is answered `skipped`:
# answering it anyway would either fail it or, worse, pass it by luck.
IMPLEMENTED = ["ASR-X-003", "ASR-X-007", "ASR-200", "ASR-212", "ASR-217", "ASR-231", "ASR-234"]


# ---------------------------------------------------------------------------------------
# The checks. Each gets one parsed record (or one content part) and a `report` function
# bound to the line being checked. Pointers follow the kit's sidecars: RFC 6901 JSON
# Pointers into the line's object, at the missing member ("/messageId") or, when two
# members clash, at the object holding them ("/content/1").
# ---------------------------------------------------------------------------------------


def check_message(record, report):
    """ASR-200: messageId and content, and role unless capture.role gives a capture state."""
    # The kit's schema also files a messageId that is no string, or a content that is no
    # array, under ASR-200, so a wrongly typed member counts as not having it.
    if not isinstance(record.get("messageId"), str):
        report("ASR-200", "/messageId", "a message must have a string messageId")
    if not isinstance(record.get("content"), list):
        report("ASR-200", "/content", "a message must have a content array")
    capture = record.get("capture")
    if "role" not in record and not (isinstance(capture, dict) and "role" in capture):
        report("ASR-200", "/role", "a message without capture.role must have role")
    check_parts(record, "content", report)
    check_parts(record, "displayContent", report)


def check_plan(record, report):
    # Plans are not among our rules, but a plan's content holds content parts like a
    # message's, and the part rules apply to every content part.
    check_parts(record, "content", report)


def check_delivery(record, report):
    """ASR-234: a delivery has a status (the kit's schema asks for a non-empty string)."""
    status = record.get("status")
    if not isinstance(status, str) or status == "":
        report("ASR-234", "/status", "a delivery must have a status")


def check_parts(record, member, report):
    parts = record.get(member)
    if not isinstance(parts, list):
        return  # absent, or the wrong type: ASR-200 (for content) has already said so
    for index, part in enumerate(parts):
        # A part that is no object, or whose type is no string, breaks ASR-210, which
        # this example does not implement: skip it rather than guess.
        if not isinstance(part, dict) or not isinstance(part.get("type"), str):
            continue
        check = PART_CHECKS.get(part["type"])
        if check is not None:
            check(part, f"/{member}/{index}", report)


def check_media_mime_type(part, at, report):
    """ASR-212, first half: image and audio parts have a mimeType."""
    if not isinstance(part.get("mimeType"), str):
        report("ASR-212", at + "/mimeType", f"an {part['type']} part must have mimeType")


def check_media_bytes(part, at, report):
    """ASR-212, second half: not both data and blob (either, or neither, is fine)."""
    if "data" in part and "blob" in part:
        report("ASR-212", at, f"an {part['type']} part has both data and blob")


def check_media(part, at, report):
    check_media_mime_type(part, at, report)
    check_media_bytes(part, at, report)


def check_refusal(part, at, report):
    """ASR-217: a refusal part carries the refusal's text in `text`."""
    if not isinstance(part.get("text"), str):
        report("ASR-217", at + "/text", "a refusal part must have text")


def check_opaque(part, at, report):
    """ASR-231: an opaque part has format, and not both data and blob."""
    if not isinstance(part.get("format"), str):
        report("ASR-231", at + "/format", "an opaque part must have format")
    if "data" in part and "blob" in part:
        report("ASR-231", at, "an opaque part has both data and blob")


# Looked up at call time, so a variant can swap a check (adapter_broken.py does).
RECORD_CHECKS = {"message": check_message, "plan": check_plan, "delivery": check_delivery}
PART_CHECKS = {"image": check_media, "audio": check_media, "refusal": check_refusal, "opaque": check_opaque}


# ---------------------------------------------------------------------------------------
# One stream: split into lines, parse each, check the header order, run the record checks.
# ---------------------------------------------------------------------------------------


def parse_line(raw, report):
    """The line's JSON object, or None after reporting why it is not one (ASR-X-003)."""
    try:
        text = raw.decode("utf-8")
    except UnicodeDecodeError as err:
        # The kit has its own check for this (ASR-X-001), which we do not implement; but a
        # line that is not UTF-8 is not JSON text either, so it is not one JSON object.
        report("ASR-X-003", "", f"the line is not UTF-8 text (byte {err.start})")
        return None
    if text.strip(" \t\r") == "":
        report("ASR-X-003", "", "an empty line is not a record")
        return None
    try:
        # Python's json module accepts NaN and Infinity by default; JSON does not.
        value = json.loads(text, parse_constant=reject_constant)
    except ValueError as err:  # JSONDecodeError is a ValueError
        report("ASR-X-003", "", f"the line is not JSON: {err}")
        return None
    if not isinstance(value, dict):
        kind = {list: "an array", str: "a string", bool: "a boolean", type(None): "null"}.get(type(value), "a number")
        report("ASR-X-003", "", f"the line is {kind}, not a JSON object")
        return None
    # Python reads an escaped lone surrogate ("\ud800") into a string no UTF-8 holds; the
    # kit rejects such a line as no JSON text (decision lone-surrogates), and so do we.
    if has_lone_surrogate(value):
        report("ASR-X-003", "", "the line escapes a lone surrogate, which is no Unicode text")
        return None
    return value


def has_lone_surrogate(value):
    """Whether a string anywhere in `value` (member names included) holds a lone surrogate."""
    stack = [value]
    while stack:
        item = stack.pop()
        if isinstance(item, str):
            if any(0xD800 <= ord(c) <= 0xDFFF for c in item):
                return True
        elif isinstance(item, dict):
            stack.extend(item.keys())
            stack.extend(item.values())
        elif isinstance(item, list):
            stack.extend(item)
    return False


def reject_constant(name):
    raise ValueError(f"{name} is not a JSON value")


def brief(value):
    # A bad stream can put a megabyte where a type name should be; keep messages short.
    text = json.dumps(value)
    return text if len(text) <= 60 else text[:57] + "..."


def validate_stream(data):
    diagnostics = []
    lines = data.split(b"\n")
    if lines[-1] == b"":
        lines.pop()  # the final "\n" ends the last line; it does not start another one
    header_line = None  # the line of the record read as the session header
    seen_record = False

    for number, raw in enumerate(lines, start=1):
        record = None

        def report(rule, pointer, message):
            diagnostic = {"rule": rule, "severity": "error", "line": number, "pointer": pointer, "message": message}
            # seq and id are optional, but they help a reader find the record.
            if record is not None:
                seq, rid = record.get("seq"), record.get("id")
                if isinstance(seq, int) and not isinstance(seq, bool) and 0 <= seq < 2**64:
                    diagnostic["seq"] = seq
                if isinstance(rid, str):
                    diagnostic["id"] = rid
            diagnostics.append(diagnostic)

        record = parse_line(raw, report)
        if record is None:
            continue  # a line that is not an object is not checked further

        # ASR-X-007: the first record is the one session header, at seq 0. Lines that are
        # not records (an empty first line) do not count: the header after them is first.
        kind = record.get("type")
        if kind == "session":
            if header_line is None:
                # Normally line 1; a late header is still read as the header, and the
                # record before it has already been reported.
                header_line = number
            else:
                report("ASR-X-007", "/type", f"a second session header; the header is at line {header_line}")
            seq = record.get("seq", 0)
            if isinstance(seq, bool) or seq != 0:  # False == 0 in Python, but not in JSON
                report("ASR-X-007", "/seq", f"a session header is at seq 0, not {brief(seq)}")
        elif not seen_record:
            report("ASR-X-007", "/type", f"the first record is of type {brief(kind)}, not the session header")
        seen_record = True

        # `type` may be anything in a bad stream; only a string can name a check.
        check = RECORD_CHECKS.get(kind) if isinstance(kind, str) else None
        if check is not None:
            check(record, report)

    if not seen_record:
        message = "the stream is empty" if not lines else "the stream has no record, so no session header"
        diagnostics.append({"rule": "ASR-X-007", "severity": "error", "line": 1, "pointer": "", "message": message})

    valid = not any(d["severity"] == "error" for d in diagnostics)
    return {"valid": valid, "diagnostics": diagnostics}


# ---------------------------------------------------------------------------------------
# The protocol.
# ---------------------------------------------------------------------------------------


def started():
    implementation = dict(IMPLEMENTATION, name=IMPLEMENTATION["name"] + "-broken-converter") if BROKEN else IMPLEMENTATION
    return {"type": "started", "protocol": 1, "implementation": implementation,
            "roles": ["validator", "producer"], "formatVersions": ["0.1"]}


# ---------------------------------------------------------------------------------------
# The producer: a few lines around a converter command, as a vendor's adapter would be.
# ---------------------------------------------------------------------------------------

# `--broken` runs gemini_to_asr_broken.py instead: the converter with three planted bugs
# that the kit's producer fuzzer must find.
BROKEN = "--broken" in sys.argv[1:]
CONVERTER = [sys.executable or "python3",
             os.path.join(os.path.dirname(os.path.abspath(__file__)),
                          "gemini_to_asr_broken.py" if BROKEN else "gemini_to_asr.py")]
DECLINED = 3  # the converter's exit status for a session it does not convert


def produce(source_format, paths):
    """The reply to a producer case, without its seq: the converter's stream of the files."""
    if source_format != "gemini-cli-json":
        return {"type": "skipped", "reason": f"the example converts gemini-cli-json, not {source_format}"}
    done = subprocess.run(CONVERTER + paths, capture_output=True)
    reason = done.stderr.decode("utf-8", "replace").strip()
    if done.returncode == DECLINED:
        return {"type": "skipped", "reason": reason}
    if done.returncode != 0:
        return {"type": "error", "message": reason or f"the converter exited with {done.returncode}"}
    lines = done.stdout.decode("utf-8").split("\n")
    return {"type": "answered", "outputs": [{"name": "", "lines": [l for l in lines if l]}]}


def produce_from_request(request):
    """A persistent-mode producer case: the files come in the request, base64."""
    with tempfile.TemporaryDirectory(prefix="asr-ctk-example-") as work:
        paths = []
        for file in request["streams"]:
            path = os.path.join(work, os.path.basename(file["part"]) or "source")
            with open(path, "wb") as out:
                out.write(base64.b64decode(file["data"], validate=True))
            paths.append(path)
        return produce(request.get("format"), paths)


def answer_case(role, rules, streams):
    """The reply to one validator case, without its seq. `streams` is a list of bytes."""
    if role != "validator":
        return {"type": "skipped", "reason": f"the example validates and produces, it does not play {role}", "issue": ISSUES}
    missing = [rule for rule in rules if rule not in IMPLEMENTED]
    if missing:
        return {"type": "skipped", "reason": f"rule not implemented by the example: {missing[0]}", "issue": ISSUES}
    try:
        # Each stream of a case is answered on its own: this validator has no check that
        # looks across streams (a parent and its child).
        return {"type": "answered", "streams": [validate_stream(data) for data in streams]}
    except Exception as err:  # a bug of ours, not a verdict on the stream: say so
        return {"type": "error", "message": f"{type(err).__name__}: {err}"}


def write(message):
    # ASCII-only JSON on one line: safe whatever the locale, and "\n" never occurs inside.
    sys.stdout.buffer.write(json.dumps(message, separators=(",", ":")).encode("ascii") + b"\n")
    sys.stdout.buffer.flush()  # the kit waits for this line; it must not sit in a buffer


def persistent():
    while True:
        line = sys.stdin.buffer.readline()
        if not line:
            return  # EOF: the kit has gone away
        try:
            request = json.loads(line)
            kind = request.get("type")
        except (ValueError, AttributeError):
            write({"type": "error", "message": "the request is not a JSON object"})
            continue
        if kind == "start":
            write(started())
        elif kind == "stop":
            write({"type": "stopped"})
            return
        elif kind == "case":
            try:
                if request["role"] == "producer":
                    reply = produce_from_request(request)
                else:
                    streams = [base64.b64decode(s["data"], validate=True) for s in request["streams"]]
                    reply = answer_case(request["role"], request["rules"], streams)
            except (KeyError, TypeError, ValueError) as err:
                reply = {"type": "error", "message": f"malformed case request: {err}"}
            reply["seq"] = request.get("seq", 0)
            write(reply)
        else:
            write({"type": "error", "seq": request.get("seq", 0), "message": f"unknown request type {kind!r}"})


def oneshot():
    if os.environ.get("ASR_CTK_HANDSHAKE"):
        write(started())
        return
    if os.environ.get("ASR_CTK_ROLE") == "producer":
        # The source's files are the arguments; the reply goes to stdout like any other.
        write(produce(os.environ.get("ASR_CTK_FORMAT"), [a for a in sys.argv[1:] if a != "--broken"]))
        return
    rules = [rule for rule in os.environ.get("ASR_CTK_RULES", "").split(",") if rule]
    # seq is left out: in one-shot mode there is one case per process.
    write(answer_case(os.environ.get("ASR_CTK_ROLE", "validator"), rules, [sys.stdin.buffer.read()]))


def main():
    if os.environ.get("ASR_CTK_ROLE") or os.environ.get("ASR_CTK_HANDSHAKE"):
        oneshot()
    else:
        persistent()


def run():
    try:
        main()
    except BrokenPipeError:
        # The kit closed our stdout (it ended the run, or gave up on us). There is no one to
        # tell; point stdout at /dev/null so that the interpreter's last flush stays quiet.
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
        sys.exit(1)
    except KeyboardInterrupt:
        sys.exit(130)


if __name__ == "__main__":
    run()
