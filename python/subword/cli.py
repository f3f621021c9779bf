"""The ``subword`` command (also ``python -m subword``).

Byte-level BPE (named encodings, tiktoken ranks, HF tokenizer.json), WordPiece (BERT
tokenizer.json) and classic ``</w>`` BPE (``ClassicBPE`` JSON) all go through the same commands.
Every user mistake (missing, empty or malformed file, unknown encoding, bad ids, an option out of
range, non-UTF-8 input, an output that cannot be written, e.g. a full disk) prints one line,
``subword: error: ...``, on stderr and exits with status 2. Ctrl-C exits with status 130. Output
files are written only after training has finished, each atomically.
"""

from __future__ import annotations

import argparse
import contextlib
import errno
import io
import json
import os
import sys
import time
from importlib import resources
from typing import Union

from . import registry
from .classic import ClassicBPE
from .encoding import Encoding
from .tokenizer import Tokenizer

DEMO_SENTENCE = "인공지능은 데이터로부터 학습한다. Machine learning!"
DEFAULT_STATS_ENCODINGS = ("gpt2", "cl100k_base")
MODELS = ("bpe", "wordpiece", "classic")
BERT_SPECIAL_TOKENS = ("[PAD]", "[UNK]", "[CLS]", "[SEP]", "[MASK]")
CLASSIC_FORMAT = "subword-classic-bpe/1"


class UserError(Exception):
    """A mistake the user can fix; printed as one line."""


class _Parser(argparse.ArgumentParser):
    """Argument mistakes are one line too (``subword: error: ...``), not usage + message."""

    def error(self, message):
        raise UserError(f"{message} (see: {self.prog} --help)")


def _int_arg(lo: int, hi: int):
    """An argparse type: an integer in ``lo..hi``."""

    def integer(text: str) -> int:
        try:
            n = int(text)
        except ValueError:
            raise argparse.ArgumentTypeError(f"not an integer: {text!r}") from None
        if n < lo:
            raise argparse.ArgumentTypeError(f"{n} is below the minimum, {lo}")
        if n > hi:
            raise argparse.ArgumentTypeError(f"{text} is above the maximum, {hi}")
        return n

    return integer


MAX_VOCAB_SIZE = 2**32  # token ids are 32-bit
MAX_COUNT = 2**64 - 1  # pair counts are 64-bit
vocab_size_arg = _int_arg(0, MAX_VOCAB_SIZE)
frequency_arg = _int_arg(0, MAX_COUNT)


def _demo_corpus() -> str:
    return resources.files("subword").joinpath("data/demo_corpus.txt").read_text("utf-8")


def _show_piece(piece: bytes) -> str:
    try:
        return piece.decode("utf-8")
    except UnicodeDecodeError:
        return repr(piece)  # part of a char: show the bytes


def _pieces_line(enc: Encoding, ids: list[int], color: bool) -> str:
    return _boundaries([_show_piece(piece) for piece in enc.decode_tokens_bytes(ids)], color)


def _boundaries(pieces: list[str], color: bool) -> str:
    """``[a] [b]``, or coloured backgrounds on a terminal."""
    out = []
    for k, piece in enumerate(pieces):
        text = piece.replace("\n", "\\n")
        if color:
            out.append(f"\x1b[{41 + k % 6}m{text}\x1b[0m")
        else:
            out.append(f"[{text}]")
    return "".join(out) if color else " ".join(out)


def cmd_demo(args) -> int:
    from .training import train_from_iterator

    corpus = _demo_corpus()
    t = time.perf_counter()
    enc = train_from_iterator(
        corpus.split("\n\n"), vocab_size=args.vocab_size, show_progress=False, name="demo"
    )
    dt = time.perf_counter() - t
    print(
        f"trained a byte-level BPE on the built-in corpus ({len(corpus.encode())} bytes): "
        f"{len(enc.merges)} merges, vocab {enc.n_vocab}, in {dt * 1000:.0f} ms"
    )
    s = DEMO_SENTENCE
    ids = enc.encode(s)
    n_bytes = len(s.encode("utf-8"))
    print(f"text:   {s}")
    print(f"bytes:  {n_bytes}   tokens: {len(ids)}   bytes/token: {n_bytes / len(ids):.2f}")
    print(f"ids:    {ids}")
    print(f"pieces: {_pieces_line(enc, ids, color=False)}")
    ok = enc.decode(ids) == s
    print(f"round trip decode(encode(text)) == text: {ok}")
    _demo_wordpiece(corpus, s)
    return 0 if ok else 1


def _demo_wordpiece(corpus: str, s: str) -> None:
    """The same text through a BERT-style WordPiece trained on the same corpus."""
    from . import models, normalizers, pre_tokenizers, trainers
    from .tokenizer import Tokenizer

    tok = Tokenizer(models.WordPiece(unk_token="[UNK]"))
    tok.normalizer = normalizers.BertNormalizer(lowercase=True)
    tok.pre_tokenizer = pre_tokenizers.BertPreTokenizer()
    trainer = trainers.WordPieceTrainer(vocab_size=600, min_frequency=2, show_progress=False)
    t = time.perf_counter()
    tok.train_from_iterator(corpus.split("\n\n"), trainer)
    dt = time.perf_counter() - t
    out = tok.encode(s)
    print(
        f"\ntrained a WordPiece (likelihood score) on the same corpus: vocab "
        f"{tok.get_vocab_size()}, in {dt * 1000:.0f} ms"
    )
    print(f"tokens: {len(out.ids)}   pieces: {_boundaries(out.tokens, color=False)}")


