"""What a worker process does with an object it received by pickle (tests/test_pickling.py):
imported by name, so that ``spawn`` workers can find it."""

from __future__ import annotations

import pickle

TEXT = "Hello world! 안녕하세요, tokenizers. 123 <|endoftext|>"


def use(obj) -> list:
    """The object's observable behaviour on TEXT: what an equal object must reproduce (an
    untrained tokenizer's is its error)."""
    try:
        return _use(obj)
    except ValueError as e:
        return [str(e)]


def _use(obj) -> list:
    if hasattr(obj, "encode_ordinary"):  # the tiktoken dialect
        return obj.encode(TEXT, allowed_special="all")
    if hasattr(obj, "encode"):
        out = obj.encode(TEXT)
        return list(getattr(out, "ids", out))
    if hasattr(obj, "ids"):  # a result
        return list(obj.ids)
    return []


def round_trip_in_worker(payload: bytes) -> tuple[bytes, list]:
    """Unpickle in the worker, use it there, and send it back pickled again."""
    obj = pickle.loads(payload)
    return pickle.dumps(obj), use(obj)
