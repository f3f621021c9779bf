"""The README's commands and snippets really run."""

from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path

import subword

ROOT = Path(__file__).resolve().parent.parent
README = (ROOT / "README.md").read_text("utf-8")


def _python_blocks() -> list[str]:
    return re.findall(r"```python\n(.*?)```", README, re.S)


def test_quick_start_commands_are_first():
    first_block = re.search(r"```sh\n(.*?)```", README, re.S).group(1).splitlines()
    assert first_block[0].startswith("pip install -e . && subword demo")
    assert first_block[1].startswith("cargo test --release && python -m pytest -q tests")
    ci = (ROOT / ".ci" / "run").read_text()
    assert "cargo test --release && python -m pytest -q tests" in ci


def test_demo_runs_offline():
    out = subprocess.run(
        [sys.executable, "-m", "subword", "demo"],
        capture_output=True,
        text=True,
        timeout=120,
        env={"SUBWORD_OFFLINE": "1", "PATH": "/usr/bin:/bin", "HOME": str(ROOT)},
    )
    assert out.returncode == 0, out.stderr
    assert "인공지능은 데이터로부터 학습한다. Machine learning!" in out.stdout
    assert "round trip decode(encode(text)) == text: True" in out.stdout
    n_bytes = len("인공지능은 데이터로부터 학습한다. Machine learning!".encode())
    assert re.search(rf"bytes:\s+{n_bytes}\s+tokens:\s+\d+", out.stdout)


def test_distributed_counting_snippet(tmp_path):
    snippet = next(b for b in _python_blocks() if "train_from_counts(total" in b)
    corpus = (ROOT / "python/subword/data/demo_corpus.txt").read_text("utf-8")
    half = len(corpus) // 2
    (tmp_path / "a.txt").write_text(corpus[:half], "utf-8")
    (tmp_path / "b.txt").write_text(corpus[half:] * 3, "utf-8")
    check = (
        "\n    ref = subword.train(['a.txt', 'b.txt'], vocab_size=4096, show_progress=False)\n"
        "    assert enc.merges == ref.merges, 'counted elsewhere != trained here'\n"
        "    print('merges', len(enc.merges))\n"
    )
    script = tmp_path / "snippet.py"
    script.write_text(snippet + check, "utf-8")
    out = subprocess.run(
        [sys.executable, str(script)], cwd=tmp_path, capture_output=True, text=True, timeout=120
    )
    assert out.returncode == 0, out.stderr
    assert int(out.stdout.split()[-1]) > 100


def test_training_snippet_merges_are_as_documented():
    enc = subword.train_from_counts(
        {"low": 5, "lower": 2, "newest": 6, "widest": 3}, 260, pattern=None, show_progress=False
    )
    documented = re.search(r"enc\.merges\s+# (\[.*\])", README).group(1)
    assert repr(enc.merges) == documented


def _block_with(marker: str) -> str:
    return next(b for b in _python_blocks() if marker in b)


def _documented(block: str, expr: str):
    """The value the README's comment gives for the line starting with `expr`."""
    import ast

    line = next(ln for ln in block.splitlines() if ln.startswith(expr))
    return ast.literal_eval(line.split("#", 1)[1].split("—")[0].strip())


def test_classic_snippet_runs_as_documented():
    block = _block_with("ClassicBPE.train_from_counts")
    scope: dict = {}
    exec(block, scope)  # noqa: S102 - the README's own snippet
    bpe = scope["bpe"]
    assert bpe.merges[:4] == _documented(block, "bpe.merges[:4]")
    assert bpe.tokenize("lowest") == _documented(block, 'bpe.tokenize("lowest")')
    assert bpe.decode(bpe.encode("lowest newer")) == _documented(block, "bpe.decode(")
    # the default tie-break's order, as the text after the snippet states it
    default = subword.ClassicBPE.train_from_counts(
        {"low": 5, "lower": 2, "newest": 6, "widest": 3}, vocab_size=30, merge_end_of_word=False
    )
    stated = re.search(r"gives `(\('s', 't'\).*?)`", README, re.S).group(1)
    assert repr(default.merges[:4]) == "[" + " ".join(stated.split()) + "]"


def test_wordpiece_snippet_matches_hf_and_its_comments(tmp_path):
    """The BERT snippet's documented tokens and decoding are HF's (the oracle) and subword's."""
    import refdata
    import tokenizers

    try:
        bert = refdata.bert_uncased()
    except refdata.RefDataUnavailable as e:
        if refdata.in_ci():
            raise
        import pytest

        pytest.skip(f"BERT reference tokenizer unavailable offline: {e}")
    # bert-base-uncased's file has no padding or truncation; this copy's (128) are switched off
    import json

    doc = json.loads((bert / "tokenizer.json").read_text("utf-8"))
    doc["padding"] = doc["truncation"] = None
    path = tmp_path / "tokenizer.json"
    path.write_text(json.dumps(doc), "utf-8")
    block = _block_with('Tokenizer.from_file("tokenizer.json")        # e.g. bert')
    code = block.replace('"tokenizer.json"', repr(str(path)))
    scope: dict = {}
    exec(code, scope)  # noqa: S102 - the README's own snippet
    hf = tokenizers.Tokenizer.from_file(str(path))
    want = hf.encode("Héllo, wörld!", "A second sentence.")
    out = scope["out"]
    assert out.tokens == want.tokens == _documented(block, "out.tokens")
    assert out.offsets == want.offsets and out.word_ids == want.word_ids
    assert scope["tok"].decode(out.ids) == hf.decode(want.ids) == _documented(block, "tok.decode")
    assert [e.ids for e in scope["batch"]] == [
        e.ids for e in _hf_like(hf, [("question", "context"), ("q2", "c2")])
    ]


def _hf_like(hf, inputs):
    hf.enable_truncation(128, stride=32)
    hf.enable_padding(pad_to_multiple_of=8)
    return hf.encode_batch(inputs)