SUBWORD_MANIFEST_FORMAT = "subword-tiktoken/1"


def _manifest_next_to(ranks_path: str) -> str | None:
    """The manifest ``save`` wrote beside ``ranks_path`` (``x.tiktoken`` → ``x.json``), if any."""
    base, ext = os.path.splitext(ranks_path)
    candidate = base + ".json"
    if ext != ".tiktoken" or not os.path.isfile(candidate):
        return None
    try:
        with open(candidate, encoding="utf-8") as f:
            manifest = json.load(f)
    except (OSError, ValueError):
        return None
    if (
        isinstance(manifest, dict)
        and manifest.get("format") == SUBWORD_MANIFEST_FORMAT
        and manifest.get("ranks") == os.path.basename(ranks_path)
    ):
        return candidate
    return None


class WordPieceFile:
    """A WordPiece (BERT) tokenizer as the commands use it. ``encode`` / ``pieces`` add [CLS] …
    [SEP] as HF's ``encode`` does; ``count`` leaves them out so that it measures the text.
    Truncation and padding saved in the file are switched off: the commands see whole texts."""

    def __init__(self, tok):
        tok.no_truncation()
        tok.no_padding()
        self.tok = tok

    @property
    def n_vocab(self) -> int:
        return self.tok.get_vocab_size()

    def encode(self, text: str) -> list[int]:
        return self.tok.encode(text).ids

    def count(self, text: str) -> int:
        return len(self.tok.encode(text, add_special_tokens=False).ids)

    def pieces(self, text: str) -> tuple[list[str], list[int]]:
        enc = self.tok.encode(text)
        return enc.tokens, enc.ids

    def decode(self, ids: list[int]) -> str:
        return self.tok.decode(ids)  # special tokens skipped, as HF


class ClassicFile:
    """A classic ``</w>`` BPE (``ClassicBPE``) as the commands use it."""

    def __init__(self, bpe: ClassicBPE):
        self.bpe = bpe
        vocab = bpe.vocab
        self._tokens = sorted(vocab, key=vocab.__getitem__)

    @property
    def n_vocab(self) -> int:
        return self.bpe.vocab_size

    def encode(self, text: str) -> list[int]:
        return self.bpe.encode(text)

    def count(self, text: str) -> int:
        return len(self.bpe.encode(text))

    def pieces(self, text: str) -> tuple[list[str], list[int]]:
        ids = self.bpe.encode(text)
        return [self._tokens[i] for i in ids], ids

    def decode(self, ids: list[int]) -> str:
        return self.bpe.decode(ids)


AnyTokenizer = Union[Encoding, WordPieceFile, ClassicFile]


def load_tokenizer_file(path: str, pattern: str | None = None) -> AnyTokenizer:
    """A tokenizer from a file: a subword manifest ``.json`` (``Encoding.save``), an HF
    ``tokenizer.json`` (byte-level BPE, or WordPiece → ``WordPieceFile``), a ``ClassicBPE`` JSON
    (→ ``ClassicFile``), or a ``.tiktoken`` ranks file (pre-tokenizer ``pattern``, default gpt2;
    without ``pattern``, a manifest saved beside it supplies pattern and special tokens)."""
    if not os.path.exists(path) and os.path.isfile(path + ".json"):
        path += ".json"  # the name given to `subword train -o NAME`
    if not os.path.exists(path):
        raise UserError(f"tokenizer file not found: {path}")
    if os.path.isdir(path):
        raise UserError(f"tokenizer file is a folder: {path}")
    try:
        with open(path, "rb") as f:
            head = f.read(1 << 16).lstrip()
        if not head:
            raise UserError(f"{path}: empty file, not a tokenizer")
        if path.endswith(".json") or head.startswith(b"{"):
            with open(path, encoding="utf-8") as f:
                try:
                    doc = json.load(f)
                except ValueError as e:
                    raise UserError(f"{path}: not valid JSON ({e})") from None
            if isinstance(doc, dict) and doc.get("format") == SUBWORD_MANIFEST_FORMAT:
                return Encoding.load(path)
            if isinstance(doc, dict) and doc.get("format") == CLASSIC_FORMAT:
                return _load_classic(path)
            model = doc.get("model") if isinstance(doc, dict) else None
            if isinstance(model, dict) and model.get("type") == "WordPiece":
                return WordPieceFile(Tokenizer.from_file(path))
            return Encoding.from_hf_file(path)
        if pattern is None:
            manifest = _manifest_next_to(path)
            if manifest is not None:
                return Encoding.load(manifest)
        return Encoding.from_tiktoken_file(path, pat_str=pattern or "gpt2")
    except (OSError, ValueError, KeyError, TypeError) as e:
        msg = str(e.args[0]) if isinstance(e, KeyError) and e.args else str(e)
        raise UserError(msg if path in msg else f"{path}: {msg}") from None


def _load_classic(path: str) -> ClassicFile:
    try:
        return ClassicFile(ClassicBPE.load(path))
    except KeyError as e:
        raise UserError(f"{path}: not a ClassicBPE file (no {e.args[0]!r} field)") from None


def load_named_encoding(name: str) -> Encoding:
    try:
        return registry.get_encoding(name)
    except (ValueError, FileNotFoundError) as e:
        raise UserError(str(e)) from None


