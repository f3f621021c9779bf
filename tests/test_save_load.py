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


# ----- a save interrupted between its two renames -----

_CRASH_SAVE = """
import os, sys
import subword

ranks, base, crash_on = sys.argv[1:]
enc = subword.Encoding.from_tiktoken_file(ranks, "cl100k_base", {"<|x|>": 10_000}, name="new")
real_replace = os.replace

def replace(src, dst):
    if dst.endswith(crash_on):
        os._exit(9)  # killed here: no cleanup, no flush
    real_replace(src, dst)

os.replace = replace
print(os.getpid(), flush=True)
enc.save(base)
"""


def _crash_save(new, tmp_path, crash_on: str) -> int:
    """Save ``new`` over ``tmp_path/tok`` in a child process killed at the rename of the file
    ending in ``crash_on``; returns the child's pid (in the names of its temporaries)."""
    import subprocess
    import sys

    src = tmp_path / "src" / "new.tiktoken"
    src.parent.mkdir(exist_ok=True)
    new.dump_tiktoken(src)
    proc = subprocess.run(
        [sys.executable, "-c", _CRASH_SAVE, str(src), str(tmp_path / "tok"), crash_on],
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert proc.returncode == 9, proc.stderr
    return int(proc.stdout)


@pytest.fixture(scope="module")
def other(trained):
    """An encoding with different ranks from ``trained`` (fewer merges), same special id."""
    docs = [t * 20 for t in TEXTS]
    enc = subword.train_from_iterator(docs, 300, pattern="cl100k_base", show_progress=False)
    ranks = enc._mergeable_ranks
    assert ranks != trained._mergeable_ranks
    return subword.Encoding(
        "new", pat_str=enc._pat_str, mergeable_ranks=ranks, special_tokens={"<|x|>": 10_000}
    )


def test_crash_between_the_renames_is_explained_and_the_next_save_repairs(trained, other, tmp_path):
    manifest = trained.save(tmp_path / "tok")
    old_manifest = (tmp_path / "tok.json").read_bytes()
    pid = _crash_save(other, tmp_path, crash_on="tok.json")

    # On disk: the new ranks in place, the old manifest, the new manifest as a temporary.
    names = sorted(p.name for p in tmp_path.iterdir())
    assert names == ["src", "tok.json", f"tok.json.subword-tmp-{pid}", "tok.tiktoken"]
    assert (tmp_path / "tok.tiktoken").read_bytes() == (tmp_path / "src/new.tiktoken").read_bytes()
    assert (tmp_path / "tok.json").read_bytes() == old_manifest
    stray = json.loads((tmp_path / f"tok.json.subword-tmp-{pid}").read_text())
    assert stray["name"] == "new"

    with pytest.raises(ValueError) as e:
        subword.Encoding.load(manifest)
    msg = str(e.value)
    assert msg.startswith(f"{tmp_path / 'tok.tiktoken'} does not belong to {manifest}: ")
    assert "a save was interrupted between its two renames" in msg
    assert msg.endswith("save the encoding again")

    # The next save removes the dead process's temporary and leaves a pair that loads.
    other.save(tmp_path / "tok")
    assert sorted(p.name for p in tmp_path.iterdir()) == ["src", "tok.json", "tok.tiktoken"]
    loaded = subword.Encoding.load(manifest)
    assert loaded.name == "new"
    assert loaded._mergeable_ranks == other._mergeable_ranks
    for text in TEXTS:
        want = other.encode(text, allowed_special="all")
        assert loaded.encode(text, allowed_special="all") == want


def test_crash_before_the_first_rename_keeps_the_old_pair(trained, other, tmp_path):
    manifest = trained.save(tmp_path / "tok")
    pid = _crash_save(other, tmp_path, crash_on="tok.tiktoken")
    assert sorted(p.name for p in tmp_path.iterdir()) == [
        "src",
        "tok.json",
        f"tok.json.subword-tmp-{pid}",
        "tok.tiktoken",
        f"tok.tiktoken.subword-tmp-{pid}",
    ]
    loaded = subword.Encoding.load(manifest)  # the old encoding, whole
    assert loaded._mergeable_ranks == trained._mergeable_ranks
    trained.save(tmp_path / "tok")
    assert sorted(p.name for p in tmp_path.iterdir()) == ["src", "tok.json", "tok.tiktoken"]


def test_failed_manifest_rename_leaves_no_temporaries(trained, other, tmp_path, monkeypatch):
    """An exception (not a kill) between the renames: temporaries are removed, and load
    explains the mismatch."""
    import os

    manifest = trained.save(tmp_path / "tok")
    real_replace = os.replace

    def replace(src, dst):
        if os.fspath(dst).endswith("tok.json"):
            raise OSError(28, "No space left on device")
        real_replace(src, dst)

    monkeypatch.setattr(os, "replace", replace)
    with pytest.raises(OSError, match="No space left"):
        other.save(tmp_path / "tok")
    monkeypatch.undo()
    assert sorted(p.name for p in tmp_path.iterdir()) == ["tok.json", "tok.tiktoken"]
    with pytest.raises(ValueError, match="does not belong to .*save the encoding again"):
        subword.Encoding.load(manifest)


def test_temporaries_of_a_live_process_are_kept(trained, tmp_path):
    import os

    (tmp_path / "tok.json.subword-tmp-1").write_text("{}")  # pid 1 is always alive
    trained.save(tmp_path / "tok")
    assert (tmp_path / "tok.json.subword-tmp-1").exists()
    assert os.path.exists(tmp_path / "tok.tiktoken")


def test_every_save_fsyncs(trained, tmp_path, monkeypatch):
    """All atomic writes go through one helper that flushes the data to disk before renaming."""
    import os

    from subword import ClassicBPE, Tokenizer

    synced = []
    real_fsync = os.fsync
    monkeypatch.setattr(os, "fsync", lambda fd: (synced.append(fd), real_fsync(fd)))
    saves = {
        "save_hf": lambda: trained.save_hf(tmp_path / "hf.json"),
        "classic": lambda: ClassicBPE.train(TEXTS, 200).save(tmp_path / "c.json"),
        "tokenizer": lambda: Tokenizer.from_str(trained.to_hf_json()).save(tmp_path / "t.json"),
        "manifest": lambda: trained.save(tmp_path / "m"),
    }
    for what, save in saves.items():
        synced.clear()
        save()
        assert synced, f"{what} wrote without fsync"
    assert not [p for p in tmp_path.iterdir() if ".subword-tmp-" in p.name]
