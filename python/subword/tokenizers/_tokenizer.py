"""``subword.tokenizers.Tokenizer``: HF's ``tokenizers.Tokenizer`` over the Rust pipeline
(``rust/pipeline/``): normalizer → pre-tokenizer → model → post-processor, and the decoder back.

So far the pipeline runs the WordLevel and WordPiece models and the template post-processors;
added tokens, pre-tokenized input, truncation and padding come with the rest of the pipeline
(issue 11) and are refused with an error meanwhile.
"""

from __future__ import annotations

from typing import Any

from .. import _core
from .decoders import Decoder
from .models import Model
from .normalizers import Normalizer
from .pre_tokenizers import PreTokenizer
from .processors import PostProcessor

__all__ = ["Encoding", "Tokenizer"]


class Encoding:
    """One encode result (HF's ``tokenizers.Encoding``): ids, tokens, character offsets, word
    and sequence indexes (None for tokens a post-processor added), type ids and the masks."""

    __slots__ = (
        "ids",
        "tokens",
        "offsets",
        "word_ids",
        "sequence_ids",
        "type_ids",
        "attention_mask",
        "special_tokens_mask",
        "_pair",
    )

    def __init__(self, ids, tokens, type_ids, offsets, word_ids, sequence_ids, special, pair):
        self.ids = list(ids)
        self.tokens = list(tokens)
        self.type_ids = list(type_ids)
        self.offsets = [tuple(o) for o in offsets]
        self.word_ids = list(word_ids)
        self.sequence_ids = list(sequence_ids)
        self.special_tokens_mask = list(special)
        self.attention_mask = [1] * len(self.ids)
        self._pair = pair

    @property
    def words(self) -> list[int | None]:
        return self.word_ids

    @property
    def n_sequences(self) -> int:
        return 2 if self._pair else 1

    @property
    def overflowing(self) -> list[Encoding]:
        return []

    def __len__(self) -> int:
        return len(self.ids)

    def __repr__(self) -> str:
        head = self.ids[:8]
        return f"Encoding(num_tokens={len(self)}, ids={head}{'…' if len(self) > 8 else ''})"

    def word_to_tokens(self, word_index: int, sequence_index: int = 0):
        """The (start, end) token range of a word, None if no token has it."""
        at = [
            k
            for k, (w, s) in enumerate(zip(self.word_ids, self.sequence_ids))
            if w == word_index and s == sequence_index
        ]
        return (at[0], at[-1] + 1) if at else None

    def token_to_word(self, token_index: int) -> int | None:
        return self.word_ids[token_index]

    def token_to_chars(self, token_index: int) -> tuple[int, int]:
        return self.offsets[token_index]

    def token_to_sequence(self, token_index: int) -> int | None:
        return self.sequence_ids[token_index]

    def char_to_token(self, char_pos: int, sequence_index: int = 0) -> int | None:
        for k, ((s, e), seq) in enumerate(zip(self.offsets, self.sequence_ids)):
            if seq == sequence_index and s <= char_pos < e:
                return k
        return None


def _checked(value: Any, kind: type, what: str):
    if value is not None and not isinstance(value, kind):
        raise TypeError(
            f"{what} must be a tokenizers.{kind.__module__.rsplit('.', 1)[-1]}.{kind.__name__} "
            f"or None, got {type(value).__name__}"
        )
    return value


