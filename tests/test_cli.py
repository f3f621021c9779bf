"""The ``subword`` command line, run as ``python -m subword`` in subprocesses.

Every number the CLI prints is checked against the Python API (and, for encode, tiktoken).
"""

from __future__ import annotations

import json
import os
import random
import re
import subprocess
import sys
from pathlib import Path

import pytest

if os.environ.get("SUBWORD_TEST_IMPL", "subword") == "tiktoken":
    pytest.skip("the CLI is subword-only", allow_module_level=True)

import subword  # noqa: E402

# Subprocesses import the same subword as this process, whatever the editable install points to.
_PKG_PARENT = str(Path(subword.__file__).resolve().parent.parent)

TEXT = "Hello world! 인공지능은 데이터로부터 학습한다. emoji 🤖 café  \n  tabs\tand 1234567890"
ASCII_TEXT = "The quick brown fox, jumping over 42 lazy dogs... isn't it?  Yes!\nNew line."

EN_WORDS = (
    "the quick brown fox jumps over lazy dog while machine learning models learn from data "
    "and tokenizers split text into pieces that a model can read"
).split()
KO_WORDS = (
    "인공지능은 데이터로부터 학습한다 한국어 문장은 조사와 어미가 붙어서 토큰이 많아진다 "
    "오늘 날씨가 좋다 우리는 모델을 훈련한다"
).split()


def run(*args, input: str | None = None, env_extra: dict | None = None):
    env = dict(os.environ)
    env["PYTHONPATH"] = os.pathsep.join(p for p in (_PKG_PARENT, env.get("PYTHONPATH")) if p)
    env["PYTHONIOENCODING"] = "utf-8"
    if env_extra:
        for k, v in env_extra.items():
            env[k] = os.pathsep.join([v, env["PYTHONPATH"]]) if k == "PYTHONPATH" else v
    return subprocess.run(
        [sys.executable, "-m", "subword", *map(str, args)],
        input=input,
        capture_output=True,
        text=True,
        encoding="utf-8",
        env=env,
        timeout=120,
    )


def ok(*args, **kw) -> str:
    r = run(*args, **kw)
    assert r.returncode == 0, f"exit {r.returncode}\nstdout:\n{r.stdout}\nstderr:\n{r.stderr}"
    assert "Traceback" not in r.stderr
    return r.stdout


def _sentences(rng: random.Random, words, n: int, k: int) -> str:
    return "".join(" ".join(rng.choice(words) for _ in range(k)) + ".\n" for _ in range(n))


@pytest.fixture(scope="module")
def corpus(tmp_path_factory) -> dict[str, Path]:
    """A few KB of English and Korean text."""
    d = tmp_path_factory.mktemp("corpus")
    rng = random.Random(1234)
    en = d / "en.txt"
    ko = d / "ko.txt"
    en.write_text(_sentences(rng, EN_WORDS, 120, 10).capitalize(), encoding="utf-8")
    ko.write_text(_sentences(rng, KO_WORDS, 80, 6), encoding="utf-8")
    return {"en": en, "ko": ko}


@pytest.fixture(scope="module")
def trained(corpus):
    """The API's result for the corpus (what `subword train` must reproduce)."""
    return subword.train(
        [corpus["en"], corpus["ko"]],
        400,
        special_tokens=["<|eot|>"],
        pattern="cl100k_base",
        show_progress=False,
    )


# ----- encode / decode / count / show with named encodings -----


@pytest.mark.parametrize("name", ["r50k_base", "cl100k_base"])
def test_encode_matches_api_and_tiktoken(encodings, name):
    sw, tk = encodings(name)
    want = tk.encode(TEXT)
    assert sw.encode(TEXT) == want
    out = ok("encode", "--encoding", name, input=TEXT)
    assert [int(x) for x in out.split()] == want
    out = ok("encode", "--encoding", name, "--json", TEXT)
    assert json.loads(out) == want


@pytest.mark.parametrize("name", ["cl100k_base", "o200k_base"])
def test_encode_stream_is_encode_of_the_whole_input(encodings, name, corpus):
    _, tk = encodings(name)
    text = corpus["en"].read_text(encoding="utf-8") + "<|endoftext|>\r\n" + TEXT + "\n\n  "
    out = ok("encode", "--encoding", name, "--stream", input=text)
    assert [int(x) for x in out.split()] == tk.encode(text, allowed_special="all")
    out = ok("encode", "--encoding", name, "--stream", "--json", input=text)
    assert json.loads(out) == tk.encode(text, allowed_special="all")


def test_encode_stream_refuses_text_arguments_and_bad_bytes():
    r = run("encode", "--encoding", "cl100k_base", "--stream", "some", "text")
    assert r.returncode == 2 and "--stream reads standard input" in r.stderr
    env = dict(os.environ)
    env["PYTHONPATH"] = os.pathsep.join(p for p in (_PKG_PARENT, env.get("PYTHONPATH")) if p)
    r = subprocess.run(
        [sys.executable, "-m", "subword", "encode", "--encoding", "cl100k_base", "--stream"],
        input=b"ok\n\xff\n",
        capture_output=True,
        env=env,
        timeout=120,
    )
    stderr = r.stderr.decode("utf-8")
    assert r.returncode == 2 and "not UTF-8" in stderr and "Traceback" not in stderr


def test_encode_gpt2_is_r50k(encodings):
    _, tk = encodings("gpt2")
    assert json.loads(ok("encode", "--encoding", "gpt2", "--json", input=TEXT)) == tk.encode(TEXT)


def test_decode_round_trips(encodings):
    sw, _ = encodings("cl100k_base")
    ids = sw.encode(TEXT)
    out = ok("decode", "--encoding", "cl100k_base", *ids)
    assert out == TEXT + "\n"
    out = ok("decode", "--encoding", "cl100k_base", input=json.dumps(ids))
    assert out == TEXT + "\n"


