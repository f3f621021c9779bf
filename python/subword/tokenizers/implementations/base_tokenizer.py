"""The wrapper every ready-made tokenizer shares: a ``Tokenizer`` and the parameters it was
built with (for ``repr``), its methods passed through."""

from __future__ import annotations

import os
from typing import Any

from .._tokenizer import Tokenizer


class BaseTokenizer:
    def __init__(self, tokenizer: Tokenizer, parameters: dict | None = None):
        if not isinstance(tokenizer, Tokenizer):
            raise TypeError(
                "BaseTokenizer wraps a subword.tokenizers.Tokenizer, not "
                f"{type(tokenizer).__name__}"
            )
        self._tokenizer = tokenizer
        self._parameters = dict(parameters or {})

    def __repr__(self) -> str:
        settings = ", ".join(f"{k}={v}" for k, v in self._parameters.items())
        return f"Tokenizer(vocabulary_size={self._tokenizer.get_vocab_size()}, {settings})"

    # ----- the pipeline's parts, settable as on a Tokenizer -----

    @property
    def model(self):
        return self._tokenizer.model

    @model.setter
    def model(self, model) -> None:
        self._tokenizer.model = model

    @property
    def normalizer(self):
        return self._tokenizer.normalizer

    @normalizer.setter
    def normalizer(self, normalizer) -> None:
        self._tokenizer.normalizer = normalizer

    @property
    def pre_tokenizer(self):
        return self._tokenizer.pre_tokenizer

    @pre_tokenizer.setter
    def pre_tokenizer(self, pre_tokenizer) -> None:
        self._tokenizer.pre_tokenizer = pre_tokenizer

    @property
    def post_processor(self):
        return self._tokenizer.post_processor

    @post_processor.setter
    def post_processor(self, processor) -> None:
        self._tokenizer.post_processor = processor

    @property
    def decoder(self):
        return self._tokenizer.decoder

    @decoder.setter
    def decoder(self, decoder) -> None:
        self._tokenizer.decoder = decoder

    # ----- vocabulary -----

    def num_special_tokens_to_add(self, is_pair: bool) -> int:
        return self._tokenizer.num_special_tokens_to_add(is_pair)

    def get_vocab(self, with_added_tokens: bool = True) -> dict[str, int]:
        return self._tokenizer.get_vocab(with_added_tokens=with_added_tokens)

    def get_added_tokens_decoder(self) -> dict:
        return self._tokenizer.get_added_tokens_decoder()

    def get_vocab_size(self, with_added_tokens: bool = True) -> int:
        return self._tokenizer.get_vocab_size(with_added_tokens=with_added_tokens)

    def add_tokens(self, tokens: list) -> int:
        return self._tokenizer.add_tokens(tokens)

    def add_special_tokens(self, special_tokens: list) -> int:
        return self._tokenizer.add_special_tokens(special_tokens)

    def token_to_id(self, token: str) -> int | None:
        return self._tokenizer.token_to_id(token)

    def id_to_token(self, id: int) -> str | None:
        return self._tokenizer.id_to_token(id)

    # ----- padding and truncation -----

    def enable_padding(
        self,
        direction: str = "right",
        pad_to_multiple_of: int | None = None,
        pad_id: int = 0,
        pad_type_id: int = 0,
        pad_token: str = "[PAD]",
        length: int | None = None,
    ) -> None:
        self._tokenizer.enable_padding(
            direction=direction,
            pad_to_multiple_of=pad_to_multiple_of,
            pad_id=pad_id,
            pad_type_id=pad_type_id,
            pad_token=pad_token,
            length=length,
        )

    def no_padding(self) -> None:
        self._tokenizer.no_padding()

    @property
    def padding(self) -> dict | None:
        return self._tokenizer.padding

    def enable_truncation(
        self, max_length: int, stride: int = 0, strategy: str = "longest_first"
    ) -> None:
        self._tokenizer.enable_truncation(max_length, stride=stride, strategy=strategy)

    def no_truncation(self) -> None:
        self._tokenizer.no_truncation()

    @property
    def truncation(self) -> dict | None:
        return self._tokenizer.truncation

    # ----- encoding and decoding -----

    def normalize(self, sequence: str) -> str:
        """``sequence`` through the normalizer (as it is without one)."""
        normalizer = self._tokenizer.normalizer
        return sequence if normalizer is None else normalizer.normalize_str(sequence)

    def encode(
        self,
        sequence,
        pair=None,
        is_pretokenized: bool = False,
        add_special_tokens: bool = True,
    ):
        if sequence is None:
            raise ValueError("encode: sequence can't be None")
        return self._tokenizer.encode(sequence, pair, is_pretokenized, add_special_tokens)

    def encode_batch(self, inputs: list, is_pretokenized: bool = False, add_special_tokens=True):
        if inputs is None:
            raise ValueError("encode_batch: inputs can't be None")
        return self._tokenizer.encode_batch(inputs, is_pretokenized, add_special_tokens)

    def decode(self, ids: list[int], skip_special_tokens: bool = True) -> str:
        if ids is None:
            raise ValueError("decode: ids can't be None")
        return self._tokenizer.decode(ids, skip_special_tokens=skip_special_tokens)

    def decode_batch(self, sequences: list[list[int]], skip_special_tokens: bool = True):
        if sequences is None:
            raise ValueError("decode_batch: sequences can't be None")
        return self._tokenizer.decode_batch(sequences, skip_special_tokens=skip_special_tokens)

    # ----- files -----

    def save_model(self, directory: str, prefix: str | None = None) -> list[str]:
        """The model's own files (``vocab.json`` and ``merges.txt``, or ``vocab.txt``)."""
        return self._tokenizer.model.save(os.fspath(directory), prefix)

    def save(self, path: str, pretty: bool = True) -> None:
        self._tokenizer.save(path, pretty)

    def to_str(self, pretty: bool = False) -> str:
        return self._tokenizer.to_str(pretty)

    # ----- training: the subclasses set the trainer's defaults -----

    def _train(self, trainer, files=None, iterator=None, length=None) -> None:
        if files is not None:
            if isinstance(files, (str, os.PathLike)):
                files = [files]
            self._tokenizer.train([os.fspath(f) for f in files], trainer=trainer)
        else:
            self._tokenizer.train_from_iterator(iterator, trainer=trainer, length=length)


def unicode_form(name: str | None) -> Any:
    """HF's ``unicode_normalizer`` argument: ``"nfc"``, ``"nfd"``, ``"nfkc"`` or ``"nfkd"``."""
    from .. import normalizers

    forms = {"nfc": normalizers.NFC, "nfd": normalizers.NFD, "nfkc": normalizers.NFKC}
    forms["nfkd"] = normalizers.NFKD
    if name not in forms:
        raise ValueError(f"unicode_normalizer={name!r}: expected one of {', '.join(sorted(forms))}")
    return forms[name]()


def chain(parts: list) -> Any:
    """No normalizer, the one given, or a Sequence of them."""
    from .. import normalizers

    if not parts:
        return None
    return parts[0] if len(parts) == 1 else normalizers.Sequence(parts)
