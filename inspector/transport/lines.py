"""Cutting a pipe's bytes into lines, a read at a time: what `readline(cap)` gives, for whole batches at once.

A flooding server fills the pipe faster than a line-at-a-time reader can hand lines on; reading what the pipe
holds and cutting every whole line out of it lets the client record a batch with one write. The lines come out
exactly as a `readline(cap)` loop would give them: without the newline and the CRs before it, a line longer than
the cap in cap-sized pieces (each piece then ends up an invalid line, nothing is held beyond the cap), and a last
line without a newline at the end of the stream as it is.
"""

from __future__ import annotations


class LineSplitter:
    """Feed it the chunks of one stream in order; it gives back the whole lines each completes."""

    def __init__(self, cap: int) -> None:
        self.cap = cap
        self._buf = bytearray()
        """The start of a line whose newline has not come yet (shorter than the cap)."""

    def feed(self, chunk: bytes) -> list[bytes]:
        """The lines this chunk completes (with the carried-over start of the first), oldest first."""
        buf = self._buf
        scanned = len(buf)  # the carried-over part holds no newline: look only at the new bytes
        buf += chunk
        end = buf.rfind(b"\n", scanned)
        if end < 0:
            return self._pieces()
        body = bytes(buf[:end])
        del buf[:end + 1]
        if len(body) < self.cap:  # the usual case: no line can be over the cap, cut them all in one call
            lines = body.split(b"\n")
            if b"\r" in body:
                lines = [line.rstrip(b"\r") for line in lines]
        else:
            lines = [piece for line in body.split(b"\n") for piece in self._capped(line)]
        return lines + self._pieces()

    def finish(self) -> list[bytes]:
        """At the end of the stream: the last line if it had no newline, as it is."""
        rest, self._buf = bytes(self._buf), bytearray()
        return [rest] if rest else []

    def _capped(self, line: bytes) -> list[bytes]:
        """One line (without its newline) as readline(cap) hands it over: cap-sized pieces while the rest and its
        newline do not fit, then the rest (its CRs stripped, as it ended with the newline)."""
        pieces = []
        while len(line) + 1 > self.cap:
            pieces.append(line[:self.cap])
            line = line[self.cap:]
        return pieces + [line.rstrip(b"\r")]

    def _pieces(self) -> list[bytes]:
        """Cap-sized pieces of a line still without its newline, so no more than the cap is ever carried."""
        buf, pieces = self._buf, []
        while len(buf) >= self.cap:
            pieces.append(bytes(buf[:self.cap]))
            del buf[:self.cap]
        return pieces