@pytest.mark.parametrize("name", ["r50k_base", "cl100k_base"])
def test_count_is_len_of_encode(encodings, name):
    sw, tk = encodings(name)
    assert int(ok("count", "--encoding", name, input=TEXT)) == len(tk.encode(TEXT))
    assert int(ok("count", "--encoding", name, ASCII_TEXT)) == len(sw.encode(ASCII_TEXT))


def test_show_plain_pieces_concatenate_to_input(encodings):
    sw, _ = encodings("cl100k_base")
    out = ok("show", "--encoding", "cl100k_base", "--plain", input=ASCII_TEXT)
    pieces_line, ids_line = out.rstrip("\n").split("\n")
    pieces = re.findall(r"\[(.*?)\]", pieces_line)
    assert "".join(pieces).replace("\\n", "\n") == ASCII_TEXT
    assert [int(x) for x in ids_line.split()] == sw.encode(ASCII_TEXT)
    assert len(pieces) == len(sw.encode(ASCII_TEXT))


# ----- --tokenizer files -----


def test_tokenizer_file_kinds(trained, corpus, tmp_path):
    manifest = trained.save(tmp_path / "tok")  # tok.tiktoken + tok.json
    hf = tmp_path / "hf.json"
    trained.save_hf(hf)
    bare = tmp_path / "bare.tiktoken"  # no manifest beside it: needs --pattern
    trained.dump_tiktoken(bare)
    text = corpus["ko"].read_text(encoding="utf-8")[:300] + " Machine learning!"
    want = trained.encode(text)

    def ids(*args):
        return json.loads(ok("encode", "--json", *args, input=text))

    assert ids("--tokenizer", manifest) == want
    assert ids("--tokenizer", tmp_path / "tok") == want  # the name given to save / train -o
    assert ids("--tokenizer", tmp_path / "tok.tiktoken") == want  # manifest found beside it
    assert ids("--tokenizer", hf) == want
    assert ids("--tokenizer", bare, "--pattern", "cl100k_base") == want
    # The manifest carries the special token.
    special = json.loads(ok("encode", "--json", "--tokenizer", manifest, "a<|eot|>"))
    assert special == trained.encode("a<|eot|>", allowed_special="all")
    assert ok("count", "--tokenizer", hf, input=text).strip() == str(len(want))
    assert ok("decode", "--tokenizer", manifest, *want) == text + "\n"


# ----- stats -----


def _table(out: str) -> list[list[str]]:
    lines = out.strip("\n").split("\n")
    assert set(lines[1].replace(" ", "")) == {"-"}
    return [line.split() for line in lines[2:]]


def _stats_row(path, label, text: str, n_tokens: int) -> list[str]:
    n_bytes, n_chars = len(text.encode("utf-8")), len(text)
    return [
        str(path),
        label,
        str(n_bytes),
        str(n_chars),
        str(n_tokens),
        f"{n_bytes / n_tokens:.3f}",
        f"{1000 * n_tokens / n_chars:.1f}",
    ]


def want_labels(hf) -> list[str]:
    return ["r50k_base", "cl100k_base", str(hf)]


def test_stats_side_by_side(corpus, encodings, trained, tmp_path):
    hf = tmp_path / "hf.json"
    trained.save_hf(hf)
    files = [corpus["en"], corpus["ko"]]
    out = ok(
        "stats", *files, "--encoding", "r50k_base", "--encoding", "cl100k_base", "--tokenizer", hf
    )
    rows = _table(out)
    tk50 = encodings("r50k_base")[1]
    tk100 = encodings("cl100k_base")[1]
    want = []
    for f in files:
        text = f.read_text(encoding="utf-8")
        want.append(_stats_row(f, "r50k_base", text, len(tk50.encode_ordinary(text))))
        want.append(_stats_row(f, "cl100k_base", text, len(tk100.encode_ordinary(text))))
        want.append(_stats_row(f, str(hf), text, len(trained.encode_ordinary(text))))
    assert rows[: len(want)] == want
    # Then one total row per encoding: sums over the files.
    totals = rows[len(want) :]
    assert [r[:3] for r in totals] == [["(all", "files)", label] for label in want_labels(hf)]
    n_bytes = sum(len(f.read_bytes()) for f in files)
    n_chars = sum(len(f.read_text(encoding="utf-8")) for f in files)
    n_tokens = sum(len(tk100.encode_ordinary(f.read_text(encoding="utf-8"))) for f in files)
    assert totals[1][3:] == [
        str(n_bytes),
        str(n_chars),
        str(n_tokens),
        f"{n_bytes / n_tokens:.3f}",
        f"{1000 * n_tokens / n_chars:.1f}",
    ]
    # Columns line up: every line of the table has the same width.
    assert len({len(line) for line in out.strip("\n").split("\n")[:2]}) == 1


def test_stats_default_encodings(corpus, encodings):
    out = ok("stats", corpus["ko"])
    rows = _table(out)
    assert [r[1] for r in rows] == ["gpt2", "cl100k_base"]
    text = corpus["ko"].read_text(encoding="utf-8")
    assert rows[0] == _stats_row(corpus["ko"], "gpt2", text, encodings("gpt2")[0].count(text))


# ----- train -----


