"""``subword.tokenizers.Tokenizer`` (the Rust pipeline: normalizer → pre-tokenizer → model, and
the decoder) against HF ``tokenizers.Tokenizer`` built from the same components: ids, tokens,
character offsets and word ids of ``encode`` and ``encode_batch``, and ``decode``, on hypothesis
text with every normalizer, pre-tokenizer and decoder of the stage tests; the WordLevel model's
own API; the errors."""

from __future__ import annotations

import json
import pickle

import pytest
import subword.tokenizers as ours
import test_decoders
import test_normalizers
import test_pre_tokenizers
import tokenizers as hf
from hypothesis import given, settings
from hypothesis import strategies as st
from subword.tokenizers import decoders as D
from subword.tokenizers import models as M
from subword.tokenizers import normalizers as N
from subword.tokenizers import pre_tokenizers as P
from subword.tokenizers import processors as R

NORMALIZERS = test_normalizers.ALL
PRE_TOKENIZERS = test_pre_tokenizers.ALL
DECODERS = test_decoders.ALL

texts = st.one_of(test_normalizers.texts, test_pre_tokenizers.texts)


def _pair(vocab, unk, normalizer, pre_tokenizer, decoder=None, model="WordLevel", **options):
    """Our tokenizer and HF's, from the same vocabulary, model and component picks."""
    mine = ours.Tokenizer(getattr(M, model)(vocab, unk_token=unk, **options))
    theirs = hf.Tokenizer(getattr(hf.models, model)(vocab, unk_token=unk, **options))
    for tok, mods in (
        (mine, (N, P, D)),
        (theirs, (hf.normalizers, hf.pre_tokenizers, hf.decoders)),
    ):
        if normalizer is not None:
            tok.normalizer = NORMALIZERS[normalizer][0](mods[0])
        if pre_tokenizer is not None:
            tok.pre_tokenizer = PRE_TOKENIZERS[pre_tokenizer][0](mods[1])
        if decoder is not None:
            tok.decoder = DECODERS[decoder][0](mods[2])
    return mine, theirs


def _vocab_for(theirs: hf.Tokenizer, text: str, keep_every: int) -> dict[str, int]:
    """Some of the words HF's own components make of `text`, so that both hits and unknown
    words occur; `[UNK]` first."""
    normalized = theirs.normalizer.normalize_str(text) if theirs.normalizer else text
    words = (
        [w for w, _ in theirs.pre_tokenizer.pre_tokenize_str(normalized)]
        if theirs.pre_tokenizer
        else [normalized]
    )
    vocab = {"[UNK]": 0}
    for k, w in enumerate(words):
        if k % keep_every == 0 and w not in vocab:
            vocab[w] = len(vocab)
    return vocab


def _words_of(theirs: hf.Tokenizer, text: str) -> list[str]:
    normalized = theirs.normalizer.normalize_str(text) if theirs.normalizer else text
    if theirs.pre_tokenizer is None:
        return [normalized] if normalized else []
    return [w for w, _ in theirs.pre_tokenizer.pre_tokenize_str(normalized)]


def _wordpiece_vocab(words: list[str], cuts: list[int], prefix: str) -> dict[str, int]:
    """Initial pieces and continuations cut from `words` (so that most words split into
    several pieces and some cannot be matched), ids 0..n."""
    vocab = {"[UNK]": 0}
    for k, w in enumerate(words):
        cut = cuts[k % len(cuts)] if cuts else 1
        chunks = [w[i : i + cut] for i in range(0, len(w), cut)]
        for j, chunk in enumerate(chunks):
            if (k + j) % 5 == 4:
                continue  # a gap: this word becomes [UNK]
            vocab.setdefault(chunk if j == 0 else prefix + chunk, len(vocab))
    return vocab


def _view(e) -> tuple:
    return (
        e.ids,
        e.tokens,
        [tuple(o) for o in e.offsets],
        e.word_ids,
        e.sequence_ids,
        e.type_ids,
        e.attention_mask,
        e.special_tokens_mask,
        e.n_sequences,
    )


@settings(max_examples=300, deadline=None)
@given(
    normalizer=st.none() | st.sampled_from(range(len(NORMALIZERS))),
    pre_tokenizer=st.none() | st.sampled_from(range(len(PRE_TOKENIZERS))),
    keep_every=st.integers(1, 3),
    text=texts,
)
def test_encode_equals_hf(normalizer, pre_tokenizer, keep_every, text):
    _, probe = _pair({"[UNK]": 0}, "[UNK]", normalizer, pre_tokenizer)
    vocab = _vocab_for(probe, text, keep_every)
    mine, theirs = _pair(vocab, "[UNK]", normalizer, pre_tokenizer)
    assert _view(mine.encode(text)) == _view(theirs.encode(text))


