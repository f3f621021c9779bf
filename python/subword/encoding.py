"""The tiktoken dialect: ``Encoding``, a drop-in for ``tiktoken.Encoding``.

Everything here translates arguments and results; the work happens in ``subword._core``.
"""

from __future__ import annotations

import os
from typing import AbstractSet, Collection, Iterable, Iterator, Literal, Sequence

from . import _core, _files

__all__ = ["Encoding"]

Special = "Literal['all'] | AbstractSet[str] | Collection[str]"


def _without_lone_surrogates(text: str) -> str:
    # Python strs may hold lone surrogates, which UTF-8 cannot carry. Like tiktoken: pair up valid
    # surrogate pairs, replace the rest with U+FFFD.
    return text.encode("utf-16", "surrogatepass").decode("utf-16", "replace")


def _retry_without_surrogates(call, text, *args):
    try:
        return call(text, *args)
    except UnicodeEncodeError:
        return call(_without_lone_surrogates(text), *args)


def _refuse_prefix_space(prefix_space: bool) -> None:
    if prefix_space:
        raise ValueError(
            "this tokenizer.json puts a space before the text (ByteLevel add_prefix_space=true), "
            "which an Encoding cannot do: load it with subword.Tokenizer.from_file, or set "
            "add_prefix_space to false"
        )


def _stem(path) -> str:
    """A file's name without its extension: the name of an encoding loaded from it."""
    return os.path.basename(os.fspath(path)).rsplit(".", 1)[0]


def _pattern_of(core):
    """The pattern as ``Encoding`` takes it back: a str, or a tuple of regexes that isolate
    their matches in turn (DeepSeek-V3's pre-tokenizer)."""
    chain = core.pattern_chain()
    return tuple(chain) if chain is not None else core.pattern()


def _retry_batch_without_surrogates(call, texts, *args):
    try:
        return call(texts, *args)
    except UnicodeEncodeError:
        return call([_without_lone_surrogates(t) for t in texts], *args)


def _stream_ids(stream, chunks: Iterator[str]) -> Iterator[int]:
    # A high surrogate at a chunk's end may pair with the next chunk's first char, as it would in
    # the joined text, so it waits for that chunk.
    carry = ""
    for chunk in chunks:
        if not isinstance(chunk, str):
            raise TypeError(
                f"encode_iterable takes an iterable of str, got a {type(chunk).__name__}; "
                "open files in text mode (encoding='utf-8') or decode the chunks first"
            )
        if carry:
            chunk, carry = carry + chunk, ""
        if chunk and "\ud800" <= chunk[-1] <= "\udbff":
            chunk, carry = chunk[:-1], chunk[-1]
        yield from _retry_without_surrogates(stream.feed, chunk)
    if carry:
        yield from stream.feed(_without_lone_surrogates(carry))
    yield from stream.finish()