def test_train_writes_manifest_with_same_merges(corpus, trained, tmp_path):
    out_base = tmp_path / "mytok"
    r = run(
        "train",
        corpus["en"],
        corpus["ko"],
        "--vocab-size",
        400,
        "--special",
        "<|eot|>",
        "--pattern",
        "cl100k_base",
        "-o",
        out_base,
    )
    assert r.returncode == 0, r.stderr
    assert "Traceback" not in r.stderr
    assert r.stderr.strip(), "show_progress should draw progress on stderr"
    loaded = subword.Encoding.load(tmp_path / "mytok.json")
    assert (tmp_path / "mytok.tiktoken").is_file()
    # A .tiktoken file keeps ranks, not merge pairs: rank 256 + i is the token merge i made.
    learned = sorted((r, t) for t, r in loaded._mergeable_ranks.items() if r >= 256)
    assert [t for _, t in learned] == [a + b for a, b in trained.merges]
    assert loaded.vocab == trained.vocab
    assert loaded.n_vocab == trained.n_vocab
    assert loaded._special_tokens == trained._special_tokens
    text = corpus["en"].read_text(encoding="utf-8") + corpus["ko"].read_text(encoding="utf-8")
    n_bytes, n_tokens = len(text.encode("utf-8")), trained.count(text)
    assert re.search(rf"^merges:\s+{len(trained.merges)}$", r.stdout, re.M)
    assert re.search(rf"^vocab size:\s+{trained.n_vocab}\b", r.stdout, re.M)
    assert f"{n_bytes / n_tokens:.3f} bytes/token" in r.stdout
    assert re.search(r"^trained in \d+\.\d+ s", r.stdout, re.M)


def test_train_hf_json_loads_in_tokenizers(corpus, tmp_path):
    tokenizers = pytest.importorskip("tokenizers")
    out = tmp_path / "tokenizer.json"
    ok("train", corpus["en"], corpus["ko"], "--vocab-size", 350, "-q", "-o", out)
    enc = subword.train([corpus["en"], corpus["ko"]], 350, show_progress=False)
    assert subword.Encoding.from_hf_file(out).merges == enc.merges
    hf = tokenizers.Tokenizer.from_file(str(out))
    for text in [TEXT, ASCII_TEXT, corpus["ko"].read_text(encoding="utf-8")[:200]]:
        assert hf.encode(text, add_special_tokens=False).ids == enc.encode(text)


# ----- sweep -----


def _sweep_rows(out: str) -> list[list[str]]:
    lines = out.split("\n")
    i = next(k for k, line in enumerate(lines) if line.lstrip().startswith("vocab size"))
    rows = []
    for line in lines[i + 2 :]:
        if not line.strip():
            break
        rows.append(line.split())
    return rows


def test_sweep_table_samples_and_plot(corpus, tmp_path):
    sizes = [300, 350, 400]
    png = tmp_path / "sweep.png"
    args = ["sweep", corpus["en"], "--vocab-sizes", "400,300,350", "--eval", corpus["en"]]
    args += [corpus["ko"], "--sample", "Machine learning is fun!"]
    try:
        import matplotlib  # noqa: F401

        args += ["--plot", png]
        plotting = True
    except ImportError:
        plotting = False
    out = ok(*args)
    rows = _sweep_rows(out)
    assert [int(r[0]) for r in rows] == sizes
    texts = [f.read_text(encoding="utf-8") for f in (corpus["en"], corpus["ko"])]
    samples = [line for line in out.split("\n") if re.match(r"^\d+ \(", line.strip())]
    assert len(samples) == len(sizes)
    for size, row, sample in zip(sizes, rows, samples):
        enc = subword.train([corpus["en"]], size, show_progress=False)
        assert int(row[1]) == enc.n_vocab and int(row[2]) == len(enc.merges)
        want = [f"{len(t.encode('utf-8')) / enc.count(t):.3f}" for t in texts]
        assert row[-2:] == want
        pieces = re.findall(r"\[(.*?)\]", sample)
        assert "".join(pieces) == "Machine learning is fun!"
        assert len(pieces) == len(enc.encode("Machine learning is fun!"))
    if plotting:
        assert png.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
        assert png.stat().st_size > 1000


def test_sweep_default_sample_and_eval(corpus):
    out = ok("sweep", corpus["ko"], "--vocab-sizes", "300,400")
    rows = _sweep_rows(out)
    assert len(rows) == 2 and len(rows[0]) == 5  # size, actual, merges, seconds, one eval file
    assert "인공지능은 데이터로부터 학습한다. Machine learning!" in out


def test_sweep_plot_without_matplotlib(corpus, tmp_path):
    fake = tmp_path / "fake"
    (fake / "matplotlib").mkdir(parents=True)
    (fake / "matplotlib" / "__init__.py").write_text("raise ImportError('no matplotlib here')\n")
    r = run(
        "sweep",
        corpus["en"],
        "--vocab-sizes",
        "300",
        "--plot",
        tmp_path / "x.png",
        env_extra={"PYTHONPATH": str(fake)},
    )
    assert r.returncode == 2
    assert r.stderr.startswith("subword: error:") and "pip install matplotlib" in r.stderr
    assert "Traceback" not in r.stderr and len(r.stderr.strip().splitlines()) == 1
    assert not (tmp_path / "x.png").exists()


# ----- train --model wordpiece / classic, and their files in the other commands -----

BERT_SPECIALS = ["[PAD]", "[UNK]", "[CLS]", "[SEP]", "[MASK]"]
# Upper case, accents, a special token written in the text, a character never seen in training.
WP_TEXT = "The quick BROWN fox [CLS] jumps!  Café naïve 🤖\n인공지능은 데이터로부터 학습한다."


def _pieces(out: str) -> tuple[list[str], list[int]]:
    """`show --plain` output: pieces (which may contain brackets, e.g. [[CLS]]) and ids."""
    pieces_line, ids_line = out.rstrip("\n").split("\n")
    pieces = pieces_line.split(" ")
    assert all(p.startswith("[") and p.endswith("]") for p in pieces), pieces_line
    return [p[1:-1] for p in pieces], [int(x) for x in ids_line.split()]


def _summary_number(out: str, label: str) -> int:
    return int(re.search(rf"^{label}:\s+(\d+)", out, re.M).group(1))


