"""Shared fixtures: where the shared data lives, and the rule that CI may not skip data tests.

Tests that read ``../shared`` (vocabularies, corpora) use the ``shared`` fixture. On a user's
machine without the data they skip with a reason; with ``BYTEPAIR_REQUIRE_SHARED=1`` (set by
``.ci/run``) a missing file fails instead, and any skipped test fails the session.
"""

from __future__ import annotations

import os
import tempfile
from pathlib import Path

import hypothesis.configuration
import pytest

ROOT = Path(__file__).resolve().parent.parent
SHARED = Path(os.environ.get("BYTEPAIR_SHARED", ROOT.parent / "shared")).resolve()
REQUIRE_SHARED = os.environ.get("BYTEPAIR_REQUIRE_SHARED", "") not in ("", "0")

# Tests never touch the network: vocabularies come from the shared folder or nowhere.
os.environ.setdefault("BYTEPAIR_OFFLINE", "1")

# tiktoken caches even local vocabulary files in /tmp/data-gym-cache unless told not to.
os.environ.setdefault("TIKTOKEN_CACHE_DIR", "")

# Tests never write into the working tree: hypothesis keeps its database in a temporary folder.
hypothesis.configuration.set_hypothesis_home_dir(
    Path(tempfile.gettempdir()) / "bytepair-hypothesis"
)


def shared_path(*parts: str) -> Path:
    """The path of a shared file, or skip (fail under CI) when it is absent."""
    path = SHARED.joinpath(*parts)
    if not path.exists():
        message = f"shared data not found: {path} (set BYTEPAIR_SHARED)"
        if REQUIRE_SHARED:
            pytest.fail(message)
        pytest.skip(message)
    return path


@pytest.fixture(scope="session")
def shared() -> Path:
    """The shared data folder (``BYTEPAIR_SHARED``, default ``../shared``)."""
    return shared_path()


def pytest_sessionfinish(session: pytest.Session, exitstatus: int) -> None:
    # Under CI every test must run: a skip would hide a missing dependency or data file.
    if not REQUIRE_SHARED:
        return
    reporter = session.config.pluginmanager.get_plugin("terminalreporter")
    skipped = len(reporter.stats.get("skipped", [])) if reporter else 0
    if skipped and session.exitstatus == 0:
        print(f"\nBYTEPAIR_REQUIRE_SHARED is set and {skipped} test(s) were skipped: failing.")
        session.exitstatus = 1
