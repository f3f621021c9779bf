"""HF tokenizers' tokenizer.json: subword's export loads in HF with the same ids, and byte-level BPE
files made by HF load into subword with the same ids."""

from __future__ import annotations

import json

import gpt2files
import pytest
import refdata
import subword
import textgen
import tokenizers
from hypothesis import given, settings
from tokenizers import decoders, models, pre_tokenizers

TEXTS = [
    "Hello world! It's 2024: tokens, tokens   everywhere.\n\n  indented\tline\r\nend",
    "인공지능은 데이터로부터 학습한다. Machine learning!",
    "emoji 🤖🇰🇷👩‍👩‍👧 accents café naïve, CJK 中文字符, Cyrillic Привет мир",
    "digits 1234567890 12 345 and 'll 'VE 's contractions; ſ long s",
    "<|endoftext|> between <|endoftext|>text<|endoftext|>",
    "   leading and trailing spaces   ",
    "\u00a0nbsp\u3000ideographic\u200bzero width\u2028line sep\u0085next line",
]

CORPUS = "\n\n".join(t * 30 for t in TEXTS)


def _corpus_lines(limit=1500):
    for path in refdata.corpora_files():
        lines = path.read_text(encoding="utf-8").split("\n")
        yield path.name, lines[:limit]


@pytest.fixture(scope="module", params=["gpt2", "cl100k_base", "o200k_base", None])
def trained(request):
    docs = CORPUS.split("\n\n") + [
        text[:200_000] for _, lines in _corpus_lines(3000) for text in ["\n".join(lines)]
    ]
    enc = subword.train_from_iterator(
        docs,
        1200,
        special_tokens=["<|endoftext|>"],
        pattern=request.param,
        show_progress=False,
    )
    return enc, tokenizers.Tokenizer.from_str(enc.to_hf_json())


def test_export_loads_in_hf_with_same_ids(trained):
    enc, hf = trained
    for text in TEXTS:
        assert hf.encode(text).ids == enc.encode(text, allowed_special="all"), text


@settings(max_examples=refdata.hypothesis_examples(local=150, ci=1500))
@given(text=textgen.texts)
def test_export_matches_hf_on_generated_text(trained, text):
    enc, hf = trained
    assert hf.encode(text).ids == enc.encode(text, allowed_special="all")


def test_export_matches_hf_on_corpora(trained):
    enc, hf = trained
    for name, lines in _corpus_lines():
        got = [e.ids for e in hf.encode_batch(lines)]
        want = enc.encode_ordinary_batch(lines)
        bad = [(i, line) for i, (g, w, line) in enumerate(zip(got, want, lines)) if g != w]
        assert not bad, f"{name}: {len(bad)} lines differ, first {bad[0]!r}"


def test_export_round_trips_through_subword(trained, tmp_path):
    enc, _ = trained
    path = tmp_path / "tokenizer.json"
    enc.save_hf(path)
    back = subword.Encoding.from_hf_file(path)
    for text in TEXTS:
        assert back.encode(text, allowed_special="all") == enc.encode(text, allowed_special="all")
    assert back._special_tokens == enc._special_tokens


@pytest.fixture(scope="module")
def hf_gpt2(r50k_ranks):
    """GPT-2 as HF `tokenizers` builds it from encoder.json / vocab.bpe contents."""
    b2u = gpt2files.bytes_to_unicode()

    def uni(b: bytes) -> str:
        return "".join(b2u[x] for x in b)

    vocab = {uni(tok): rank for tok, rank in r50k_ranks.items()}
    vocab["<|endoftext|>"] = 50256
    merges = [(uni(a), uni(b)) for a, b in gpt2files.merges_of(r50k_ranks)]
    tok = tokenizers.Tokenizer(models.BPE(vocab=vocab, merges=merges))
    tok.pre_tokenizer = pre_tokenizers.ByteLevel(add_prefix_space=False)
    tok.decoder = decoders.ByteLevel()
    tok.add_special_tokens(["<|endoftext|>"])
    return tok


def test_hf_gpt2_loads_with_same_ids(hf_gpt2, r50k_pair):
    _, tk = r50k_pair
    enc = subword.Encoding.from_hf_json(hf_gpt2.to_str())
    assert enc.n_vocab == 50257
    for text in TEXTS:
        want = tk.encode(text, allowed_special="all")
        assert hf_gpt2.encode(text).ids == want  # the oracle agrees with itself
        assert enc.encode(text, allowed_special="all") == want
    for name, lines in _corpus_lines(800):
        assert enc.encode_ordinary_batch(lines) == [tk.encode_ordinary(line) for line in lines], (
            name
        )


def _minimal(**overrides) -> str:
    doc = {
        "version": "1.0",
        "added_tokens": [],
        "normalizer": None,
        "pre_tokenizer": {"type": "ByteLevel", "add_prefix_space": False, "use_regex": True},
        "post_processor": None,
        "decoder": {"type": "ByteLevel"},
        "model": {
            "type": "BPE",
            "vocab": {"a": 0, "b": 1, "ab": 2},
            "merges": [["a", "b"]],
        },
    }
    for key, value in overrides.items():
        if key.startswith("model_"):
            doc["model"][key[len("model_") :]] = value
        else:
            doc[key] = value
    return json.dumps(doc)


def test_minimal_file_loads():
    enc = subword.Encoding.from_hf_json(_minimal())
    assert enc.encode("abab") == [2, 2]


@pytest.mark.parametrize(
    "overrides, named",
    [
        ({"normalizer": {"type": "NFKC"}}, "NFKC"),
        (
            {
                "normalizer": {
                    "type": "Sequence",
                    "normalizers": [{"type": "NFC"}, {"type": "Lowercase"}],
                }
            },
            "Lowercase",
        ),
        ({"pre_tokenizer": {"type": "Whitespace"}}, "Whitespace"),
        ({"model_type": "WordPiece"}, "WordPiece"),
        ({"post_processor": {"type": "TemplateProcessing"}}, "TemplateProcessing"),
        ({"decoder": {"type": "WordPiece"}}, "WordPiece"),
        (
            {"pre_tokenizer": {"type": "ByteLevel", "add_prefix_space": True}},
            "add_prefix_space",
        ),
        ({"model_dropout": 0.1}, "dropout"),
        ({"model_merges": [["a", "x"]]}, "not in the vocab"),
        (
            {
                "model_vocab": {"a": 0, "b": 2, "ab": 1, "ba": 3},
                "model_merges": [["b", "a"], ["a", "b"]],
            },
            "disagree",
        ),
    ],
)
def test_unsupported_parts_are_named(overrides, named):
    with pytest.raises(ValueError, match=named):
        subword.Encoding.from_hf_json(_minimal(**overrides))


def test_not_json_is_a_value_error(tmp_path):
    with pytest.raises(ValueError):
        subword.Encoding.from_hf_json("{nope")
    with pytest.raises(FileNotFoundError):
        subword.Encoding.from_hf_file(tmp_path / "missing.json")