def _bytes_per_token(files, count) -> str:
    texts = [Path(f).read_text(encoding="utf-8") for f in files]
    n_bytes = sum(len(t.encode("utf-8")) for t in texts)
    return f"{n_bytes / sum(count(t) for t in texts):.3f} bytes/token"


def _api_wordpiece(files, vocab_size, lowercase=True):
    """The pipeline `subword train --model wordpiece` builds, through the Python API."""
    tok = subword.Tokenizer(subword.models.WordPiece(unk_token="[UNK]"))
    tok.normalizer = subword.normalizers.BertNormalizer(lowercase=lowercase)
    tok.pre_tokenizer = subword.pre_tokenizers.BertPreTokenizer()
    trainer = subword.trainers.WordPieceTrainer(
        vocab_size=vocab_size, min_frequency=2, special_tokens=BERT_SPECIALS, show_progress=False
    )
    tok.train([str(f) for f in files], trainer)
    return tok, trainer


@pytest.fixture(scope="module")
def wordpiece(corpus, tmp_path_factory):
    """`subword train --model wordpiece` on the corpus: (tokenizer.json path, stdout)."""
    d = tmp_path_factory.mktemp("wordpiece")
    files = [corpus["en"], corpus["ko"]]
    out = ok("train", *files, "--model", "wordpiece", "--vocab-size", 300, "-q", "-o", d / "bert")
    return d / "bert.json", out


@pytest.fixture(scope="module")
def classic(corpus, tmp_path_factory):
    """`subword train --model classic` on the corpus: (ClassicBPE .json path, stdout)."""
    d = tmp_path_factory.mktemp("classic")
    files = [corpus["en"], corpus["ko"]]
    out = ok("train", *files, "--model", "classic", "--vocab-size", 300, "-q", "-o", d / "cl.json")
    return d / "cl.json", out


def test_train_wordpiece_writes_bert_tokenizer_json_and_vocab_txt(wordpiece, corpus):
    tokenizers = pytest.importorskip("tokenizers")
    path, out = wordpiece
    files = [corpus["en"], corpus["ko"]]
    hf = tokenizers.Tokenizer.from_file(str(path))
    n_vocab = hf.get_vocab_size()
    vocab_txt = path.with_name("bert-vocab.txt")
    assert vocab_txt.read_text(encoding="utf-8").splitlines() == [
        hf.id_to_token(i) for i in range(n_vocab)
    ]
    assert [hf.id_to_token(i) for i in range(5)] == BERT_SPECIALS
    assert hf.normalizer.normalize_str("CAFÉ") == "cafe"  # BertNormalizer, lowercase
    assert hf.encode("fox").tokens == ["[CLS]", "fox", "[SEP]"]  # the template
    assert hf.decode(hf.encode("the fox").ids) == "the fox"  # WordPiece decoder, skips specials
    # The same vocabulary as the Python API trains, and the summary tells the truth.
    api, trainer = _api_wordpiece(files, 300)
    assert hf.get_vocab() == api.get_vocab()
    assert _summary_number(out, "merges") == len(trainer.merges)
    assert _summary_number(out, "vocab size") == n_vocab
    bpt = _bytes_per_token(files, lambda t: len(hf.encode(t, add_special_tokens=False).ids))
    assert bpt in out
    assert f"wrote:       {path}, {vocab_txt}" in out


def test_wordpiece_encode_decode_count_show_match_hf(wordpiece, corpus):
    tokenizers = pytest.importorskip("tokenizers")
    path, _ = wordpiece
    hf = tokenizers.Tokenizer.from_file(str(path))
    ko = corpus["ko"].read_text(encoding="utf-8")[:300]
    for text in [WP_TEXT, ASCII_TEXT, ko]:
        want = hf.encode(text)  # add_special_tokens=True, HF's default
        assert [int(x) for x in ok("encode", "--tokenizer", path, input=text).split()] == want.ids
        assert json.loads(ok("encode", "--json", "--tokenizer", path, text)) == want.ids
        n = len(hf.encode(text, add_special_tokens=False).ids)
        assert int(ok("count", "--tokenizer", path, input=text)) == n
        assert ok("decode", "--tokenizer", path, *want.ids) == hf.decode(want.ids) + "\n"
        pieces, ids = _pieces(ok("show", "--plain", "--tokenizer", path, input=text))
        assert pieces == want.tokens and ids == want.ids
    # The name given to `train -o` works too.
    assert ok("encode", "--tokenizer", path.with_suffix(""), "fox").split()[1:-1] == [
        str(hf.token_to_id("fox"))
    ]


def test_wordpiece_cased(corpus, tmp_path):
    tokenizers = pytest.importorskip("tokenizers")
    out = tmp_path / "cased.json"
    ok(
        "train",
        corpus["en"],
        "--model",
        "wordpiece",
        "--cased",
        "--vocab-size",
        200,
        "-q",
        "-o",
        out,
    )
    hf = tokenizers.Tokenizer.from_file(str(out))
    assert hf.normalizer.normalize_str("The Café") == "The Café"
    capital = corpus["en"].read_text(encoding="utf-8")[0]  # the corpus' only capital letter
    assert capital.isupper() and hf.token_to_id(capital) is not None
    assert json.loads(ok("encode", "--json", "--tokenizer", out, WP_TEXT)) == hf.encode(WP_TEXT).ids
    api, _ = _api_wordpiece([corpus["en"]], 200, lowercase=False)
    assert hf.get_vocab() == api.get_vocab()