def _load(args) -> AnyTokenizer:
    if getattr(args, "tokenizer", None):
        return load_tokenizer_file(args.tokenizer, args.pattern)
    return load_named_encoding(args.encoding)


def _utf8(data: bytes, where: str) -> str:
    """``data`` decoded as UTF-8; otherwise a user error with the offset of the first bad byte."""
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError as e:
        raise UserError(
            f"{where}: not UTF-8 text (invalid byte 0x{data[e.start]:02x} at byte offset {e.start})"
        ) from None


def _read_text(path: str) -> str:
    """A UTF-8 text file's contents; missing, unreadable or non-UTF-8 files are user errors."""
    try:
        with open(path, "rb") as f:
            data = f.read()
    except FileNotFoundError:
        raise UserError(f"file not found: {path}") from None
    except IsADirectoryError:
        raise UserError(f"not a file: {path}") from None
    except OSError as e:
        raise UserError(f"cannot read {path}: {e.strerror or e}") from None
    return _utf8(data, path)


def _check_files(paths) -> None:
    for path in paths:
        if not os.path.exists(path):
            raise UserError(f"file not found: {path}")
        if not os.path.isfile(path):
            raise UserError(f"not a file: {path}")


def _count_ordinary(enc: AnyTokenizer, text: str) -> int:
    """Tokens in ``text`` with special-token strings treated as ordinary text (byte-level BPE),
    without the [CLS] / [SEP] a WordPiece template adds."""
    with _tokenizing():
        if isinstance(enc, Encoding):
            return enc.count(text, disallowed_special=())
        return enc.count(text)


def _format_table(header: list[str], rows: list[list[str]], right: set[int]) -> list[str]:
    widths = [max(len(r[i]) for r in [header, *rows]) for i in range(len(header))]

    def fmt(row):
        cells = [
            c.rjust(widths[i]) if i in right else c.ljust(widths[i]) for i, c in enumerate(row)
        ]
        return "  ".join(cells).rstrip()

    return [fmt(header), fmt(["-" * w for w in widths]), *map(fmt, rows)]


def _stdin() -> str:
    """Standard input as UTF-8 text, read as bytes so that a bad byte is refused, not replaced."""
    stream = getattr(sys.stdin, "buffer", None)
    if stream is None:  # replaced by a text-only stream (e.g. in tests)
        return sys.stdin.read()
    return _utf8(stream.read(), "standard input")


def _argv_text(words: list[str]) -> str:
    """Command-line words joined by spaces; bytes that are not UTF-8 (which Python keeps as
    lone surrogates) are refused."""
    text = " ".join(words)
    try:
        text.encode("utf-8")
    except UnicodeEncodeError as e:
        try:
            raw = os.fsencode(text)
        except UnicodeError:  # a lone surrogate that did not come from a byte
            raise UserError(f"the text argument: not UTF-8 text (at character {e.start})") from None
        return _utf8(raw, "the text argument")
    return text


def _text(args) -> str:
    if args.text:
        return _argv_text(args.text)
    return _stdin()


@contextlib.contextmanager
def _tokenizing():
    """Text the tokenizer cannot take (e.g. a byte missing from a ranks file) is a user error."""
    try:
        yield
    except (ValueError, KeyError) as e:
        msg = str(e.args[0]) if isinstance(e, KeyError) and e.args else str(e)
        raise UserError(f"cannot encode the text: {msg}") from None


def _specials_as_tokens(enc) -> dict:
    """On the command line every special token's text is that token (tiktoken dialect)."""
    return {"allowed_special": "all"} if isinstance(enc, Encoding) else {}


def _stream_encode(enc, args) -> int:
    """Standard input line by line through ``encode_iterable``: ids are written as they become
    final, so memory stays small whatever the input's size."""
    if args.text:
        raise UserError("--stream reads standard input; give no text arguments")
    if not isinstance(enc, Encoding):
        raise UserError("--stream works with byte-level BPE encodings (--encoding, .tiktoken)")
    buffer = getattr(sys.stdin, "buffer", None)
    lines = (
        io.TextIOWrapper(buffer, encoding="utf-8", errors="strict", newline="")
        if buffer is not None
        else sys.stdin
    )
    out = sys.stdout
    sep = ", " if args.json else " "
    if args.json:
        out.write("[")
    with _tokenizing():
        try:
            for i, token in enumerate(enc.encode_iterable(lines, **_specials_as_tokens(enc))):
                if i:
                    out.write(sep)
                out.write(str(token))
                if i % 4096 == 4095:
                    out.flush()
        except UnicodeDecodeError as e:
            out.write("\n")
            raise UserError(
                f"standard input: not UTF-8 text ({e.reason}, byte {e.start} of a line)"
            ) from None
    out.write("]\n" if args.json else "\n")
    return 0


def cmd_encode(args) -> int:
    enc = _load(args)
    if args.stream:
        return _stream_encode(enc, args)
    text = _text(args)
    with _tokenizing():
        ids = enc.encode(text, **_specials_as_tokens(enc))
    print(json.dumps(ids) if args.json else " ".join(map(str, ids)))
    return 0


def cmd_decode(args) -> int:
    enc = _load(args)
    raw = _argv_text(args.ids) if args.ids else _stdin()
    try:
        ids = json.loads(raw) if raw.strip().startswith("[") else [int(x) for x in raw.split()]
    except ValueError:
        raise UserError("ids must be integers separated by spaces, or a JSON list") from None
    try:
        sys.stdout.write(enc.decode(ids))
    except KeyError as e:
        raise UserError(str(e.args[0]) if e.args else "unknown token id") from None
    except ValueError as e:  # WordPiece and classic BPE: an id outside the vocabulary
        raise UserError(str(e)) from None
    except OverflowError:
        raise UserError("ids must be non-negative integers below 2**32") from None
    sys.stdout.write("\n")
    return 0


