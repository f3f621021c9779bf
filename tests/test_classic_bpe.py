"""Classic BPE with an end-of-word marker (Sennrich et al.): ``subword.ClassicBPE``.

The oracle is ``naive_trainers.naive_classic_bpe``: every word is its chars + "</w>"; at every
step recount every adjacent pair of every word, merge the most frequent one (ties: the greatest
(a, b) as str tuples, or the earliest first occurrence) everywhere, left to right; repeat.
Encoding is checked against ``naive_classic_tokenize`` (lowest-rank merge first, leftmost among
equal ranks).

Environment: SUBWORD_TRAINING_EXAMPLES sets the number of hypothesis examples per property;
otherwise it is min(the suite's number, 200 locally / 600 with CI=true).
"""

from __future__ import annotations

import os

import pytest
import refdata
from hypothesis import given, settings
from hypothesis import strategies as st
from naive_trainers import (
    END,
    TIE_BREAKS,
    classic_alphabet,
    naive_classic_bpe,
    naive_classic_decode,
    naive_classic_encode,
    naive_classic_tokenize,
)
from subword import ClassicBPE

N = int(
    os.environ.get("SUBWORD_TRAINING_EXAMPLES")
    or min(refdata.hypothesis_examples(), 600 if refdata.in_ci() else 200)
)

TEXTBOOK = {"low": 5, "lower": 2, "newest": 6, "widest": 3}
BIG = 1000  # a vocab_size nothing here reaches


def train(counts, vocab_size=BIG, **kwargs):
    return ClassicBPE.train_from_counts(counts, vocab_size=vocab_size, **kwargs)


def vocab_list(bpe) -> list[str]:
    """bpe.vocab as a list of tokens by id (the ids must be 0..n-1)."""
    vocab = bpe.vocab
    by_id = sorted(vocab.items(), key=lambda kv: kv[1])
    assert [i for _, i in by_id] == list(range(len(vocab))), "ids are not 0..n-1"
    return [t for t, _ in by_id]


def assert_matches_naive(bpe, counts, vocab_size, **kwargs):
    want_vocab, want_merges = naive_classic_bpe(counts, vocab_size, **kwargs)
    got = list(bpe.merges)
    if got != want_merges:
        i = next(
            (k for k, (a, b) in enumerate(zip(got, want_merges)) if a != b),
            min(len(got), len(want_merges)),
        )
        raise AssertionError(
            f"merges differ at step {i} ({kwargs}, vocab_size={vocab_size})\n"
            f"  subword: {got[max(0, i - 2) : i + 3]} ({len(got)} merges)\n"
            f"  naive  : {want_merges[max(0, i - 2) : i + 3]} ({len(want_merges)} merges)\n"
            f"  counts: {list(dict(counts).items())[:20]}"
        )
    assert vocab_list(bpe) == want_vocab
    return want_vocab, want_merges


# --------------------------------------------------------------------------------------------
# the naive trainer on cases worked by hand


def test_naive_textbook():
    # Pair counts, "</w>" pairs left out: (e,s) = (s,t) = 9 (newest x6 + widest x3), (w,e) = 8,
    # (l,o) = (o,w) = 7 (low x5 + lower x2).
    # "first": (e,s) is met before (s,t) in "newest", (l,o) before (o,w) in "low".
    _, merges = naive_classic_bpe(TEXTBOOK, BIG, 0, False, "first")
    assert merges[:4] == [("e", "s"), ("es", "t"), ("l", "o"), ("lo", "w")]
    # "lexicographic": ("s","t") > ("e","s"); ("o","w") > ("l","o").
    _, merges = naive_classic_bpe(TEXTBOOK, BIG, 0, False, "lexicographic")
    assert merges[:4] == [("s", "t"), ("e", "st"), ("o", "w"), ("l", "ow")]
    vocab, merges = naive_classic_bpe(TEXTBOOK, BIG, 0, False, "first")
    assert naive_classic_tokenize(vocab, merges, "lowest") == ["low", "est", END]
    assert naive_classic_tokenize(vocab, merges, " a  b\n") == ["<unk>", END, "<unk>", END]


