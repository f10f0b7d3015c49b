#!/usr/bin/env python3
"""gemini_to_asr.py with three deliberate bugs, for the kit's producer fuzzer to find:

  (a) it trims every text (leading and trailing white space, a CRLF line end included), so
      that the source's texts are not kept exactly (ASR-211), and writes a text left empty
      as null: the stream is invalid (a text part's text is a string);
  (b) it drops a `gemini` message's thoughts (ASR-214), so that a message of thoughts alone
      has no content;
  (c) it writes `author: "human"` on every user message, a value the spec does not have and
      a claim the file does not make (ASR-202).

Run as adapter.py's converter with `python3 adapter.py --broken`.
"""

import json
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
sys.dont_write_bytecode = True  # no __pycache__ left in the repository by a run

import gemini_to_asr  # noqa: E402

converted_text_parts = gemini_to_asr.text_parts
converted = gemini_to_asr.convert


def trimmed_text_parts(content):
    """Bug (a): each text stripped, and one left empty written as null ("no text")."""
    return [dict(part, text=part["text"].strip() or None) for part in converted_text_parts(content)]


def broken_convert(session):
    records = converted(session)
    for record in records:
        if record.get("type") != "message":
            continue
        # Bug (b): the reasoning part made of the thoughts goes.
        record["content"] = [p for p in record["content"] if p.get("type") != "reasoning"]
        # Bug (c): every user message said to be a person's.
        if record.get("role") == "user" and "author" not in record:
            record["author"] = "human"
    return records


gemini_to_asr.text_parts = trimmed_text_parts
gemini_to_asr.convert = broken_convert

if __name__ == "__main__":
    sys.exit(gemini_to_asr.main())