def cmd_count(args) -> int:
    enc = _load(args)
    text = _text(args)
    with _tokenizing():
        n = enc.count(text, **_specials_as_tokens(enc))
    print(n)
    return 0


def cmd_show(args) -> int:
    enc = _load(args)
    color = sys.stdout.isatty() and not args.plain
    text = _text(args)
    with _tokenizing():
        if isinstance(enc, Encoding):
            ids = enc.encode(text, allowed_special="all")
            line = _pieces_line(enc, ids, color)
        else:
            pieces, ids = enc.pieces(text)
            line = _boundaries(pieces, color)
    print(line)
    print(" ".join(map(str, ids)))
    return 0


def _check_vocab_size(vocab_size: int, special_tokens) -> None:
    """Fail before reading the corpus (and before any progress output) on an impossible size."""
    least = 256 + len(set(special_tokens))
    if vocab_size < least:
        raise UserError(
            f"vocab size {vocab_size} is too small: the minimum is {least} "
            f"(256 byte tokens + {least - 256} special tokens)"
        )


def _check_model_options(args) -> None:
    """The model exists and every option given applies to it; before any file is read."""
    if args.model not in MODELS:
        raise UserError(f"unknown model {args.model!r}: choose one of {', '.join(MODELS)}")
    only = {
        "--pattern": ("bpe", args.pattern is not None),
        "--name": ("bpe", args.name is not None),
        "--cased": ("wordpiece", args.cased),
        "--limit-alphabet": ("wordpiece", args.limit_alphabet is not None),
    }
    for option, (model, given) in only.items():
        if given and args.model != model:
            raise UserError(f"{option} is for --model {model}, not --model {args.model}")
    if args.model == "classic" and args.special:
        raise UserError("--model classic has no special tokens besides <unk>: drop --special")
    if args.model == "wordpiece" and args.special:
        missing = [t for t in ("[UNK]", "[CLS]", "[SEP]") if t not in args.special]
        if missing:
            raise UserError(
                f"--model wordpiece needs [UNK], [CLS] and [SEP] among the --special tokens "
                f"(missing: {' '.join(missing)})"
            )


def _check_wordpiece_size(vocab_size: int, special_tokens) -> None:
    """The part of the minimum known before counting: the alphabet comes on top."""
    if vocab_size < len(special_tokens):
        raise UserError(
            f"vocab size {vocab_size} is too small: the {len(special_tokens)} special tokens "
            "alone need that many, plus two per character of the alphabet"
        )


def _check_classic_size(vocab_size: int) -> None:
    if vocab_size < 2:
        raise UserError(
            f"vocab size {vocab_size} is too small: <unk> and </w> alone need 2, plus one per "
            "character of the alphabet"
        )


def _train_summary(args, dt, enc, n_merges, n_vocab, written, tokens_note="") -> None:
    n_bytes = n_tokens = 0
    for path in args.files:
        text = _read_text(path)
        n_bytes += len(text.encode("utf-8"))
        n_tokens += _count_ordinary(enc, text)
    bpt = f"{n_bytes / n_tokens:.3f}" if n_tokens else "n/a"
    print(f"trained in {dt:.2f} s on {len(args.files)} file(s), {n_bytes} bytes")
    print(f"merges:      {n_merges}")
    note = ""
    if n_vocab < args.vocab_size:
        note = f"; stopped early: no pair occurs {args.min_frequency}+ times"
    print(f"vocab size:  {n_vocab} (requested {args.vocab_size}{note})")
    print(f"compression: {bpt} bytes/token on the training data ({n_tokens} tokens{tokens_note})")
    print(f"wrote:       {', '.join(written)}")


def _json_output(out: str) -> str:
    return out if out.endswith(".json") else out + ".json"


def _train_wordpiece(args) -> int:
    from . import decoders, models, normalizers, pre_tokenizers, processors, trainers

    specials = list(dict.fromkeys(args.special or BERT_SPECIAL_TOKENS))
    _check_wordpiece_size(args.vocab_size, specials)
    out = _json_output(args.output)
    tok = Tokenizer(models.WordPiece(unk_token="[UNK]"))
    tok.normalizer = normalizers.BertNormalizer(lowercase=not args.cased)
    tok.pre_tokenizer = pre_tokenizers.BertPreTokenizer()
    tok.decoder = decoders.WordPiece()
    t = time.perf_counter()
    try:
        trainer = trainers.WordPieceTrainer(
            vocab_size=args.vocab_size,
            min_frequency=args.min_frequency,
            special_tokens=specials,
            limit_alphabet=args.limit_alphabet,
            show_progress=not args.quiet,
        )
        tok.train(args.files, trainer)
    except (OSError, ValueError) as e:
        raise UserError(str(e)) from None
    dt = time.perf_counter() - t
    tok.post_processor = processors.TemplateProcessing(
        single="[CLS] $A [SEP]",
        pair="[CLS] $A [SEP] $B:1 [SEP]:1",
        special_tokens=[(s, tok.token_to_id(s)) for s in ("[CLS]", "[SEP]")],
    )
    stem = os.path.splitext(os.path.basename(out))[0]
    try:
        tok.save(out)
        (vocab_txt,) = tok.model.save(os.path.dirname(out) or os.curdir, stem)
        written = [out, os.path.join(os.path.dirname(out), os.path.basename(vocab_txt))]
    except OSError as e:
        raise UserError(f"cannot write {out}: {e.strerror or e}") from None
    n_vocab = tok.get_vocab_size()
    _train_summary(
        args, dt, WordPieceFile(tok), len(trainer.merges), n_vocab, written, ", no [CLS]/[SEP]"
    )
    return 0