def test_naive_overlapping_pairs():
    # (a, a) occurs twice in "aaa"; left to right it becomes [aa, a, </w>].
    _, merges = naive_classic_bpe({"aaa": 1}, BIG, 2, False, "lexicographic")
    assert merges == [("a", "a")]
    _, merges = naive_classic_bpe({"aaa": 1}, BIG, 0, False, "lexicographic")
    assert merges == [("a", "a"), ("aa", "a")]
    # with "</w>": (aa, a) and (a, </w>) both occur once; ("aa", "a") is the greater pair
    _, merges = naive_classic_bpe({"aaa": 1}, BIG, 0, True, "lexicographic")
    assert merges == [("a", "a"), ("aa", "a"), ("aaa", END)]


# --------------------------------------------------------------------------------------------
# the textbook example


def test_textbook_first_without_end_of_word():
    bpe = train(TEXTBOOK, merge_end_of_word=False, tie_break="first", min_frequency=0)
    assert [tuple(m) for m in bpe.merges[:4]] == [("e", "s"), ("es", "t"), ("l", "o"), ("lo", "w")]
    assert bpe.tokenize("lowest") == ["low", "est", END]
    vocab, merges = assert_matches_naive(
        bpe, TEXTBOOK, BIG, merge_end_of_word=False, tie_break="first", min_frequency=0
    )
    assert all(END not in a + b for a, b in merges)
    assert bpe.encode("lowest") == [vocab.index(t) for t in ["low", "est", END]]
    assert bpe.decode(bpe.encode("lowest newest")) == "lowest newest"


def test_textbook_first_with_end_of_word():
    kwargs = dict(merge_end_of_word=True, tie_break="first", min_frequency=0)
    bpe = train(TEXTBOOK, **kwargs)
    vocab, merges = assert_matches_naive(bpe, TEXTBOOK, BIG, **kwargs)
    assert [tuple(m) for m in bpe.merges[:3]] == [("e", "s"), ("es", "t"), ("est", END)]
    assert "est</w>" in bpe.vocab
    tokens = bpe.tokenize("lowest")
    assert tokens[-1] == "est</w>"
    assert tokens == naive_classic_tokenize(vocab, merges, "lowest")
    assert bpe.decode(bpe.encode("lowest")) == "lowest"


def test_textbook_default_tie_break_is_lexicographic():
    # Worked by hand from the spec (merge_end_of_word=False, "</w>" pairs are never merged):
    #   (s,t) 9 and (e,s) 9: ("s","t") is greater          -> st
    #   (e,st) 9                                             -> est
    #   (l,o) 7 and (o,w) 7: ("o","w") is greater          -> ow
    #   (l,ow) 7                                             -> low
    #   (n,e), (e,w), (w,est) all 6: ("w","est") greatest   -> west
    #   (n,e) 6 and (e,west) 6: "n" > "e"                   -> ne
    #   (ne,west) 6                                          -> newest
    #   (w,i), (i,d), (d,est) all 3: ("w","i") greatest     -> wi
    #   (wi,d) 3 and (d,est) 3: "wi" > "d"                  -> wid
    #   (wid,est) 3                                          -> widest
    #   (low,e) 2 and (e,r) 2: "low" > "e"                  -> lowe
    #   (lowe,r) 2                                           -> lower; then nothing is left
    order = [
        ("s", "t"),
        ("e", "st"),
        ("o", "w"),
        ("l", "ow"),
        ("w", "est"),
        ("n", "e"),
        ("ne", "west"),
        ("w", "i"),
        ("wi", "d"),
        ("wid", "est"),
        ("low", "e"),
        ("lowe", "r"),
    ]
    bpe = train(TEXTBOOK, merge_end_of_word=False, min_frequency=0)  # tie_break left default
    assert [tuple(m) for m in bpe.merges] == order
    vocab, _ = assert_matches_naive(
        bpe, TEXTBOOK, BIG, merge_end_of_word=False, tie_break="lexicographic", min_frequency=0
    )
    # unk, the alphabet in code point order, "</w>", then the new tokens in merge order
    assert vocab == ["<unk>", *sorted("deilnorstw"), END] + [a + b for a, b in order]
    assert bpe.tokenize("lowest") == ["low", "est", END]


