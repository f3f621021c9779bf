"""WordPiece (BERT uncased) in ``subword.Tokenizer``, checked against HF ``tokenizers``.

HF is the oracle throughout: every expected value below is what HF ``tokenizers`` returns for the
same input, with the BERT uncased ``tokenizer.json`` / ``vocab.txt`` of refdata.bert_uncased().
That file enables truncation (128, longest_first) and Fixed(128) padding; the text-parity tests
switch both off on both sides (``plain``), others keep them (``raw``) or set their own (``fresh``).

Compared for every encoding: ids, tokens, offsets (character offsets into the original str, as in
HF's Python binding), type_ids, attention_mask, special_tokens_mask and len().
"""

from __future__ import annotations

import json
import string
from pathlib import Path

import pytest
import refdata
import subword
import subword.tokenizers
import textgen
import tokenizers
from hypothesis import given, settings
from hypothesis import strategies as st

FIELDS = ("ids", "tokens", "offsets", "type_ids", "attention_mask", "special_tokens_mask")
SPECIALS = ["[PAD]", "[UNK]", "[CLS]", "[SEP]", "[MASK]"]
CLS, SEP = ("[CLS]", 101), ("[SEP]", 102)

FIXED = [
    "",
    " ",
    "Hello, world! It's 2024: tokens, tokens   everywhere.\n\n  indented\tline\r\nend",
    "The quick brown fox jumps over the lazy dog. 1234567890 3.14159 $1,000,000",
    "unaffable unbelievably tokenization preprocessing antidisestablishmentarianism",
    "Accents: café naïve résumé Ångström Ærøskøbing façade über Straße",
    "Combining: cafe\u0301 nai\u0308ve A\u030angstro\u0308m e\u0301\u0301\u0301 \u0301lead",
    "Case: İstanbul ΟΔΟΣ ΣΊΣΥΦΟΣ ẞ ǅemal ﬁne Ⅻ ＡＢＣ ｆｕｌｌ",
    "CJK: 中文字符测试，日本語のテキスト。漢字かな交じり 𠀀𠀁 豈更",
    "Hangul: 인공지능은 데이터로부터 학습한다. 한국어 ᄀᄁ ㄱㄴ",
    "Cyrillic Привет мир, Greek Καλημέρα, Arabic مرحبا, Hebrew שלום, Thai สวัสดี, हिन्दी",
    "Emoji: 🤖🇰🇷👩‍👩‍👧 👍🏽 ❤️ 1️⃣ 🫠 \U0001fae8 \U0001fa87 🐦‍🔥 🏴󠁧󠁢󠁳󠁣󠁴󠁿",
    "Controls: a\x00b c\x07d e\u200bf g\ufeffh i\u00adj k\ufffdl m\x7fn o\x1fp",
    "Whitespace: a\u3000b\u00a0c\td\r\ne\x0bf\x0cg\u2028h\u2029i\u0085j\u1680k\u202fl",
    "\t\r\n \u3000\u00a0",
    "\x00\x07\u200b\ufeff\u00ad\ufffd",
    "[CLS] [SEP] [MASK] [PAD] [UNK] inside text",
    "a[SEP]b[MASK]c [sep] [Sep] [SEP [MASK [[SEP]] [ SEP ] [unused0] ##ing ## #",
    "[MASK][MASK][SEP][SEP]",
    "[SEP]",
    "a" * 99,
    "b" * 100,
    "c" * 101,
    "word " + "x" * 250 + " after",
    "e\u0301" * 80 + " " + "é" * 101,
    "Hyper-text mark-up: don't can't won't y'all (parens) [brackets] {braces} <angle> «guillemets»",
    "Math & code: x_1 + y^2 = z; def f(x): return x**2  # comment\n\tif a != b: pass",
    "urls http://example.com/path?q=1&r=two#frag and emails someone@example.org",
    "Numbers ٠١٢٣ ४२ ² ½ ① 𝟙𝟚 ໒ and punctuation “”‘’—–…¡¿·•§¶†‡※、。！？「」",
]

PAIRS = [
    ("Hello world", "How are you?"),
    ("", "second only"),
    ("first only", ""),
    ("", ""),
    ("Café [SEP] naïve", "中文 한국어 🤖"),
    ("a" * 101, "b" * 100),
    ("\x00\u200b", "\ufeff\u00ad"),
    (FIXED[2], FIXED[7]),
]

#: More than 128 tokens, so the file's truncation applies.
LONG = " ".join(FIXED[2:12]) * 3


# --------------------------------------------------------------------------------------------
# reference data and tokenizers


def require_bert() -> Path:
    """refdata.bert_uncased(); skips (fails under CI=true) when it cannot be fetched."""
    try:
        return refdata.bert_uncased()
    except refdata.RefDataUnavailable as e:
        if refdata.in_ci():
            pytest.fail(f"reference data bert_uncased unavailable and CI=true:\n{e}", pytrace=False)
        pytest.skip(f"reference data bert_uncased unavailable: {e}")


@pytest.fixture(scope="module")
def bert_dir() -> Path:
    return require_bert()


@pytest.fixture(scope="module")
def json_path(bert_dir) -> Path:
    return bert_dir / "tokenizer.json"


@pytest.fixture(scope="module")
def vocab_path(bert_dir) -> Path:
    return bert_dir / "vocab.txt"


class Both(tuple):
    """(subword tokenizer, HF tokenizer); a short repr for hypothesis' failure reports."""

    def __repr__(self) -> str:
        return "(subword, HF)"


#: The two HF dialects over the core: ``subword.Tokenizer`` (its WordPiece tokenizer) and the
#: drop-in ``subword.tokenizers.Tokenizer`` (the composable pipeline); each is held to HF here.
ENGINES = {"subword": subword.Tokenizer, "pipeline": subword.tokenizers.Tokenizer}


@pytest.fixture(scope="module", params=sorted(ENGINES))
def engine(request):
    return ENGINES[request.param]


