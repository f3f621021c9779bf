"""Time-bounded differential fuzzing: subword against tiktoken and HF ``tokenizers``.

    python benches/fuzz.py                      # 1 minute, seed 0
    python benches/fuzz.py --minutes 10 --seed 7

Generates hostile random texts (scripts and categories across Unicode, whitespace runs,
contractions and apostrophes, digit runs, emoji sequences, lone special-token fragments, long
repeats, random bytes read as latin-1, lone surrogates) and compares, per text:

- tiktoken, for r50k_base, cl100k_base and o200k_base (the rank files of tests/refdata.py, offline):
  ``encode_ordinary``, ``encode(allowed_special="all")``, ``encode`` with the default
  ``disallowed_special`` (same ids, or both raise ValueError), ``decode`` / ``decode_bytes`` of
  those ids (and the round trip back to the text), and ``decode_bytes`` of random id sequences.
- HF ``tokenizers`` WordPiece: the BERT uncased ``tokenizer.json`` of tests/refdata.py loaded by
  both (truncation and padding off): ids, tokens, offsets, and ``decode`` of the ids.
- HF ``tokenizers`` byte-level BPE: a subword-trained encoding exported with ``to_hf_json`` and
  loaded by HF, and GPT-2 built in HF from the r50k ranks and loaded by subword with
  ``from_hf_json`` (as tests/test_hf_json.py does): same ids.

Prints the cases run and the mismatches per comparison; each mismatch is shrunk to a short text
and printed as a reproducer. Exits 1 if there was any mismatch. Not part of the test suite.
"""

from __future__ import annotations

import argparse
import random
import shlex
import sys
import time
from collections import Counter
from pathlib import Path
from typing import Callable

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO / "tests"))

import refdata  # noqa: E402

refdata.configure_environment()  # before tiktoken or subword read a cache path

import gpt2files  # noqa: E402
import subword  # noqa: E402
import tiktoken  # noqa: E402
import tokenizers  # noqa: E402

ENCODINGS = ["r50k_base", "cl100k_base", "o200k_base"]

# ----------------------------------------------------------------------------------------------
# hostile text


RANGES = {
    "ascii": (0x20, 0x7E),
    "controls": (0x00, 0x1F),
    "latin1": (0xA0, 0xFF),
    "latin-ext": (0x100, 0x24F),
    "combining": (0x300, 0x36F),
    "greek": (0x370, 0x3FF),
    "cyrillic": (0x400, 0x4FF),
    "hebrew": (0x590, 0x5FF),
    "arabic": (0x600, 0x6FF),
    "devanagari": (0x900, 0x97F),
    "thai": (0xE00, 0xE7F),
    "jamo": (0x1100, 0x11FF),
    "general-punct": (0x2000, 0x206F),
    "cjk-punct": (0x3000, 0x303F),
    "kana": (0x3040, 0x30FF),
    "cjk": (0x4E00, 0x9FFF),
    "hangul": (0xAC00, 0xD7A3),
    "private-use": (0xE000, 0xE0FF),
    "fullwidth": (0xFF00, 0xFFEF),
    "specials": (0xFFF0, 0xFFFF),
    "math-alnum": (0x1D400, 0x1D7FF),
    "emoji": (0x1F300, 0x1FAFF),
    "supplementary": (0x20000, 0x2A6DF),
    "tags": (0xE0000, 0xE007F),
}
SPACES = [" ", "  ", "\t", "\n", "\r\n", "\r", "\x0b", "\x0c", "\x85", "\xa0", "\u1680",
          "\u2000", "\u2007", "\u200a", "\u2028", "\u2029", "\u202f", "\u205f", "\u3000",
          "\u200b", "\u200c", "\u200d", "\ufeff"]  # fmt: skip
CONTRACTIONS = ["'s", "'t", "'re", "'ve", "'m", "'ll", "'d", "'S", "'T", "'RE", "'VE", "'M",
                "'LL", "'D", "\u2019s", "\u2019ll", "'", "''", "'''", "`"]  # fmt: skip
DIGITS = "0123456789" + "٠١٢٣٤٥٦٧٨٩" + "０１２３４５６７８９" + "०१२३४५६७८९" + "²³¹¼½"
EMOJI = ["😀", "🤖", "👍🏽", "👩‍👩‍👧‍👦", "🇰🇷", "🇺🇸", "🏳️‍🌈", "❤️", "#️⃣", "🧑🏿‍💻", "\u2764\ufe0f"]
FRAGMENTS = ["<|endoftext|>", "<|endoftext", "endoftext|>", "<|", "|>", "<|fim_prefix|>",
             "<|fim_middle|>", "<|fim_suffix|>", "<|endofprompt|>", "<|endoftext|><|endoftext|>",
             "<||>", "[CLS]", "[SEP]", "[UNK]", "[MASK]", "[PAD]", "[cls]", "##", "##a", "Ġ",
             "</w>"]  # fmt: skip