def test_wordpiece_file_made_by_hf(corpus, tmp_path):
    """A BERT tokenizer.json from HF `tokenizers` (with truncation saved in it): the CLI
    encodes whole texts, with the ids HF gives without truncation."""
    tokenizers = pytest.importorskip("tokenizers")
    from tokenizers import decoders, models, normalizers, pre_tokenizers, processors, trainers

    hf = tokenizers.Tokenizer(models.WordPiece(unk_token="[UNK]"))
    hf.normalizer = normalizers.BertNormalizer(lowercase=True)
    hf.pre_tokenizer = pre_tokenizers.BertPreTokenizer()
    hf.decoder = decoders.WordPiece()
    trainer = trainers.WordPieceTrainer(
        vocab_size=250, special_tokens=BERT_SPECIALS, show_progress=False
    )
    hf.train([str(corpus["en"]), str(corpus["ko"])], trainer)
    cls_id, sep_id = hf.token_to_id("[CLS]"), hf.token_to_id("[SEP]")
    hf.post_processor = processors.TemplateProcessing(
        single="[CLS] $A [SEP]",
        pair="[CLS] $A [SEP] $B:1 [SEP]:1",
        special_tokens=[("[CLS]", cls_id), ("[SEP]", sep_id)],
    )
    hf.enable_truncation(8)
    path = tmp_path / "hf-bert.json"
    hf.save(str(path))
    hf.no_truncation()
    text = corpus["en"].read_text(encoding="utf-8")[:400] + WP_TEXT
    assert (
        json.loads(ok("encode", "--json", "--tokenizer", path, input=text)) == hf.encode(text).ids
    )
    n = len(hf.encode(text, add_special_tokens=False).ids)
    assert int(ok("count", "--tokenizer", path, input=text)) == n


def test_train_classic_matches_api(classic, corpus):
    path, out = classic
    files = [corpus["en"], corpus["ko"]]
    api = subword.ClassicBPE.train_from_files(files, 300, min_frequency=2)
    loaded = subword.ClassicBPE.load(path)
    assert json.loads(path.read_text(encoding="utf-8"))["format"] == "subword-classic-bpe/1"
    assert loaded.merges == api.merges and loaded.vocab == api.vocab
    assert _summary_number(out, "merges") == len(api.merges)
    assert _summary_number(out, "vocab size") == api.vocab_size
    assert _bytes_per_token(files, lambda t: len(api.encode(t))) in out
    assert f"wrote:       {path}" in out


def test_classic_encode_decode_count_show(classic, corpus):
    path, _ = classic
    bpe = subword.ClassicBPE.load(path)
    en = corpus["en"].read_text(encoding="utf-8")
    ko = corpus["ko"].read_text(encoding="utf-8")
    # Only characters seen in training (others decode as <unk>), with runs of whitespace.
    texts = [en[:300], "  " + ko[:200] + "\n\n\t" + en[-100:] + "  ", "machine   learning"]
    for text in texts:
        ids = bpe.encode(text)
        assert [int(x) for x in ok("encode", "--tokenizer", path, input=text).split()] == ids
        assert json.loads(ok("encode", "--json", "--tokenizer", path, text)) == ids
        assert int(ok("count", "--tokenizer", path, input=text)) == len(ids)
        assert ok("decode", "--tokenizer", path, *ids) == " ".join(text.split()) + "\n"
        assert (
            ok("decode", "--tokenizer", path, input=json.dumps(ids))
            == " ".join(text.split()) + "\n"
        )
        pieces, shown_ids = _pieces(ok("show", "--plain", "--tokenizer", path, input=text))
        assert pieces == bpe.tokenize(text) and shown_ids == ids
    assert "</w>" in bpe.tokenize("machine learning")[-1]
    unseen = ok("encode", "--tokenizer", path.with_suffix(""), "fox 🤖")  # -o name works too
    assert [int(x) for x in unseen.split()] == bpe.encode("fox 🤖")
    assert bpe.vocab["<unk>"] in bpe.encode("fox 🤖")


def test_stats_with_wordpiece_and_classic(wordpiece, classic, corpus):
    tokenizers = pytest.importorskip("tokenizers")
    wp, cl = wordpiece[0], classic[0]
    hf = tokenizers.Tokenizer.from_file(str(wp))
    bpe = subword.ClassicBPE.load(cl)
    rows = _table(ok("stats", corpus["en"], corpus["ko"], "--tokenizer", wp, "--tokenizer", cl))
    want = []
    for f in (corpus["en"], corpus["ko"]):
        text = f.read_text(encoding="utf-8")
        want.append(_stats_row(f, str(wp), text, len(hf.encode(text, add_special_tokens=False))))
        want.append(_stats_row(f, str(cl), text, len(bpe.encode(text))))
    assert rows[:4] == want
    assert [r[2] for r in rows[4:]] == [str(wp), str(cl)]


def test_train_model_bpe_is_the_default(corpus, tmp_path):
    ok("train", corpus["en"], "--vocab-size", 300, "-q", "-o", tmp_path / "a.json")
    ok(
        "train",
        corpus["en"],
        "--model",
        "bpe",
        "--vocab-size",
        300,
        "-q",
        "-o",
        tmp_path / "b.json",
    )
    assert (tmp_path / "a.json").read_bytes() == (tmp_path / "b.json").read_bytes()


def test_new_model_decode_errors(wordpiece, classic):
    for path in (wordpiece[0], classic[0]):
        for ids in (["99999"], ["--", "-1"], ["x"]):
            r = run("decode", "--tokenizer", path, *ids)
            assert r.returncode == 2 and not r.stdout, r.stderr
            lines = r.stderr.strip("\n").split("\n")
            assert len(lines) == 1 and lines[0].startswith("subword: error:"), r.stderr
    r = run("decode", "--tokenizer", wordpiece[0], "99999")
    assert "99999" in r.stderr


