#!/usr/bin/env python3
"""asr-ctk-python-example-broken: adapter.py with two deliberate bugs.

The kit's CI runs this variant to show that a run catches a non-conformant implementation
and names the rules it breaks. It is adapter.py in every respect but two:

  (a) ASR-212: it never reports an image or audio part that has both `data` and `blob`
      (it still reports a missing mimeType);
  (b) ASR-234: it accepts a delivery without `status`.

It still claims both rules, so the kit sends it their cases and it fails them: exactly the
cases in expect-broken.json, beyond those in expect.json.
"""

import os
import sys

# The script's own directory is sys.path[0] when run as `python3 .../adapter_broken.py`;
# make the import work from anywhere all the same.
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
sys.dont_write_bytecode = True  # no __pycache__ left in the repository by a run

import adapter  # noqa: E402

adapter.IMPLEMENTATION = dict(adapter.IMPLEMENTATION, name=adapter.IMPLEMENTATION["name"] + "-broken")

# Bug (a): media parts get only the mimeType half of ASR-212.
adapter.PART_CHECKS["image"] = adapter.check_media_mime_type
adapter.PART_CHECKS["audio"] = adapter.check_media_mime_type


# Bug (b): deliveries are not checked at all.
def accept_any_delivery(record, report):
    pass


adapter.RECORD_CHECKS["delivery"] = accept_any_delivery

if __name__ == "__main__":
    adapter.run()
