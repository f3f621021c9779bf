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