def test_train_too_small_after_counting_ends_with_the_error(corpus, tmp_path):
    """The minimum WordPiece size depends on the corpus' alphabet, known only after counting:
    with progress on, the counting line comes first and the error is the last line."""
    out = tmp_path / "t.json"
    r = run("train", corpus["en"], "--model", "wordpiece", "--vocab-size", 20, "-o", out)
    assert r.returncode == 2 and "Traceback" not in r.stderr
    last = r.stderr.strip("\n").split("\n")[-1]
    assert last.startswith("subword: error: vocab_size=20 is too small"), r.stderr
    assert not out.exists()


# ----- user errors -----

USER_ERRORS = {
    "train missing file": ["train", "{tmp}/nope.txt", "--vocab-size", "300", "-o", "{tmp}/t"],
    "train vocab too small": ["train", "{en}", "--vocab-size", "100", "-o", "{tmp}/t"],
    "train bad pattern": [
        "train",
        "{en}",
        "--vocab-size",
        "300",
        "--pattern",
        "(",
        "-o",
        "{tmp}/t",
    ],
    "train no output folder": ["train", "{en}", "--vocab-size", "300", "-o", "{tmp}/no/dir/t"],
    "stats missing file": ["stats", "{tmp}/nope.txt"],
    "stats unknown encoding": ["stats", "{en}", "--encoding", "nope_base"],
    "stats missing tokenizer": ["stats", "{en}", "--tokenizer", "{tmp}/nope.json"],
    "encode unknown encoding": ["encode", "--encoding", "nope_base", "hi"],
    "count missing tokenizer": ["count", "--tokenizer", "{tmp}/nope.tiktoken", "hi"],
    "show text as tokenizer": ["show", "--tokenizer", "{en}", "hi"],
    "encode bad json tokenizer": ["encode", "--tokenizer", "{tmp}/bad.json", "hi"],
    "decode unknown id": ["decode", "--encoding", "r50k_base", "99999999"],
    "decode not a number": ["decode", "--encoding", "r50k_base", "abc"],
    "decode negative": ["decode", "--encoding", "r50k_base", "--", "-5"],
    "sweep missing file": ["sweep", "{tmp}/nope.txt", "--vocab-sizes", "300"],
    "sweep missing eval": ["sweep", "{en}", "--vocab-sizes", "300", "--eval", "{tmp}/nope"],
    "sweep bad sizes": ["sweep", "{en}", "--vocab-sizes", "300,lots"],
    "sweep size too small": ["sweep", "{en}", "--vocab-sizes", "100,300"],
    "train unknown model": [
        "train",
        "{en}",
        "--model",
        "unigram",
        "--vocab-size",
        "300",
        "-o",
        "{tmp}/t",
    ],
    "wordpiece vocab below specials": [
        "train",
        "{en}",
        "--model",
        "wordpiece",
        "--vocab-size",
        "3",
        "-o",
        "{tmp}/t",
    ],
    "wordpiece vocab below alphabet": [
        "train",
        "{en}",
        "--model",
        "wordpiece",
        "--vocab-size",
        "40",
        "-q",
        "-o",
        "{tmp}/t",
    ],
    "wordpiece specials without [CLS]": [
        "train",
        "{en}",
        "--model",
        "wordpiece",
        "--special",
        "[UNK]",
        "--vocab-size",
        "300",
        "-o",
        "{tmp}/t",
    ],
    "wordpiece with --pattern": [
        "train",
        "{en}",
        "--model",
        "wordpiece",
        "--pattern",
        "gpt2",
        "--vocab-size",
        "300",
        "-o",
        "{tmp}/t",
    ],
    "wordpiece no output folder": [
        "train",
        "{en}",
        "--model",
        "wordpiece",
        "--vocab-size",
        "300",
        "-o",
        "{tmp}/no/dir/t",
    ],
    "classic vocab below 2": [
        "train",
        "{en}",
        "--model",
        "classic",
        "--vocab-size",
        "1",
        "-o",
        "{tmp}/t",
    ],
    "classic vocab below alphabet": [
        "train",
        "{en}",
        "--model",
        "classic",
        "--vocab-size",
        "10",
        "-q",
        "-o",
        "{tmp}/t",
    ],
    "classic with --special": [
        "train",
        "{en}",
        "--model",
        "classic",
        "--special",
        "<s>",
        "--vocab-size",
        "300",
        "-o",
        "{tmp}/t",
    ],
    "bpe with --cased": ["train", "{en}", "--cased", "--vocab-size", "300", "-o", "{tmp}/t"],
    "encode broken classic file": ["encode", "--tokenizer", "{tmp}/bad_classic.json", "hi"],
    "encode broken wordpiece file": ["encode", "--tokenizer", "{tmp}/bad_wp.json", "hi"],
    "train huge vocab size": [
        "train",
        "{en}",
        "--vocab-size",
        "18446744073709551616",
        "-o",
        "{tmp}/t",
    ],
    "train negative min frequency": [
        "train",
        "{en}",
        "--vocab-size",
        "300",
        "--min-frequency",
        "-1",
        "-o",
        "{tmp}/t",
    ],
    "train huge min frequency": [
        "train",
        "{en}",
        "--vocab-size",
        "300",
        "--min-frequency",
        str(2**64),
        "-o",
        "{tmp}/t",
    ],
    "train vocab size not a number": ["train", "{en}", "--vocab-size", "lots", "-o", "{tmp}/t"],
    "train missing arguments": ["train", "{en}"],
    "unknown command": ["frobnicate"],
    "sweep huge size": ["sweep", "{en}", "--vocab-sizes", "300," + str(2**64)],
    "encode empty tokenizer (/dev/null)": ["encode", "--tokenizer", "/dev/null", "hi"],
    "encode empty tokenizer file": ["encode", "--tokenizer", "{tmp}/empty.tiktoken", "hi"],
    "encode malformed tiktoken": ["encode", "--tokenizer", "{tmp}/junk.tiktoken", "hi"],
    "encode json list as tokenizer": ["encode", "--tokenizer", "{tmp}/list.json", "hi"],
    "encode with a byte missing from the ranks": [
        "encode",
        "--tokenizer",
        "{tmp}/one.tiktoken",
        "hi",
    ],
    "count with a byte missing from the ranks": ["count", "--tokenizer", "{tmp}/one.tiktoken", "x"],
    "show with a byte missing from the ranks": ["show", "--tokenizer", "{tmp}/one.tiktoken", "x"],
}