@settings(max_examples=50, deadline=None)
@given(
    normalizer=st.none() | st.sampled_from(range(len(NORMALIZERS))),
    pre_tokenizer=st.sampled_from(range(len(PRE_TOKENIZERS))),
    batch=st.lists(texts, max_size=6),
)
def test_encode_batch_equals_hf(normalizer, pre_tokenizer, batch):
    _, probe = _pair({"[UNK]": 0}, "[UNK]", normalizer, pre_tokenizer)
    vocab = _vocab_for(probe, "".join(batch), 2)
    mine, theirs = _pair(vocab, "[UNK]", normalizer, pre_tokenizer)
    assert [_view(e) for e in mine.encode_batch(batch)] == [
        _view(e) for e in theirs.encode_batch(batch)
    ]


@settings(max_examples=200, deadline=None)
@given(
    decoder=st.none() | st.sampled_from(range(len(DECODERS))),
    ids=st.lists(st.integers(0, 12), max_size=12),
)
def test_decode_equals_hf(decoder, ids):
    # Tokens the decoders treat specially: byte-level letters, <0x..> bytes, ## and ▁ marks.
    words = ["[UNK]", "Ġhello", "<0x41>", "<0xE2>", "##ing", "▁the", "a", "</w>", "ĊĠ", "x", "▁"]
    vocab = {w: k for k, w in enumerate(words)}  # ids 11 and 12 are not in it
    mine, theirs = _pair(vocab, "[UNK]", None, None, decoder)
    assert mine.decode(ids) == theirs.decode(ids)
    assert mine.decode_batch([ids, ids[:3]]) == theirs.decode_batch([ids, ids[:3]])


@settings(max_examples=300, deadline=None)
@given(
    normalizer=st.none() | st.sampled_from(range(len(NORMALIZERS))),
    pre_tokenizer=st.none() | st.sampled_from(range(len(PRE_TOKENIZERS))),
    cuts=st.lists(st.integers(1, 4), max_size=4),
    prefix=st.sampled_from(["##", "", "@@"]),
    max_chars=st.sampled_from([100, 3]),
    text=texts,
)
def test_wordpiece_encode_equals_hf(normalizer, pre_tokenizer, cuts, prefix, max_chars, text):
    _, probe = _pair({"[UNK]": 0}, "[UNK]", normalizer, pre_tokenizer)
    vocab = _wordpiece_vocab(_words_of(probe, text), cuts, prefix)
    options = {"continuing_subword_prefix": prefix, "max_input_chars_per_word": max_chars}
    mine, theirs = _pair(vocab, "[UNK]", normalizer, pre_tokenizer, model="WordPiece", **options)
    assert _view(mine.encode(text)) == _view(theirs.encode(text))


def test_wordpiece_model_api_equals_hf(tmp_path):
    vocab = {"[UNK]": 0, "un": 1, "##aff": 2, "##able": 3, "a": 4, "##b": 5, "wö": 6, "##rld": 7}
    mine, theirs = M.WordPiece(vocab), hf.models.WordPiece(vocab)
    for word in ["unaffable", "ab", "wörld", "xyz", "una", ""]:
        assert [t.as_tuple() for t in mine.tokenize(word)] == [
            (t.id, t.value, t.offsets) for t in theirs.tokenize(word)
        ]
    for token in ["##aff", "aff", "[UNK]", "nope"]:
        assert mine.token_to_id(token) == theirs.token_to_id(token)
    for id in [0, 3, 7, 8]:
        assert mine.id_to_token(id) == theirs.id_to_token(id)
    assert json.loads(mine.__getstate__()) == json.loads(theirs.__getstate__())
    (path,) = mine.save(str(tmp_path))
    assert hf.models.WordPiece.read_file(path) == vocab
    assert M.WordPiece.from_file(path) == mine
    with pytest.raises(ValueError, match=r"ids must be 0\.\.2"):
        M.WordPiece({"a": 0, "[UNK]": 5}).tokenize("a")
    with pytest.raises(ValueError, match="unknown token"):
        M.WordPiece({"a": 0}).tokenize("a")