def _train_classic(args) -> int:
    _check_classic_size(args.vocab_size)
    out = _json_output(args.output)
    t = time.perf_counter()
    try:
        bpe = ClassicBPE.train_from_files(
            args.files,
            args.vocab_size,
            min_frequency=args.min_frequency,
            show_progress=not args.quiet,
        )
    except (OSError, ValueError) as e:
        raise UserError(str(e)) from None
    dt = time.perf_counter() - t
    try:
        bpe.save(out)
    except OSError as e:
        raise UserError(f"cannot write {out}: {e.strerror or e}") from None
    _train_summary(args, dt, ClassicFile(bpe), len(bpe.merges), bpe.vocab_size, [out])
    return 0


def cmd_train(args) -> int:
    from .training import train

    _check_model_options(args)
    _check_files(args.files)
    _check_outputs(args)
    if args.model == "wordpiece":
        return _train_wordpiece(args)
    if args.model == "classic":
        return _train_classic(args)
    _check_vocab_size(args.vocab_size, args.special or ())
    out = args.output
    t = time.perf_counter()
    try:
        enc = train(
            args.files,
            vocab_size=args.vocab_size,
            special_tokens=args.special or (),
            pattern=args.pattern or "gpt2",
            min_frequency=args.min_frequency,
            show_progress=not args.quiet,
            name=args.name or os.path.splitext(os.path.basename(out))[0],
        )
    except (OSError, ValueError) as e:
        raise UserError(str(e)) from None
    dt = time.perf_counter() - t
    try:
        if out.endswith(".json"):
            enc.save_hf(out)
            written = [out]
        else:
            manifest = enc.save(out)
            written = [os.path.splitext(manifest)[0] + ".tiktoken", manifest]
    except OSError as e:
        raise UserError(f"cannot write {out}: {e.strerror or e}") from None
    _train_summary(args, dt, enc, len(enc.merges or []), enc.n_vocab, written)
    return 0


def _check_output_folder(out_dir: str) -> None:
    if not os.path.isdir(out_dir):
        raise UserError(f"output folder does not exist: {out_dir}")


def _train_outputs(args) -> list[str]:
    """The files `subword train` will write for ``-o OUT``."""
    if args.model == "wordpiece":
        out = _json_output(args.output)
        stem = os.path.splitext(os.path.basename(out))[0]
        return [out, os.path.join(os.path.dirname(out), f"{stem}-vocab.txt")]
    if args.model == "classic" or args.output.endswith(".json"):
        return [_json_output(args.output)]
    return [args.output + ".tiktoken", args.output + ".json"]


def _check_outputs(args) -> None:
    """Before any training: ``-o`` names files, in a folder that exists."""
    if os.path.isdir(args.output):
        raise UserError(
            f"-o {args.output} is a folder: give a file name, e.g. "
            f"-o {os.path.join(args.output, 'tokenizer')}"
        )
    for path in _train_outputs(args):
        if os.path.isdir(path):
            raise UserError(f"cannot write {path}: it is a folder")
    _check_output_folder(os.path.dirname(os.path.abspath(args.output)))


def cmd_tokenize(args) -> int:
    from . import shards

    if args.stats:
        if args.inputs:
            raise UserError("--stats takes only the shard folder: subword tokenize --stats DIR")
        return _print_shard_stats(args.stats)
    if not args.inputs:
        raise UserError("give the input files: subword tokenize INPUT… -o DIR")
    if not args.output:
        raise UserError("give the output folder: -o DIR")
    enc = _load(args)
    if isinstance(enc, ClassicFile):
        raise UserError(
            "classic BPE cannot tokenize datasets yet: use a BPE or WordPiece tokenizer"
        )
    tok = enc.tok if isinstance(enc, WordPieceFile) else enc
    eot: bool | str | int = True
    if args.no_eot:
        eot = False
    elif args.eot is not None:
        eot = int(args.eot) if args.eot.isdigit() else args.eot
    start = time.perf_counter()
    try:
        m = shards.encode_files(
            args.inputs,
            tok,
            args.output,
            format=args.format,
            field=args.field,
            separator=args.separator,
            append_eot=eot,
            dtype=args.dtype,
            shard_tokens=args.shard_tokens,
            num_threads=args.threads,
            show_progress=not args.quiet,
            errors=args.errors,
            overwrite=args.overwrite,
        )
    except FileExistsError as e:
        raise UserError(
            f"{args.output}: already holds shards; pass --overwrite to replace them"
        ) from e
    except (ValueError, KeyError, TypeError) as e:
        raise UserError(str(e.args[0]) if isinstance(e, KeyError) and e.args else str(e)) from None
    dt = time.perf_counter() - start
    read = sum(i["bytes"] for i in m["inputs"])
    print(f"documents:   {m['documents']:,}")
    print(f"tokens:      {m['tokens']:,} ({m['dtype']}) in {len(m['shards'])} shards")
    print(
        f"read:        {read / 1e6:,.1f} MB in {dt:.2f} s ({read / 1e6 / max(dt, 1e-9):,.1f} MB/s)"
    )
    print(f"written:     {args.output}")
    return 0


