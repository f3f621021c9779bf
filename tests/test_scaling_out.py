"""Issue 13: the two cluster jobs on real engines started locally (Dask, Ray Data, Spark) and
with multiprocessing: encoding a dataset (ids equal tiktoken's) and counting pre-tokens in map
tasks whose sum trains exactly the merges ``subword.train`` learns. The README's "Scaling out"
examples are these tests' code."""

from __future__ import annotations

import multiprocessing as mp
import os
import sys
from collections import Counter

import pytest
import subword

DOCS = [
    f"Document {i}: the quick brown fox {i * 7} jumps. 빠른 갈색 여우가 {i}번 뛰어넘는다!\n"
    f"  second line of {i}   with  spaces\t\ttabs\n\n"
    for i in range(300)
]
VOCAB, SPECIALS = 400, ["<|endoftext|>"]


@pytest.fixture(scope="module")
def files(tmp_path_factory):
    """Four files, each one document (what `subword.train` reads a file as)."""
    d = tmp_path_factory.mktemp("corpus")
    out = []
    for k in range(4):
        p = d / f"part{k}.txt"
        p.write_text("".join(DOCS[k::4]), encoding="utf-8", newline="")
        out.append(str(p))
    return out


@pytest.fixture(scope="module")
def reference(files):
    """What training on one machine learns: the oracle for every cluster count."""
    return subword.train(files, VOCAB, special_tokens=SPECIALS, show_progress=False).merges


def engine(module: str, extra: str):
    """The engine's module; missing, a skip on a developer's machine and a failure under CI=true
    (which installs every engine)."""
    import refdata

    try:
        return __import__(module)
    except ImportError as e:
        if refdata.in_ci():
            pytest.fail(f"{module} is not installed under CI=true: {e}", pytrace=False)
        pytest.skip(f"{module} is not installed: pip install 'subword[{extra}]'")


def read(path: str) -> str:
    with open(path, encoding="utf-8", newline="") as f:
        return f.read()


def count_files(paths) -> dict[str, int]:
    # A map task: count the pre-tokens of its files, one document each.
    return subword.count_pretokens([read(p) for p in paths], special_tokens=SPECIALS)


def train_on(counts) -> list:
    enc = subword.train_from_counts(counts, VOCAB, special_tokens=SPECIALS, show_progress=False)
    return enc.merges


def test_counts_merge_by_addition(files, reference):
    total = Counter()
    for path in files:
        total.update(count_files([path]))
    assert train_on(total) == reference
    # Summing in any order, with any split into tasks, gives the same merges.
    halves = Counter(count_files(files[2:])) + Counter(count_files(files[:2]))
    assert halves == total and train_on(dict(reversed(list(total.items())))) == reference


def test_count_pretokens_is_train_from_iterators_count():
    docs = DOCS[:50]
    want = subword.train_from_iterator(docs, VOCAB, special_tokens=SPECIALS, show_progress=False)
    counts = Counter()
    for k in range(0, 50, 7):
        counts.update(subword.count_pretokens(docs[k : k + 7], special_tokens=SPECIALS))
    assert train_on(counts) == want.merges
    # Special tokens are cut out, never counted.
    assert not any(
        "<|endoftext|>" in p
        for p in subword.count_pretokens(["a<|endoftext|>b"], special_tokens=SPECIALS)
    )
    with pytest.raises(TypeError, match="wrap it in a list"):
        subword.count_pretokens("one string")


def test_multiprocessing_pool(files, reference, encodings):
    enc, tk = encodings("cl100k_base")
    with mp.get_context("spawn").Pool(2) as pool:
        counts = pool.map(count_files, [[p] for p in files])
        ids = pool.map(enc.encode_ordinary, DOCS[:20])
    assert train_on(sum(map(Counter, counts), Counter())) == reference
    assert ids == [tk.encode_ordinary(d) for d in DOCS[:20]]


# ----- Dask -----


