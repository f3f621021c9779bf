"""Saving a trained tokenizer (ranks + pattern + specials) and loading it back."""

from __future__ import annotations

import json

import pytest
import subword
import tiktoken

TEXTS = [
    "hello world, hello there!  \n\n  indented\tand tabbed",
    "인공지능은 데이터로부터 학습한다. 한국어 문장",
    "emoji 🤖🇰🇷 and accents: café naïve — “quotes”",
    "<|x|> special in the middle <|x|>",
    "digits 1234567890 and 'll 've contractions",
]


@pytest.fixture(scope="module")
def trained():
    docs = [t * 20 for t in TEXTS]
    return subword.train_from_iterator(
        docs, 400, special_tokens=["<|x|>"], pattern="cl100k_base", show_progress=False
    )


def test_save_then_load_gives_same_ids(trained, tmp_path):
    manifest = trained.save(tmp_path / "tok")
    loaded = subword.Encoding.load(manifest)
    assert loaded._special_tokens == trained._special_tokens
    assert loaded._core.pattern() == trained._core.pattern()
    for text in TEXTS + ["unseen bytes \x00\x7f ÿ 𝄞"]:
        want = trained.encode(text, allowed_special="all")
        assert loaded.encode(text, allowed_special="all") == want
        assert loaded.decode_bytes(want) == text.encode("utf-8")


def test_saved_ranks_are_tiktoken_format(trained, tmp_path, monkeypatch):
    trained.save(tmp_path / "tok")
    from tiktoken.load import load_tiktoken_bpe

    # tiktoken caches every file it reads by path; keep this temp file out of the shared cache.
    monkeypatch.setenv("TIKTOKEN_CACHE_DIR", "")
    ranks = load_tiktoken_bpe(str(tmp_path / "tok.tiktoken"))
    assert ranks == trained._mergeable_ranks
    manifest = json.loads((tmp_path / "tok.json").read_text())
    tk = tiktoken.Encoding(
        "t",
        pat_str=manifest["pat_str"],
        mergeable_ranks=ranks,
        special_tokens=manifest["special_tokens"],
    )
    for text in TEXTS:
        assert tk.encode(text, allowed_special="all") == trained.encode(text, allowed_special="all")


def test_tampered_ranks_are_refused(trained, tmp_path):
    manifest = trained.save(tmp_path / "tok")
    ranks = tmp_path / "tok.tiktoken"
    lines = ranks.read_bytes().splitlines()
    ranks.write_bytes(b"\n".join(lines[:-1]) + b"\n")
    with pytest.raises(ValueError, match="sha256"):
        subword.Encoding.load(manifest)


def test_missing_and_bad_manifests(tmp_path):
    with pytest.raises(FileNotFoundError):
        subword.Encoding.load(tmp_path / "nope.json")
    bad = tmp_path / "bad.json"
    bad.write_text("{not json")
    with pytest.raises(ValueError, match="manifest"):
        subword.Encoding.load(bad)
    bad.write_text(json.dumps({"format": "something-else"}))
    with pytest.raises(ValueError, match="manifest"):
        subword.Encoding.load(bad)


def test_save_leaves_no_temporary_files(trained, tmp_path):
    trained.save(tmp_path / "tok")
    trained.save(tmp_path / "tok")  # overwrite in place
    assert sorted(p.name for p in tmp_path.iterdir()) == ["tok.json", "tok.tiktoken"]
