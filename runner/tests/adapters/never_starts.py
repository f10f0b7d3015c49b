#!/usr/bin/env python3
"""Fault adapter for the kit's tests (persistent mode): `never_starts`.

It never answers `start`. It reads and discards stdin, then, at EOF, keeps sleeping: it
never writes anything and never exits on its own, so the kit has to end it.
"""

import sys
import time


def main():
    while sys.stdin.buffer.readline():
        pass
    while True:
        time.sleep(3600)


if __name__ == "__main__":
    try:
        main()
    except KeyboardInterrupt:
        pass