def load_both(json_path: Path, plain: bool, engine=subword.Tokenizer) -> Both:
    sw = engine.from_file(str(json_path))
    hf = tokenizers.Tokenizer.from_file(str(json_path))
    if plain:
        for tok in (sw, hf):
            tok.no_truncation()
            tok.no_padding()
    return Both((sw, hf))


@pytest.fixture(scope="module")
def plain(json_path, engine):
    """(subword, HF) from the file, truncation and padding switched off. Never reconfigured."""
    return load_both(json_path, plain=True, engine=engine)


@pytest.fixture(scope="module")
def raw(json_path, engine):
    """(subword, HF) from the file as it is: truncation 128, Fixed(128) padding."""
    return load_both(json_path, plain=False, engine=engine)


@pytest.fixture
def fresh(json_path, engine):
    """(subword, HF) from the file, truncation and padding off, for one test to reconfigure."""
    return load_both(json_path, plain=True, engine=engine)


@pytest.fixture(scope="module")
def shared_config(json_path, engine):
    """(subword, HF) for hypothesis tests that set truncation / padding on every example."""
    return load_both(json_path, plain=True, engine=engine)


# --------------------------------------------------------------------------------------------
# comparing


def fields(enc) -> dict:
    out = {name: list(getattr(enc, name)) for name in FIELDS}
    out["offsets"] = [tuple(o) for o in out["offsets"]]
    out["len"] = len(enc)
    # the windows truncation cut off (stride > 0 makes them overlap), compared the same way
    out["overflowing"] = [fields(o) for o in enc.overflowing]
    return out


def _first_diff(got: list, want: list) -> str:
    for i, (g, w) in enumerate(zip(got, want)):
        if g != w:
            lo = max(0, i - 3)
            return (
                f"first difference at index {i}: subword {got[lo : i + 4]} vs HF {want[lo : i + 4]}"
                f" (from index {lo})"
            )
    return f"lengths differ: subword {len(got)}, HF {len(want)}"


def _report(got: dict, want: dict, what, where: str = "") -> None:
    """pytest.fail naming the first field in which two fields() dicts differ."""
    for name in (*FIELDS, "len"):
        if got[name] != want[name]:
            if name == "len":
                pytest.fail(
                    f"len(){where} differs for {what!r}: subword {got[name]}, HF {want[name]}"
                )
            pytest.fail(
                f"{name}{where} differ for {what!r}: {_first_diff(got[name], want[name])}\n"
                f"subword tokens: {got['tokens']}\nHF tokens:      {want['tokens']}"
            )
    g, w = got["overflowing"], want["overflowing"]
    if len(g) != len(w):
        pytest.fail(
            f"number of overflowing windows{where} differs for {what!r}: subword {len(g)}, "
            f"HF {len(w)}\nsubword: {[o['tokens'] for o in g]}\nHF:      {[o['tokens'] for o in w]}"
        )
    for k, (go, wo) in enumerate(zip(g, w)):
        _report(go, wo, what, f"{where} in overflowing[{k}]")


def assert_same(got_enc, want_enc, what) -> None:
    got, want = fields(got_enc), fields(want_enc)
    if got != want:
        _report(got, want, what)


def assert_same_batch(got: list, want: list, inputs: list) -> None:
    assert len(got) == len(want) == len(inputs)
    for g, w, x in zip(got, want, inputs):
        assert_same(g, w, x)


def check_text(sw, hf, text: str) -> None:
    for add in (True, False):
        assert_same(
            sw.encode(text, add_special_tokens=add),
            hf.encode(text, add_special_tokens=add),
            (text, f"add_special_tokens={add}"),
        )


def check_pair(sw, hf, a: str, b: str) -> None:
    for add in (True, False):
        what = ((a, b), f"add_special_tokens={add}")
        assert_same(
            sw.encode(a, b, add_special_tokens=add), hf.encode(a, b, add_special_tokens=add), what
        )
    assert_same(sw.encode(a, pair=b), hf.encode(a, pair=b), (a, b))


def check_decode(sw, hf, ids: list[int]) -> None:
    assert sw.decode(ids) == hf.decode(ids), ids
    for skip in (True, False):
        assert sw.decode(ids, skip_special_tokens=skip) == hf.decode(
            ids, skip_special_tokens=skip
        ), (ids, skip)


def outcome(call, *args, **kwargs):
    """("ok", [fields...]) or ("error",). HF raises for some truncation settings, and panics
    (PanicException, a BaseException) when a sequence would be cut to `stride` tokens or fewer;
    subword is expected to raise an ordinary exception in both cases."""
    try:
        result = call(*args, **kwargs)
    except Exception:  # noqa: BLE001 - only whether it raised is compared
        return ("error",)
    except BaseException as e:
        if type(e).__name__ == "PanicException" and type(e).__module__ == "pyo3_runtime":
            return ("error",)
        raise
    if isinstance(result, list):
        return ("ok", [fields(e) for e in result])
    return ("ok", [fields(result)])


# --------------------------------------------------------------------------------------------
# hypothesis strategies: textgen's fragments plus what BERT's normalizer and pre-tokenizer care
# about

