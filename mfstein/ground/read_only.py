"""A base for plain records that are read-only, as a frozen dataclass is.

A frozen dataclass compiles its generated methods from text when its class is made
(0.3-1 ms each in every new process), so the records a first call makes are plain
classes with slots.  Those that must stay read-only derive from :class:`ReadOnly`:
an assignment or a deletion raises :class:`dataclasses.FrozenInstanceError` with
the dataclass's own message, and ``__init__`` fills the slots with
``object.__setattr__``.
"""

from __future__ import annotations

from dataclasses import FrozenInstanceError
from typing import Any


class ReadOnly:
    """Refuses assignment and deletion of attributes (subclasses declare ``__slots__``)."""

    __slots__ = ()

    def __setattr__(self, name: str, value: Any) -> None:
        raise FrozenInstanceError(f"cannot assign to field {name!r}")

    def __delattr__(self, name: str) -> None:
        raise FrozenInstanceError(f"cannot delete field {name!r}")