# Post-processors over a vocabulary whose specials are ids 1-3: (ours or HF's module) -> one.
PROCESSORS = [
    (lambda m: m.BertProcessing(("[SEP]", 2), ("[CLS]", 1)), "Bert"),
    (
        lambda m: m.TemplateProcessing(
            single="[CLS] $A [SEP]",
            pair="[CLS] $A [SEP] $B:1 [SEP]:1",
            special_tokens=[("[CLS]", 1), ("[SEP]", 2)],
        ),
        "Template BERT",
    ),
    (
        lambda m: m.TemplateProcessing(
            single=["<s>:3", "$0", "[SEP]:2"],
            pair="$B:1 <s> $A:2",
            special_tokens=[(3, "<s>"), {"id": "[SEP]", "ids": [2, 1], "tokens": ["a", "b"]}],
        ),
        "Template ids and lists",
    ),
    (lambda m: m.TemplateProcessing(), "Template defaults"),
    (lambda m: m.RobertaProcessing(("[SEP]", 2), ("<s>", 3)), "Roberta"),
    (
        lambda m: m.RobertaProcessing(("[SEP]", 2), ("<s>", 3), add_prefix_space=False),
        "Roberta no prefix space",
    ),
    (
        lambda m: m.RobertaProcessing(("[SEP]", 2), ("<s>", 3), trim_offsets=False),
        "Roberta untrimmed",
    ),
    # One string for both, two ids: each keeps its own id.
    (lambda m: m.BertProcessing(("<s>", 2), ("<s>", 3)), "Bert one string"),
    (lambda m: m.RobertaProcessing(("<s>", 2), ("<s>", 3)), "Roberta one string"),
    (lambda m: m.ByteLevel(), "ByteLevel"),
    (lambda m: m.ByteLevel(trim_offsets=False), "ByteLevel untrimmed"),
    (lambda m: m.ByteLevel(add_prefix_space=False), "ByteLevel no prefix space"),
    (
        lambda m: m.Sequence([m.ByteLevel(), m.BertProcessing(("[SEP]", 2), ("[CLS]", 1))]),
        "Sequence trim then template",
    ),
    # Not a template then ByteLevel: HF then reads sequence ids out of a hash map of ranges
    # that overlap, in the map's order.
]
SPECIALS = {"[UNK]": 0, "[CLS]": 1, "[SEP]": 2, "<s>": 3}


@settings(max_examples=300, deadline=None)
@given(
    processor=st.sampled_from(range(len(PROCESSORS))),
    pre_tokenizer=st.none() | st.sampled_from(range(len(PRE_TOKENIZERS))),
    model=st.sampled_from(["WordLevel", "WordPiece"]),
    add_special_tokens=st.booleans(),
    text=texts,
    pair=st.none() | texts,
)
def test_post_processors_equal_hf(processor, pre_tokenizer, model, add_special_tokens, text, pair):
    _, probe = _pair({"[UNK]": 0}, "[UNK]", None, pre_tokenizer)
    words = _words_of(probe, text + " " + (pair or ""))
    vocab = dict(SPECIALS)
    if model == "WordLevel":
        for w in words[::2]:
            vocab.setdefault(w, len(vocab))
    else:
        for w in _wordpiece_vocab(words, [2], "##"):
            vocab.setdefault(w, len(vocab))
    mine, theirs = _pair(vocab, "[UNK]", None, pre_tokenizer, model=model)
    mine.post_processor = PROCESSORS[processor][0](R)
    theirs.post_processor = PROCESSORS[processor][0](hf.processors)
    got = mine.encode(text, pair, add_special_tokens=add_special_tokens)
    want = theirs.encode(text, pair, add_special_tokens=add_special_tokens)
    assert _view(got) == _view(want)
    # Written and read back, it is HF's post-processor still.
    assert (
        json.loads(mine.to_str())["post_processor"] == json.loads(theirs.to_str())["post_processor"]
    )
    again = ours.Tokenizer.from_str(theirs.to_str())
    assert _view(again.encode(text, pair, add_special_tokens=add_special_tokens)) == _view(want)
    for is_pair in (False, True):
        assert mine.num_special_tokens_to_add(is_pair) == theirs.num_special_tokens_to_add(is_pair)
    batch = [text, (text, pair or "")]
    assert [_view(e) for e in mine.encode_batch(batch)] == [
        _view(e) for e in theirs.encode_batch(batch)
    ]


def _window_view(w) -> tuple:
    # A window's sequence ids and n_sequences are left out: HF reads them from the sequence
    # ranges each window happens to carry, which depend on how it was cut and merged (the
    # main result's are compared).
    v = _view(w)
    return (v[:4] + v[5:-1], [_window_view(o) for o in w.overflowing])


def _deep_view(e) -> tuple:
    return (_view(e), [_window_view(o) for o in e.overflowing])


