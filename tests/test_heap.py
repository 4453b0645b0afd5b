"""recording/heap.py: big blocks (the row index's columns) stay mapped after glibc would have moved them into the
heap, and the call is a no-op where there is no glibc. Counts mapped blocks (mallinfo2's hblks), never sizes."""

from __future__ import annotations

import ctypes
import json
import subprocess
import sys

import pytest

from inspector.recording import heap

# In a fresh process: free one large mapped block (glibc then raises its threshold to that size, unless it was
# fixed), then grow a column as the row index does and count the mapped blocks that hold it.
CHILD = """
import ctypes, json, sys
from array import array
from inspector.recording.heap import keep_large_blocks_mapped
class Info(ctypes.Structure):
    _fields_ = [(name, ctypes.c_size_t) for name in
                "arena ordblks smblks hblks hblkhd usmblks fsmblks uordblks fordblks keepcost".split()]
libc = ctypes.CDLL(None)
libc.mallinfo2.restype = Info
fixed = keep_large_blocks_mapped() if sys.argv[1] == "fixed" else None
big = bytes(4 << 20)
del big
before = libc.mallinfo2().hblks
column = array("q", bytes(8 * 65536))  # 512 KiB: a column of 65,536 rows
print(json.dumps({"fixed": fixed, "new_mapped_blocks": libc.mallinfo2().hblks - before}))
"""


def _has_glibc() -> bool:
    return hasattr(ctypes.CDLL(None), "gnu_get_libc_version") and hasattr(ctypes.CDLL(None), "mallinfo2")


def _child(mode: str) -> dict:
    done = subprocess.run([sys.executable, "-c", CHILD, mode], capture_output=True, text=True, timeout=90, check=True)
    return json.loads(done.stdout)


@pytest.mark.skipif(not _has_glibc(), reason="glibc's mmap threshold")
def test_a_large_column_stays_mapped_after_a_large_block_was_freed():
    assert _child("default") == {"fixed": None, "new_mapped_blocks": 0}  # glibc's own behaviour: into the heap
    assert _child("fixed") == {"fixed": True, "new_mapped_blocks": 1}


def test_without_glibc_it_does_nothing(monkeypatch):
    class OtherLibc:  # macOS's C library: no mallopt
        pass

    monkeypatch.setattr(heap.ctypes, "CDLL", lambda name: OtherLibc())
    assert heap.keep_large_blocks_mapped() is False