CONTROL = [
    "\x00",
    "\x01",
    "\x07",
    "\x08",
    "\x1b",
    "\x1f",
    "\x7f",
    "\x80",
    "\x9f",
    "\u200b",
    "\u200c",
    "\u200d",
    "\u2060",
    "\ufeff",
    "\u00ad",
    "\ufffd",
    "\ue000",
    "\U000e0001",
    "\U000e0041",
    "\u0600",
    "\u061c",
]
WHITESPACE = [*textgen.WHITESPACE, "\u3000", "\u00a0", "\t", "\r\n", "\r", "\x1d", "\x1e"]
RECENT_EMOJI = [
    "\U0001fae8",  # shaking face (Unicode 15)
    "\U0001fa87",  # maracas
    "\U0001faaf",  # khanda
    "\U0001fa75",  # light blue heart
    "\U0001f426\u200d\U0001f525",  # phoenix (Unicode 15.1 sequence)
    "\U0001fae9",  # face with bags under eyes (Unicode 16)
    "\U0001fadf",  # splatter (Unicode 16)
    "\U0001f979",
    "\U0001fae0",
]
CASE_EDGES = [
    "İ",
    "I\u0307",
    "ΟΔΟΣ",
    "Σ",
    "ς",
    "ẞ",
    "ß",
    "ǅ",
    "ﬁ",
    "ﬀ",
    "Ⅻ",
    "ＡＢＣ",
    "ǰ",
    "ŉ",
    "Å",
]
SPECIAL_LIKE = [
    *SPECIALS,
    "[sep]",
    "[Sep]",
    "[SEP",
    "SEP]",
    "[MASK",
    "[[SEP]]",
    "[ SEP ]",
    "[unused0]",
    "[unused993]",
    "##",
    "##ing",
    "#",
    "[]",
]
LETTERS = string.ascii_letters + "éüñçßøåæ"

accented = st.one_of(
    st.sampled_from(["café", "naïve", "résumé", "Ångström", "Ærøskøbing", "ŞİŞLİ", "Việt Nam"]),
    textgen.combining,
    st.text(st.characters(min_codepoint=0xC0, max_codepoint=0x24F), min_size=1, max_size=8),
)
long_words = st.one_of(
    st.builds(
        lambda n, c: c * n, st.integers(95, 130), st.sampled_from(["a", "Z", "é", "e\u0301"])
    ),
    st.text(LETTERS, min_size=90, max_size=140),
    st.lists(st.sampled_from(["ab", "c\u0301", "ü", "q"]), min_size=45, max_size=80).map("".join),
)
cjk_more = st.one_of(
    textgen.cjk,
    st.text(st.characters(min_codepoint=0x20000, max_codepoint=0x2A6DF), min_size=1, max_size=4),
    st.text(st.characters(min_codepoint=0xF900, max_codepoint=0xFAFF), min_size=1, max_size=4),
    st.text(st.characters(min_codepoint=0x3400, max_codepoint=0x4DBF), min_size=1, max_size=4),
    st.text("。、「」『』（）！？：；　", min_size=1, max_size=4),
)
bert_fragment = st.one_of(
    textgen.fragment,
    st.sampled_from(CONTROL),
    st.lists(st.sampled_from(WHITESPACE), min_size=1, max_size=4).map("".join),
    st.sampled_from(RECENT_EMOJI),
    accented,
    long_words,
    st.sampled_from(SPECIAL_LIKE),
    st.sampled_from(CASE_EDGES),
    cjk_more,
    textgen.hangul,
)

#: Text for BERT: fragments glued together, or any text at all.
bert_texts = st.one_of(
    st.lists(bert_fragment, max_size=20).map("".join),
    st.text(),
    st.text(st.characters(exclude_categories=("Cs",)), max_size=60),
)


# --------------------------------------------------------------------------------------------
# the file's configuration, vocabulary


def test_file_configuration_matches_hf(raw, plain):
    sw, hf = raw
    assert hf.truncation is not None and hf.padding is not None  # the file has both
    assert sw.truncation == hf.truncation
    assert sw.padding == hf.padding
    sw, hf = plain
    assert sw.truncation is None and hf.truncation is None
    assert sw.padding is None and hf.padding is None


def test_vocab_matches_hf(plain):
    sw, hf = plain
    assert sw.get_vocab() == hf.get_vocab()
    assert sw.get_vocab(with_added_tokens=False) == hf.get_vocab(with_added_tokens=False)
    assert sw.get_vocab_size() == hf.get_vocab_size() == 30522
    assert sw.get_vocab_size(with_added_tokens=False) == hf.get_vocab_size(with_added_tokens=False)
    for token in [*SPECIALS, "hello", "##ing", "[unused0]", "中", "##～", "not a token at all"]:
        assert sw.token_to_id(token) == hf.token_to_id(token), token
    for i in [0, 1, 100, 101, 102, 103, 999, 1000, 7592, 30521, 30522, 10**6]:
        assert sw.id_to_token(i) == hf.id_to_token(i), i


# --------------------------------------------------------------------------------------------
# text parity, no padding / truncation


@pytest.mark.parametrize("text", FIXED, ids=range(len(FIXED)))
def test_encode_fixed(plain, text):
    check_text(*plain, text)


@pytest.mark.parametrize("pair", PAIRS, ids=range(len(PAIRS)))
def test_encode_pair_fixed(plain, pair):
    check_pair(*plain, *pair)


def test_encode_long_text(plain):
    sw, hf = plain
    check_text(sw, hf, LONG)
    check_pair(sw, hf, LONG, LONG[::-1])
    assert len(hf.encode(LONG)) > 128


@pytest.mark.parametrize("add", [True, False])
def test_encode_batch_str(plain, add):
    sw, hf = plain
    inputs = [*FIXED, LONG]
    got = sw.encode_batch(inputs, add_special_tokens=add)
    assert_same_batch(got, hf.encode_batch(inputs, add_special_tokens=add), inputs)
    # a batch gives what one-at-a-time encoding gives
    for text, e in zip(inputs, got):
        assert fields(e) == fields(sw.encode(text, add_special_tokens=add)), text
    assert sw.encode_batch([]) == [] == hf.encode_batch([])


@pytest.mark.parametrize("add", [True, False])
def test_encode_batch_pairs(plain, add):
    sw, hf = plain
    inputs = [*PAIRS, *zip(FIXED, reversed(FIXED))]
    got = sw.encode_batch(inputs, add_special_tokens=add)
    assert_same_batch(got, hf.encode_batch(inputs, add_special_tokens=add), inputs)
    for (a, b), e in zip(inputs, got):
        assert fields(e) == fields(sw.encode(a, b, add_special_tokens=add)), (a, b)