@settings(max_examples=300, deadline=None)
@given(
    processor=st.none() | st.sampled_from(range(len(PROCESSORS))),
    pre_tokenizer=st.sampled_from(range(len(PRE_TOKENIZERS))),
    add_special_tokens=st.booleans(),
    truncation=st.none()
    | st.tuples(
        st.integers(0, 12),
        st.integers(0, 3),
        st.sampled_from(["longest_first", "only_first", "only_second"]),
        st.sampled_from(["left", "right"]),
    ),
    padding=st.none()
    | st.tuples(
        st.none() | st.integers(0, 16),
        st.none() | st.integers(1, 8),
        st.sampled_from(["left", "right"]),
    ),
    batch=st.lists(st.tuples(texts, st.none() | texts), min_size=1, max_size=4),
)
def test_truncation_and_padding_equal_hf(
    processor, pre_tokenizer, add_special_tokens, truncation, padding, batch
):
    _, probe = _pair({"[UNK]": 0}, "[UNK]", None, pre_tokenizer)
    vocab = dict(SPECIALS)
    for text, pair in batch:
        for w in _words_of(probe, text + " " + (pair or ""))[::2]:
            vocab.setdefault(w, len(vocab))
    mine, theirs = _pair(vocab, "[UNK]", None, pre_tokenizer)
    for tok, mod in ((mine, R), (theirs, hf.processors)):
        if processor is not None:
            tok.post_processor = PROCESSORS[processor][0](mod)
    if truncation is not None:
        max_length, stride, strategy, direction = truncation
        try:
            theirs.enable_truncation(max_length, stride=stride)
        except BaseException:  # noqa: BLE001 (HF refuses a stride over what is left, or panics)
            with pytest.raises(ValueError):
                mine.enable_truncation(max_length, stride=stride)
            return
    for tok in (mine, theirs):
        if truncation is not None:
            max_length, stride, strategy, direction = truncation
            tok.enable_truncation(max_length, stride=stride, strategy=strategy, direction=direction)
        if padding is not None:
            length, multiple, direction = padding
            tok.enable_padding(
                direction=direction,
                pad_id=3,
                pad_type_id=1,
                pad_token="<s>",
                length=length,
                pad_to_multiple_of=multiple,
            )
    assert mine.truncation == theirs.truncation and mine.padding == theirs.padding
    batch = [text if pair is None else (text, pair) for text, pair in batch]
    first = batch[0] if isinstance(batch[0], tuple) else (batch[0],)
    try:
        want = [
            _deep_view(e) for e in theirs.encode_batch(batch, add_special_tokens=add_special_tokens)
        ]
        want_one = _deep_view(theirs.encode(*first, add_special_tokens=add_special_tokens))
    except BaseException as e:  # noqa: BLE001
        # HF refuses (or panics on) a stride at least what a sequence may keep and a
        # strategy that cannot fit: so do we, with a ValueError that says why.
        assert type(e).__name__ in ("Exception", "PanicException"), e
        with pytest.raises(ValueError):
            mine.encode_batch(batch, add_special_tokens=add_special_tokens)
        return
    got = [_deep_view(e) for e in mine.encode_batch(batch, add_special_tokens=add_special_tokens)]
    assert got == want
    assert _deep_view(mine.encode(*first, add_special_tokens=add_special_tokens)) == want_one


def test_truncation_and_padding_in_files_and_bad_settings():
    mine, theirs = _pair({"[UNK]": 0, "a": 1}, "[UNK]", None, 9)  # Whitespace
    for tok in (mine, theirs):
        tok.enable_truncation(3, stride=1, strategy="only_first", direction="left")
        tok.enable_padding(direction="left", pad_id=0, pad_token="[UNK]", length=6)
    assert json.loads(mine.to_str()) == json.loads(theirs.to_str())
    loaded = ours.Tokenizer.from_str(theirs.to_str())
    assert loaded.truncation == theirs.truncation and loaded.padding == theirs.padding
    assert _deep_view(loaded.encode("a a b a", "a")) == _deep_view(theirs.encode("a a b a", "a"))
    mine.no_truncation()
    mine.no_padding()
    assert mine.truncation is None and mine.padding is None
    with pytest.raises(ValueError, match="strategy"):
        mine.enable_truncation(3, strategy="middle")
    with pytest.raises(ValueError, match="direction"):
        mine.enable_padding(direction="up")
    with pytest.raises(ValueError, match="max_length"):
        mine.enable_truncation(-1)
    doc = json.loads(theirs.to_str())
    doc["padding"]["direction"] = "Up"
    with pytest.raises(ValueError, match="padding direction"):
        ours.Tokenizer.from_str(json.dumps(doc))


@pytest.mark.parametrize("make", [m for m, _ in PROCESSORS], ids=[n for _, n in PROCESSORS])
def test_processor_json_is_hfs(make):
    mine, theirs = make(R), make(hf.processors)
    assert json.loads(mine.__getstate__()) == json.loads(theirs.__getstate__())


def test_processor_errors_are_clear():
    with pytest.raises(ValueError, match="does not list its ids"):
        R.TemplateProcessing(single="[CLS] $A", special_tokens=[]).num_special_tokens_to_add(False)
    with pytest.raises(ValueError, match=r"must use \$B"):
        R.TemplateProcessing(pair="$A $A").num_special_tokens_to_add(True)
    with pytest.raises(ValueError, match="type id"):
        R.TemplateProcessing(single="$A:x").num_special_tokens_to_add(False)
    with pytest.raises(TypeError, match=r"\(token, id\) pair"):
        R.BertProcessing("[SEP]", ("[CLS]", 1))
    with pytest.raises(ValueError, match="one token per id"):
        R.TemplateProcessing(
            single="[X] $A", special_tokens=[{"id": "[X]", "ids": [1, 2], "tokens": ["x"]}]
        ).num_special_tokens_to_add(False)
    with pytest.raises(TypeError, match="post_processor must be"):
        ours.Tokenizer(M.WordLevel({"[UNK]": 0})).post_processor = N.NFC()


