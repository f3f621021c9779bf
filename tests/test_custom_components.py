"""Python objects as pipeline stages (``Normalizer.custom``, ``PreTokenizer.custom``,
``Decoder.custom``) and the strings they are handed (``NormalizedString``,
``PreTokenizedString``), against HF ``tokenizers`` running the same objects: hypothesis
scripts of edits and cuts, compared by text, by every offset a tokenizer reports, and by
``get_splits`` in each referential; and the errors (a lent string used after its call, a
method with the wrong signature, a foreign string returned, saving)."""

from __future__ import annotations

import pickle

import pytest
import subword.tokenizers as ours
import textgen
import tokenizers as hf
from hypothesis import assume, given, settings
from hypothesis import strategies as st

texts = st.one_of(
    textgen.texts,
    st.text(alphabet="aAbB éÉe\u0301İıΣß ﬁ①你好\t\n-_.,😀", max_size=30),
)

# Edits of a NormalizedString, each as a name and its arguments.
_WORDS = ["a", "é", "ab", " ", "▁", "ß", "你"]
edits = st.one_of(
    st.sampled_from(
        [("nfd",), ("nfc",), ("nfkd",), ("nfkc",), ("lowercase",), ("uppercase",)]
        + [("lstrip",), ("rstrip",), ("strip",), ("filter",), ("map",)]
    ),
    # Not prepend(""): HF's leaves an alignment too many, and its next edit panics (an abort).
    st.tuples(st.just("prepend"), st.sampled_from(_WORDS + ["xyz"])),
    st.tuples(st.just("append"), st.sampled_from(_WORDS + ["xyz", ""])),
    st.tuples(st.just("replace"), st.sampled_from(_WORDS), st.sampled_from(_WORDS + [""])),
    st.tuples(st.just("replace_regex"), st.sampled_from([r"\s+", r"[0-9]", r"e\u0301?"])),
)


def _apply(lib, n, edit) -> None:
    name, *args = edit
    if name == "filter":
        n.filter(lambda c: not c.isspace())
    elif name == "map":
        n.map(lambda c: "*" if c.isdigit() else c)
    elif name == "replace_regex":
        n.replace(lib.Regex(args[0]), "#")
    elif name == "replace" and args[0] == "":
        return
    else:
        getattr(n, name)(*args)


def _aligned_in_hf(script, text) -> bool:
    """False where HF's result is an artefact: it appends to an empty string without an
    alignment for what it added, so the next edit sees that text twice ('' + "a", then nfd:
    "aa") or not at all (Strip keeps a lone added space). The string may be empty from the
    start or become so (``lstrip`` of " "), so the edits are run on HF's own string to see."""
    n = hf.NormalizedString(text)
    for e in script:
        if e[0] in ("append", "prepend") and not n.normalized:
            return False
        _apply(hf, n, e)
    return True


class Script:
    """A custom normalizer that runs ``edits`` on the string it is lent."""

    def __init__(self, lib, edits):
        self.lib, self.edits = lib, edits

    def normalize(self, normalized):
        for e in self.edits:
            _apply(self.lib, normalized, e)


def _per_char_tokenizer(lib, normalizer=None, pre_tokenizer=None):
    """Every normalized char its own token, so offsets show every alignment."""
    tok = lib.Tokenizer(lib.models.WordLevel({"[UNK]": 0}, unk_token="[UNK]"))
    if normalizer is not None:
        tok.normalizer = normalizer
    tok.pre_tokenizer = pre_tokenizer or lib.pre_tokenizers.Split(lib.Regex(r"[\s\S]"), "isolated")
    return tok


@settings(max_examples=300, deadline=None)
@given(script=st.lists(edits, max_size=5), text=texts)
def test_custom_normalizer_edits_equal_hfs(script, text):
    assume(_aligned_in_hf(script[:-1], text))
    mine = ours.normalizers.Normalizer.custom(Script(ours, script))
    theirs = hf.normalizers.Normalizer.custom(Script(hf, script))
    assert mine.normalize_str(text) == theirs.normalize_str(text)
    a = _per_char_tokenizer(ours, mine).encode(text)
    b = _per_char_tokenizer(hf, theirs).encode(text)
    assert a.offsets == b.offsets
    # The same edits on a NormalizedString built by hand.
    ns, hs = ours.NormalizedString(text), hf.NormalizedString(text)
    for e in script:
        _apply(ours, ns, e)
        _apply(hf, hs, e)
    assert (ns.normalized, ns.original, repr(ns)) == (hs.normalized, hs.original, repr(hs))