def test_encode_batch_mixed_str_and_pairs(plain):
    sw, hf = plain
    inputs = ["single", ("a", "b"), "", ("中文", "[SEP]"), FIXED[3]]
    assert_same_batch(sw.encode_batch(inputs), hf.encode_batch(inputs), inputs)


@pytest.mark.parametrize("text", FIXED, ids=range(len(FIXED)))
def test_decode_fixed(plain, text):
    sw, hf = plain
    for add in (True, False):
        check_decode(sw, hf, hf.encode(text, add_special_tokens=add).ids)
    check_decode(sw, hf, hf.encode(text, text[::-1]).ids)


def test_decode_special_and_odd_ids(plain):
    sw, hf = plain
    for ids in [
        [],
        [101, 102],
        [0, 0, 0],
        [100, 103, 101, 7592, 102, 0],  # [UNK] [MASK] [CLS] hello [SEP] [PAD]
        [1, 2, 998, 999],  # [unused0] [unused1] [unused993] !: in the vocabulary, not special
        [29620, 7592, 29620],  # ##) hello ##): a "##" token first
    ]:
        check_decode(sw, hf, ids)
    # what the decoder's cleanup rewrites: " ." " ?" " !" " ," " ' " " n't" " 'm" " 's" " 've"
    # " 're" " do not"
    for tokens in [
        ["hello", ".", "?", "!", ",", "world", "."],
        ["do", "n", "'", "t", "do", "not", "i", "'", "m", "it", "'", "s"],
        ["we", "'", "ve", "they", "'", "re", "don", "'", "t", "'", "s"],
        ["'", "hello", "'", ".", "-", "-", "to", "##ken", "##s", "una", "##ffa", "##ble"],
        ["[CLS]", ".", "[SEP]", "'", "[SEP]", "s", "[PAD]"],
    ]:
        ids = [hf.token_to_id(t) for t in tokens]
        assert None not in ids, tokens
        check_decode(sw, hf, ids)
    lists = [hf.encode(t).ids for t in FIXED]
    for skip in (True, False):
        assert sw.decode_batch(lists, skip_special_tokens=skip) == hf.decode_batch(
            lists, skip_special_tokens=skip
        )
    assert sw.decode_batch(lists) == hf.decode_batch(lists)


# --------------------------------------------------------------------------------------------
# property tests


@given(text=bert_texts)
def test_encode_hypothesis(plain, text):
    check_text(*plain, text)


@settings(max_examples=refdata.hypothesis_examples(local=150, ci=3000))
@given(a=bert_texts, b=bert_texts)
def test_encode_pair_hypothesis(plain, a, b):
    check_pair(*plain, a, b)


@settings(max_examples=refdata.hypothesis_examples(local=60, ci=1000))
@given(inputs=st.lists(st.one_of(bert_texts, st.tuples(bert_texts, bert_texts)), max_size=8))
def test_encode_batch_hypothesis(plain, inputs):
    sw, hf = plain
    for add in (True, False):
        got = sw.encode_batch(inputs, add_special_tokens=add)
        assert_same_batch(got, hf.encode_batch(inputs, add_special_tokens=add), inputs)


@settings(max_examples=refdata.hypothesis_examples(local=150, ci=3000))
@given(text=bert_texts)
def test_decode_hypothesis(plain, text):
    sw, hf = plain
    check_decode(sw, hf, hf.encode(text).ids)


@settings(max_examples=refdata.hypothesis_examples(local=150, ci=3000))
@given(ids=st.lists(st.integers(0, 30521), max_size=16))
def test_decode_any_ids_hypothesis(plain, ids):
    check_decode(*plain, ids)


@settings(max_examples=refdata.hypothesis_examples(local=300, ci=3000))
@given(text=bert_texts)
def test_file_settings_hypothesis(raw, text):
    """Truncation 128 + Fixed(128) padding from the file, on single texts and pairs."""
    sw, hf = raw
    assert_same(sw.encode(text), hf.encode(text), text)
    assert_same(sw.encode(text, text + LONG), hf.encode(text, text + LONG), (text, "+LONG"))


# --------------------------------------------------------------------------------------------
# lone surrogates: HF refuses them (TypeError "TextInputSequence must be str"), so there is no
# oracle output to match. subword must not guess either (e.g. U+FFFD, which BertNormalizer then
# deletes): it raises a clear error.

SURROGATE_TEXTS = ["\ud800", "a\udfffb", "x \ud83d\ude00 y", "\udc00\ud800"]


@pytest.mark.parametrize("text", SURROGATE_TEXTS, ids=[ascii(t) for t in SURROGATE_TEXTS])
def test_lone_surrogates_raise(plain, text):
    sw, hf = plain
    with pytest.raises(Exception):  # noqa: B017 - HF: TypeError
        hf.encode(text)
    with pytest.raises((ValueError, UnicodeError)):
        sw.encode(text)
    with pytest.raises((ValueError, UnicodeError)):
        sw.encode("fine", text)
    with pytest.raises((ValueError, UnicodeError)):
        sw.encode_batch(["fine", text])
    with pytest.raises((ValueError, UnicodeError)):
        sw.encode_batch([("fine", text)])
    # and the tokenizer still works afterwards
    assert_same(sw.encode("fine"), hf.encode("fine"), "fine")


# --------------------------------------------------------------------------------------------
# the file's truncation and padding, and enable_padding / enable_truncation