WORDS = [
    "the",
    "The",
    " THE",
    "hello",
    "world",
    "don't",
    "naïve",
    "café",
    "Straße",
    "İstanbul",
    "ﬁne",
    "인공지능",
    "학습한다",
    "日本語",
    "中文",
    "Привет",
    "مرحبا",
    "שלום",
    "नमस्ते",
    "ภาษาไทย",
    "x_1",
    "f(x)",
    "a+b",
    "http://x.y/z?q=1",
    "e\u0301",
    "Å",
    "ǅ",
    "ß",
    "ǰ",
]


def _chars(rng: random.Random, lo: int, hi: int, n: int) -> str:
    out = []
    for _ in range(n):
        c = rng.randint(lo, hi)
        if 0xD800 <= c <= 0xDFFF:
            c = 0xFFFD
        out.append(chr(c))
    return "".join(out)


def _segment(rng: random.Random) -> str:
    kind = rng.randrange(12)
    if kind == 0:
        lo, hi = rng.choice(list(RANGES.values()))
        return _chars(rng, lo, hi, rng.randint(1, 30))
    if kind == 1:  # anything in Unicode (unassigned too), no surrogates
        return _chars(rng, 0, 0x10FFFF, rng.randint(1, 10))
    if kind == 2:
        return "".join(rng.choice(SPACES) for _ in range(rng.randint(1, 40)))
    if kind == 3:
        word = rng.choice(WORDS + ["I", "you", "we", "it", "x", ""])
        return word + rng.choice(CONTRACTIONS) + rng.choice(["", " ", "s", "x", "'"])
    if kind == 4:
        return "".join(rng.choice(DIGITS) for _ in range(rng.randint(1, 25)))
    if kind == 5:
        return "".join(rng.choice(EMOJI) for _ in range(rng.randint(1, 8)))
    if kind == 6:
        return rng.choice(FRAGMENTS)
    if kind == 7:  # a long repeat
        unit = rng.choice(["a", " ", "\n", "ab", "😀", "é", "1", "'s", " the", "\t ", "가", "。"])
        return unit * rng.randint(50, 3000)
    if kind == 8:
        return bytes(rng.getrandbits(8) for _ in range(rng.randint(1, 40))).decode("latin-1")
    if kind == 9:  # random bytes as UTF-8 with replacement characters
        raw = bytes(rng.getrandbits(8) for _ in range(rng.randint(1, 40)))
        return raw.decode("utf-8", errors="replace")
    if kind == 10:
        sep = rng.choice([" ", "", "  ", "\n", ", ", "-", "_", "."])
        return sep.join(rng.choice(WORDS) for _ in range(rng.randint(1, 12)))
    # mixed case ASCII with punctuation
    alphabet = "abcXYZ!?.,;:-_()[]{}<>|/\\\"'@#$%^&*+=~`"
    return "".join(rng.choice(alphabet) for _ in range(rng.randint(1, 30)))


def hostile_text(rng: random.Random) -> str:
    text = "".join(_segment(rng) for _ in range(rng.randint(1, 12)))
    if rng.random() < 0.03:  # a lone surrogate (tiktoken and subword replace it with U+FFFD)
        k = rng.randint(0, len(text))
        text = text[:k] + chr(rng.randint(0xD800, 0xDFFF)) + text[k:]
    return text


def without_lone_surrogates(text: str) -> str:
    return text.encode("utf-16", "surrogatepass").decode("utf-16", "replace")


# ----------------------------------------------------------------------------------------------
# comparisons: each is check(text) -> None if equal, else a description of the difference


def outcome(call: Callable, *args, **kwargs):
    """The result, or ("raised", exception type name)."""
    try:
        return call(*args, **kwargs)
    except Exception as e:  # noqa: BLE001 - compared, not handled
        return ("raised", type(e).__name__)
    except BaseException as e:  # a Rust panic (pyo3 PanicException) is a BaseException
        if isinstance(e, (KeyboardInterrupt, SystemExit)):
            raise
        return ("raised", type(e).__name__)