@settings(max_examples=200, deadline=None)
@given(script=st.lists(edits, max_size=3), text=texts)
def test_custom_normalizer_inside_sequences_and_tokenizers(script, text):
    def seq(lib):
        n = lib.normalizers
        return n.Sequence([n.NFKC(), n.Normalizer.custom(Script(lib, script)), n.Strip()])

    nfkc = hf.normalizers.NFKC().normalize_str
    assume(all(_aligned_in_hf(script, nfkc(t)) for t in (text, text[::-1])))
    assert seq(ours).normalize_str(text) == seq(hf).normalize_str(text)
    mine = _per_char_tokenizer(ours, seq(ours))
    theirs = _per_char_tokenizer(hf, seq(hf))
    for m in (mine, theirs):
        m.add_special_tokens(["<s>"])
    t = f"{text}<s>{text[::-1]}"
    a, b = mine.encode(t), theirs.encode(t)
    assert (a.tokens, a.offsets) == (b.tokens, b.offsets)


# Cuts a custom pre-tokenizer makes: a pattern and a behavior, or a slice at a char index.
_BEHAVIORS = ["removed", "isolated", "merged_with_previous", "merged_with_next", "contiguous"]
cuts = st.one_of(
    st.tuples(
        st.just("split"),
        st.sampled_from([" ", "a", "-", "ab"]),
        st.sampled_from(_BEHAVIORS),
    ),
    st.tuples(
        st.just("split_regex"),
        st.sampled_from([r"\s+", r"\w+", r"[\p{L}]"]),
        st.sampled_from(_BEHAVIORS),
    ),
    st.tuples(st.just("slice"), st.integers(-3, 6)),
    st.tuples(st.just("normalize"), edits),
)


ranges = st.one_of(
    st.integers(-12, 12),
    st.tuples(st.integers(0, 12), st.integers(0, 12)),
    st.builds(slice, st.none() | st.integers(-12, 12), st.none() | st.integers(-12, 12)),
)


@settings(max_examples=500, deadline=None)
@given(text=texts, r=ranges)
def test_slicing_a_normalized_string_equals_hfs(text, r):
    # HF resolves indices against the length in bytes and reads them as chars; a start that is
    # no char of the text gives None, an end past it stops at the end.
    def run(lib):
        n = lib.NormalizedString(text)
        n.lowercase()
        try:
            return repr(n[r]), repr(n.slice(r))
        except ValueError as e:
            return str(e)

    assert run(ours) == run(hf)


class Cutter:
    """A custom pre-tokenizer that runs ``cuts`` on the string it is lent."""

    def __init__(self, lib, cuts):
        self.lib, self.cuts = lib, cuts

    def pre_tokenize(self, pretok):
        for cut in self.cuts:
            kind = cut[0]
            if kind == "split":
                pretok.split(lambda i, n, c=cut: n.split(c[1], c[2]))
            elif kind == "split_regex":
                pretok.split(lambda i, n, c=cut: n.split(self.lib.Regex(c[1]), c[2]))
            elif kind == "slice":
                k = cut[1]
                # A slice past the end is None (HF's rule), which split would refuse.
                pretok.split(lambda i, n, k=k: [p for p in (n[:k], n[k:]) if p is not None])
            else:
                pretok.normalize(lambda n, e=cut[1]: _apply(self.lib, n, e))


