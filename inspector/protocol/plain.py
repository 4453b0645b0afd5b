"""Pure: plain value classes, for the modules every start imports.

What `@dataclass` gave them (fields compared and shown in order, `replace`), without importing `dataclasses`,
which imports `inspect` (and ast, dis, tokenize): about a third of `mcp-inspect call`'s start. Each class lists
its fields in `__slots__` and writes its own `__init__` (the fastest one, for records made per message).
"""

from __future__ import annotations


class Plain:
    """A value made of the fields in `__slots__`: equal to another of its class with equal fields, shown with
    them. `_hidden` names fields left out of both (bytes kept beside a value, not part of it). Mutable ones are
    unhashable, as a dataclass is; a class whose values never change sets `__hash__ = Plain.field_hash`."""

    __slots__ = ()
    _hidden: tuple[str, ...] = ()
    _fields: tuple[str, ...] = ()

    def __init_subclass__(cls, **kwargs) -> None:
        super().__init_subclass__(**kwargs)
        names = [name for klass in reversed(cls.__mro__) for name in klass.__dict__.get("__slots__", ())]
        cls._fields = tuple(name for name in names if name not in cls._hidden)

    def _values(self) -> tuple:
        return tuple(getattr(self, name) for name in self._fields)

    def __eq__(self, other: object) -> bool:
        if other.__class__ is not self.__class__:
            return NotImplemented
        return self._values() == other._values()  # type: ignore[attr-defined]

    __hash__ = None  # type: ignore[assignment]

    def field_hash(self) -> int:
        return hash(self._values())

    def __repr__(self) -> str:
        shown = ", ".join(f"{name}={getattr(self, name)!r}" for name in self._fields)
        return f"{self.__class__.__qualname__}({shown})"


def replace(value, **changes):
    """A copy of a plain value (or any __slots__ object) with some fields changed, like `dataclasses.replace`."""
    copy = object.__new__(value.__class__)
    for klass in value.__class__.__mro__:
        for name in klass.__dict__.get("__slots__", ()):
            setattr(copy, name, changes.pop(name) if name in changes else getattr(value, name))
    if changes:
        raise TypeError(f"{value.__class__.__qualname__} has no field {', '.join(changes)}")
    return copy