def _print_shard_stats(folder: str) -> int:
    from . import shards

    try:
        m = shards.read_manifest(folder)
    except (FileNotFoundError, ValueError) as e:
        raise UserError(str(e)) from None
    t = m["tokenizer"]
    print(f"tokenizer:   {t['name']} ({t['kind']}, {t['n_vocab']:,} tokens)")
    print(f"documents:   {m['documents']:,}")
    print(f"tokens:      {m['tokens']:,} ({m['dtype']}), eot {m['eot']}")
    print(f"shards:      {len(m['shards'])} (up to {m['options']['shard_tokens']:,} tokens each)")
    for i in m["inputs"]:
        per = i["bytes"] / i["tokens"] if i["tokens"] else 0.0
        print(
            f"  {i['path']}: {i['bytes']:,} bytes, {i['documents']:,} documents, "
            f"{i['tokens']:,} tokens ({per:.2f} bytes/token), sha256 {i['sha256'][:16]}…"
        )
    return 0


def cmd_stats(args) -> int:
    _check_files(args.files)
    names = args.encoding or []
    files = args.tokenizer or []
    if not names and not files:
        names = list(DEFAULT_STATS_ENCODINGS)
    encs = [(n, load_named_encoding(n)) for n in names]
    encs += [(f, load_tokenizer_file(f, args.pattern)) for f in files]
    header = ["file", "tokenizer", "bytes", "chars", "tokens", "bytes/token", "tokens/1k chars"]
    rows = []
    totals = {label: [0, 0, 0] for label, _ in encs}

    def row(file, label, n_bytes, n_chars, n_tokens):
        bpt = f"{n_bytes / n_tokens:.3f}" if n_tokens else "n/a"
        tpk = f"{1000 * n_tokens / n_chars:.1f}" if n_chars else "n/a"
        return [file, label, str(n_bytes), str(n_chars), str(n_tokens), bpt, tpk]

    for path in args.files:
        text = _read_text(path)
        n_bytes, n_chars = len(text.encode("utf-8")), len(text)
        for label, enc in encs:
            n_tokens = _count_ordinary(enc, text)
            rows.append(row(path, label, n_bytes, n_chars, n_tokens))
            t = totals[label]
            t[0] += n_bytes
            t[1] += n_chars
            t[2] += n_tokens
    if len(args.files) > 1:
        for label, _ in encs:
            rows.append(row("(all files)", label, *totals[label]))
    for line in _format_table(header, rows, right={2, 3, 4, 5, 6}):
        print(line)
    return 0


def _vocab_sizes(spec: str) -> list[int]:
    try:
        sizes = [vocab_size_arg(x) for x in spec.replace(" ", "").split(",") if x]
    except argparse.ArgumentTypeError as e:
        raise UserError(
            f"--vocab-sizes must be integers from 0 to {MAX_VOCAB_SIZE} separated by commas, "
            f"got {spec!r} ({e})"
        ) from None
    if not sizes:
        raise UserError("--vocab-sizes is empty")
    return sorted(set(sizes))


def _import_pyplot():
    try:
        import matplotlib
    except ImportError:
        raise UserError("--plot needs matplotlib: pip install matplotlib") from None
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    return plt


def cmd_sweep(args) -> int:
    from .training import train

    sizes = _vocab_sizes(args.vocab_sizes)
    _check_vocab_size(sizes[0], ())
    eval_files = args.eval or [args.file]
    _check_files([args.file, *eval_files])
    plt = _import_pyplot() if args.plot else None  # fail before the slow part
    texts = {path: _read_text(path) for path in eval_files}
    train_bytes = os.path.getsize(args.file)
    n_bytes = {path: len(text.encode("utf-8")) for path, text in texts.items()}
    results = []  # (size, enc, seconds, {file: bytes/token})
    for size in sizes:
        t = time.perf_counter()
        try:
            enc = train(
                [args.file],
                vocab_size=size,
                pattern=args.pattern,
                min_frequency=args.min_frequency,
                show_progress=False,
                name=f"sweep-{size}",
            )
        except (OSError, ValueError) as e:
            raise UserError(str(e)) from None
        dt = time.perf_counter() - t
        bpt = {}
        for path, text in texts.items():
            n = _count_ordinary(enc, text)
            bpt[path] = n_bytes[path] / n if n else float("nan")
        results.append((size, enc, dt, bpt))

    print(f"bytes per token; trained on {args.file} ({train_bytes} bytes)")
    header = ["vocab size", "actual", "merges", "train s", *eval_files]
    rows = [
        [str(size), str(enc.n_vocab), str(len(enc.merges or [])), f"{dt:.2f}"]
        + [f"{bpt[p]:.3f}" for p in eval_files]
        for size, enc, dt, bpt in results
    ]
    for line in _format_table(header, rows, right=set(range(len(header)))):
        print(line)

    print()
    print(f"sample: {args.sample}")
    width = max(len(str(size)) for size in sizes)
    for size, enc, _, _ in results:
        ids = enc.encode(args.sample, disallowed_special=())
        print(f"{str(size).rjust(width)} ({len(ids):>3} tokens): {_pieces_line(enc, ids, False)}")

    if plt is not None:
        from matplotlib.ticker import NullLocator

        fig, ax = plt.subplots(figsize=(7, 4.5))
        xs = [size for size, *_ in results]
        for path in eval_files:
            ax.plot(xs, [r[3][path] for r in results], marker="o", label=os.path.basename(path))
        ax.set_xscale("log")
        ax.set_xticks(xs)
        ax.set_xticklabels([f"{x:,}" for x in xs])
        ax.xaxis.set_minor_locator(NullLocator())
        ax.set_xlabel("vocabulary size")
        ax.set_ylabel("bytes per token")
        ax.set_title(f"BPE trained on {os.path.basename(args.file)}")
        ax.grid(True, which="both", alpha=0.3)
        ax.legend()
        fig.tight_layout()
        try:
            fig.savefig(args.plot, format="png", dpi=120)
        except OSError as e:
            raise UserError(f"cannot write {args.plot}: {e.strerror or e}") from None
        finally:
            plt.close(fig)
        print(f"\nplot: {args.plot}")
    return 0


