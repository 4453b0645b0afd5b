"""Masking benchmark: what the secret masker adds to writing a recording line (security.md row 27).

Every record passes through protocol.secrets.Masker before it is written; a line without a secret costs one search of
its bytes. Prints the cost of encoding N records alone and with the masker (20 known secrets, every form of each),
then for lines that do hold a secret. Usage: python bench/masking.py [N]
"""

from __future__ import annotations

import sys
import time
import uuid
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
from inspector.protocol.records import FROM_SERVER, MESSAGE, Record  # noqa: E402
from inspector.protocol.secrets import Masker  # noqa: E402


def records(count: int, text: str) -> list[Record]:
    return [Record(MESSAGE, seq=i, t=1.0, dir=FROM_SERVER,
                   msg={"jsonrpc": "2.0", "id": i, "result": {"content": [{"type": "text", "text": text}]}})
            for i in range(count)]


def timed(action, items) -> float:
    start = time.perf_counter()
    for item in items:
        action(item)
    return time.perf_counter() - start


def main(count: int) -> None:
    secrets = [f"S3CR3T-{uuid.uuid4()}" for _ in range(20)]
    masker = Masker(secrets)
    plain = timed(Record.to_line, records(count, "word " * 40))
    masked = timed(masker.record, records(count, "word " * 40))
    print(f"{count} lines without a secret: encoding {plain:.2f} s, with masking {masked:.2f} s "
          f"(x{masked / plain:.2f})")
    leaky = timed(masker.record, records(count // 10, "word " * 40 + secrets[7]))
    print(f"{count // 10} lines holding a secret: {leaky:.2f} s (x{leaky / (plain / 10):.2f} of encoding)")


if __name__ == "__main__":
    main(int(sys.argv[1]) if len(sys.argv) > 1 else 100_000)