TEMPLATE_ITEMS = ["$$", "$A:", "$C", "$1x", "$A:x", "$:1", "$0", "$1", "$", "$a"]
TEMPLATE_ITEMS += ["$01", "$a:3", "$ab", "$:x", "x:", "$A:-1", "$A:99999999999", "[X]:1", "[Y]"]


@pytest.mark.parametrize("item", TEMPLATE_ITEMS)
def test_template_items_are_read_or_refused_as_hf_does(item):
    """Refused when made, as HF refuses them (a malformed item, a special token not given)."""
    specials = [("[X]", 5)]

    def made(lib):
        try:
            return str(lib.processors.TemplateProcessing(single=item, special_tokens=specials))
        except ValueError:
            return "refused"

    assert made(ours) == made(hf), item


def test_template_list_items_are_one_piece_each():
    """HF's list form: each item is a piece, so a special token's name may hold spaces."""
    args = dict(
        single=["[ C L S ]", "$A", "Token with space:1"],
        special_tokens=[("[ C L S ]", 0), ("Token with space", 1)],
    )
    made = [lib.processors.TemplateProcessing(**args) for lib in (ours, hf)]
    assert str(made[0]) == str(made[1])
    assert made[0].num_special_tokens_to_add(False) == made[1].num_special_tokens_to_add(False)


@settings(max_examples=150, deadline=None)
@given(
    pre_tokenizer=st.none() | st.sampled_from(range(len(PRE_TOKENIZERS))),
    processor=st.none() | st.sampled_from(range(len(PROCESSORS))),
    text=texts,
    pair=st.none() | texts,
)
def test_result_alignment_helpers_equal_hf(pre_tokenizer, processor, text, pair):
    """The result's helpers (the core's result class) answer as HF's for every token, char and
    word index, either sequence, and indexes past either end."""
    _, probe = _pair({"[UNK]": 0}, "[UNK]", None, pre_tokenizer)
    vocab = dict(SPECIALS)
    for w in _words_of(probe, text + " " + (pair or ""))[::2]:
        vocab.setdefault(w, len(vocab))
    mine, theirs = _pair(vocab, "[UNK]", None, pre_tokenizer)
    if processor is not None:
        mine.post_processor = PROCESSORS[processor][0](R)
        theirs.post_processor = PROCESSORS[processor][0](hf.processors)
    got, want = mine.encode(text, pair), theirs.encode(text, pair)
    assert isinstance(got, ours.Encoding) and len(got) == len(want)
    n, chars = len(want), max(len(text), len(pair or "")) + 2
    for k in range(n + 2):
        for f in ("token_to_word", "token_to_sequence", "token_to_chars"):
            if f == "token_to_sequence" and k == n and processor is None and pair is None:
                # HF's check is `token > len`: one token past the end of a result without
                # sequence ranges (one text, no post-processor) reads as sequence 0.
                assert want.token_to_sequence(k) == 0 and got.token_to_sequence(k) is None
                continue
            assert getattr(got, f)(k) == getattr(want, f)(k), (f, k)
    for seq in (0, 1):
        for c in range(chars):
            assert got.char_to_token(c, seq) == want.char_to_token(c, seq), (c, seq)
            assert got.char_to_word(c, seq) == want.char_to_word(c, seq), (c, seq)
        for w in range(n + 2):
            assert got.word_to_tokens(w, seq) == want.word_to_tokens(w, seq), (w, seq)
    # Equality reads the columns: equal to HF's result with the same ones (no windows here),
    # unequal to the same result with one id changed.
    assert got == want and got == mine.encode(text, pair)
    if n:
        names = ["ids", "tokens", "type_ids", "offsets", "word_ids", "sequence_ids"]
        columns = [list(getattr(got, c)) for c in names + ["special_tokens_mask", "attention_mask"]]
        columns[0][0] += 1
        assert got != ours.Encoding(*columns, pair is not None)


@pytest.mark.parametrize("item", ["$B", "$b", "$B:1"])
def test_single_template_with_b_is_refused_where_hf_panics_later(item):
    """HF makes it, then panics on the first encode (index out of bounds); subword refuses it
    when made."""
    with pytest.raises(ValueError, match=r"single template cannot use \$B"):
        ours.processors.TemplateProcessing(single=item)


def _post_process_pair(lib, settings):
    tok = lib.Tokenizer(lib.models.BPE())
    tok.add_tokens(["my", "name", "is", "john", "pair", "[CLS]", "[SEP]"])
    tok.pre_tokenizer = lib.pre_tokenizers.Whitespace()
    if "template" in settings:
        tok.post_processor = lib.processors.TemplateProcessing(
            single="[CLS] $A [SEP]",
            pair="[CLS] $A [SEP] $B:1 [SEP]:1",
            special_tokens=[("[CLS]", 5), ("[SEP]", 6)],
        )
    if "truncate" in settings:
        tok.enable_truncation(3)
    if "pad" in settings:
        tok.enable_padding(length=9)
    return tok


