"""Test setup: offline reference data, the tiktoken oracle, hypothesis profile.

Environment variables read here:
  CI=true                       fail (not skip) when reference data cannot be fetched; 5000
                                hypothesis examples instead of 300
  SUBWORD_TEST_CACHE            where reference rank files are kept (default <repo>/.cache/refdata)
  SUBWORD_HYPOTHESIS_EXAMPLES   override the number of hypothesis examples
  SUBWORD_TEST_IMPL=tiktoken    run the suite against tiktoken through tests/subword_shim.py
                                (only to check the tests themselves; subword-only features fail)
"""

from __future__ import annotations

import os
import sys
from pathlib import Path

TESTS_DIR = Path(__file__).resolve().parent
if str(TESTS_DIR) not in sys.path:
    sys.path.insert(0, str(TESTS_DIR))

import refdata  # noqa: E402

# Before tiktoken or subword load anything.
refdata.configure_environment()

if os.environ.get("SUBWORD_TEST_IMPL", "subword") == "tiktoken":
    import subword_shim  # noqa: E402

    sys.modules["subword"] = subword_shim

import pytest  # noqa: E402
from hypothesis import HealthCheck, settings  # noqa: E402

settings.register_profile(
    "subword",
    max_examples=refdata.hypothesis_examples(),
    deadline=None,
    suppress_health_check=[
        HealthCheck.too_slow,
        HealthCheck.data_too_large,
        HealthCheck.filter_too_much,
    ],
    print_blob=True,
)
settings.load_profile("subword")

#: Encodings under test; each is compared with tiktoken's refdata.ORACLE[name].
ENCODINGS = ["gpt2", "r50k_base", "cl100k_base", "o200k_base"]


def pytest_configure(config):
    config.addinivalue_line("markers", "corpora: whole-corpus parity checks on ../shared/corpora")
    config.addinivalue_line("markers", "slow: takes more than a few seconds")


def pytest_report_header(config):
    corpora = refdata.corpora_files()
    return [
        f"subword implementation: {os.environ.get('SUBWORD_TEST_IMPL', 'subword')}",
        f"reference data cache: {refdata.cache_dir()}",
        f"hypothesis max_examples: {refdata.hypothesis_examples()} (CI={refdata.in_ci()})",
        f"corpora: {refdata.corpora_dir()} ({len(corpora)} files)",
    ]


def require_ranks(name: str) -> Path:
    """Path of the rank file behind encoding `name`; skips the test (fails it under CI=true) if
    the file cannot be had."""
    file = refdata.ORACLE.get(name, name)
    try:
        return refdata.ensure(file)
    except refdata.RefDataUnavailable as e:
        if refdata.in_ci():
            pytest.fail(f"reference data {file} unavailable and CI=true:\n{e}", pytrace=False)
        pytest.skip(f"reference data {file} unavailable: {e}")


_PAIRS: dict[str, tuple] = {}


def load_pair(name: str):
    """(subword encoding, tiktoken oracle encoding) for a built-in encoding name."""
    require_ranks(name)
    if name not in _PAIRS:
        import subword
        import tiktoken

        _PAIRS[name] = (subword.get_encoding(name), tiktoken.get_encoding(refdata.ORACLE[name]))
    return _PAIRS[name]


@pytest.fixture(scope="session", params=ENCODINGS)
def pair(request):
    """(subword, tiktoken) encodings, parametrized over ENCODINGS."""
    return load_pair(request.param)


@pytest.fixture(scope="session")
def encodings():
    """load_pair itself: `sw, tk = encodings("cl100k_base")`."""
    return load_pair


@pytest.fixture(scope="session")
def r50k_pair():
    return load_pair("r50k_base")


@pytest.fixture(scope="session")
def r50k_path() -> Path:
    return require_ranks("r50k_base")


@pytest.fixture(scope="session")
def r50k_ranks(r50k_path) -> dict[bytes, int]:
    return refdata.load_ranks(r50k_path)


@pytest.fixture(scope="session")
def corpora() -> list[Path]:
    """The corpus files; skips only when ../shared/corpora is absent."""
    files = refdata.corpora_files()
    if not refdata.corpora_dir().is_dir():
        pytest.skip(f"corpora folder {refdata.corpora_dir()} is absent")
    return files
