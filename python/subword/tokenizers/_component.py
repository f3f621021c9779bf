"""What every component of ``subword.tokenizers`` shares: a Rust core object built from the
component's typed fields (``_fields``, the constructor's arguments) and rebuilt when one changes;
pickling by those arguments; equality by them; HF's ``repr`` and ``__getstate__`` (the
tokenizer.json form, as bytes)."""

from __future__ import annotations

from typing import Any

# How many times any component has changed (a field set, a sequence's member replaced): a
# tokenizer reuses its pipeline without asking each stage while this has not moved (read as
# ``_changes[0]``, a subscript, on every encode call).
_changes = [0]


def _changed() -> None:
    _changes[0] += 1


class Component:
    _fields: tuple[str, ...] = ()

    def _build(self) -> Any:
        raise NotImplementedError

    def _core_object(self) -> Any:
        core = self.__dict__.get("_core_cache")
        if core is None:
            core = self._build()
            object.__setattr__(self, "_core_cache", core)
        return core

    def __setattr__(self, name: str, value: Any) -> None:
        object.__setattr__(self, name, value)
        self.__dict__.pop("_core_cache", None)
        _changed()

    def _args(self) -> tuple:
        return tuple(getattr(self, f) for f in self._fields)

    def __reduce__(self):
        return (type(self), self._args())

    def __getstate__(self) -> bytes:
        """HF's JSON form (tokenizer.json), as HF's ``__getstate__`` gives it."""
        return self._core_object().to_json_str().encode()

    def __repr__(self) -> str:
        return self._shown(short=False)

    def __str__(self) -> str:
        return self._shown(short=True)

    def _shown(self, short: bool) -> str:
        """HF's form (``_repr.py``), from the JSON; a component its core refuses to build yet
        (a WordPiece whose vocabulary lacks its unknown token) shows its arguments instead."""
        import json

        from ._repr import render

        try:
            tree = json.loads(self._core_object().to_json_str())
        except ValueError:
            args = ", ".join(f"{f}={getattr(self, f)!r}" for f in self._fields)
            return f"{type(self).__name__}({args})"
        return render(tree, short=short)

    def __eq__(self, other: object) -> bool:
        return type(other) is type(self) and other._args() == self._args()

    __hash__ = None  # mutable, like HF's


class SequenceOf(Component):
    """A component made of others of its kind (``_items`` names the list); indexable and
    assignable, rebuilt on use since a member may have changed."""

    _items = ""
    _kind: type = Component

    def __init__(self, items: list):
        items = list(items)
        for k, item in enumerate(items):
            if not isinstance(item, self._kind):
                raise TypeError(
                    f"Sequence expects {self._kind.__name__} objects, got "
                    f"{type(item).__name__} at position {k}"
                )
        setattr(self, self._items, _Members(items))

    def _members(self) -> list:
        return getattr(self, self._items)

    def _core_object(self) -> Any:
        # A member may have changed since (its own core object is then a new one): reuse the
        # sequence's core object only while every member's is the same one.
        cores = tuple(m._core_object() for m in self._members())
        cached = self.__dict__.get("_sequence_cache")
        if cached is not None and len(cached[0]) == len(cores):
            if all(a is b for a, b in zip(cached[0], cores)):
                return cached[1]
        core = self._build()
        object.__setattr__(self, "_sequence_cache", (cores, core))
        return core

    def __setattr__(self, name: str, value: Any) -> None:
        super().__setattr__(name, value)
        self.__dict__.pop("_sequence_cache", None)

    def __len__(self) -> int:
        return len(self._members())

    def __getitem__(self, index: int):
        return self._members()[index]

    def __setitem__(self, index: int, value) -> None:
        if not isinstance(value, self._kind):
            raise TypeError(
                f"Sequence items are {self._kind.__name__} objects, got {type(value).__name__}"
            )
        self._members()[index] = value
        self.__dict__.pop("_sequence_cache", None)
        _changed()

    def __reduce__(self):
        return (type(self), (list(self._members()),))


class _Members(list):
    """A sequence's members: a list that counts its changes as the components' (see
    ``_changes``), since a member put in place changes the sequence."""

    def _mutator(name: str):  # noqa: N805 - a helper run in the class body
        method = getattr(list, name)

        def call(self, *args):
            out = method(self, *args)
            _changed()
            return out

        call.__name__ = name
        return call

    for _name in ("__setitem__", "__delitem__", "__iadd__", "__imul__", "append", "extend",
                  "insert", "pop", "remove", "clear", "sort", "reverse"):  # fmt: skip
        locals()[_name] = _mutator(_name)
    del _name, _mutator

    def __reduce__(self):
        return (list, (list(self),))


class CustomComponent(Component):
    """A Python object as a stage (HF's ``Normalizer.custom`` and its kin): the core object
    calls the object's methods. It has no tokenizer.json form, so, as in HF, a tokenizer
    holding one can be used but not saved or pickled."""

    _kind = ""

    def __init__(self, obj: Any):
        object.__setattr__(self, "_obj", obj)
        self._core_object()  # an object without the method fails here

    def _args(self) -> tuple:
        return (self.__dict__["_obj"],)

    def __reduce__(self):
        self.__getstate__()  # raises: HF's "cannot be serialized"
        raise AssertionError("unreachable")  # pragma: no cover

    def _shown(self, short: bool) -> str:
        return f"{self._kind}.custom({self.__dict__['_obj']!r})"


def literal_or_regex(owner: str, pattern: Any) -> tuple[str, bool]:
    """A pattern argument as (text, is_regex): a str is matched literally, a ``Regex`` not."""
    from . import Regex

    if isinstance(pattern, Regex):
        return pattern.pattern, True
    if isinstance(pattern, str):
        return pattern, False
    raise TypeError(
        f"{owner} expects a str or a tokenizers.Regex pattern, got {type(pattern).__name__}"
    )


def one_char(name: str, value: Any) -> str:
    if not isinstance(value, str) or len(value) != 1:
        raise ValueError(f"{name}: expected a string of length 1 (one character), got {value!r}")
    return value


PREPEND_SCHEMES = ("always", "first", "never")


def prepend_scheme(value: Any) -> str:
    if value not in PREPEND_SCHEMES:
        raise ValueError(f"unknown prepend_scheme {value!r}: use always, first or never")
    return value


class ByteLevelOptions(Component):
    """HF's three ByteLevel options, shared by its pre-tokenizer, decoder (and post-processor);
    ``type="ByteLevel"`` is accepted so that ``ByteLevel(**json.loads(x.__getstate__()))``
    works, as in HF."""

    _fields = ("add_prefix_space", "trim_offsets", "use_regex")

    def __init__(
        self,
        add_prefix_space: bool = True,
        trim_offsets: bool = True,
        use_regex: bool = True,
        **kwargs: Any,
    ):
        unknown = {k: v for k, v in kwargs.items() if not (k == "type" and v == "ByteLevel")}
        if unknown:
            raise TypeError(f"ByteLevel got unknown options {sorted(unknown)}")
        self.add_prefix_space = bool(add_prefix_space)
        self.trim_offsets = bool(trim_offsets)
        self.use_regex = bool(use_regex)