@settings(max_examples=300, deadline=None)
@given(script=st.lists(cuts, min_size=1, max_size=4), text=texts)
def test_custom_pre_tokenizer_cuts_equal_hfs(script, text):
    assume(_aligned_in_hf([c[1] for c in script if c[0] == "normalize"], text))
    mine = ours.pre_tokenizers.PreTokenizer.custom(Cutter(ours, script))
    theirs = hf.pre_tokenizers.PreTokenizer.custom(Cutter(hf, script))
    assert mine.pre_tokenize_str(text) == theirs.pre_tokenize_str(text)
    ps, hs = ours.PreTokenizedString(text), hf.PreTokenizedString(text)
    mine.pre_tokenize(ps)
    theirs.pre_tokenize(hs)
    for ref in ("original", "normalized"):
        for kind in ("char", "byte"):
            assert ps.get_splits(ref, kind) == hs.get_splits(ref, kind), (ref, kind)
    # An edit can leave a split empty; HF's WordLevel then gives it an [UNK] (the model is
    # asked for the empty string), where ours gives it no token: compare the rest.
    if all(piece for piece, _ in theirs.pre_tokenize_str(text)):
        a = _per_char_tokenizer(ours, pre_tokenizer=mine).encode(text)
        b = _per_char_tokenizer(hf, pre_tokenizer=theirs).encode(text)
        assert (a.offsets, a.word_ids) == (b.offsets, b.word_ids)


@settings(max_examples=100, deadline=None)
@given(text=texts)
def test_builtin_pre_tokenizers_cut_a_pretokenized_string_as_hf(text):
    def run(lib):
        p = lib.PreTokenizedString(text)
        lib.pre_tokenizers.Whitespace().pre_tokenize(p)
        p.split(lambda i, n: [q for q in (n[:1], n[1:]) if q is not None])
        lib.pre_tokenizers.Digits(individual_digits=True).pre_tokenize(p)
        return p.get_splits()

    assert run(ours) == run(hf)


def _char_tokens(lib):
    # A token per char, offsets in bytes of the split (HF's convention), ids by code point.
    def tokenize(s):
        out, at = [], 0
        for c in s:
            n = len(c.encode())
            out.append(lib.Token(ord(c), c, (at, at + n)))
            at += n
        return out

    return tokenize


@settings(max_examples=150, deadline=None)
@given(text=texts, word_idx=st.none() | st.integers(0, 5), type_id=st.integers(0, 2))
def test_tokenize_and_to_encoding_equal_hfs(text, word_idx, type_id):
    def run(lib):
        p = lib.PreTokenizedString(text)
        p.normalize(lambda n: n.nfkd())
        lib.pre_tokenizers.WhitespaceSplit().pre_tokenize(p)
        p.tokenize(_char_tokens(lib))
        splits = [(s, o, [t.as_tuple() for t in ts]) for s, o, ts in p.get_splits()]
        e = p.to_encoding(type_id=type_id, word_idx=word_idx)
        return splits, (e.ids, e.tokens, e.offsets, e.word_ids, e.type_ids, e.sequence_ids)

    assert run(ours) == run(hf)


class Joiner:
    def decode_chain(self, tokens):
        return [t.replace("_", " ") for t in tokens]

    def decode(self, tokens):
        return "|".join(self.decode_chain(tokens))


@settings(max_examples=100, deadline=None)
@given(tokens=st.lists(st.text(alphabet="ab_▁é", max_size=4), max_size=6))
def test_custom_decoder_equals_hfs(tokens):
    assert ours.decoders.Decoder.custom(Joiner()).decode(tokens) == hf.decoders.Decoder.custom(
        Joiner()
    ).decode(tokens)
    # Inside a Sequence (HF panics there: "not implemented"), against the built-in decoder
    # that does what Joiner.decode_chain does.
    d, h = ours.decoders, hf.decoders
    chained = d.Sequence([d.Metaspace(), d.Decoder.custom(Joiner()), d.Fuse()])
    builtin = h.Sequence([h.Metaspace(), h.Replace("_", " "), h.Fuse()])
    assert chained.decode(tokens) == builtin.decode(tokens)


def test_custom_decoder_is_the_tokenizers_decoder():
    vocab = {"[UNK]": 0, "a_b": 1, "c": 2}
    got = []
    for lib in (ours, hf):
        tok = lib.Tokenizer(lib.models.WordLevel(vocab, unk_token="[UNK]"))
        tok.decoder = lib.decoders.Decoder.custom(Joiner())
        got.append(tok.decode([1, 2, 1]))
    assert got[0] == got[1] == "a bca b"  # decode_chain's pieces joined; decode is not called