@pytest.mark.parametrize(
    "settings", ["", "truncate", "pad", "truncate pad", "template", "template truncate pad"]
)
@pytest.mark.parametrize("add_special_tokens", [True, False])
def test_post_process_equals_hf(settings, add_special_tokens):
    """HF's post_process on results made without specials, and on results already
    post-processed (HF then adds its template again), alone and as pairs."""
    mine, theirs = _post_process_pair(ours, settings), _post_process_pair(hf, settings)
    for first, second in [("my name is john", "pair"), ("john", "my name")]:
        for made_with in (False, True):
            args = [
                (t.encode(first, add_special_tokens=made_with), t.encode(second))
                for t in (mine, theirs)
            ]
            for pair in (False, True):
                got, want = (
                    t.post_process(a, b if pair else None, add_special_tokens)
                    for t, (a, b) in zip((mine, theirs), args)
                )
                case = (settings, first, made_with, pair)
                assert got.ids == want.ids, case
                assert got.tokens == want.tokens, case
                assert got.type_ids == want.type_ids, case
                assert got.offsets == want.offsets, case
                assert got.attention_mask == want.attention_mask, case
                assert got.special_tokens_mask == want.special_tokens_mask, case
                # Windows of an earlier truncation stay unless this one cuts again. (Not their
                # sequence ids: HF keeps such a window without sequence ranges, so joined to a
                # pair's window all its tokens read as sequence 0; subword labels each part.)
                windows = [
                    [(o.ids, o.tokens, o.type_ids, o.offsets) for o in e.overflowing]
                    for e in (got, want)
                ]
                assert windows[0] == windows[1], case
    with pytest.raises(TypeError, match="must be an Encoding"):
        mine.post_process("my name")


def test_word_level_model_api_equals_hf(tmp_path):
    vocab = {"[UNK]": 0, "hello": 1, "wörld": 2, "!": 3}
    mine, theirs = M.WordLevel(vocab, "[UNK]"), hf.models.WordLevel(vocab, "[UNK]")
    for word in ["hello", "wörld", "nope", ""]:
        assert [t.as_tuple() for t in mine.tokenize(word)] == [
            (t.id, t.value, t.offsets) for t in theirs.tokenize(word)
        ]
    for token in ["hello", "nope", "[UNK]"]:
        assert mine.token_to_id(token) == theirs.token_to_id(token)
    for id in [0, 2, 3, 4, 99]:
        assert mine.id_to_token(id) == theirs.id_to_token(id)
    assert json.loads(mine.__getstate__()) == json.loads(theirs.__getstate__())
    assert mine.get_vocab() == vocab
    (path,) = mine.save(str(tmp_path), "w")
    assert hf.models.WordLevel.read_file(path) == vocab
    assert M.WordLevel.from_file(path, unk_token="[UNK]") == mine


def test_tokenizer_json_matches_hf():
    vocab = {"[UNK]": 0, "hello": 1}
    mine, theirs = _pair(vocab, "[UNK]", 4, 9, 3)  # Lowercase, Whitespace, WordPiece decoder
    want = json.loads(theirs.to_str())
    got = json.loads(mine.to_str())
    for key in [
        "normalizer",
        "pre_tokenizer",
        "post_processor",
        "decoder",
        "model",
        "added_tokens",
    ]:
        assert got[key] == want[key], key
    # HF reads what we write, and encodes alike.
    again = hf.Tokenizer.from_str(mine.to_str())
    assert again.encode("Hello there").ids == theirs.encode("Hello there").ids


@settings(max_examples=200, deadline=None)
@given(
    normalizer=st.none() | st.sampled_from(range(len(NORMALIZERS))),
    pre_tokenizer=st.none() | st.sampled_from(range(len(PRE_TOKENIZERS))),
    decoder=st.none() | st.sampled_from(range(len(DECODERS))),
    processor=st.none() | st.sampled_from(range(len(PROCESSORS))),
    text=texts,
)
def test_hfs_tokenizer_json_loads_into_equal_components(
    normalizer, pre_tokenizer, decoder, processor, text
):
    # HF writes a file with any stages; from_str (read in Rust) gives the components we
    # would have built by hand, which encode and decode as HF's do, and write the same file.
    vocab = {"[UNK]": 0, "[CLS]": 1, "[SEP]": 2, "<s>": 3, "hello": 4, "Ġhello": 5, "▁the": 6}
    mine, theirs = _pair(vocab, "[UNK]", normalizer, pre_tokenizer, decoder)
    if processor is not None:
        mine.post_processor = PROCESSORS[processor][0](R)
        theirs.post_processor = PROCESSORS[processor][0](hf.processors)
    loaded = ours.Tokenizer.from_str(theirs.to_str())
    for stage in ["normalizer", "pre_tokenizer", "decoder", "model"]:
        assert getattr(loaded, stage) == getattr(mine, stage), stage
    # A template reads back in HF's canonical form ("[CLS]:0 $A:0"), so compare what it does.
    if processor is not None:
        state = lambda t: json.loads(t.post_processor.__getstate__())  # noqa: E731
        assert type(loaded.post_processor) is type(mine.post_processor)
        assert state(loaded) == state(mine)
    assert _view(loaded.encode(text, "hello")) == _view(theirs.encode(text, "hello"))
    assert loaded.decode([4, 5, 6, 1]) == theirs.decode([4, 5, 6, 1])
    assert json.loads(loaded.to_str()) == json.loads(theirs.to_str())
    again = pickle.loads(pickle.dumps(loaded))
    assert _view(again.encode(text)) == _view(loaded.encode(text))