@pytest.mark.parametrize("case", list(USER_ERRORS))
def test_user_errors_are_one_line(case, corpus, tmp_path, r50k_path):
    (tmp_path / "bad.json").write_text("{not json", encoding="utf-8")
    (tmp_path / "bad_classic.json").write_text('{"format": "subword-classic-bpe/1"}', "utf-8")
    (tmp_path / "bad_wp.json").write_text('{"model": {"type": "WordPiece"}}', "utf-8")
    (tmp_path / "empty.tiktoken").write_bytes(b"")
    (tmp_path / "junk.tiktoken").write_bytes(b"garbage\x00\xff\n")
    (tmp_path / "list.json").write_text("[1, 2]", "utf-8")
    (tmp_path / "one.tiktoken").write_bytes(b"aGVsbG8= 0\n")  # only b"hello"
    args = [a.format(tmp=tmp_path, en=corpus["en"]) for a in USER_ERRORS[case]]
    r = run(*args)
    assert r.returncode == 2, r.stdout + r.stderr
    assert "Traceback" not in r.stderr
    lines = r.stderr.strip("\n").split("\n")
    assert len(lines) == 1 and lines[0].startswith("subword: error:"), r.stderr
    assert not r.stdout
    assert not list(tmp_path.glob("t*")), "nothing is written on a user error"


def test_argument_errors_name_the_option_and_limit(corpus, tmp_path):
    r = run("train", corpus["en"], "--vocab-size", 2**64, "-o", tmp_path / "t")
    assert r.returncode == 2
    assert r.stderr == (
        "subword: error: argument --vocab-size: 18446744073709551616 is above the maximum, "
        "4294967296 (see: subword train --help)\n"
    )
    r = run("train", corpus["en"], "--vocab-size", 300, "--min-frequency", -1, "-o", tmp_path / "t")
    assert r.returncode == 2
    assert r.stderr.startswith("subword: error: argument --min-frequency: -1 is below the minimum")


def test_empty_tokenizer_file_is_named(tmp_path):
    r = run("encode", "--tokenizer", "/dev/null", "hi")
    assert (r.returncode, r.stderr) == (
        2,
        "subword: error: /dev/null: empty file, not a tokenizer\n",
    )


@pytest.mark.parametrize("model", ["bpe", "classic", "wordpiece"])
def test_output_that_is_a_folder_is_refused(model, corpus, tmp_path):
    out = tmp_path / "out"
    out.mkdir()
    r = run("train", corpus["en"], "--model", model, "--vocab-size", 300, "-q", "-o", out)
    assert r.returncode == 2, r.stdout + r.stderr
    assert r.stderr == (
        f"subword: error: -o {out} is a folder: give a file name, e.g. -o {out / 'tokenizer'}\n"
    )
    assert sorted(p.name for p in tmp_path.iterdir()) == ["out"]
    assert not list(out.iterdir())


def test_output_file_that_would_be_a_folder_is_refused(corpus, tmp_path):
    (tmp_path / "t.tiktoken").mkdir()
    r = run("train", corpus["en"], "--vocab-size", 300, "-q", "-o", tmp_path / "t")
    assert r.returncode == 2
    assert r.stderr == f"subword: error: cannot write {tmp_path / 't.tiktoken'}: it is a folder\n"
    assert not (tmp_path / "t.json").exists()


def run_bytes(*args, input: bytes, stdout=subprocess.PIPE):
    env = dict(os.environ)
    env["PYTHONPATH"] = os.pathsep.join(p for p in (_PKG_PARENT, env.get("PYTHONPATH")) if p)
    return subprocess.run(
        [sys.executable, "-m", "subword", *map(str, args)],
        input=input,
        stdout=stdout,
        stderr=subprocess.PIPE,
        env=env,
        timeout=120,
    )


@pytest.mark.parametrize("command", ["encode", "count", "show", "decode"])
def test_non_utf8_stdin_is_refused_with_the_offset(command, r50k_path):
    r = run_bytes(command, "--encoding", "r50k_base", input=b"ok text \xc3\x28 more")
    assert r.returncode == 2
    assert r.stderr.decode() == (
        "subword: error: standard input: not UTF-8 text (invalid byte 0xc3 at byte offset 8)\n"
    )
    assert not r.stdout


def test_non_utf8_argument_is_refused_with_the_offset(r50k_path):
    env = dict(os.environ)
    env["PYTHONPATH"] = os.pathsep.join(p for p in (_PKG_PARENT, env.get("PYTHONPATH")) if p)
    args = [b"encode", b"--encoding", b"r50k_base", b"ab\xffcd"]
    r = subprocess.run(
        [os.fsencode(sys.executable), b"-m", b"subword", *args],
        capture_output=True,
        env=env,
        timeout=120,
    )
    assert r.returncode == 2
    assert r.stderr.decode() == (
        "subword: error: the text argument: not UTF-8 text (invalid byte 0xff at byte offset 2)\n"
    )


def test_non_utf8_input_file_is_refused_with_the_offset(tmp_path, r50k_path):
    bad = tmp_path / "bad.txt"
    bad.write_bytes("héllo".encode() + b"\x80")
    r = run("stats", bad, "--encoding", "r50k_base")
    assert r.returncode == 2
    assert r.stderr == (
        f"subword: error: {bad}: not UTF-8 text (invalid byte 0x80 at byte offset 6)\n"
    )