def test_textbook_lexicographic_with_end_of_word():
    # By hand: (t,</w>) 9 ties (e,s) and (s,t); ("t","</w>") is the greatest -> "t</w>", then
    # (s,t</w>) 9 -> "st</w>", (e,st</w>) 9 -> "est</w>", then as above with "</w>" attached.
    order = [
        ("t", END),
        ("s", "t" + END),
        ("e", "st" + END),
        ("o", "w"),
        ("l", "ow"),
        ("w", "est" + END),
        ("n", "e"),
        ("ne", "west" + END),
        ("low", END),
        ("w", "i"),
        ("wi", "d"),
        ("wid", "est" + END),
        ("r", END),
        ("low", "e"),
        ("lowe", "r" + END),
    ]
    bpe = train(TEXTBOOK, merge_end_of_word=True, tie_break="lexicographic", min_frequency=0)
    assert [tuple(m) for m in bpe.merges] == order
    assert_matches_naive(
        bpe, TEXTBOOK, BIG, merge_end_of_word=True, tie_break="lexicographic", min_frequency=0
    )
    assert bpe.tokenize("lowest") == ["low", "est</w>"]
    assert bpe.tokenize("low lower") == ["low</w>", "lower</w>"]


@pytest.mark.parametrize("merge_end_of_word", [False, True])
@pytest.mark.parametrize("tie_break", TIE_BREAKS)
@pytest.mark.parametrize("min_frequency", [0, 1, 3, 6, 7])
@pytest.mark.parametrize("extra", [0, 1, 4, 8])
def test_textbook_grid(merge_end_of_word, tie_break, min_frequency, extra):
    kwargs = dict(merge_end_of_word=merge_end_of_word, tie_break=tie_break)
    size = 2 + len(classic_alphabet(TEXTBOOK)) + extra
    bpe = train(TEXTBOOK, size, min_frequency=min_frequency, **kwargs)
    vocab, _ = assert_matches_naive(bpe, TEXTBOOK, size, min_frequency=min_frequency, **kwargs)
    assert len(vocab) <= size


def test_unknown_chars_become_unk():
    bpe = train(TEXTBOOK, merge_end_of_word=True, unk_token="[UNK]")
    unk = bpe.vocab["[UNK]"]
    assert unk == 0
    assert bpe.tokenize("q") == ["[UNK]", END]
    assert bpe.encode("q") == [unk, bpe.vocab[END]]
    # an unknown char inside a known word
    want = naive_classic_tokenize(vocab_list(bpe), bpe.merges, "loqwest", "[UNK]")
    assert "[UNK]" in want
    assert bpe.tokenize("loqwest") == want


def test_train_from_texts_counts_whitespace_words():
    texts = ["low low  low\nlow low", "lower\tlower newest", "", "newest newest newest newest"]
    texts += ["newest widest widest", " widest "]
    counts: dict[str, int] = {}
    for t in texts:
        for w in t.split():
            counts[w] = counts.get(w, 0) + 1
    assert counts == TEXTBOOK and list(counts) == list(TEXTBOOK)
    for tie_break in TIE_BREAKS:
        kwargs = dict(merge_end_of_word=False, tie_break=tie_break, min_frequency=0)
        from_texts = ClassicBPE.train(iter(texts), vocab_size=BIG, **kwargs)
        assert_matches_naive(from_texts, counts, BIG, **kwargs)