def first_diff(a, b) -> str:
    if isinstance(a, list) and isinstance(b, list):
        for i, (x, y) in enumerate(zip(a, b)):
            if x != y:
                lo = max(0, i - 2)
                return f"at index {i}: subword {a[lo : i + 3]} vs {b[lo : i + 3]} (from {lo})"
        return f"lengths differ: subword {len(a)}, other {len(b)}"
    return f"subword {a!r:.300} vs {b!r:.300}"


def tiktoken_checks(name: str) -> dict[str, Callable]:
    sw = subword.get_encoding(name)
    tk = tiktoken.get_encoding(name)
    n_ranks = sw.n_vocab - len(sw.special_tokens_set)
    checks = {}

    def ordinary(text):
        a, b = outcome(sw.encode_ordinary, text), outcome(tk.encode_ordinary, text)
        return None if a == b else f"encode_ordinary: {first_diff(a, b)}"

    def allowed_all(text):
        a = outcome(sw.encode, text, allowed_special="all")
        b = outcome(tk.encode, text, allowed_special="all")
        return None if a == b else f"encode(allowed_special='all'): {first_diff(a, b)}"

    def default_special(text):
        a, b = outcome(sw.encode, text), outcome(tk.encode, text)
        return None if a == b else f"encode (disallowed_special='all'): {first_diff(a, b)}"

    def decode(text):
        ids = tk.encode(text, allowed_special="all")
        if sw.decode_bytes(ids) != tk.decode_bytes(ids):
            return "decode_bytes of tiktoken's ids differs"
        if sw.decode(ids) != tk.decode(ids):
            return "decode of tiktoken's ids differs"
        if sw.decode(ids) != without_lone_surrogates(text):
            return "decode(encode(text)) != text"
        return None

    def decode_random_ids(text):
        rng = random.Random(text.encode("utf-8", "surrogatepass"))
        ids = [rng.randrange(n_ranks) for _ in range(rng.randint(1, 20))]
        a, b = outcome(sw.decode_bytes, ids), outcome(tk.decode_bytes, ids)
        if a != b:
            return f"decode_bytes({ids}): {first_diff(a, b)}"
        a, b = outcome(sw.decode, ids), outcome(tk.decode, ids)
        return None if a == b else f"decode({ids}): {first_diff(a, b)}"

    for label, fn in [
        ("encode_ordinary", ordinary),
        ("encode allowed=all", allowed_all),
        ("encode default specials", default_special),
        ("decode round trip", decode),
        ("decode random ids", decode_random_ids),
    ]:
        checks[f"tiktoken {name}: {label}"] = fn
    return checks


def wordpiece_checks() -> dict[str, Callable]:
    path = str(refdata.bert_uncased() / "tokenizer.json")
    sw, hf = subword.Tokenizer.from_file(path), tokenizers.Tokenizer.from_file(path)
    for tok in (sw, hf):
        tok.no_truncation()
        tok.no_padding()

    def encode(text):
        text = without_lone_surrogates(text)
        a, b = sw.encode(text), hf.encode(text)
        for field in ("ids", "tokens", "offsets"):
            x, y = list(getattr(a, field)), list(getattr(b, field))
            if field == "offsets":
                x, y = [tuple(o) for o in x], [tuple(o) for o in y]
            if x != y:
                return f"{field}: {first_diff(x, y)}"
        if sw.decode(a.ids) != hf.decode(b.ids):
            return f"decode: {first_diff(sw.decode(a.ids), hf.decode(b.ids))}"
        return None

    return {"HF WordPiece (BERT uncased): encode + decode": encode}


def bytelevel_checks(seed: int) -> dict[str, Callable]:
    rng = random.Random(seed)
    docs = [hostile_text(rng) for _ in range(3000)] + [" ".join(WORDS)] * 50
    trained = subword.train_from_iterator(
        [without_lone_surrogates(d) for d in docs],
        1200,
        special_tokens=["<|endoftext|>"],
        pattern="cl100k_base",
        show_progress=False,
    )
    hf_export = tokenizers.Tokenizer.from_str(trained.to_hf_json())

    ranks = refdata.load_ranks(refdata.ensure("r50k_base"))
    b2u = gpt2files.bytes_to_unicode()

    def uni(b: bytes) -> str:
        return "".join(b2u[x] for x in b)

    vocab = {uni(tok): rank for tok, rank in ranks.items()}
    vocab["<|endoftext|>"] = 50256
    merges = [(uni(a), uni(b)) for a, b in gpt2files.merges_of(ranks)]
    hf_gpt2 = tokenizers.Tokenizer(tokenizers.models.BPE(vocab=vocab, merges=merges))
    hf_gpt2.pre_tokenizer = tokenizers.pre_tokenizers.ByteLevel(add_prefix_space=False)
    hf_gpt2.decoder = tokenizers.decoders.ByteLevel()
    hf_gpt2.add_special_tokens(["<|endoftext|>"])
    sw_gpt2 = subword.Encoding.from_hf_json(hf_gpt2.to_str())

    def export(text):
        text = without_lone_surrogates(text)
        a, b = trained.encode(text, allowed_special="all"), hf_export.encode(text).ids
        return None if a == b else f"ids: {first_diff(a, b)}"

    def gpt2(text):
        text = without_lone_surrogates(text)
        a, b = sw_gpt2.encode(text, allowed_special="all"), hf_gpt2.encode(text).ids
        return None if a == b else f"ids: {first_diff(a, b)}"

    return {
        "HF byte-level BPE: subword-trained, to_hf_json, loaded by HF": export,
        "HF byte-level BPE: GPT-2 built in HF, from_hf_json into subword": gpt2,
    }