def test_batches_with_custom_components_equal_hfs_on_every_thread():
    texts_ = [f"Hey there {k}! ThisIsLife ÉCOLE {k * 7}" for k in range(300)]

    def build(lib):
        tok = _per_char_tokenizer(
            lib,
            lib.normalizers.Normalizer.custom(Script(lib, [("lowercase",), ("replace", " ", "▁")])),
            lib.pre_tokenizers.PreTokenizer.custom(Cutter(lib, [("split", "▁", "isolated")])),
        )
        return tok

    mine, theirs = build(ours), build(hf)
    a = mine.encode_batch(texts_)
    b = theirs.encode_batch(texts_)
    assert [e.offsets for e in a] == [e.offsets for e in b]
    assert [e.word_ids for e in a] == [e.word_ids for e in b]


def test_training_with_a_custom_pre_tokenizer_learns_from_its_pieces():
    # HF's own merges are no oracle here: its ties follow hash order (README, Training). The
    # built-in pipeline that cuts the same pieces is: it must learn the same vocabulary.
    lines = [f"CamelCase words{k} and MoreWords {k % 7}" for k in range(200)]
    P = ours.pre_tokenizers
    custom = P.PreTokenizer.custom(Cutter(ours, [("split", " ", "removed"), ("slice", 3)]))
    builtin = P.Sequence([P.WhitespaceSplit(), P.Split(ours.Regex("^.{3}"), "isolated")])
    assert custom.pre_tokenize_str(lines[3]) == builtin.pre_tokenize_str(lines[3])

    def train(pre_tokenizer):
        tok = ours.Tokenizer(ours.models.BPE(unk_token="<unk>"))
        tok.normalizer = ours.normalizers.Lowercase()
        tok.pre_tokenizer = pre_tokenizer
        trainer = ours.trainers.BpeTrainer(
            vocab_size=80, special_tokens=["<unk>"], show_progress=False
        )
        tok.train_from_iterator(lines, trainer=trainer)
        return tok.get_vocab(), [tok.encode(t).tokens for t in lines[:20]]

    assert train(custom) == train(builtin)


def test_a_tokenizer_with_custom_components_tokenizes_files(tmp_path):
    import json

    import subword

    tok = _per_char_tokenizer(
        ours,
        ours.normalizers.Normalizer.custom(Script(ours, [("lowercase",)])),
        ours.pre_tokenizers.PreTokenizer.custom(Cutter(ours, [("split", " ", "removed")])),
    )
    lines = [f"Line {k} ÉCOLE {k * 3}" for k in range(3000)]
    (tmp_path / "in.txt").write_text("\n".join(lines), encoding="utf-8")
    subword.encode_files(
        [str(tmp_path / "in.txt")], tok, str(tmp_path / "out"), show_progress=False,
        append_eot=False, num_threads=2,
    )  # fmt: skip
    tokens, index = subword.read_shards(str(tmp_path / "out"))
    assert [list(tokens[index[k] : index[k + 1]]) for k in range(len(lines))] == [
        e.ids for e in tok.encode_batch(lines)
    ]
    manifest = json.loads((tmp_path / "out" / "manifest.json").read_text())
    assert manifest["tokenizer"]["sha256"] is None  # no tokenizer.json to hash


# --- errors -------------------------------------------------------------------------------


class Keeper:
    def normalize(self, normalized):
        self.kept = normalized
        normalized.lowercase()


def test_a_lent_string_is_unusable_after_its_call():
    keeper = Keeper()
    n = ours.normalizers.Normalizer.custom(keeper)
    assert n.normalize_str("ABC") == "abc"
    for use in (lambda: keeper.kept.normalized, lambda: keeper.kept.lowercase(), str):
        with pytest.raises(RuntimeError, match="NormalizedStringRefMut outside `normalize`"):
            use() if use is not str else str(keeper.kept)

    class PretokKeeper:
        def pre_tokenize(self, pretok):
            self.kept = pretok

    k = PretokKeeper()
    ours.pre_tokenizers.PreTokenizer.custom(k).pre_tokenize_str("a b")
    with pytest.raises(RuntimeError, match="PreTokenizedStringRefMut outside `pre_tokenize`"):
        k.kept.get_splits()


