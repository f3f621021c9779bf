"""``subword.tokenizers.Tokenizer``: HF's ``tokenizers.Tokenizer`` over the Rust pipeline
(``rust/pipeline/``): normalizer → pre-tokenizer → model → post-processor, and the decoder back.

Added tokens, pre-tokenized input, the BPE, WordLevel and WordPiece models and the template
post-processors run in the pipeline; truncation and padding come with the rest of it (issue 11).
"""

from __future__ import annotations

import asyncio
import contextlib
import copyreg
import gc
import json
from abc import ABCMeta
from typing import Any

from .. import _core
from ._added import AddedToken, as_added
from ._component import _changes
from .decoders import Decoder
from .models import Model
from .normalizers import Normalizer
from .pre_tokenizers import PreTokenizer
from .processors import PostProcessor

__all__ = ["Encoding", "Tokenizer"]


def _core_of(component) -> Any:
    """A stage's core object, or None for an absent stage."""
    return None if component is None else component._core_object()


class Encoding(metaclass=ABCMeta):  # noqa: B024 - an ABC so the core result registers
    """One encode result (HF's ``tokenizers.Encoding``): ids, tokens, character offsets, word
    and sequence indexes (None for tokens a post-processor added), type ids and the masks.

    What ``encode`` gives is the core's result class (``subword._core.EncodingColumns``, the
    same attributes and methods, written in Rust; ``isinstance`` takes it as this class); this
    Python class holds results made from lists (unpickled ones)."""

    # The columns in ``_COLUMNS`` order; ``_overflowing`` is None until there are windows.
    __slots__ = ("_columns", "_pair", "_overflowing")

    def __init__(
        self, ids, tokens, type_ids, offsets, word_ids, sequence_ids, special, attention, pair
    ):
        self._columns = [
            list(ids),
            list(tokens),
            list(type_ids),
            [tuple(o) for o in offsets],
            list(word_ids),
            list(sequence_ids),
            list(special),
            list(attention),
        ]
        self._pair = pair
        self._overflowing: list[Encoding] | None = None

    @classmethod
    def _from_tree(cls, tree, pair: bool) -> Encoding:
        # A result and its windows in pre-order, each node its parent's index and its columns
        # (as ``_result_tree`` gives them).
        made: list[Encoding] = []
        for parent, columns in tree:
            e = cls(*columns, pair)
            if parent >= 0:
                up = made[parent]
                if up._overflowing is None:
                    up._overflowing = []
                up._overflowing.append(e)
            made.append(e)
        return made[0]

    def __reduce__(self):
        return (Encoding._from_tree, (_result_tree(self), self._pair))

    @property
    def words(self) -> list[int | None]:
        import warnings

        warnings.warn(
            "Encoding.words is deprecated (as in HF tokenizers): use word_ids",
            DeprecationWarning,
            stacklevel=2,
        )
        return self.word_ids

    @property
    def n_sequences(self) -> int:
        return 2 if self._pair else 1

    @property
    def overflowing(self) -> list[Encoding]:
        """The windows truncation cut off (each ``stride`` tokens overlapping the one before)."""
        if self._overflowing is None:
            self._overflowing = []
        return self._overflowing

    def __len__(self) -> int:
        return len(self._columns[0])

    def __repr__(self) -> str:
        head = self.ids[:8]
        return f"Encoding(num_tokens={len(self)}, ids={head}{'…' if len(self) > 8 else ''})"

    def word_to_tokens(self, word_index: int, sequence_index: int = 0):
        """The (start, end) token range of a word, None if no token has it. A single sequence
        answers for any ``sequence_index``, as HF's."""
        sequence_index = sequence_index if self._pair else 0
        at = [
            k
            for k, (w, s) in enumerate(zip(self.word_ids, self.sequence_ids))
            if w == word_index and s == sequence_index
        ]
        return (at[0], at[-1] + 1) if at else None

    def token_to_word(self, token_index: int) -> int | None:
        """The word of a token; None for a token no word made, or past the end (as HF)."""
        return self.word_ids[token_index] if 0 <= token_index < len(self.ids) else None

    def token_to_chars(self, token_index: int) -> tuple[int, int] | None:
        """A token's character range in its sequence; None for a token of no sequence (a
        post-processor's special, padding) and past the end, as HF."""
        if self.token_to_sequence(token_index) is None:
            return None
        return self.offsets[token_index]

    def token_to_sequence(self, token_index: int) -> int | None:
        return self.sequence_ids[token_index] if 0 <= token_index < len(self.ids) else None

    def char_to_token(self, char_pos: int, sequence_index: int = 0) -> int | None:
        sequence_index = sequence_index if self._pair else 0  # as HF: one sequence is every index
        for k, ((s, e), seq) in enumerate(zip(self.offsets, self.sequence_ids)):
            if seq == sequence_index and s <= char_pos < e:
                return k
        return None

    def char_to_word(self, char_pos: int, sequence_index: int = 0) -> int | None:
        token = self.char_to_token(char_pos, sequence_index)
        return None if token is None else self.word_ids[token]

    def __eq__(self, other) -> bool:
        # Against this class or the Rust result (``subword._core.Encoded``): the same columns
        # and the same windows.
        try:
            return all(getattr(self, n) == getattr(other, n) for n in _COLUMNS) and (
                self.n_sequences == other.n_sequences and self.overflowing == other.overflowing
            )
        except AttributeError:
            return NotImplemented

    __hash__ = None  # type: ignore[assignment]