def test_tokenizer_files_save_and_load(tmp_path):
    mine, theirs = _pair({"[UNK]": 0, "hello": 1}, "[UNK]", 4, 9, 3)
    path = tmp_path / "tokenizer.json"
    mine.save(str(path))
    assert json.loads(path.read_text()) == json.loads(theirs.to_str())
    for loaded in (
        ours.Tokenizer.from_file(str(path)),
        ours.Tokenizer.from_buffer(path.read_bytes()),
    ):
        assert loaded.encode("Hello there").ids == theirs.encode("Hello there").ids


def test_tokenizer_json_errors_name_the_part():
    base = json.loads(_pair({"[UNK]": 0}, "[UNK]", None, None)[1].to_str())
    cases = [
        ({"model": {"type": "Unigram", "vocab": []}}, "Unigram"),
        ({"normalizer": {"type": "Nope"}}, "normalizer"),
        ({"pre_tokenizer": {"type": "Split"}}, "pre_tokenizer"),
        ({"padding": {"strategy": "Longest"}}, "padding strategy"),
        ({"truncation": {"max_length": 3, "direction": "Up"}}, "truncation direction"),
        ({"added_tokens": [{"id": 0, "content": ""}]}, "empty content"),
        ({"model": {"type": "BPE", "vocab": {"a": 0}, "merges": [["a", "b"]]}}, "merge 0"),
    ]
    for change, where in cases:
        with pytest.raises(ValueError, match=where):
            ours.Tokenizer.from_str(json.dumps({**base, **change}))
    with pytest.raises(ValueError, match="tokenizer.json"):
        ours.Tokenizer.from_str("{not json")
    with pytest.raises(ValueError, match="UTF-8"):
        ours.Tokenizer.from_buffer(b"\xff")
    with pytest.raises(FileNotFoundError):
        ours.Tokenizer.from_file("/nonexistent/tokenizer.json")


def test_missing_unknown_token_is_a_clear_error():
    mine = ours.Tokenizer(M.WordLevel({"hello": 0}, unk_token="[UNK]"))
    mine.pre_tokenizer = P.Whitespace()
    assert mine.encode("hello").ids == [0]
    with pytest.raises(ValueError, match=r"not in the vocabulary.*\[UNK\]"):
        mine.encode("hello there")


def test_bad_arguments_are_clear_errors():
    with pytest.raises(TypeError, match="models model"):
        ours.Tokenizer("WordLevel")
    tok = ours.Tokenizer(M.WordLevel({"[UNK]": 0}, unk_token="[UNK]"))
    with pytest.raises(TypeError, match="normalizer must be"):
        tok.normalizer = P.Whitespace()
    with pytest.raises(TypeError, match="pre_tokenizer must be"):
        tok.pre_tokenizer = N.NFC()
    with pytest.raises(TypeError, match="pair must be a str"):
        tok.encode("a", 3)
    with pytest.raises(TypeError, match="is_pretokenized=True a sequence is a list of str"):
        tok.encode("a", is_pretokenized=True)
    with pytest.raises(TypeError, match=r"\(sequence, pair\) pair"):
        tok.encode_batch([("a", "b", "c")])
    with pytest.raises(ValueError, match="ids must be distinct"):
        ours.Tokenizer(M.WordLevel({"a": 0, "b": 0})).encode("a")
    with pytest.raises(TypeError, match="str: int"):
        M.WordLevel({"a": "0"}).tokenize("a")
    with pytest.raises(TypeError, match="from_file"):
        M.WordLevel("vocab.json")


