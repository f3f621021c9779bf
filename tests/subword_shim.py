"""Stand-in for `subword`, backed by tiktoken. Used only when SUBWORD_TEST_IMPL=tiktoken, to check
the test suite itself against the oracle. Features tiktoken lacks (from_tiktoken_file, dump,
from_gpt2_files, registry errors, ...) are deliberately missing, so those tests fail here."""

from __future__ import annotations

import tiktoken
from tiktoken_ext import openai_public


class Encoding(tiktoken.Encoding):
    def count(self, text, *, allowed_special=frozenset(), disallowed_special="all"):
        return len(
            self.encode(
                text, allowed_special=allowed_special, disallowed_special=disallowed_special
            )
        )

    def count_batch(
        self, texts, *, num_threads=8, allowed_special=frozenset(), disallowed_special="all"
    ):
        return [
            len(ids)
            for ids in self.encode_batch(
                texts,
                num_threads=num_threads,
                allowed_special=allowed_special,
                disallowed_special=disallowed_special,
            )
        ]

    def tokens(self, text, *, allowed_special=frozenset(), disallowed_special="all"):
        ids = self.encode(
            text, allowed_special=allowed_special, disallowed_special=disallowed_special
        )
        return self.decode_tokens_bytes(ids)


_CONSTRUCTORS = {
    "gpt2": openai_public.r50k_base,  # same ranks as gpt2, available offline
    "r50k_base": openai_public.r50k_base,
    "cl100k_base": openai_public.cl100k_base,
    "o200k_base": openai_public.o200k_base,
}


def list_encoding_names():
    return list(_CONSTRUCTORS)


def get_encoding(name):
    if name not in _CONSTRUCTORS:
        raise ValueError(f"Unknown encoding {name!r}. Known encodings: {', '.join(_CONSTRUCTORS)}")
    kwargs = _CONSTRUCTORS[name]()
    kwargs["name"] = name
    return Encoding(**kwargs)