def test_a_component_raising_gives_its_exception_with_hfs_message():
    class Bad:
        def normalize(self, normalized, wrong):
            pass

    class Raises:
        def pre_tokenize(self, pretok):
            raise KeyError("boom")

    with pytest.raises(TypeError, match="TypeError:.*normalize()") as e:
        ours.normalizers.Normalizer.custom(Bad()).normalize_str("x")
    assert isinstance(e.value.__cause__, TypeError)
    tok = _per_char_tokenizer(ours, pre_tokenizer=ours.pre_tokenizers.PreTokenizer.custom(Raises()))
    with pytest.raises(KeyError, match="KeyError: 'boom'"):
        tok.encode("abc")
    with pytest.raises(KeyError, match="boom"):
        tok.encode_batch(["a", "b", "c"])


def test_objects_without_the_method_are_refused_when_wrapped():
    with pytest.raises(TypeError, match="normalize"):
        ours.normalizers.Normalizer.custom(object())
    with pytest.raises(TypeError, match="pre_tokenize"):
        ours.pre_tokenizers.PreTokenizer.custom(3)
    with pytest.raises(TypeError, match="decode"):
        ours.decoders.Decoder.custom("x")


def test_split_must_return_pieces_of_the_string_it_was_given():
    class Foreign:
        def pre_tokenize(self, pretok):
            pretok.split(lambda i, n: [ours.NormalizedString("elsewhere")])

    class NotStrings:
        def pre_tokenize(self, pretok):
            pretok.split(lambda i, n: ["text"])

    with pytest.raises(ValueError, match="not cut from the one it was given"):
        ours.pre_tokenizers.PreTokenizer.custom(Foreign()).pre_tokenize_str("abc")
    with pytest.raises(TypeError, match="list of NormalizedString"):
        ours.pre_tokenizers.PreTokenizer.custom(NotStrings()).pre_tokenize_str("abc")


def test_normalized_string_arguments_are_checked():
    n = ours.NormalizedString("abc")
    with pytest.raises(TypeError, match="callable"):
        n.filter(3)
    with pytest.raises(TypeError, match="one char"):
        n.map(lambda c: c * 2)
    with pytest.raises(TypeError, match="Regex"):
        n.replace(3, "x")
    with pytest.raises(ValueError, match="behavior"):
        n.split(" ", "sideways")
    with pytest.raises(ValueError, match="bigger than max len"):
        n[-4]
    h = hf.NormalizedString("abc")
    for r in (slice(1, 7), (0, 9), 5, (2, 1), slice(3, None), (0, 0), -1):
        assert repr(n[r]) == repr(h[r]), r
    assert str(n) == "abc" and n.normalized == "abc"  # a failed map changed nothing
    p = ours.PreTokenizedString("a b")
    with pytest.raises(ValueError, match="offset_type"):
        p.get_splits("original", "bits")
    with pytest.raises(ValueError, match="tokenize"):
        p.to_encoding()
    with pytest.raises(ValueError, match="outside"):
        p.tokenize(lambda s: [ours.Token(1, "x", (0, 9))])


def test_custom_components_cannot_be_saved_or_pickled_as_in_hf():
    tok = _per_char_tokenizer(ours, ours.normalizers.Normalizer.custom(Keeper()))
    with pytest.raises(Exception, match="Custom Normalizer cannot be serialized"):
        tok.to_str()
    with pytest.raises(Exception, match="cannot be serialized"):
        pickle.dumps(tok)
    for custom in (
        ours.normalizers.Normalizer.custom(Keeper()),
        ours.pre_tokenizers.PreTokenizer.custom(Cutter(ours, [])),
        ours.decoders.Decoder.custom(Joiner()),
    ):
        with pytest.raises(Exception, match="cannot be serialized"):
            pickle.dumps(custom)
        assert ".custom(" in repr(custom)
    # HF refuses the same tokenizer the same way.
    theirs = _per_char_tokenizer(hf, hf.normalizers.Normalizer.custom(Keeper()))
    with pytest.raises(Exception, match="Custom Normalizer cannot be serialized"):
        theirs.to_str()