def test_file_settings_fixed(raw):
    sw, hf = raw
    for text in [*FIXED, LONG]:
        for add in (True, False):
            want = hf.encode(text, add_special_tokens=add)
            assert len(want) == 128
            assert_same(sw.encode(text, add_special_tokens=add), want, (text, add))
    for a, b in [*PAIRS, (LONG, "short"), ("short", LONG), (LONG, LONG[: len(LONG) // 2])]:
        for add in (True, False):
            what = ((a, b), add)
            assert_same(
                sw.encode(a, b, add_special_tokens=add),
                hf.encode(a, b, add_special_tokens=add),
                what,
            )


def test_file_settings_batches(raw):
    sw, hf = raw
    singles = [*FIXED, LONG]
    pairs = [*PAIRS, (LONG, "short"), ("short", LONG), (LONG, LONG)]
    for inputs in (singles, pairs, [*singles[:5], *pairs[:5]]):
        assert_same_batch(sw.encode_batch(inputs), hf.encode_batch(inputs), inputs)


PADDINGS = [
    {},
    {"direction": "left"},
    {"pad_to_multiple_of": 8},
    {"direction": "left", "pad_to_multiple_of": 16},
    {"length": 40},
    {"length": 5},  # shorter than most encodings: they stay as they are
    {"pad_id": 103, "pad_token": "[MASK]", "pad_type_id": 1},
    {"length": 64, "direction": "left", "pad_type_id": 1},
]


@pytest.mark.parametrize("padding", PADDINGS, ids=[json.dumps(p) for p in PADDINGS])
def test_enable_padding(fresh, padding):
    sw, hf = fresh
    sw.enable_padding(**padding)
    hf.enable_padding(**padding)
    assert sw.padding == hf.padding
    pairs = [*PAIRS, ("one", "two three four five six seven")]
    singles = [*FIXED[:12], "x"]
    for inputs in (pairs, singles, [*singles[:4], *pairs[:4]], [pairs[0]], []):
        for add in (True, False):
            got = sw.encode_batch(inputs, add_special_tokens=add)
            assert_same_batch(got, hf.encode_batch(inputs, add_special_tokens=add), inputs)
    # single encodes: only a fixed length pads
    for text in singles:
        assert_same(sw.encode(text), hf.encode(text), text)
    sw.no_padding()
    hf.no_padding()
    assert sw.padding is None is hf.padding
    assert_same_batch(sw.encode_batch(pairs), hf.encode_batch(pairs), pairs)


TRUNCATIONS = [
    {"max_length": 12},
    {"max_length": 12, "strategy": "only_first"},
    {"max_length": 12, "strategy": "only_second"},
    {"max_length": 12, "direction": "left"},
    {"max_length": 16, "stride": 4},
    {"max_length": 16, "stride": 4, "direction": "left", "strategy": "longest_first"},
    {"max_length": 7, "strategy": "only_second", "direction": "left"},
    {"max_length": 128},
    {"max_length": 512},
]

TRUNCATION_PAIRS = [
    ("Hello world, this is the first sequence of the pair.", "And the second one."),
    ("short", "a much longer second sequence that needs to be cut down to size here"),
    ("a b c d e f g h i j k l m n o p", "q r s t u v w x y z"),
    ("", "only the second sequence has any tokens at all in it"),
    ("café naïve 中文字符 한국어 🤖", "[SEP] [MASK] inside " + "x" * 101),
    (FIXED[2], FIXED[9] + " " + FIXED[11]),
]


@pytest.mark.parametrize("truncation", TRUNCATIONS, ids=[json.dumps(t) for t in TRUNCATIONS])
def test_enable_truncation(fresh, truncation):
    sw, hf = fresh
    sw.enable_truncation(**truncation)
    hf.enable_truncation(**truncation)
    assert sw.truncation == hf.truncation
    for add in (True, False):
        for a, b in TRUNCATION_PAIRS:
            got = outcome(sw.encode, a, b, add_special_tokens=add)
            assert got == outcome(hf.encode, a, b, add_special_tokens=add), ((a, b), add)
        for text in [*FIXED, LONG]:
            got = outcome(sw.encode, text, add_special_tokens=add)
            assert got == outcome(hf.encode, text, add_special_tokens=add), (text, add)
        # batches: HF fails the whole batch when one input fails
        for inputs in (TRUNCATION_PAIRS, TRUNCATION_PAIRS[:3], [*FIXED[:6], LONG]):
            got = outcome(sw.encode_batch, inputs, add_special_tokens=add)
            assert got == outcome(hf.encode_batch, inputs, add_special_tokens=add), (inputs, add)
    sw.no_truncation()
    hf.no_truncation()
    assert sw.truncation is None is hf.truncation
    check_pair(sw, hf, LONG, LONG)


def test_truncation_errors_like_hf(fresh):
    """Where HF refuses to truncate with only_first / only_second (the sequence it may cut would
    have to lose all its tokens, or more), subword raises too."""
    sw, hf = fresh
    for max_length, strategy, a, b, add, boundary in [
        (6, "only_first", "a", "q r s t u v w x y z", True, False),
        (6, "only_second", "a b c d e f g h i j k", "z", True, False),
        # the boundary: the cut sequence would keep exactly 0 tokens; with one more token allowed
        # it keeps 1
        (3, "only_second", "a b c", "x", False, True),
        (3, "only_first", "a", "x y z", False, True),
        (6, "only_second", "a b c", "x", True, True),
        (6, "only_first", "a", "x y z", True, True),
    ]:
        what = (max_length, strategy, a, b, add)
        for tok in (sw, hf):
            tok.enable_truncation(max_length, strategy=strategy)
        with pytest.raises(Exception):  # noqa: B017 - HF raises a bare Exception
            hf.encode(a, b, add_special_tokens=add)
        with pytest.raises(Exception):  # noqa: B017
            sw.encode(a, b, add_special_tokens=add)
            pytest.fail(f"subword truncated where HF refuses: {what}")
        if boundary:
            for tok in (sw, hf):
                tok.enable_truncation(max_length + 1, strategy=strategy)
            got = sw.encode(a, b, add_special_tokens=add)
            assert_same(got, hf.encode(a, b, add_special_tokens=add), what)


def test_stride_too_large(fresh):
    """A stride not below what is left of a sequence after the specials: HF panics, subword
    raises ValueError; a smaller stride works the same in both."""
    sw, hf = fresh
    for max_length, stride, args in [(5, 3, ("a b c d e f g",)), (6, 2, ("hello", "a b c d e f"))]:
        for tok in (sw, hf):
            tok.enable_truncation(max_length, stride=stride)
        assert sw.truncation == hf.truncation
        with pytest.raises(BaseException, match="stride"):  # pyo3_runtime.PanicException
            hf.encode(*args)
        with pytest.raises(ValueError, match="stride"):
            sw.encode(*args)
        with pytest.raises(ValueError, match="stride"):
            sw.encode_batch([args if len(args) == 2 else args[0]])
        for tok in (sw, hf):
            tok.enable_truncation(max_length, stride=stride - 1)
        assert_same(sw.encode(*args), hf.encode(*args), (max_length, stride - 1, args))


@pytest.mark.parametrize("direction", ["right", "left"])
def test_truncation_and_padding_together(fresh, direction):
    sw, hf = fresh
    for tok in (sw, hf):
        tok.enable_truncation(20, strategy="longest_first", direction=direction)
        tok.enable_padding(direction=direction, pad_to_multiple_of=8)
    inputs = [*TRUNCATION_PAIRS, ("x", "y")]
    assert_same_batch(sw.encode_batch(inputs), hf.encode_batch(inputs), inputs)
    singles = [*FIXED, LONG]
    assert_same_batch(sw.encode_batch(singles), hf.encode_batch(singles), singles)


# Every enable_* makes subword rebuild its model on the next encode (~45 ms), hence few examples.
@settings(max_examples=refdata.hypothesis_examples(local=60, ci=600))
@given(
    inputs=st.lists(st.tuples(bert_texts, bert_texts), min_size=1, max_size=5),
    max_length=st.integers(6, 40),
    stride=st.sampled_from([0, 0, 1, 3]),
    strategy=st.sampled_from(["longest_first", "only_first", "only_second"]),
    direction=st.sampled_from(["right", "left"]),
    padding=st.sampled_from(PADDINGS),
)
def test_truncation_padding_hypothesis(
    shared_config, inputs, max_length, stride, strategy, direction, padding
):
    sw, hf = shared_config
    for tok in (sw, hf):
        tok.enable_truncation(max_length, stride=stride, strategy=strategy, direction=direction)
        tok.enable_padding(**padding)
    assert sw.truncation == hf.truncation and sw.padding == hf.padding
    a, b = inputs[0]
    for method, args in [("encode_batch", (inputs,)), ("encode", (a, b)), ("encode", (a,))]:
        want = outcome(getattr(hf, method), *args)
        got = outcome(getattr(sw, method), *args)
        assert got == want, (method, args, max_length, stride, strategy, direction, padding)


# --------------------------------------------------------------------------------------------
# the pipeline built by hand


def build(lib, vocab_path: Path, processor: str, from_dict: bool = False):
    """BERT uncased from vocab.txt; the same code for ``subword`` and ``tokenizers``."""
    if from_dict:
        tokens = vocab_path.read_text(encoding="utf-8").split("\n")
        vocab = {t: i for i, t in enumerate(tokens) if t}
        model = lib.models.WordPiece(vocab, unk_token="[UNK]")
    else:
        model = lib.models.WordPiece.from_file(str(vocab_path), unk_token="[UNK]")
    tok = lib.Tokenizer(model)
    tok.normalizer = lib.normalizers.BertNormalizer(lowercase=True)
    tok.pre_tokenizer = lib.pre_tokenizers.BertPreTokenizer()
    if processor == "bert":
        tok.post_processor = lib.processors.BertProcessing(SEP, CLS)
    else:
        tok.post_processor = lib.processors.TemplateProcessing(
            single="[CLS] $A [SEP]",
            pair="[CLS] $A [SEP] $B:1 [SEP]:1",
            special_tokens=[CLS, SEP],
        )
    tok.decoder = lib.decoders.WordPiece(prefix="##", cleanup=True)
    return tok


@pytest.fixture(
    scope="module",
    params=[("template", False), ("bert", False), ("template", True)],
    ids=["template", "bert_processing", "template_from_dict"],
)
def hand_built(request, vocab_path):
    processor, from_dict = request.param
    return Both(
        (
            build(subword, vocab_path, processor, from_dict),
            build(tokenizers, vocab_path, processor, from_dict),
        )
    )


def _without_special_strings(text: str) -> bool:
    # Hand-built tokenizers have no added tokens: "[SEP]" in the text is ordinary text there.
    return not any(s.lower() in text.lower() for s in SPECIALS)


def test_hand_built_matches_hf(hand_built, plain):
    sw, hf = hand_built
    assert sw.get_vocab() == hf.get_vocab()
    assert sw.get_vocab_size() == hf.get_vocab_size()
    for text in [*FIXED, LONG]:
        check_text(sw, hf, text)
        check_decode(sw, hf, hf.encode(text).ids)
    for a, b in PAIRS:
        check_pair(sw, hf, a, b)
    inputs = [*FIXED, *PAIRS]
    assert_same_batch(sw.encode_batch(inputs), hf.encode_batch(inputs), inputs)
    # and, on text without special-token strings, the same as the file's tokenizer
    sw_file, hf_file = plain
    for text in filter(_without_special_strings, FIXED):
        assert_same(sw.encode(text), hf_file.encode(text), text)
        assert_same(sw_file.encode(text), hf.encode(text), text)


@settings(max_examples=refdata.hypothesis_examples(local=100, ci=2000))
@given(text=bert_texts)
def test_hand_built_hypothesis(hand_built, text):
    sw, hf = hand_built
    check_text(sw, hf, text)
    check_pair(sw, hf, text, text[::-1])


def test_model_save_writes_vocab_txt(hand_built, vocab_path, tmp_path):
    sw, hf = hand_built
    (tmp_path / "sw").mkdir()
    (tmp_path / "hf").mkdir()
    sw_files = sw.model.save(str(tmp_path / "sw"))
    hf_files = hf.model.save(str(tmp_path / "hf"))
    assert [Path(p).name for p in sw_files] == [Path(p).name for p in hf_files] == ["vocab.txt"]
    sw_bytes = Path(sw_files[0]).read_bytes()
    assert sw_bytes == Path(hf_files[0]).read_bytes()
    assert sw_bytes.split(b"\n")[:-1] == vocab_path.read_bytes().split(b"\n")[:-1]
    # it loads back into both
    for lib in (subword, tokenizers):
        back = lib.Tokenizer(lib.models.WordPiece.from_file(sw_files[0], unk_token="[UNK]"))
        assert back.get_vocab() == hf.get_vocab()


# --------------------------------------------------------------------------------------------
# save / load


def test_hf_file_loads_from_str(json_path, raw):
    sw = subword.Tokenizer.from_str(json_path.read_text(encoding="utf-8"))
    hf = raw[1]
    assert sw.truncation == hf.truncation and sw.padding == hf.padding
    for text in [*FIXED, LONG]:
        assert_same(sw.encode(text), hf.encode(text), text)


@pytest.mark.parametrize("kind", ["raw", "plain", "hand_built"])
def test_saved_file_loads_in_hf(kind, raw, plain, vocab_path, tmp_path):
    if kind == "hand_built":
        sw, hf = build(subword, vocab_path, "template"), build(tokenizers, vocab_path, "template")
    else:
        sw, hf = raw if kind == "raw" else plain
    path = tmp_path / "tokenizer.json"
    sw.save(str(path))
    assert [p.name for p in tmp_path.iterdir()] == ["tokenizer.json"]  # no temp file left
    hf_of_sw = tokenizers.Tokenizer.from_file(str(path))
    sw_of_sw = subword.Tokenizer.from_file(str(path))
    hf_of_str = tokenizers.Tokenizer.from_str(sw.to_str())
    for tok in (hf_of_sw, sw_of_sw, hf_of_str):
        assert tok.truncation == hf.truncation
        assert tok.padding == hf.padding
        assert tok.get_vocab() == hf.get_vocab()
    for text in [*FIXED, LONG]:
        want = hf.encode(text)
        for tok in (hf_of_sw, sw_of_sw, hf_of_str):
            assert_same(tok.encode(text), want, (type(tok).__module__, text))
        check_decode(hf_of_sw, hf, want.ids)
    for a, b in PAIRS:
        want = hf.encode(a, b)
        for tok in (hf_of_sw, sw_of_sw):
            assert_same(tok.encode(a, b), want, (type(tok).__module__, a, b))
    doc = json.loads(path.read_text(encoding="utf-8"))
    assert doc["model"]["type"] == "WordPiece"
    assert doc["normalizer"]["type"] == "BertNormalizer"
    assert doc["pre_tokenizer"]["type"] == "BertPreTokenizer"
    assert doc["decoder"]["type"] == "WordPiece"


@pytest.mark.parametrize("stride", [0, 2])
def test_saved_file_after_reconfiguring(fresh, tmp_path, stride):
    sw, hf = fresh
    for tok in (sw, hf):
        tok.enable_truncation(10, stride=stride, strategy="only_second", direction="left")
        tok.enable_padding(direction="left", pad_to_multiple_of=4, pad_type_id=1)
    sw.save(str(tmp_path / "tokenizer.json"))
    back = tokenizers.Tokenizer.from_file(str(tmp_path / "tokenizer.json"))
    assert back.truncation == hf.truncation
    assert back.padding == hf.padding
    inputs = [("short", "a much longer second sequence that needs cutting"), ("x", "y")]
    assert_same_batch(back.encode_batch(inputs), hf.encode_batch(inputs), inputs)


# --------------------------------------------------------------------------------------------
# bad input


def test_encode_rejects_non_str(plain):
    sw, _ = plain
    with pytest.raises(TypeError):
        sw.encode(123)
    with pytest.raises(TypeError):
        sw.encode(None)
    with pytest.raises(TypeError):
        sw.encode(b"bytes")
    with pytest.raises(TypeError):
        sw.encode("ok", 5)
    with pytest.raises(TypeError):
        sw.encode_batch(["ok", 5])


def test_missing_files(tmp_path):
    missing = tmp_path / "does-not-exist"
    with pytest.raises(FileNotFoundError):
        subword.Tokenizer.from_file(str(missing / "tokenizer.json"))
    with pytest.raises(FileNotFoundError):
        subword.models.WordPiece.from_file(str(missing / "vocab.txt"))
    # HF fails on both too
    with pytest.raises(Exception):  # noqa: B017
        tokenizers.Tokenizer.from_file(str(missing / "tokenizer.json"))
    with pytest.raises(Exception):  # noqa: B017
        tokenizers.models.WordPiece.from_file(str(missing / "vocab.txt"))


def _bert_doc(json_path: Path) -> dict:
    return json.loads(json_path.read_text(encoding="utf-8"))


def _malformed(json_path: Path) -> list[tuple[str, str, str]]:
    """(id, tokenizer.json text, a word the error message must contain)."""
    out = [("not_json", '{"model": {"type": "WordPiece", ', "")]
    doc = _bert_doc(json_path)
    del doc["model"]
    out.append(("no_model", json.dumps(doc), "model"))
    doc = _bert_doc(json_path)
    doc["model"]["type"] = "NoSuchModel"
    out.append(("unknown_model_type", json.dumps(doc), "NoSuchModel"))
    doc = _bert_doc(json_path)
    doc["model"]["vocab"] = ["[PAD]", "[UNK]"]
    out.append(("vocab_not_a_map", json.dumps(doc), "vocab"))
    doc = _bert_doc(json_path)
    doc["normalizer"] = {"type": "NoSuchNormalizer"}
    out.append(("unknown_normalizer", json.dumps(doc), "NoSuchNormalizer"))
    doc = _bert_doc(json_path)
    doc["pre_tokenizer"] = {"type": "NoSuchPreTokenizer"}
    out.append(("unknown_pre_tokenizer", json.dumps(doc), "NoSuchPreTokenizer"))
    return out


MALFORMED_IDS = [
    "not_json",
    "no_model",
    "unknown_model_type",
    "vocab_not_a_map",
    "unknown_normalizer",
    "unknown_pre_tokenizer",
]


@pytest.mark.parametrize("which", MALFORMED_IDS)
def test_malformed_tokenizer_json(json_path, tmp_path, which):
    cases = {name: (text, word) for name, text, word in _malformed(json_path)}
    text, word = cases[which]
    with pytest.raises(Exception):  # noqa: B017 - HF rejects it too
        tokenizers.Tokenizer.from_str(text)
    with pytest.raises(ValueError) as info:
        subword.Tokenizer.from_str(text)
    assert word.lower() in str(info.value).lower(), (
        f"the error does not name {word!r}: {info.value}"
    )
    path = tmp_path / "tokenizer.json"
    path.write_text(text, encoding="utf-8")
    with pytest.raises(ValueError) as info:
        subword.Tokenizer.from_file(str(path))
    assert word.lower() in str(info.value).lower(), (
        f"the error does not name {word!r}: {info.value}"
    )


def test_unk_token_not_in_vocab(vocab_path):
    text = "qqqqzzzzxxxx 🙂"  # needs the unk token
    hf = tokenizers.Tokenizer(
        tokenizers.models.WordPiece.from_file(str(vocab_path), unk_token="<not-there>")
    )
    with pytest.raises(Exception):  # noqa: B017 - HF: "Missing [UNK] token from the vocabulary"
        hf.encode(text)
    tokens = vocab_path.read_text(encoding="utf-8").split("\n")
    vocab = {t: i for i, t in enumerate(tokens) if t}
    # subword may refuse when the model is made or when it is used: either way a ValueError
    with pytest.raises(ValueError):
        sw = subword.Tokenizer(subword.models.WordPiece(vocab, unk_token="<not-there>"))
        sw.encode(text)
    with pytest.raises(ValueError):
        sw = subword.Tokenizer(
            subword.models.WordPiece.from_file(str(vocab_path), unk_token="<not-there>")
        )
        sw.encode(text)


# --------------------------------------------------------------------------------------------
# corpora


def _corpus_ids() -> list[str]:
    return [p.name for p in refdata.corpora_files()] or ["none"]


@pytest.mark.corpora
@pytest.mark.slow
@pytest.mark.parametrize("name", _corpus_ids())
def test_corpora_line_by_line(plain, corpora, name):
    """Every line of every corpus file: batch-encoded by both, all fields compared."""
    sw, hf = plain
    path = next(p for p in corpora if p.name == name)
    lines = path.read_text(encoding="utf-8").split("\n")
    chunk = 20_000
    for start in range(0, len(lines), chunk):
        part = lines[start : start + chunk]
        got, want = sw.encode_batch(part), hf.encode_batch(part)
        assert len(got) == len(want) == len(part)
        for k, (g, w) in enumerate(zip(got, want)):
            fg, fw = fields(g), fields(w)
            if fg != fw:
                _report(fg, fw, part[k], f" ({name} line {start + k + 1})")


def _alignment(enc, n_chars: tuple[int, int]) -> dict:
    """HF's alignment helpers on every position of `enc` and every character of both inputs."""
    return {
        "n_sequences": enc.n_sequences,
        "token": [
            (enc.token_to_chars(i), enc.token_to_word(i), enc.token_to_sequence(i))
            for i in range(len(enc))
        ],
        "char": [
            (enc.char_to_token(p, s), enc.char_to_word(p, s))
            for s in (0, 1)
            for p in range(n_chars[s] + 1)
        ],
        "word": [enc.word_to_tokens(w, s) for s in (0, 1) for w in range(len(enc) + 1)],
    }


@settings(max_examples=refdata.hypothesis_examples(local=100, ci=1000))
@given(a=bert_texts, b=st.none() | bert_texts, left=st.booleans())
def test_alignment_helpers_hypothesis(shared_config, a, b, left):
    """char_to_token, token_to_chars, word_to_tokens … agree with HF, padding included."""
    sw, hf = shared_config
    for tok in (sw, hf):
        tok.no_truncation()
        tok.enable_padding(direction="left" if left else "right", pad_to_multiple_of=8)
    n_chars = (len(a), len(b or ""))
    assert _alignment(sw.encode(a, b), n_chars) == _alignment(hf.encode(a, b), n_chars), (a, b)


@pytest.mark.parametrize(
    "setting", [{"pad_id": -1}, {"pad_type_id": 2**40}, {"pad_to_multiple_of": -8}]
)
def test_bad_padding_values_are_refused_and_change_nothing(fresh, setting):
    sw, hf = fresh
    sw.enable_padding(length=8)
    before = sw.padding
    # The message names the setting (each dialect words the range its own way).
    with pytest.raises(ValueError, match=next(iter(setting))):
        sw.enable_padding(**setting)
    assert sw.padding == before
    hf.enable_padding(length=8)
    assert fields(sw.encode("hello")) == fields(hf.encode("hello"))


def test_bad_numbers_in_a_file_are_refused(json_path):
    doc = json.loads(json_path.read_text("utf-8"))
    doc["padding"]["pad_id"] = -1
    with pytest.raises(ValueError, match="pad_id must be a non-negative integer"):
        subword.Tokenizer.from_str(json.dumps(doc))


def test_byte_level_only_calls_are_refused_clearly(json_path):
    # What only the byte-level BPE Tokenizer has is a clear error on subword's WordPiece
    # Tokenizer, not an AttributeError from inside it.
    sw = subword.Tokenizer.from_file(str(json_path))
    with pytest.raises(ValueError, match="encode_iterable is for byte-level BPE"):
        sw.encode_iterable(["hello"])
    with pytest.raises(ValueError, match="no tiktoken form"):
        sw.to_encoding()
    with pytest.raises(NotImplementedError, match="subword.tokenizers.Tokenizer.from_str"):
        sw.post_process(sw.encode("hello"))
