"""The ``subword`` command (also ``python -m subword``).

User mistakes (missing file, unknown encoding, bad ids) print one line and exit with status 2.
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from importlib import resources

from . import registry
from .encoding import Encoding

DEMO_SENTENCE = "인공지능은 데이터로부터 학습한다. Machine learning!"


class UserError(Exception):
    """A mistake the user can fix; printed as one line."""


def _demo_corpus() -> str:
    return resources.files("subword").joinpath("data/demo_corpus.txt").read_text("utf-8")


def _show_piece(piece: bytes) -> str:
    try:
        return piece.decode("utf-8")
    except UnicodeDecodeError:
        return repr(piece)  # part of a char: show the bytes


def _pieces_line(enc: Encoding, ids: list[int], color: bool) -> str:
    out = []
    for k, piece in enumerate(enc.decode_tokens_bytes(ids)):
        text = _show_piece(piece).replace("\n", "\\n")
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
    return 0 if ok else 1


def _load(args) -> Encoding:
    if getattr(args, "tokenizer", None):
        path = args.tokenizer
        try:
            return Encoding.from_tiktoken_file(path, pat_str=args.pattern or "gpt2")
        except FileNotFoundError:
            raise UserError(f"tokenizer file not found: {path}") from None
    try:
        return registry.get_encoding(args.encoding)
    except ValueError as e:
        raise UserError(str(e)) from None
    except FileNotFoundError as e:
        raise UserError(str(e)) from None


def _text(args) -> str:
    if args.text:
        return " ".join(args.text)
    return sys.stdin.read()


def cmd_encode(args) -> int:
    enc = _load(args)
    ids = enc.encode(_text(args), allowed_special="all")
    print(json.dumps(ids) if args.json else " ".join(map(str, ids)))
    return 0


def cmd_decode(args) -> int:
    enc = _load(args)
    raw = " ".join(args.ids) if args.ids else sys.stdin.read()
    try:
        ids = json.loads(raw) if raw.strip().startswith("[") else [int(x) for x in raw.split()]
    except ValueError:
        raise UserError("ids must be integers separated by spaces, or a JSON list") from None
    try:
        sys.stdout.write(enc.decode(ids))
    except KeyError as e:
        raise UserError(str(e.args[0]) if e.args else "unknown token id") from None
    except OverflowError:
        raise UserError("ids must be non-negative integers below 2**32") from None
    sys.stdout.write("\n")
    return 0


def cmd_count(args) -> int:
    enc = _load(args)
    print(enc.count(_text(args), allowed_special="all"))
    return 0


def cmd_show(args) -> int:
    enc = _load(args)
    ids = enc.encode(_text(args), allowed_special="all")
    color = sys.stdout.isatty() and not args.plain
    print(_pieces_line(enc, ids, color))
    print(" ".join(map(str, ids)))
    return 0


def build_parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(prog="subword", description="Train and run BPE tokenizers.")
    sub = p.add_subparsers(dest="command")

    d = sub.add_parser("demo", help="train on built-in text and tokenize a sample (no download)")
    d.add_argument("--vocab-size", type=int, default=600)
    d.set_defaults(func=cmd_demo)

    def with_encoding(sp):
        sp.add_argument("--encoding", default="cl100k_base", help="gpt2, cl100k_base, o200k_base…")
        sp.add_argument("--tokenizer", help="a .tiktoken ranks file instead of a named encoding")
        sp.add_argument("--pattern", help="pre-tokenizer for --tokenizer (name or regex)")
        return sp

    e = with_encoding(sub.add_parser("encode", help="text → ids"))
    e.add_argument("text", nargs="*", help="text (default: stdin)")
    e.add_argument("--json", action="store_true", help="print a JSON list")
    e.set_defaults(func=cmd_encode)

    de = with_encoding(sub.add_parser("decode", help="ids → text"))
    de.add_argument("ids", nargs="*", help="ids (default: stdin; spaces or a JSON list)")
    de.set_defaults(func=cmd_decode)

    c = with_encoding(sub.add_parser("count", help="number of tokens"))
    c.add_argument("text", nargs="*")
    c.set_defaults(func=cmd_count)

    s = with_encoding(sub.add_parser("show", help="pieces with visible boundaries"))
    s.add_argument("text", nargs="*")
    s.add_argument("--plain", action="store_true", help="no colour")
    s.set_defaults(func=cmd_show)
    return p


def main(argv: list[str] | None = None) -> int:
    parser = build_parser()
    args = parser.parse_args(argv)
    if not getattr(args, "func", None):
        args = parser.parse_args(["demo"])
    try:
        return args.func(args)
    except UserError as e:
        print(f"subword: error: {e}", file=sys.stderr)
        return 2
    except BrokenPipeError:
        return 0


if __name__ == "__main__":
    sys.exit(main())
