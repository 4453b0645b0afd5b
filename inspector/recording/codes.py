"""Shared tables of the strings a row index column holds as small integer codes (methods, origins)."""

from __future__ import annotations

from collections.abc import Callable


class Codes:
    """A shared table of strings (methods, origins) and their small integer codes; code 0 is None.

    Capped: a server inventing a new method per message must not grow it without bound. Beyond the cap a value
    gets `overflow` and is read back from the file when shown."""

    def __init__(self, cap: int) -> None:
        self.values: list[str | None] = [None]
        self._codes: dict[str | None, int] = {None: 0}
        self.overflow = cap

    def code(self, value: str | None) -> int:
        code = self._codes.get(value)
        if code is None:
            if len(self.values) >= self.overflow:
                return self.overflow
            code = self._codes[value] = len(self.values)
            self.values.append(value)
        return code

    def matching(self, predicate: Callable[[str], bool]) -> set[int]:
        """The codes of the known values that satisfy the predicate."""
        return {code for code, value in enumerate(self.values) if value is not None and predicate(value)}