# The columns, in the order the core's result reads them.
_COLUMNS = tuple(_core.ENCODING_COLUMNS)


def _column(k: int, name: str) -> property:
    def get(self):
        return self._columns[k]

    return property(get, doc=f"The {name} column (read-only, as in HF).")


for _k, _name in enumerate(_COLUMNS):
    setattr(Encoding, _name, _column(_k, _name))


def _result_tree(result) -> list:
    """A result and its windows as ``Encoding._from_tree`` takes them."""
    tree: list = []

    def walk(e, parent: int) -> None:
        tree.append((parent, [list(getattr(e, n)) for n in _COLUMNS]))
        me = len(tree) - 1
        for w in e.overflowing:
            walk(w, me)

    walk(result, -1)
    return tree


@contextlib.contextmanager
def _collector_paused():
    """Python's cyclic collector off while a batch's results are made, and back as it was: each
    result is a tracked object, so tens of thousands of them set off collections that walk
    every object made so far (a quarter of a batch of 25 K lines' time). Counts are kept, so a
    collection that is due runs after the batch."""
    was = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if was:
            gc.enable()


def _reduce_core_result(result):
    # The Rust result is a view into its tokenizer's batch; its pickle is the columns, which
    # unpickle as this module's Encoding (same attributes and methods, equal to the original).
    return (Encoding._from_tree, (_result_tree(result), result.n_sequences == 2))


