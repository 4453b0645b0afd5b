"""The row index's seq column without a seq per row: runs of consecutive seqs, one (position, first seq) per run.

A live session numbers every record it indexes one after the other, so its seqs are one run and cost nothing per
row. `view` keeps the file's seqs: a skipped line, or a file whose seqs jump, starts a new run there (16 bytes per
run). Seqs only grow (the Store numbers them; the reader skips a line whose seq does not grow), so a run is found
by a bisect of its first positions (a row's seq) or of its first seqs (a seq's position).

Readers take no lock: `len` grows last, after any run the new rows start, and a reader bounds every lookup by
the run count it read, so it never meets a half-added run.
"""

from __future__ import annotations

import bisect
from array import array
from typing import Sequence


class SeqRuns:
    """Append-only seqs, oldest first, kept as runs; reads like the array('q') it replaces (len, [i])."""

    __slots__ = ("_starts", "_firsts", "_runs", "_len")

    def __init__(self) -> None:
        self._starts = array("q")
        """The position where each run starts."""
        self._firsts = array("q")
        """The seq at that position; the run goes on with first + 1, first + 2, ..."""
        self._runs = 0
        self._len = 0

    def __len__(self) -> int:
        return self._len

    def append(self, seq: int) -> None:
        if seq != self._next():
            self._start_run(self._len, seq)
        self._len += 1  # last: the row exists once its seq can be read

    def extend(self, seqs: Sequence[int]) -> None:
        """Add seqs in increasing order (view's fast path: one check for a batch without a gap)."""
        count = len(seqs)
        if not count:
            return
        expected, n = self._next(), self._len
        if seqs[0] != expected or seqs[-1] - seqs[0] != count - 1:  # increasing: the ends tell whether it has gaps
            for k, seq in enumerate(seqs):
                if seq != expected:
                    self._start_run(n + k, seq)
                expected = seq + 1
        self._len = n + count

    def __getitem__(self, i: int) -> int:
        n = self._len
        if i < 0:
            i += n
        if not 0 <= i < n:
            raise IndexError(i)
        runs = self._runs
        # the newest run (a live session's only one) without a bisect; read per row rendered: inlined
        k = runs - 1 if self._starts[runs - 1] <= i else bisect.bisect_right(self._starts, i, 0, runs) - 1
        return self._firsts[k] + i - self._starts[k]

    def position(self, seq: int) -> int | None:
        """The position holding seq, or None."""
        n, runs = self._len, self._runs
        if runs == 1:  # a live session: arithmetic only
            i = seq - self._firsts[0]
            return i if 0 <= i < n else None
        k = bisect.bisect_right(self._firsts, seq, 0, runs) - 1
        if k < 0:
            return None
        i = self._starts[k] + seq - self._firsts[k]
        return i if i < self._run_end(k, runs, n) else None

    def after(self, seq: int) -> int:
        """The first position whose seq is greater than seq."""
        n, runs = self._len, self._runs
        k = bisect.bisect_right(self._firsts, seq, 0, runs) - 1
        if k < 0:
            return 0
        return min(self._starts[k] + seq - self._firsts[k] + 1, self._run_end(k, runs, n))

    def before(self, seq: int) -> int:
        """The first position whose seq is not less than seq."""
        return self.after(seq - 1)

    # -- inside -----------------------------------------------------------------------------------------------

    def _next(self) -> int | None:
        """The seq that continues the last run (None before the first row)."""
        runs = self._runs
        return self._firsts[runs - 1] + self._len - self._starts[runs - 1] if runs else None

    def _start_run(self, position: int, seq: int) -> None:
        runs = self._runs
        if runs and seq < self._firsts[runs - 1] + position - self._starts[runs - 1]:
            raise ValueError(f"seq {seq} does not grow")  # a run's seqs are first + offset: never out of order
        self._starts.append(position)
        self._firsts.append(seq)
        self._runs = runs + 1  # last: a reader bounded by the old count never sees the half-added run

    def _run_end(self, k: int, runs: int, n: int) -> int:
        return self._starts[k + 1] if k + 1 < runs else n
