#!/usr/bin/env python3
"""A small converter of Gemini CLI sessions (the JSON file Gemini CLI keeps for each chat) to
ASR, standard library only: `python3 gemini_to_asr.py SESSION.json > session.jsonl`.

What it writes, and why (the rules of ../../../shared/spec/asr-messages.txt it follows):

- the header: `sessionId` and `startTime` of the file; agent `gemini-cli`.
- a `user` message: role user, its text parts exactly as stored (ASR-211). No author: the
  file does not record whether a person typed it or the CLI sent it (ASR-202).
- a `gemini` message: role assistant, author model; its `thoughts` become one reasoning part
  of visibility `summary` (Gemini CLI keeps a subject and a description the provider wrote,
  never the reasoning itself, ASR-214), each a summary segment exactly as stored (ASR-211),
  then its text.
- `info`, `error` and `warning` messages: notices the CLI showed the user (ASR-205):
  author harness, origin notice, audience user.
- a message's `displayContent` (what the person saw, as an @file prompt before its files
  were read in) becomes `displayContent` beside the `content` the model received; the one
  record holds both, so the correspondence is `native` (ASR-208).

A message of another type, or with members it does not convert (tool calls), makes it stop
with exit status 3 and a reason on stderr rather than write a stream that loses them.
"""

import json
import sys

NOTICES = ("info", "error", "warning")
CONVERTED = {"id", "timestamp", "type", "content", "displayContent", "thoughts", "tokens", "model"}


class Unsupported(Exception):
    pass


def text_parts(content):
    """The text parts of a message's content: a string, or a list of {"text": ...}."""
    if isinstance(content, str):
        # An empty string is what the file stores too (a reply with no text): kept as it
        # is, so the message's content is not empty without saying why.
        return [{"type": "text", "text": content}]
    parts = []
    for item in content or []:
        if not isinstance(item, dict) or set(item) != {"text"}:
            raise Unsupported(f"a content item that is not text only: {sorted(item)}")
        parts.append({"type": "text", "text": item["text"]})
    return parts


def thoughts_part(thoughts):
    summary = []
    for thought in thoughts:
        subject, description = thought.get("subject", ""), thought.get("description", "")
        summary.extend(segment for segment in (subject, description) if segment)
    return {"type": "reasoning", "visibility": "summary", "summary": summary}


def convert(session):
    header = {"type": "session", "seq": 0, "id": "h", "formatVersion": "0.1",
              "agent": {"name": "gemini-cli"}, "sessionId": session["sessionId"],
              "producer": {"name": "gemini-to-asr", "version": "0.1.0", "method": "converter",
                           "source": {"format": "gemini-cli-json"}}}
    if "startTime" in session:
        header["startedAt"] = session["startTime"]
    records = [header]
    for message in session.get("messages", []):
        extra = set(message) - CONVERTED
        if extra:
            raise Unsupported(f"message {message.get('id')}: members not converted: {sorted(extra)}")
        kind = message.get("type")
        record = {"type": "message", "seq": len(records), "id": f"r{len(records)}"}
        if "timestamp" in message:
            record["ts"] = message["timestamp"]
        record["messageId"] = message["id"]
        content = text_parts(message.get("content"))
        if kind == "user":
            record["role"] = "user"
        elif kind == "gemini":
            record["role"] = "assistant"
            record["author"] = "model"
            if message.get("thoughts"):
                content.insert(0, thoughts_part(message["thoughts"]))
        elif kind in NOTICES:
            record.update(role="user", author="harness", origin="notice", audience="user")
        else:
            raise Unsupported(f"message {message.get('id')}: type {kind!r} not converted")
        record["content"] = content
        if "displayContent" in message:
            record["displayContent"] = text_parts(message["displayContent"])
            record["displayCorrespondence"] = "native"
        records.append(record)
    return records


def main():
    if len(sys.argv) != 2:
        sys.stderr.write("usage: gemini_to_asr.py SESSION.json\n")
        return 2
    with open(sys.argv[1], encoding="utf-8") as source:
        session = json.load(source)
    try:
        records = convert(session)
    except (Unsupported, KeyError) as error:
        sys.stderr.write(f"gemini_to_asr: not converted: {error}\n")
        return 3
    for record in records:
        sys.stdout.write(json.dumps(record, ensure_ascii=False, separators=(",", ":")) + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