def build_parser() -> argparse.ArgumentParser:
    p = _Parser(prog="subword", description="Train and run BPE tokenizers.")
    sub = p.add_subparsers(dest="command")

    d = sub.add_parser("demo", help="train on built-in text and tokenize a sample (no download)")
    d.add_argument("--vocab-size", type=vocab_size_arg, default=600)
    d.set_defaults(func=cmd_demo)

    def with_encoding(sp):
        sp.add_argument("--encoding", default="cl100k_base", help="gpt2, cl100k_base, o200k_base…")
        sp.add_argument(
            "--tokenizer",
            help="a tokenizer file instead of a named encoding: HF tokenizer.json (byte-level "
            "BPE or WordPiece), subword manifest .json (subword train -o NAME), classic BPE "
            ".json (subword train --model classic) or .tiktoken ranks",
        )
        sp.add_argument("--pattern", help="pre-tokenizer for --tokenizer (name or regex)")
        return sp

    wp_specials = "A WordPiece tokenizer's template adds [CLS] … [SEP]"
    e = with_encoding(
        sub.add_parser(
            "encode",
            help="text → ids",
            description=f"Text → ids. {wp_specials} (as HF's encode, add_special_tokens=True).",
        )
    )
    e.add_argument("text", nargs="*", help="text (default: stdin)")
    e.add_argument("--json", action="store_true", help="print a JSON list")
    e.add_argument(
        "--stream",
        action="store_true",
        help="read stdin line by line and write ids as they are final (any input size)",
    )
    e.set_defaults(func=cmd_encode)

    de = with_encoding(
        sub.add_parser(
            "decode",
            help="ids → text",
            description="Ids → text. WordPiece skips special tokens such as [CLS] (as HF).",
        )
    )
    de.add_argument("ids", nargs="*", help="ids (default: stdin; spaces or a JSON list)")
    de.set_defaults(func=cmd_decode)

    c = with_encoding(
        sub.add_parser(
            "count",
            help="number of tokens",
            description="Number of tokens. For a WordPiece tokenizer [CLS] and [SEP] are not "
            "counted (add_special_tokens=False): the count measures the text.",
        )
    )
    c.add_argument("text", nargs="*")
    c.set_defaults(func=cmd_count)

    s = with_encoding(
        sub.add_parser(
            "show",
            help="pieces with visible boundaries",
            description=f"Pieces with visible boundaries, then the ids. {wp_specials}, as encode.",
        )
    )
    s.add_argument("text", nargs="*")
    s.add_argument("--plain", action="store_true", help="no colour")
    s.set_defaults(func=cmd_show)

    tr = sub.add_parser(
        "train",
        help="train a byte-level BPE, WordPiece or classic BPE on text files",
        description="Train a tokenizer on UTF-8 text files. bpe: byte-level BPE (GPT-2 style). "
        "wordpiece: BERT's WordPiece (BertNormalizer, BertPreTokenizer, [CLS] $A [SEP] "
        "template, WordPiece decoder); special tokens found in the text are cut out before "
        "counting. classic: Sennrich's BPE with an end-of-word marker </w> (words split on "
        "whitespace).",
    )
    tr.add_argument("files", nargs="+", metavar="FILE", help="UTF-8 text files")
    tr.add_argument(
        "--model",
        default="bpe",
        metavar="{" + ",".join(MODELS) + "}",
        help="what to train (default bpe)",
    )
    tr.add_argument(
        "--vocab-size",
        type=vocab_size_arg,
        required=True,
        help="bpe: including 256 bytes + specials; wordpiece: including specials and every "
        "character both as c and ##c; classic: including <unk>, </w> and the characters",
    )
    tr.add_argument(
        "--special",
        action="append",
        metavar="TOKEN",
        help="a special token (repeat). bpe: none by default; wordpiece: replaces the default "
        "[PAD] [UNK] [CLS] [SEP] [MASK] and must include [UNK], [CLS] and [SEP]; "
        "classic: not used",
    )
    tr.add_argument(
        "--pattern",
        help="bpe pre-tokenizer: gpt2 (default), cl100k_base, o200k_base or a regex",
    )
    tr.add_argument(
        "--min-frequency",
        type=frequency_arg,
        default=2,
        help="stop when no pair is this common (default 2, every model)",
    )
    tr.add_argument(
        "--cased", action="store_true", help="wordpiece: keep case and accents (no lowercasing)"
    )
    tr.add_argument(
        "--limit-alphabet",
        type=vocab_size_arg,
        metavar="N",
        help="wordpiece: keep only the N most frequent characters",
    )
    tr.add_argument("--name", help="bpe: encoding name stored in the output (default: from OUT)")
    tr.add_argument("-q", "--quiet", action="store_true", help="no progress display")
    tr.add_argument(
        "-o",
        "--output",
        required=True,
        metavar="OUT",
        help="bpe: OUT.json is an HF tokenizer.json, otherwise OUT.tiktoken + OUT.json manifest. "
        "wordpiece: OUT.json (HF tokenizer.json) + OUT-vocab.txt. classic: OUT.json. "
        "(.json is added when missing, except for bpe)",
    )
    tr.set_defaults(func=cmd_train)

    tk = with_encoding(
        sub.add_parser(
            "tokenize",
            help="encode text or jsonl files (gzip, zstd too) into .npy token shards",
            description="Encode files into token shards on every core: OUT/shard_*.npy, "
            "OUT/documents.npy (document offsets) and OUT/manifest.json. "
            "Read them with subword.read_shards(OUT).",
        )
    )
    tk.add_argument("inputs", nargs="*", metavar="INPUT")
    tk.add_argument("-o", "--output", metavar="DIR", help="the shard folder")
    tk.add_argument("--format", choices=["text", "jsonl", "parquet"], default="text")
    tk.add_argument("--field", default="text", help="jsonl: the field holding the text")
    tk.add_argument(
        "--separator", help="text: documents end at this string (default: one per line)"
    )
    tk.add_argument("--eot", help="token (or id) after each document (default: end-of-text)")
    tk.add_argument("--no-eot", action="store_true", help="nothing after each document")
    tk.add_argument("--dtype", choices=["auto", "uint16", "uint32"], default="auto")
    tk.add_argument("--shard-tokens", type=int, default=100_000_000, metavar="N")
    tk.add_argument("--threads", type=int, default=0, help="0 = every core")
    tk.add_argument("--errors", choices=["strict", "replace"], default="strict")
    tk.add_argument("--overwrite", action="store_true", help="replace shards already in DIR")
    tk.add_argument("--quiet", action="store_true", help="no progress line")
    tk.add_argument("--stats", metavar="DIR", help="print the manifest of a shard folder")
    tk.set_defaults(func=cmd_tokenize)

    st = sub.add_parser("stats", help="bytes, characters and tokens per file and encoding")
    st.add_argument("files", nargs="+", metavar="FILE")
    st.add_argument(
        "--encoding", action="append", help="a named encoding (repeat; default gpt2, cl100k_base)"
    )
    st.add_argument(
        "--tokenizer",
        action="append",
        help="a tokenizer file (repeat): as for encode; WordPiece counts leave out [CLS]/[SEP]",
    )
    st.add_argument("--pattern", help="pre-tokenizer for .tiktoken files given with --tokenizer")
    st.set_defaults(func=cmd_stats)

    sw = sub.add_parser("sweep", help="train at several vocab sizes and compare compression")
    sw.add_argument("file", metavar="FILE", help="training text")
    sw.add_argument("--vocab-sizes", required=True, help="comma-separated, e.g. 500,2000,8000")
    sw.add_argument("--eval", nargs="+", metavar="FILE", help="files to measure (default: FILE)")
    sw.add_argument("--sample", default=DEMO_SENTENCE, help="sentence to segment at each size")
    sw.add_argument("--plot", metavar="PNG", help="plot bytes/token vs vocab size (matplotlib)")
    sw.add_argument("--pattern", default="gpt2", help="pre-tokenizer name or regex")
    sw.add_argument("--min-frequency", type=frequency_arg, default=2)
    sw.set_defaults(func=cmd_sweep)
    return p


