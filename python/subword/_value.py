"""Equality by content for the settings classes (models, pre-tokenizers, processors, decoders,
trainers): two objects are equal when they are of the same class and hold the same settings, so
that an unpickled copy equals its original."""

from __future__ import annotations


class ByValue:
    __slots__ = ()

    def _state(self):
        """What equality compares; classes whose attributes hold Rust objects override it."""
        return vars(self)

    def __eq__(self, other) -> bool:
        if type(other) is not type(self):
            return NotImplemented
        return self._state() == other._state()

    # Settings are mutable (HF's are too), so they are not hashable.
    __hash__ = None  # type: ignore[assignment]
