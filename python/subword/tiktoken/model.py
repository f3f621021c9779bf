"""Which encoding a model uses: tiktoken 0.14's tables and lookup rule, with its KeyError."""

from __future__ import annotations

from ..encoding import Encoding
from .registry import get_encoding

_O200K, _CL100K, _P50K, _R50K = "o200k_base", "cl100k_base", "p50k_base", "r50k_base"

# Exact model names. Prefixes are tried only when no exact name matches, in this order.
MODEL_TO_ENCODING: dict[str, str] = {
    **dict.fromkeys(["o1", "o3", "o4-mini", "gpt-5", "gpt-4.1", "gpt-4o"], _O200K),
    **dict.fromkeys(
        [
            "gpt-4",
            "gpt-3.5-turbo",
            "gpt-3.5",
            "gpt-35-turbo",
            "davinci-002",
            "babbage-002",
            "text-embedding-ada-002",
            "text-embedding-3-small",
            "text-embedding-3-large",
        ],
        _CL100K,
    ),
    **dict.fromkeys(
        [
            "text-davinci-003",
            "text-davinci-002",
            "code-davinci-002",
            "code-davinci-001",
            "code-cushman-002",
            "code-cushman-001",
            "davinci-codex",
            "cushman-codex",
        ],
        _P50K,
    ),
    **dict.fromkeys(["text-davinci-edit-001", "code-davinci-edit-001"], "p50k_edit"),
    **dict.fromkeys(
        [
            "text-davinci-001",
            "text-curie-001",
            "text-babbage-001",
            "text-ada-001",
            "davinci",
            "curie",
            "babbage",
            "ada",
            *(f"text-similarity-{m}-001" for m in ("davinci", "curie", "babbage", "ada")),
            *(f"text-search-{m}-doc-001" for m in ("davinci", "curie", "babbage", "ada")),
            "code-search-babbage-code-001",
            "code-search-ada-code-001",
        ],
        _R50K,
    ),
    "gpt2": "gpt2",
    "gpt-2": "gpt2",
}

MODEL_PREFIX_TO_ENCODING: dict[str, str] = {
    **dict.fromkeys(
        ["o1-", "o3-", "o4-mini-", "gpt-5", "gpt-4.5-", "gpt-4.1-", "chatgpt-4o-", "gpt-4o-"],
        _O200K,
    ),
    **dict.fromkeys(["gpt-4-", "gpt-3.5-turbo-", "gpt-35-turbo-"], _CL100K),
    "gpt-oss-": "o200k_harmony",
    "ft:gpt-4o": _O200K,
    **dict.fromkeys(["ft:gpt-4", "ft:gpt-3.5-turbo", "ft:davinci-002", "ft:babbage-002"], _CL100K),
}


def encoding_name_for_model(model_name: str) -> str:
    """The name of the encoding ``model_name`` uses; KeyError if it is not known."""
    if model_name in MODEL_TO_ENCODING:
        return MODEL_TO_ENCODING[model_name]
    for prefix, name in MODEL_PREFIX_TO_ENCODING.items():
        if model_name.startswith(prefix):
            return name
    raise KeyError(
        f"Could not automatically map {model_name} to a tokeniser. "
        "Please use `tiktoken.get_encoding` to explicitly get the tokeniser you expect."
    ) from None


def encoding_for_model(model_name: str) -> Encoding:
    """The encoding ``model_name`` uses; KeyError if it is not known."""
    return get_encoding(encoding_name_for_model(model_name))