copyreg.pickle(_core.Encoded, _reduce_core_result)
copyreg.pickle(_core.EncodingColumns, _reduce_core_result)
Encoding.register(_core.EncodingColumns)


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
        # Added tokens as the core takes them: (id, content, single_word, lstrip, rstrip,
        # normalized, special).
        self._added: list[tuple] = []
        # As the core takes them: (max_length, stride, strategy, direction) and (length,
        # pad_to_multiple_of, direction, pad_id, pad_type_id, pad_token).
        self._truncation: tuple | None = None
        self._padding: tuple | None = None
        self._built: tuple | None = None
        self._seen: tuple | None = None

    def __setattr__(self, name: str, value: Any) -> None:
        # Any attribute set (a stage, the added tokens, truncation, padding) drops the pipeline
        # ``_core`` reuses; only configuration sets attributes, so encoding pays nothing.
        object.__setattr__(self, name, value)
        if name != "_seen":
            object.__setattr__(self, "_seen", None)

    def _core(self):
        # The components are mutable (as in HF) and each keeps its core object until it
        # changes; every change to one moves the global count (``_component._changes``), and
        # every attribute set here drops ``_seen``. So while the count is what it was, the
        # pipeline made then is this tokenizer's still. Otherwise the stages are asked for
        # their core objects, and ``_pipeline_of`` reuses the pipeline if they are the same.
        seen = self._seen
        if seen is not None and seen[0] == _changes[0]:
            return seen[1]
        now = _changes[0]
        n, p, pp, d = self._normalizer, self._pre_tokenizer, self._post_processor, self._decoder
        stages = (
            self._model._core_object(),
            None if n is None else n._core_object(),
            None if p is None else p._core_object(),
            None if pp is None else pp._core_object(),
            None if d is None else d._core_object(),
        )
        core = self._pipeline_of(stages)
        self._seen = (now, core)
        return core

    def _pipeline_of(self, stages: tuple):
        built = self._built
        if built is not None:
            old, added, truncation, padding, core = built
            if (
                added is self._added
                and truncation is self._truncation
                and padding is self._padding
                and old[0] is stages[0]
                and old[1] is stages[1]
                and old[2] is stages[2]
                and old[3] is stages[3]
                and old[4] is stages[4]
            ):
                return core
        core = _core.CorePipeline(*stages, self._added, self._truncation, self._padding)
        self._built = (stages, self._added, self._truncation, self._padding, core)
        return core

    def _counting_core(self):
        # What training counts needs only the stages before the model (HF trains models
        # that cannot encode yet, such as a WordPiece without its unknown token): a stand-in
        # model takes the model's place.
        stand_in = _core.CoreModel.word_level({"<unk>": 0}, "<unk>")
        normalizer, pre_tokenizer = _core_of(self._normalizer), _core_of(self._pre_tokenizer)
        return _core.CorePipeline(stand_in, normalizer, pre_tokenizer, None, None, self._added)

    def enable_truncation(
        self,
        max_length: int,
        stride: int = 0,
        strategy: str = "longest_first",
        direction: str = "right",
    ) -> None:
        """Keep at most ``max_length`` tokens (special tokens included); what is cut off is
        in ``overflowing``, each window ``stride`` tokens overlapping the one before."""
        for name, v in (("max_length", max_length), ("stride", stride)):
            if isinstance(v, bool) or not isinstance(v, int) or v < 0:
                raise ValueError(f"{name} must be an int >= 0, got {v!r}")
        if strategy not in ("longest_first", "only_first", "only_second"):
            raise ValueError(
                f"strategy must be longest_first, only_first or only_second, got {strategy!r}"
            )
        if direction not in ("left", "right"):
            raise ValueError(f'direction must be "left" or "right", got {direction!r}')
        added = self.num_special_tokens_to_add(False)
        # (HF's check wraps around when the special tokens are more than max_length.)
        if added <= max_length and max_length - added < stride:
            raise ValueError(
                f"stride {stride} is more than the effective max length {max_length - added} "
                f"(= {max_length} max_length - {added} added special tokens): lower the stride "
                "or raise max_length"
            )
        self._truncation = (max_length, stride, strategy, direction)

    def no_truncation(self) -> None:
        self._truncation = None

    @property
    def truncation(self) -> dict | None:
        t = self._truncation
        if t is None:
            return None
        return dict(zip(("max_length", "stride", "strategy", "direction"), t))

    def enable_padding(
        self,
        direction: str = "right",
        pad_id: int = 0,
        pad_type_id: int = 0,
        pad_token: str = "[PAD]",
        length: int | None = None,
        pad_to_multiple_of: int | None = None,
    ) -> None:
        """Pad results to ``length``, or a batch to its longest (rounded up to
        ``pad_to_multiple_of``)."""
        if direction not in ("left", "right"):
            raise ValueError(f'direction must be "left" or "right", got {direction!r}')
        for name, v in (("pad_id", pad_id), ("pad_type_id", pad_type_id)):
            if isinstance(v, bool) or not isinstance(v, int) or not 0 <= v < 2**32:
                raise ValueError(f"{name} must be an int in 0..2**32, got {v!r}")
        for name, v in (("length", length), ("pad_to_multiple_of", pad_to_multiple_of)):
            if v is not None and (isinstance(v, bool) or not isinstance(v, int) or v < 0):
                raise ValueError(f"{name} must be an int >= 0 or None, got {v!r}")
        if not isinstance(pad_token, str):
            raise TypeError(f"pad_token must be a str, got {type(pad_token).__name__}")
        padding = (length, pad_to_multiple_of, direction, pad_id, pad_type_id, pad_token)
        _core.CorePipeline.check_padding(padding)
        self._padding = padding

    def no_padding(self) -> None:
        self._padding = None

    @property
    def padding(self) -> dict | None:
        p = self._padding
        if p is None:
            return None
        keys = ("length", "pad_to_multiple_of", "direction", "pad_id", "pad_type_id", "pad_token")
        return dict(zip(keys, p))

    def _add(self, tokens, special: bool) -> int:
        if isinstance(tokens, (str, AddedToken)):
            raise TypeError("add_tokens takes a list of tokens; wrap one token in a list")
        new = [as_added(t, special)._tuple(0) for t in tokens]
        self._added, n = _core.CorePipeline.assign_added_ids(
            self._model._core_object(), self._added, new
        )
        return n

    def add_tokens(self, tokens: list) -> int:
        """Add tokens (str or AddedToken) the model may lack; returns how many were added."""
        return self._add(tokens, special=False)

    def add_special_tokens(self, tokens: list) -> int:
        """Add special tokens (skipped by ``decode(..., skip_special_tokens=True)``)."""
        return self._add(tokens, special=True)

    def get_added_tokens_decoder(self) -> dict[int, AddedToken]:
        return {t[0]: AddedToken._from_tuple(t) for t in sorted(self._added)}

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

    @staticmethod
    def _sequence(value, is_pretokenized: bool, what: str):
        if is_pretokenized:
            if isinstance(value, str) or not isinstance(value, (list, tuple)):
                raise TypeError(
                    f"{what}: with is_pretokenized=True a sequence is a list of str, got "
                    f"{type(value).__name__}"
                )
            words = list(value)
            for w in words:
                if not isinstance(w, str):
                    raise TypeError(f"{what}: pre-tokenized words are str, got {w!r}")
            return words
        if not isinstance(value, str):
            raise TypeError(f"{what} must be a str, got {type(value).__name__}")
        return value

    def encode(
        self,
        sequence,
        pair=None,
        is_pretokenized: bool = False,
        add_special_tokens: bool = True,
    ) -> Encoding:
        """The tokens of ``sequence`` (and ``pair``): a str, or with ``is_pretokenized`` a list
        of words."""
        if pair is None and type(sequence) is str and not is_pretokenized:  # the common call
            return self._core().encode(sequence, None, bool(add_special_tokens))
        a = self._sequence(sequence, is_pretokenized, "encode: sequence")
        b = None if pair is None else self._sequence(pair, is_pretokenized, "encode: pair")
        return self._core().encode(a, b, bool(add_special_tokens))

    def post_process(
        self, encoding: Encoding, pair: Encoding | None = None, add_special_tokens: bool = True
    ) -> Encoding:
        """What ``encode`` does after the model, on results already made: truncation, the
        post-processor and padding (HF's ``post_process``)."""

        def columns(e, what):
            if not isinstance(e, Encoding) and not hasattr(e, "word_ids"):
                raise TypeError(f"post_process: {what} must be an Encoding, got {type(e).__name__}")
            return (e.ids, e.tokens, e.type_ids, e.offsets, e.word_ids, e.attention_mask)

        def sequence(e, what):
            # Its windows from an earlier truncation go too: HF keeps them unless truncation
            # cuts the sequence again.
            main = columns(e, what)
            return main, [columns(o, what + "'s overflowing") for o in e.overflowing]

        b = None if pair is None else sequence(pair, "pair")
        a = sequence(encoding, "encoding")
        return self._core().post_process(a, b, bool(add_special_tokens))

    def encode_batch(
        self, input: list, is_pretokenized: bool = False, add_special_tokens: bool = True
    ) -> list[Encoding]:
        """``encode`` of each item (a sequence or a (sequence, pair) tuple), on every core."""
        if isinstance(input, (str, bytes)):
            raise TypeError(
                "encode_batch takes a list of inputs, got a single string: wrap it in a list "
                "or call encode"
            )
        if not is_pretokenized and type(input) is list and all(type(x) is str for x in input):
            # The common batch, a list of texts, handed over as it is, without the per-item
            # checks below (the core still refuses what it cannot encode, e.g. a lone surrogate).
            inputs = input
        else:
            inputs = []
            for k, item in enumerate(input):
                what = f"encode_batch: item {k}"
                single = isinstance(item, str) or (
                    is_pretokenized
                    and isinstance(item, list)
                    and all(isinstance(w, str) for w in item)
                )
                if single:
                    inputs.append((self._sequence(item, is_pretokenized, what), None))
                elif isinstance(item, (tuple, list)) and len(item) == 2:
                    inputs.append(
                        (
                            self._sequence(item[0], is_pretokenized, what),
                            self._sequence(item[1], is_pretokenized, what),
                        )
                    )
                else:
                    raise TypeError(
                        f"{what} must be a sequence or a (sequence, pair) pair, got {item!r}"
                    )
        with _collector_paused():
            return self._core().encode_batch(inputs, bool(add_special_tokens))

    def encode_batch_fast(
        self, input: list, is_pretokenized: bool = False, add_special_tokens: bool = True
    ) -> list[Encoding]:
        """HF's ``encode_batch_fast``: ``encode_batch`` (subword computes offsets at no extra
        cost, so this is the same call)."""
        return self.encode_batch(input, is_pretokenized, add_special_tokens)

    # HF's async variants: the same calls on a worker thread (the core releases the GIL while
    # it encodes, so awaiting tasks and other threads run meanwhile).
    async def async_encode(
        self,
        sequence: Any,
        pair: Any = None,
        is_pretokenized: bool = False,
        add_special_tokens: bool = True,
    ) -> Encoding:
        return await asyncio.to_thread(
            self.encode, sequence, pair, is_pretokenized, add_special_tokens
        )

    async def async_encode_batch(
        self, input: list, is_pretokenized: bool = False, add_special_tokens: bool = True
    ) -> list[Encoding]:
        return await asyncio.to_thread(
            self.encode_batch, input, is_pretokenized, add_special_tokens
        )

    async def async_encode_batch_fast(
        self, input: list, is_pretokenized: bool = False, add_special_tokens: bool = True
    ) -> list[Encoding]:
        return await asyncio.to_thread(
            self.encode_batch_fast, input, is_pretokenized, add_special_tokens
        )

    async def async_decode_batch(
        self, sequences: list[list[int]], skip_special_tokens: bool = True
    ) -> list[str]:
        return await asyncio.to_thread(self.decode_batch, sequences, skip_special_tokens)

    def train(self, files: list[str], trainer=None) -> None:
        """Learn the model from ``files`` (each line one text), with ``trainer`` (by default
        the model's own trainer with its defaults); the trainer's special tokens are added."""
        from . import _train

        _train.from_files(self, files, trainer)

    def train_from_iterator(self, iterator, trainer=None, length: int | None = None) -> None:
        """Learn the model from texts (or lists of texts); ``length`` is only a progress hint
        in HF and is accepted for it."""
        from . import _train

        _train.from_iterator(self, iterator, trainer, length)

    def decode(self, ids: list[int], skip_special_tokens: bool = True) -> str:
        return self._core().decode(list(ids), bool(skip_special_tokens))

    def decode_batch(self, sequences: list[list[int]], skip_special_tokens: bool = True):
        core = self._core()
        return [core.decode(list(ids), bool(skip_special_tokens)) for ids in sequences]

    def token_to_id(self, token: str) -> int | None:
        return self._core().token_to_id(token)

    def id_to_token(self, id: int) -> str | None:
        return self._core().id_to_token(id)

    def get_vocab(self, with_added_tokens: bool = True) -> dict[str, int]:
        vocab = self._model.get_vocab()
        if with_added_tokens:
            vocab.update({t[1]: t[0] for t in self._added})
        return vocab

    def get_vocab_size(self, with_added_tokens: bool = True) -> int:
        return self._core().vocab_size(bool(with_added_tokens))

    def to_str(self, pretty: bool = False) -> str:
        """HF's tokenizer.json of this pipeline, written in Rust."""
        return self._core().to_str(bool(pretty))

    def __repr__(self) -> str:
        return self._shown(short=False)

    def __str__(self) -> str:
        return self._shown(short=True)

    def _shown(self, short: bool) -> str:
        """HF's form (``_repr.py``), from the tokenizer.json; a pipeline the core cannot build
        yet shows its model."""
        from ._repr import render

        try:
            tree = json.loads(self.to_str())
        except ValueError:
            return f"Tokenizer(model={self._model!r})"
        return render(tree, name="Tokenizer", short=short)

    def save(self, path: str, pretty: bool = True) -> None:
        """Write the tokenizer.json to ``path`` (atomically)."""
        from .._files import write_atomic

        write_atomic(path, self.to_str(pretty))

    def _take_parts(self, other: Tokenizer) -> None:
        """Use ``other``'s normalizer, post-processor, truncation and padding (the same
        objects): ``subword.Tokenizer`` keeps them apart from its model."""
        self._normalizer = other._normalizer
        self._post_processor = other._post_processor
        self._truncation = other._truncation
        self._padding = other._padding

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
        tok._added = core.added_tokens()
        tok._truncation = core.truncation()
        tok._padding = core.padding()
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

    def __eq__(self, other) -> bool:
        if not isinstance(other, Tokenizer):
            return NotImplemented
        return self.to_str() == other.to_str()

    __hash__ = None  # type: ignore[assignment]  # mutable, as HF's