def test_dask(files, reference, encodings):
    dask = engine("dask", "dask")
    import dask.bag as db
    import dask.dataframe as dd
    import pandas as pd
    from distributed import Client, LocalCluster

    enc, tk = encodings("cl100k_base")
    with (
        LocalCluster(
            n_workers=2, threads_per_worker=1, processes=True, dashboard_address=None
        ) as cluster,
        Client(cluster),
    ):
        # Counting: one partial count per partition, summed, then trained on.
        partials = (
            db.from_sequence(files, npartitions=2)
            .map_partitions(lambda paths: [count_files(list(paths))])
            .compute()
        )
        assert train_on(sum(map(Counter, partials), Counter())) == reference

        # Encoding: the encoding travels to the workers by name.
        df = dd.from_pandas(pd.DataFrame({"text": DOCS}), npartitions=4)
        ids = df.map_partitions(
            lambda part: part.assign(ids=enc.encode_ordinary_batch(list(part["text"]))),
            meta={"text": object, "ids": object},
        ).compute()
    assert list(ids["ids"]) == [tk.encode_ordinary(d) for d in DOCS]
    assert dask.__version__


# ----- Ray Data -----


class EncodeBatch:
    """A Ray Data callable class: each actor loads the tokenizer once."""

    def __init__(self):
        self.enc = subword.get_encoding("cl100k_base")

    def __call__(self, batch):
        batch["ids"] = self.enc.encode_ordinary_batch(list(batch["text"]))
        return batch


def count_batch(batch):
    counts = subword.count_pretokens([read(p) for p in batch["path"]], special_tokens=SPECIALS)
    return {"pretoken": list(counts), "count": list(counts.values())}


def test_ray_data(files, reference, encodings):
    ray = engine("ray", "ray")
    _, tk = encodings("cl100k_base")
    # Workers import this module (EncodeBatch, count_batch) and read the same rank cache.
    env = {k: v for k, v in os.environ.items() if k.endswith("CACHE_DIR")}
    env["PYTHONPATH"] = os.pathsep.join(
        [os.path.dirname(__file__), os.environ.get("PYTHONPATH", "")]
    )
    ray.init(
        num_cpus=2, include_dashboard=False, log_to_driver=False, runtime_env={"env_vars": env}
    )
    try:
        ctx = ray.data.DataContext.get_current()
        ctx.enable_progress_bars = False
        ds = ray.data.from_items([{"text": d} for d in DOCS])
        out = ds.map_batches(EncodeBatch, concurrency=2, batch_size=64).take_all()
        assert [list(r["ids"]) for r in out] == [tk.encode_ordinary(d) for d in DOCS]

        paths = ray.data.from_items([{"path": p} for p in files])
        counts = (
            paths.map_batches(count_batch, batch_size=1)
            .groupby("pretoken")
            .sum("count")
            .to_pandas()
        )
        total = dict(zip(counts["pretoken"], counts["sum(count)"]))
        assert train_on(total) == reference
    finally:
        ray.shutdown()


# ----- Spark -----


def test_spark(files, reference, encodings, monkeypatch):
    engine("pyspark", "spark")
    from pyspark.sql import SparkSession

    monkeypatch.setenv("PYSPARK_PYTHON", sys.executable)
    # Python workers import this module (count_files) and read the same rank cache.
    monkeypatch.setenv(
        "PYTHONPATH", os.pathsep.join([os.path.dirname(__file__), os.environ.get("PYTHONPATH", "")])
    )
    _, tk = encodings("cl100k_base")
    spark = (
        SparkSession.builder.master("local[2]")
        .config("spark.ui.enabled", "false")
        .config("spark.sql.shuffle.partitions", "2")
        .getOrCreate()
    )
    spark.sparkContext.setLogLevel("ERROR")
    try:
        import pandas as pd

        def encode(frames):
            enc = subword.get_encoding("cl100k_base")  # once per task
            for df in frames:
                yield pd.DataFrame({"ids": enc.encode_ordinary_batch(list(df["text"]))})

        texts = spark.createDataFrame(pd.DataFrame({"text": DOCS})).repartition(2)
        ids = [list(r["ids"]) for r in texts.mapInPandas(encode, "ids array<int>").collect()]
        assert sorted(ids) == sorted(tk.encode_ordinary(d) for d in DOCS)

        def count(frames):
            for df in frames:
                c = count_files(list(df["path"]))
                yield pd.DataFrame({"pretoken": list(c), "count": list(c.values())})

        paths = spark.createDataFrame(pd.DataFrame({"path": files})).repartition(2)
        rows = (
            paths.mapInPandas(count, "pretoken string, count long")
            .groupBy("pretoken")
            .sum("count")
            .collect()
        )
        assert train_on({r["pretoken"]: r["sum(count)"] for r in rows}) == reference
    finally:
        spark.stop()