def _silence_stdout() -> None:
    """After stdout failed (full disk, closed pipe), point it at /dev/null so that the flush at
    exit does not fail a second time with a traceback."""
    try:
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, sys.stdout.fileno())
        os.close(devnull)
    except (OSError, ValueError):
        pass


_WRITE_ERRORS = (errno.ENOSPC, errno.EDQUOT, errno.EFBIG, errno.EIO, errno.EBADF)


def _os_error_line(e: OSError) -> str:
    """One line for an OSError no command turned into a UserError."""
    if e.filename is not None:
        return f"{e.filename}: {e.strerror or e}"
    if e.errno in _WRITE_ERRORS:  # no file named: writing standard output failed
        return f"cannot write the output: {e.strerror or e}"
    return e.strerror or str(e)


def _error(message: str) -> int:
    with contextlib.suppress(OSError, ValueError):
        print(f"subword: error: {message}", file=sys.stderr)
    return 2


def main(argv: list[str] | None = None) -> int:
    try:
        parser = build_parser()
        args = parser.parse_args(argv)
        if not getattr(args, "func", None):
            args = parser.parse_args(["demo"])
        code = args.func(args)
        sys.stdout.flush()  # a full disk shows here, not at exit
        return code
    except UserError as e:
        return _error(str(e))
    except BrokenPipeError:  # `subword … | head`: the reader has all it wants
        _silence_stdout()
        return 0
    except OSError as e:
        if e.filename is None:
            _silence_stdout()
        return _error(_os_error_line(e))
    except KeyboardInterrupt:
        with contextlib.suppress(OSError, ValueError):
            print("\nsubword: interrupted", file=sys.stderr)
        return 130


if __name__ == "__main__":
    sys.exit(main())
