"""Keep the row index's big arrays out of the C heap, so a long session's RSS is its live data and no more.

Why (measured with bench/memory.py and mallinfo2, 100,000-message floods in page mode): glibc raises its mmap
threshold each time a large mmapped block is freed (up to 32 MiB). After the first flood the row index's arrays
(recording/row_index.py: array('q'), array('d'), ... growing by realloc) therefore live in the brk heap, where
every realloc that cannot grow in place copies the array and leaves the old block behind as a hole. The holes
never go back to the system: the heap's free part grew by 3-10 MiB per flood (29 MiB free beside 44 MiB used
after five), adding ~20 bytes per message on top of the index's own ~60. With the threshold fixed, blocks over
128 KiB are mmapped and grow by mremap (no copy, no hole) and a freed one is unmapped at once; the heap stays flat.

Not the per-thread arenas: MALLOC_ARENA_MAX=2 measured the same as the default. malloc_trim(0) after a flood gave
back only part of the holes (whole free pages), and would have to run again and again.
"""

from __future__ import annotations

import ctypes
import gc

M_MMAP_THRESHOLD = -3
"""mallopt's parameter number (malloc.h); setting it also turns off glibc's dynamic threshold."""
MMAP_THRESHOLD_BYTES = 128 * 1024
"""glibc's own starting value: blocks above it (a column of a few thousand rows) are mmapped."""


def keep_large_blocks_mapped() -> bool:
    """Fix glibc's mmap threshold for this process. True when set; a no-op (False) without glibc (macOS, musl)."""
    try:
        libc = ctypes.CDLL(None)  # the symbols already loaded into the process: its C library, whichever it is
        mallopt = libc.mallopt  # glibc only: macOS's libc has no mallopt
        libc.gnu_get_libc_version  # musl has a mallopt that ignores this parameter; be explicit about glibc
    except (OSError, AttributeError, TypeError):
        return False
    mallopt.argtypes, mallopt.restype = (ctypes.c_int, ctypes.c_int), ctypes.c_int
    return mallopt(M_MMAP_THRESHOLD, MMAP_THRESHOLD_BYTES) == 1


def freeze_built_objects() -> None:
    """Move every object made so far (the imports, the app, the services: they live as long as the process) out of
    the cycle collector's reach. A flood makes a few hundred thousand short-lived containers per 100,000 messages;
    some survive a young collection inside a batch and count toward the next full one, which walked all the
    long-lived objects each time. Page mode, 100,000 notifications called over HTTP, the inspector's CPU from /proc
    in paired runs: 1.24-1.36 -> 1.04-1.17 s per flood (10-15% less). Call once, after the services are built and
    before the server starts."""
    gc.freeze()