@pytest.mark.skipif(not os.path.exists("/dev/full"), reason="needs /dev/full")
@pytest.mark.parametrize(
    "args",
    [
        ["show", "--encoding", "r50k_base", "hi there"],
        ["encode", "--json", "--encoding", "r50k_base", "hi there"],
        ["encode", "--encoding", "r50k_base"],  # a long output, from stdin
        ["count", "--encoding", "r50k_base", "hi"],
    ],
)
def test_full_disk_on_stdout_is_one_line(args, r50k_path):
    with open("/dev/full", "wb") as full:
        r = run_bytes(*args, input=b"hello world " * 50_000, stdout=full)
    assert r.returncode == 2
    assert r.stderr.decode() == "subword: error: cannot write the output: No space left on device\n"


def _random_word_corpus(path: Path, n_bytes: int, seed: int = 7) -> None:
    """Random letter strings: hundreds of thousands of distinct words, so merging is long."""
    rng = random.Random(seed)
    letters = "abcdefghijklmnopqrstuvwxyz"
    words = ["".join(rng.choices(letters, k=rng.randint(4, 14))) for _ in range(500_000)]
    lines, n = [], 0
    while n < n_bytes:
        line = " ".join(rng.choices(words, k=16)) + "\n"
        lines.append(line)
        n += len(line)
    path.write_text("".join(lines), encoding="ascii")


def _train_and_interrupt_while_merging(corpus: Path, out: Path):
    """Run `subword train` on ``corpus`` and send it SIGINT once it reports merging; returns
    (exit code, seconds from the signal to the exit, stdout, stderr)."""
    import signal
    import threading
    import time

    env = dict(os.environ)
    env["PYTHONPATH"] = os.pathsep.join(p for p in (_PKG_PARENT, env.get("PYTHONPATH")) if p)
    # A child inherits an ignored SIGINT (a shell runs `cmd &` that way when job control is
    # off, as CI runners may), and Python then installs no KeyboardInterrupt handler; a user at a
    # terminal has the default, so the child starts with that.
    proc = subprocess.Popen(
        [sys.executable, "-m", "subword", "train", str(corpus), "--vocab-size", "1000000"]
        + ["-o", str(out)],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        env=env,
        preexec_fn=lambda: signal.signal(signal.SIGINT, signal.SIG_DFL),
    )
    err = bytearray()
    merging = threading.Event()

    def read_stderr():
        while chunk := proc.stderr.read1(4096):
            err.extend(chunk)
            if b"merging" in err:
                merging.set()

    reader = threading.Thread(target=read_stderr, daemon=True)
    reader.start()
    try:
        assert merging.wait(120), "no merge progress on stderr: " + err.decode(errors="replace")
        time.sleep(0.05)  # inside the merge loop, which on this corpus lasts several seconds
        assert proc.poll() is None, "training ended before it could be interrupted"
        t = time.monotonic()
        proc.send_signal(signal.SIGINT)
        try:
            code = proc.wait(timeout=60)
        except subprocess.TimeoutExpired:
            code = None
        waited = time.monotonic() - t
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()
        reader.join(5)
    return code, waited, proc.stdout.read().decode(), err.decode(errors="replace")


@pytest.mark.slow
@pytest.mark.skipif(sys.platform == "win32", reason="SIGINT to a child process")
def test_ctrl_c_during_merging_exits_130_promptly_and_writes_nothing(tmp_path):
    corpus = tmp_path / "big.txt"
    _random_word_corpus(corpus, 10_000_000)
    out = tmp_path / "tok"
    code, waited, stdout, text = _train_and_interrupt_while_merging(corpus, out)
    assert code == 130, f"exit {code}\n{stdout}\n{text[-2000:]}"
    assert waited < 5, f"took {waited:.1f} s to stop after SIGINT"
    assert "Traceback" not in text
    assert text.rstrip("\n").split("\n")[-1].endswith("subword: interrupted")
    assert not stdout
    assert sorted(p.name for p in tmp_path.iterdir()) == ["big.txt"], "no output file is left"


# ----- tokenize: files to shards -----


def test_tokenize_writes_shards_equal_to_tiktoken_and_stats_reads_them(encodings, tmp_path):
    import numpy as np
    import subword

    _, tk = encodings("r50k_base")
    lines = [" ".join(EN_WORDS[i : i + 7]) for i in range(0, 40)] + [" ".join(KO_WORDS)]
    (tmp_path / "a.jsonl").write_text("".join(json.dumps({"body": t}) + "\n" for t in lines))
    out = tmp_path / "shards"
    r = run(
        "tokenize",
        tmp_path / "a.jsonl",
        "--encoding",
        "r50k_base",
        "--format",
        "jsonl",
        "--field",
        "body",
        "-o",
        out,
        "--shard-tokens",
        "64",
    )
    assert r.returncode == 0, r.stderr
    assert "tokenize:" in r.stderr and "MB read" in r.stderr  # the progress line
    want = [i for t in lines for i in [*tk.encode_ordinary(t), tk.eot_token]]
    assert f"tokens:      {len(want):,}" in r.stdout
    tokens, index = subword.read_shards(out)
    assert np.asarray(tokens).tolist() == want and len(index) == len(lines) + 1
    stats = ok("tokenize", "--stats", out)
    assert f"documents:   {len(lines):,}" in stats and "r50k_base (tiktoken" in stats
    again = run("tokenize", tmp_path / "a.jsonl", "--format", "jsonl", "-o", out)
    assert again.returncode == 2 and "--overwrite" in again.stderr
    wrong_field = run("tokenize", tmp_path / "a.jsonl", "--format", "jsonl", "-o", tmp_path / "b")
    assert wrong_field.returncode == 2 and 'no field "text"' in wrong_field.stderr
    assert "Traceback" not in again.stderr + wrong_field.stderr