class Encoding:
    """A byte-level BPE encoding with tiktoken's constructor, methods and ids.

    >>> import subword
    >>> enc = subword.get_encoding("cl100k_base")          # doctest: +SKIP
    >>> enc.decode(enc.encode("hello world"))              # doctest: +SKIP
    'hello world'
    """

    def __init__(
        self,
        name: str,
        *,
        pat_str: str,
        mergeable_ranks: dict[bytes, int],
        special_tokens: dict[str, int],
        explicit_n_vocab: int | None = None,
        normalize: Literal["NFC"] | None = None,
    ):
        """tiktoken's constructor; ``normalize="NFC"`` (not in tiktoken) puts every text in NFC
        before encoding, as Qwen's tokenizer does."""
        core = _core.CoreBPE(dict(mergeable_ranks), dict(special_tokens), pat_str, normalize)
        self._setup(name, pat_str, core, explicit_n_vocab)

    def _setup(self, name, pat_str, core, explicit_n_vocab=None, ranks=None):
        self.name = name
        self._pat_str = pat_str
        self._core = core
        self._special_tokens = dict(core.special_tokens())
        self._ranks_cache = ranks
        self.max_token_value = core.max_token_value()
        if explicit_n_vocab is not None:
            n = core.n_mergeable() + len(self._special_tokens)
            if n != explicit_n_vocab or self.max_token_value != explicit_n_vocab - 1:
                raise ValueError(
                    f"explicit_n_vocab={explicit_n_vocab} but the vocabulary has {n} tokens "
                    f"with ids up to {self.max_token_value}; they must agree (n tokens, ids 0..n-1)"
                )

    @classmethod
    def _from_core(cls, name, pat_str, core, explicit_n_vocab=None) -> Encoding:
        self = cls.__new__(cls)
        self._setup(name, pat_str, core, explicit_n_vocab)
        return self

    # ----- construction from files -----

    @classmethod
    def from_tiktoken_file(
        cls,
        path: str | os.PathLike,
        pat_str: str,
        special_tokens: dict[str, int] | None = None,
        name: str | None = None,
        normalize: Literal["NFC"] | None = None,
    ) -> Encoding:
        """Load a ``.tiktoken`` ranks file (also Llama 3's ``tokenizer.model`` and Qwen's
        ``qwen.tiktoken``, which are in that format). ``pat_str`` is a regex or a built-in name
        ("gpt2", "cl100k_base", "o200k_base"); ``normalize="NFC"`` puts texts in NFC first."""
        core = _core.CoreBPE.from_tiktoken_file(
            os.fspath(path), list((special_tokens or {}).items()), pat_str, normalize
        )
        return cls._from_core(name if name is not None else _stem(path), pat_str, core)

    @classmethod
    def from_tekken_file(cls, path: str | os.PathLike, name: str | None = None) -> Encoding:
        """Load Mistral's ``tekken.json``: ids are the model's (specials 0..999, then rank +
        1000), the pattern is the file's."""
        core, pattern = _core.CoreBPE.from_tekken_file(os.fspath(path))
        return cls._from_core(name if name is not None else _stem(path), pattern, core)

    @classmethod
    def from_gpt2_files(
        cls, encoder_json: str | os.PathLike, vocab_bpe: str | os.PathLike, name: str = "gpt2"
    ) -> Encoding:
        """Load GPT-2's original ``encoder.json`` and ``vocab.bpe``."""
        core, _ = _core.CoreBPE.from_gpt2_files(
            os.fspath(encoder_json), os.fspath(vocab_bpe), _core.GPT2_PATTERN
        )
        return cls._from_core(name, _core.GPT2_PATTERN, core)

    def dump_tiktoken(self, path: str | os.PathLike) -> None:
        """Write the mergeable ranks as a ``.tiktoken`` file (atomically)."""
        self._core.dump_tiktoken(os.fspath(path))

    def save(self, path: str | os.PathLike) -> str:
        """Save ranks, pattern and special tokens: ``<path>.tiktoken`` (tiktoken's format) and the
        manifest ``<path>.json`` naming it, with the ranks file's sha256. Returns the manifest
        path.

        The pair is written as a unit: both files go to temporaries (``<file>.subword-tmp-<pid>``,
        fsynced) first, then the ranks file is renamed into place and the manifest last. A crash
        before the first rename leaves the old pair; between the two renames, the new ranks with
        the old manifest, which ``load`` detects by the sha256 and explains. The next ``save``
        to the same path removes temporaries left by interrupted saves.

        >>> enc.save("my_tok")                 # doctest: +SKIP
        >>> subword.Encoding.load("my_tok.json")   # doctest: +SKIP
        """
        import hashlib
        import json

        base = os.fspath(path)
        if base.endswith(".json"):
            base = base[: -len(".json")]
        ranks_path = base + ".tiktoken"
        manifest_path = base + ".json"
        _files.remove_strays(ranks_path)
        ranks_tmp = _files.tmp_path(ranks_path)
        manifest_tmp = None
        try:
            self.dump_tiktoken(ranks_tmp)  # written and fsynced by the core
            with open(ranks_tmp, "rb") as f:
                digest = hashlib.sha256(f.read()).hexdigest()
            manifest = {
                "format": "subword-tiktoken/1",
                "name": self.name,
                "pat_str": _pattern_of(self._core),
                "special_tokens": self._special_tokens,
                "ranks": os.path.basename(ranks_path),
                "sha256": digest,
            }
            text = json.dumps(manifest, ensure_ascii=False, indent=1)
            manifest_tmp = _files.write_tmp(manifest_path, text)
            os.replace(ranks_tmp, ranks_path)
            os.replace(manifest_tmp, manifest_path)
        except BaseException:
            for tmp in (ranks_tmp, manifest_tmp):
                if tmp is not None and os.path.exists(tmp):
                    os.remove(tmp)
            raise
        _files.fsync_dir(manifest_path)
        return manifest_path

    @classmethod
    def load(cls, path: str | os.PathLike) -> Encoding:
        """Load what ``save`` wrote (the manifest ``.json``, or the path given to ``save``).

        The ranks file must have the sha256 the manifest records; otherwise ValueError (the
        files come from different saves, e.g. one that was interrupted)."""
        import hashlib
        import json

        manifest_path = os.fspath(path)
        if not manifest_path.endswith(".json"):
            manifest_path += ".json"
        with open(manifest_path, encoding="utf-8") as f:
            try:
                manifest = json.load(f)
            except json.JSONDecodeError as e:
                raise ValueError(f"{manifest_path}: not a subword manifest ({e})") from None
        if not isinstance(manifest, dict) or manifest.get("format") != "subword-tiktoken/1":
            raise ValueError(
                f"{manifest_path}: not a subword manifest (expected format subword-tiktoken/1)"
            )
        ranks_path = os.path.join(os.path.dirname(manifest_path), manifest["ranks"])
        with open(ranks_path, "rb") as f:
            digest = hashlib.sha256(f.read()).hexdigest()
        if digest != manifest["sha256"]:
            raise ValueError(
                f"{ranks_path} does not belong to {manifest_path}: its sha256 is {digest}, the "
                f"manifest expects {manifest['sha256']}. The two files come from different "
                "saves (a save was interrupted between its two renames, two saves ran at once, "
                "or the ranks file was edited): save the encoding again"
            )
        return cls.from_tiktoken_file(
            ranks_path, manifest["pat_str"], manifest["special_tokens"], manifest["name"]
        )

    def to_hf_json(self) -> str:
        """This encoding as an HF ``tokenizers`` ``tokenizer.json`` (byte-level BPE)."""
        return self._core.to_hf_json()

    def save_hf(self, path: str | os.PathLike) -> None:
        """Write ``to_hf_json()`` to ``path`` atomically; HF ``Tokenizer.from_file`` reads it."""
        _files.write_atomic(path, self.to_hf_json())

    @classmethod
    def from_hf_json(cls, text: str, name: str = "hf") -> Encoding:
        """Read a byte-level BPE ``tokenizer.json`` given as text; unsupported parts: ValueError."""
        core, prefix_space = _core.CoreBPE.from_hf_json(text, "tokenizer.json")
        _refuse_prefix_space(prefix_space)
        return cls._from_core(name, _pattern_of(core), core)

    @classmethod
    def from_hf_file(cls, path: str | os.PathLike, name: str | None = None) -> Encoding:
        """Read a byte-level BPE ``tokenizer.json`` file."""
        path = os.fspath(path)
        core, prefix_space = _core.CoreBPE.from_hf_file(path)
        _refuse_prefix_space(prefix_space)
        return cls._from_core(name or os.path.basename(path), _pattern_of(core), core)

    def to_tiktoken(self):
        """An equivalent ``tiktoken.Encoding`` (requires tiktoken)."""
        import tiktoken

        if self._core.pattern_chain() is not None:
            raise ValueError(
                f"{self.name} pre-tokenizes with several regexes in turn, which tiktoken cannot "
                "express; use to_hf_json() for HF tokenizers instead"
            )
        return tiktoken.Encoding(
            self.name,
            pat_str=self._core.pattern(),
            mergeable_ranks=self._mergeable_ranks,
            special_tokens=self._special_tokens,
        )

    # ----- encoding -----

    def encode_ordinary(self, text: str) -> list[int]:
        """Encode ``text`` ignoring special tokens (they are ordinary text here)."""
        return _retry_without_surrogates(self._core.encode_ordinary, text)

    def encode(
        self,
        text: str,
        *,
        allowed_special: Literal["all"] | AbstractSet[str] = set(),  # noqa: B006
        disallowed_special: Literal["all"] | Collection[str] = "all",
    ) -> list[int]:
        """Encode ``text``. Specials in ``allowed_special`` become their ids; text matching a
        special in ``disallowed_special`` raises ValueError (as in tiktoken)."""
        return _retry_without_surrogates(
            self._core.encode, text, allowed_special, disallowed_special
        )

    def encode_to_numpy(
        self,
        text: str,
        *,
        allowed_special: Literal["all"] | AbstractSet[str] = set(),  # noqa: B006
        disallowed_special: Literal["all"] | Collection[str] = "all",
    ):
        """Like ``encode`` but returns a ``numpy.uint32`` array."""
        import numpy as np

        buf = _retry_without_surrogates(
            self._core.encode_to_buffer, text, allowed_special, disallowed_special
        )
        return np.frombuffer(buf, dtype=np.uint32)

    def encode_ordinary_batch(
        self, text: Sequence[str], *, num_threads: int = 8
    ) -> list[list[int]]:
        """Encode many texts in parallel (in Rust, without the GIL)."""
        return _retry_batch_without_surrogates(self._core.encode_ordinary_batch, text, num_threads)

    def encode_batch(
        self,
        text: Sequence[str],
        *,
        num_threads: int = 8,
        allowed_special: Literal["all"] | AbstractSet[str] = set(),  # noqa: B006
        disallowed_special: Literal["all"] | Collection[str] = "all",
    ) -> list[list[int]]:
        """``encode`` for many texts in parallel."""
        return _retry_batch_without_surrogates(
            self._core.encode_batch, text, allowed_special, disallowed_special, num_threads
        )

    def encode_with_unstable(
        self,
        text: str,
        *,
        allowed_special: Literal["all"] | AbstractSet[str] = set(),  # noqa: B006
        disallowed_special: Literal["all"] | Collection[str] = "all",
    ) -> tuple[list[int], list[list[int]]]:
        """Stable ids plus the possible completions of the unstable tail (tiktoken's contract)."""
        return _retry_without_surrogates(
            self._core.encode_with_unstable, text, allowed_special, disallowed_special
        )

    def encode_bytes(self, data: bytes) -> list[int]:
        """Encode bytes that need not be UTF-8, as tiktoken's ``_encode_bytes`` does (same ids):
        the valid UTF-8 prefix is pre-tokenized, and its last piece together with everything from
        the first invalid byte on is merged as one piece. Specials are ordinary text here. The
        ids always decode back to ``data``."""
        if not isinstance(data, (bytes, bytearray, memoryview)):
            raise TypeError(
                f"encode_bytes takes bytes, not {type(data).__name__}; for text use encode()"
            )
        return self._core.encode_bytes(bytes(data))

    _encode_bytes = encode_bytes

    def encode_iterable(
        self,
        iterable: Iterable[str],
        *,
        allowed_special: Literal["all"] | AbstractSet[str] = set(),  # noqa: B006
        disallowed_special: Literal["all"] | Collection[str] = "all",
        _min_try: int | None = None,
    ) -> Iterator[int]:
        """Encode the concatenation of the strings ``iterable`` yields, yielding ids as soon as
        no later string can change them: the same ids as ``encode("".join(iterable))``, with
        memory that holds only the last few pieces and the newest string (for the built-in
        patterns and the open models' ones; any other pattern holds the text to the end).
        Reading a file line by line: ``enc.encode_iterable(open(path, encoding="utf-8"))``.

        ``_min_try`` (tests only): decide after every chunk of at least that many held bytes
        instead of waiting for 1 KB."""
        stream = self._core.stream(allowed_special, disallowed_special, _min_try)
        return _stream_ids(stream, iter(iterable))

    def _encode_single_piece(self, text_or_bytes: str | bytes) -> list[int]:
        """The ids of one piece, without the pattern (tiktoken's private helper)."""
        if isinstance(text_or_bytes, str):
            text_or_bytes = text_or_bytes.encode("utf-8")
        return self._core.encode_single_piece(text_or_bytes)

    def _encode_only_native_bpe(self, text: str) -> list[int]:
        """tiktoken's check of its regex split: here the split is the core's, as always."""
        return self.encode_ordinary(text)

    def encode_single_token(self, text_or_bytes: str | bytes) -> int:
        """The id of exactly one token; KeyError otherwise."""
        if isinstance(text_or_bytes, str):
            text_or_bytes = text_or_bytes.encode("utf-8")
        return self._core.encode_single_token(text_or_bytes)

    # ----- beyond tiktoken -----

    def count(
        self,
        text: str,
        *,
        allowed_special: Literal["all"] | AbstractSet[str] = set(),  # noqa: B006
        disallowed_special: Literal["all"] | Collection[str] = "all",
    ) -> int:
        """``len(encode(text))`` without building the list."""
        return _retry_without_surrogates(
            self._core.count, text, allowed_special, disallowed_special
        )

    def count_batch(
        self,
        text: Sequence[str],
        *,
        num_threads: int = 8,
        allowed_special: Literal["all"] | AbstractSet[str] = set(),  # noqa: B006
        disallowed_special: Literal["all"] | Collection[str] = "all",
    ) -> list[int]:
        """``count`` for many texts in parallel."""
        return _retry_batch_without_surrogates(
            self._core.count_batch, text, allowed_special, disallowed_special, num_threads
        )

    def tokens(
        self,
        text: str,
        *,
        allowed_special: Literal["all"] | AbstractSet[str] = set(),  # noqa: B006
        disallowed_special: Literal["all"] | Collection[str] = "all",
    ) -> list[bytes]:
        """The pieces ``encode`` cuts ``text`` into, as bytes (a piece may be part of a char)."""
        ids = self.encode(
            text, allowed_special=allowed_special, disallowed_special=disallowed_special
        )
        return self._core.decode_tokens_bytes(ids)

    # ----- decoding -----

    def decode_bytes(self, tokens: Sequence[int]) -> bytes:
        """Bytes of ``tokens``; KeyError for an unknown id."""
        return self._core.decode_bytes(tokens)

    def decode(self, tokens: Sequence[int], errors: str = "replace") -> str:
        """Text of ``tokens``; invalid UTF-8 handled per ``errors`` (as in ``bytes.decode``)."""
        return self._core.decode_bytes(tokens).decode("utf-8", errors=errors)

    def decode_single_token_bytes(self, token: int) -> bytes:
        return self._core.decode_single_token_bytes(token)

    def decode_tokens_bytes(self, tokens: Sequence[int]) -> list[bytes]:
        return self._core.decode_tokens_bytes(tokens)

    def decode_with_offsets(self, tokens: Sequence[int]) -> tuple[str, list[int]]:
        """Text and, per token, the character offset where it starts."""
        data, offsets = self._core.decode_with_offsets(tokens)
        return data.decode("utf-8", errors="strict"), offsets

    def decode_batch(
        self, batch: Sequence[Sequence[int]], *, errors: str = "replace", num_threads: int = 8
    ) -> list[str]:
        return [
            b.decode("utf-8", errors=errors)
            for b in self._core.decode_bytes_batch(batch, num_threads)
        ]

    def decode_bytes_batch(
        self, batch: Sequence[Sequence[int]], *, num_threads: int = 8
    ) -> list[bytes]:
        return self._core.decode_bytes_batch(batch, num_threads)

    # ----- inspection -----

    def token_byte_values(self) -> list[bytes]:
        """Every mergeable token's bytes, sorted."""
        return self._core.token_byte_values()

    @property
    def eot_token(self) -> int:
        return self._special_tokens["<|endoftext|>"]

    @property
    def special_tokens_set(self) -> set[str]:
        return set(self._special_tokens)

    def is_special_token(self, token: int) -> bool:
        return self._core.is_special(token)

    @property
    def n_vocab(self) -> int:
        return self.max_token_value + 1

    @property
    def merges(self) -> list[tuple[bytes, bytes]] | None:
        """Learned merges in order, for encodings trained by subword (None otherwise)."""
        return self._core.merges()

    @property
    def vocab(self) -> dict[int, bytes]:
        """Every id and its bytes (special tokens as their UTF-8 text)."""
        out = {rank: token for token, rank in self._mergeable_ranks.items()}
        out.update((i, t.encode("utf-8")) for t, i in self._special_tokens.items())
        return dict(sorted(out.items()))

    @property
    def _mergeable_ranks(self) -> dict[bytes, int]:
        if self._ranks_cache is None:
            self._ranks_cache = self._core.mergeable_ranks()
        return self._ranks_cache

    def __repr__(self) -> str:
        return f"<Encoding {self.name!r}>"

    # ----- pickling -----

    def __getstate__(self):
        from . import registry

        if registry.is_registered(self):
            return self.name
        state = {
            "name": self.name,
            "pat_str": self._pat_str,
            "mergeable_ranks": self._mergeable_ranks,
            "special_tokens": self._special_tokens,
        }
        if self._core.normalize() is not None:
            state["normalize"] = self._core.normalize()
        return state

    def __eq__(self, other) -> bool:
        # By content, so that an unpickled copy equals its original (tiktoken compares identity,
        # which no copy can pass).
        if not isinstance(other, Encoding):
            return NotImplemented
        return self is other or self.__getstate__() == other.__getstate__()

    def __hash__(self) -> int:
        return hash((self.name, str(self._pat_str)))

    def __setstate__(self, value):
        from . import registry

        if isinstance(value, str):
            other = registry.get_encoding(value)
            self._setup(other.name, other._pat_str, other._core)
            return
        self.__init__(**value)