def test_save_load_round_trip(tmp_path):
    bpe = train(TEXTBOOK, 20, merge_end_of_word=True, tie_break="first")
    path = tmp_path / "classic.json"
    bpe.save(str(path))
    back = ClassicBPE.load(str(path))
    assert [tuple(m) for m in back.merges] == [tuple(m) for m in bpe.merges]
    assert back.vocab == bpe.vocab
    for text in ["lowest", "low lower newest widest", "  new\nwest ", "qux lo w", ""]:
        assert back.encode(text) == bpe.encode(text)
        assert back.tokenize(text) == bpe.tokenize(text)
        assert back.decode(bpe.encode(text)) == bpe.decode(bpe.encode(text))


# --------------------------------------------------------------------------------------------
# hypothesis: subword == naive

# Letters only: no "<", "/", ">" so that no learned token can spell "</w>" or "<unk>".
ALPHABET = "aabbbcdeé한"
words = st.text(ALPHABET, min_size=1, max_size=7)
counts_dicts = st.dictionaries(
    words, st.one_of(st.integers(1, 6), st.just(2**40 + 1)), min_size=1, max_size=8
)
unk_tokens = st.sampled_from(["<unk>", "[UNK]"])


@st.composite
def classic_setup(draw):
    counts = draw(counts_dicts)
    return dict(
        counts=counts,
        vocab_size=2 + len(classic_alphabet(counts)) + draw(st.integers(0, 30)),
        min_frequency=draw(st.sampled_from([0, 1, 2, 3])),
        merge_end_of_word=draw(st.booleans()),
        tie_break=draw(st.sampled_from(TIE_BREAKS)),
        unk_token=draw(unk_tokens),
    )


#: Words to encode: known chars, unknown ones (x, y, !), separated by assorted whitespace.
encode_texts = st.lists(
    st.tuples(st.text(ALPHABET + "xy!", max_size=8), st.sampled_from([" ", "  ", "\n", "\t", ""])),
    max_size=6,
).map(lambda parts: "".join(w + s for w, s in parts))


@settings(max_examples=N)
@given(setup=classic_setup(), texts=st.lists(encode_texts, min_size=1, max_size=4))
def test_matches_naive(setup, texts):
    s = dict(setup)
    counts, vocab_size = s.pop("counts"), s.pop("vocab_size")
    bpe = train(counts, vocab_size, **s)
    vocab, merges = assert_matches_naive(bpe, counts, vocab_size, **s)
    assert len(vocab) <= vocab_size
    if not s["merge_end_of_word"]:
        assert all(END not in a and END not in b for a, b in merges)
    unk = s["unk_token"]
    alphabet = set(classic_alphabet(counts))
    for text in texts:
        want_tokens = naive_classic_tokenize(vocab, merges, text, unk)
        assert bpe.tokenize(text) == want_tokens, text
        ids = bpe.encode(text)
        assert ids == naive_classic_encode(vocab, merges, text, unk), text
        n_unknown = sum(ch not in alphabet for ch in "".join(text.split()))
        assert ids.count(vocab.index(unk)) == n_unknown
        if n_unknown == 0:
            assert bpe.decode(ids) == " ".join(text.split()) == naive_classic_decode(want_tokens)


@settings(max_examples=max(25, N // 4))
@given(setup=classic_setup())
def test_train_from_texts_matches_train_from_counts(setup):
    s = dict(setup)
    counts, vocab_size = s.pop("counts"), s.pop("vocab_size")
    # small counts only: the texts spell every occurrence out
    counts = {w: min(c, 6) for w, c in counts.items()}
    texts = []
    remaining = dict(counts)
    while remaining:  # interleave the words; first appearances keep the dict's order
        texts.append(" ".join(remaining) + "\n")
        remaining = {w: c - 1 for w, c in remaining.items() if c > 1}
    bpe = ClassicBPE.train(texts, vocab_size=vocab_size, **s)
    assert_matches_naive(bpe, counts, vocab_size, **s)