class Tokenizer:
    """A pipeline around a model: ``Tokenizer(models.WordLevel(vocab, unk_token="[UNK]"))``, then
    set ``normalizer``, ``pre_tokenizer`` and ``decoder``."""

    def __init__(self, model: Model):
        if not isinstance(model, Model):
            raise TypeError(
                f"Tokenizer expects a subword.tokenizers.models model, got {type(model).__name__}"
            )
        self._model = model
        self._normalizer = None
        self._pre_tokenizer = None
        self._post_processor = None
        self._decoder = None

    def _core(self):
        # Rebuilt on each use: the components are mutable (as in HF), and their own core
        # objects are cached until they change.
        part = lambda c: None if c is None else c._core_object()  # noqa: E731
        return _core.CorePipeline(
            self._model._core_object(),
            part(self._normalizer),
            part(self._pre_tokenizer),
            part(self._post_processor),
            part(self._decoder),
        )

    model = property(lambda self: self._model)

    @model.setter
    def model(self, value: Model) -> None:
        if not isinstance(value, Model):
            raise TypeError(f"model must be a tokenizers model, got {type(value).__name__}")
        self._model = value

    normalizer = property(lambda self: self._normalizer)

    @normalizer.setter
    def normalizer(self, value) -> None:
        self._normalizer = _checked(value, Normalizer, "normalizer")

    pre_tokenizer = property(lambda self: self._pre_tokenizer)

    @pre_tokenizer.setter
    def pre_tokenizer(self, value) -> None:
        self._pre_tokenizer = _checked(value, PreTokenizer, "pre_tokenizer")

    decoder = property(lambda self: self._decoder)

    @decoder.setter
    def decoder(self, value) -> None:
        self._decoder = _checked(value, Decoder, "decoder")

    post_processor = property(lambda self: self._post_processor)

    @post_processor.setter
    def post_processor(self, value) -> None:
        self._post_processor = _checked(value, PostProcessor, "post_processor")

    def num_special_tokens_to_add(self, is_pair: bool) -> int:
        p = self._post_processor
        return 0 if p is None else p.num_special_tokens_to_add(is_pair)

    def _result(self, lists, pair: bool) -> Encoding:
        return Encoding(*lists, pair)

    @staticmethod
    def _refuse(is_pretokenized) -> None:
        if is_pretokenized:
            raise ValueError("is_pretokenized=True is not in this pipeline yet")

    def encode(
        self,
        sequence: str,
        pair: str | None = None,
        is_pretokenized: bool = False,
        add_special_tokens: bool = True,
    ) -> Encoding:
        self._refuse(is_pretokenized)
        for what, text in (("sequence", sequence), ("pair", pair)):
            if text is not None and not isinstance(text, str):
                raise TypeError(f"encode: {what} must be a str, got {type(text).__name__}")
        if sequence is None:
            raise TypeError("encode: sequence must be a str, got None")
        lists = self._core().encode(sequence, pair, bool(add_special_tokens))
        return self._result(lists, pair is not None)

    def encode_batch(
        self, input: list, is_pretokenized: bool = False, add_special_tokens: bool = True
    ) -> list[Encoding]:
        self._refuse(is_pretokenized)
        inputs = []
        for k, item in enumerate(input):
            if isinstance(item, str):
                inputs.append((item, None))
            elif (
                isinstance(item, (tuple, list))
                and len(item) == 2
                and all(isinstance(t, str) for t in item)
            ):
                inputs.append((item[0], item[1]))
            else:
                raise TypeError(
                    f"encode_batch: item {k} must be a str or a (str, str) pair, got {item!r}"
                )
        results = self._core().encode_batch(inputs, bool(add_special_tokens))
        return [self._result(r, p is not None) for r, (_, p) in zip(results, inputs)]

    def decode(self, ids: list[int], skip_special_tokens: bool = True) -> str:
        return self._core().decode(list(ids))

    def decode_batch(self, sequences: list[list[int]], skip_special_tokens: bool = True):
        core = self._core()
        return [core.decode(list(ids)) for ids in sequences]

    def token_to_id(self, token: str) -> int | None:
        return self._model.token_to_id(token)

    def id_to_token(self, id: int) -> str | None:
        return self._model.id_to_token(id)

    def get_vocab(self, with_added_tokens: bool = True) -> dict[str, int]:
        return self._model.get_vocab()

    def get_vocab_size(self, with_added_tokens: bool = True) -> int:
        return self._model.get_vocab_size()

    def to_str(self, pretty: bool = False) -> str:
        """HF's tokenizer.json of this pipeline, written in Rust."""
        return self._core().to_str(bool(pretty))

    def save(self, path: str, pretty: bool = True) -> None:
        """Write the tokenizer.json to ``path`` (atomically)."""
        from .._files import write_atomic

        write_atomic(path, self.to_str(pretty))

    @classmethod
    def _from_core(cls, core: Any) -> Tokenizer:
        from . import decoders, models, normalizers, pre_tokenizers, processors
        from ._state import wrap

        model, normalizer, pre_tokenizer, post_processor, decoder = core.stages()
        tok = cls(wrap(model, models))
        tok._normalizer = wrap(normalizer, normalizers)
        tok._pre_tokenizer = wrap(pre_tokenizer, pre_tokenizers)
        tok._post_processor = wrap(post_processor, processors)
        tok._decoder = wrap(decoder, decoders)
        return tok

    @classmethod
    def from_str(cls, json: str) -> Tokenizer:
        """A tokenizer from tokenizer.json text; a part subword does not run yet is a
        ValueError naming its JSON path."""
        if not isinstance(json, str):
            raise TypeError(f"from_str expects a str, got {type(json).__name__}")
        return cls._from_core(_core.CorePipeline.from_str(json))

    @classmethod
    def from_buffer(cls, buffer: bytes) -> Tokenizer:
        if not isinstance(buffer, (bytes, bytearray, memoryview)):
            raise TypeError(f"from_buffer expects bytes, got {type(buffer).__name__}")
        try:
            text = bytes(buffer).decode("utf-8")
        except UnicodeDecodeError as e:
            raise ValueError(f"from_buffer: the tokenizer.json is not UTF-8 ({e})") from None
        return cls.from_str(text)

    @classmethod
    def from_file(cls, path: str) -> Tokenizer:
        with open(path, encoding="utf-8") as f:
            return cls.from_str(f.read())

    def __getstate__(self) -> bytes:
        return self.to_str().encode()

    def __reduce__(self):
        return (Tokenizer.from_str, (self.to_str(),))