def test_lone_surrogate_is_a_value_error_naming_the_fix():
    """A str UTF-8 cannot hold is refused with a ValueError (HF: an opaque TypeError) that says
    how to clean the text, in encode, pairs, pre-tokenized words and batches."""
    from subword.tokenizers import Tokenizer, models

    tok = Tokenizer(models.WordLevel({"a": 0, "[UNK]": 1}, unk_token="[UNK]"))
    for call in (
        lambda: tok.encode("a\ud800"),
        lambda: tok.encode("a", "\udfff"),
        lambda: tok.encode(["a", "\ud800"], is_pretokenized=True),
        lambda: tok.encode_batch(["a", "b\ud800"]),
    ):
        with pytest.raises(ValueError, match="lone surrogate.*replace"):
            call()
    assert tok.encode("a").ids == [0]


def test_a_change_after_encoding_is_seen_as_in_hf():
    """The core pipeline is reused between calls; every kind of change made after an encode
    (a component's field, a stage replaced, added tokens, truncation, padding) must be seen by
    the next one, as in HF, whose components are shared objects too."""
    vocab = {"[UNK]": 0, "hello": 1, "world": 2, "HELLO": 3, "[CLS]": 4, "[SEP]": 5, "!": 6}
    tokenizers = []
    for lib in (ours, hf):
        tok = lib.Tokenizer(lib.models.WordLevel(vocab, unk_token="[UNK]"))
        tok.normalizer = lib.normalizers.Lowercase()
        tok.pre_tokenizer = lib.pre_tokenizers.Whitespace()
        tokenizers.append(tok)
    steps = [
        lambda lib, t: None,
        lambda lib, t: setattr(t, "normalizer", None),
        lambda lib, t: setattr(t, "pre_tokenizer", lib.pre_tokenizers.WhitespaceSplit()),
        lambda lib, t: t.add_tokens(["world!"]),
        lambda lib, t: setattr(
            t,
            "post_processor",
            lib.processors.TemplateProcessing(
                single="[CLS] $A [SEP]", special_tokens=[("[CLS]", 4), ("[SEP]", 5)]
            ),
        ),
        lambda lib, t: t.enable_truncation(3),
        lambda lib, t: t.enable_padding(length=6, pad_id=0, pad_token="[UNK]"),
        lambda lib, t: t.no_truncation(),
        lambda lib, t: setattr(t.model, "unk_token", "!"),
        # Inside a sequence: a member's field, and a member replaced.
        lambda lib, t: setattr(
            t,
            "pre_tokenizer",
            lib.pre_tokenizers.Sequence(
                [lib.pre_tokenizers.WhitespaceSplit(), lib.pre_tokenizers.Digits(False)]
            ),
        ),
        lambda lib, t: setattr(t.pre_tokenizer[1], "individual_digits", True),
        lambda lib, t: t.pre_tokenizer.__setitem__(0, lib.pre_tokenizers.Whitespace()),
    ]
    for step in steps:
        for lib, tok in zip((ours, hf), tokenizers):
            step(lib, tok)
        mine, theirs = (t.encode("HELLO world! hello foo 123") for t in tokenizers)
        assert _view(mine) == _view(theirs)


@pytest.mark.parametrize("collector_on", [True, False])
def test_a_batch_leaves_the_collector_as_it_was_and_its_results_whole(collector_on):
    # encode_batch keeps Python's collector off while it makes its results; it must come back
    # on (or stay off) after a batch, after a failed one, and the results must be HF's.
    import gc

    mine, theirs = _pair({"[UNK]": 0, "a": 1, "b": 2}, "[UNK]", None, 0)
    texts = ["a b", "b a c", "", "a"] * 50
    was = gc.isenabled()
    try:
        gc.enable() if collector_on else gc.disable()
        got = mine.encode_batch(texts)
        assert gc.isenabled() is collector_on
        with pytest.raises(ValueError, match="surrogate"):
            mine.encode_batch(["a", "\ud800"])
        assert gc.isenabled() is collector_on
    finally:
        gc.enable() if was else gc.disable()
    want = theirs.encode_batch(texts)
    assert [_view(e) for e in got] == [_view(e) for e in want]
    assert all(e.overflowing == [] for e in got)
    assert pickle.loads(pickle.dumps(got[1])) == got[1]


def test_id_columns_hold_every_u32_as_hf():
    # Ids are read from kept Python ints below 2**20 and made on the spot above: a vocabulary
    # id and a padding id far past any kept one, and ids met for the first time.
    vocab = {"[UNK]": 0, "a": 1, "far": 3_000_000, "near": (1 << 20) - 1}
    mine, theirs = _pair(vocab, "[UNK]", None, None)
    for tok, mod in ((mine, P), (theirs, hf.pre_tokenizers)):
        tok.pre_tokenizer = mod.WhitespaceSplit()
        tok.enable_padding(length=8, pad_id=4_000_000_000, pad_token="[UNK]")
    for text in ["a far near x", "far far", ""]:
        assert _view(mine.encode(text)) == _view(theirs.encode(text)), text
    assert [e.ids for e in mine.encode_batch(["near a", "far"])] == [
        e.ids for e in theirs.encode_batch(["near a", "far"])
    ]