# ----------------------------------------------------------------------------------------------
# shrinking and reporting


def check_fails(check: Callable, text: str) -> bool:
    return outcome(check, text) is not None


def shrink(check: Callable, text: str, budget_s: float = 10.0) -> str:
    """A shorter text on which ``check`` still reports a difference (greedy chunk removal)."""
    deadline = time.monotonic() + budget_s
    chunk = max(1, len(text) // 2)
    while chunk >= 1 and time.monotonic() < deadline:
        i, removed = 0, False
        while i < len(text) and time.monotonic() < deadline:
            candidate = text[:i] + text[i + chunk :]
            if candidate and check_fails(check, candidate):
                text, removed = candidate, True
            else:
                i += chunk
        if not removed:
            chunk //= 2
    return text


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--minutes", type=float, default=1.0, help="time budget (default 1)")
    ap.add_argument("--seed", type=int, default=0, help="random seed (default 0)")
    ap.add_argument("--max-reports", type=int, default=5, help="reproducers shown per comparison")
    ap.add_argument(
        "--reproduce",
        nargs=2,
        metavar=("COMPARISON", "TEXT"),
        help="run one comparison on one text (a Python string literal, as a report prints it)",
    )
    args = ap.parse_args(argv)

    t0 = time.monotonic()
    checks: dict[str, Callable] = {}
    for name in ENCODINGS:
        checks.update(tiktoken_checks(name))
    checks.update(wordpiece_checks())
    checks.update(bytelevel_checks(args.seed))
    if args.reproduce:
        import ast

        name, literal = args.reproduce
        if name not in checks:
            ap.error(f"unknown comparison {name!r}; one of: {', '.join(checks)}")
        result = outcome(checks[name], ast.literal_eval(literal))
        print("same" if result is None else f"MISMATCH: {result}")
        return 0 if result is None else 1
    print(f"set up {len(checks)} comparisons in {time.monotonic() - t0:.1f} s; "
          f"fuzzing for {args.minutes:g} min, seed {args.seed}")  # fmt: skip

    rng = random.Random(args.seed)
    cases: Counter[str] = Counter()
    mismatches: dict[str, list[tuple[str, str]]] = {name: [] for name in checks}
    deadline = time.monotonic() + 60 * args.minutes
    n_texts = 0
    while time.monotonic() < deadline:
        text = hostile_text(rng)
        n_texts += 1
        for name, check in checks.items():
            cases[name] += 1
            result = outcome(check, text)
            if result is None:
                continue
            found = mismatches[name]
            if len(found) < args.max_reports:
                small = shrink(check, text)
                found.append((small, str(outcome(check, small))))
            else:
                found.append((text, ""))

    width = max(map(len, checks))
    print(f"\n{n_texts} texts, {time.monotonic() - t0:.0f} s in all\n")
    print(f"{'comparison'.ljust(width)}  {'cases':>8}  {'mismatches':>10}")
    for name in checks:
        print(f"{name.ljust(width)}  {cases[name]:>8}  {len(mismatches[name]):>10}")
    total = sum(len(m) for m in mismatches.values())
    for name, found in mismatches.items():
        for text, what in found[: args.max_reports]:
            print(f"\nMISMATCH {name}\n  text = {text!r}\n  {what}")
            print(f"  reproduce: python benches/fuzz.py --reproduce {shlex.quote(name)} "
                  f"{shlex.quote(repr(text))}")  # fmt: skip
    print(f"\n{total} mismatches" if total else "\nno mismatches")
    return 1 if total else 0


if __name__ == "__main__":
    sys.exit(main())
