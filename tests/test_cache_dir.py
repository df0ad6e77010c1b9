"""Where downloaded vocabularies go: BYTEPAIR_CACHE_DIR, else the platform's cache folder as
platformdirs knows it (XDG on Linux, ~/Library/Caches on macOS, %LOCALAPPDATA% on Windows)."""

from __future__ import annotations

import sys
from pathlib import Path

import platformdirs
import pytest

from bytepair import registry


def test_bytepair_cache_dir_comes_first(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("BYTEPAIR_CACHE_DIR", str(tmp_path / "mine"))
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "xdg"))
    assert registry.cache_dir() == tmp_path / "mine"


def test_the_platform_cache_folder(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("BYTEPAIR_CACHE_DIR", raising=False)
    seen: list[tuple[object, ...]] = []

    def user_cache_dir(*args: object, **kwargs: object) -> str:
        seen.append((*args, *kwargs.items()))
        return str(tmp_path / "platform" / "bytepair")

    monkeypatch.setattr(platformdirs, "user_cache_dir", user_cache_dir)
    assert registry.cache_dir() == tmp_path / "platform" / "bytepair"
    assert seen and seen[0][0] == "bytepair"


@pytest.mark.skipif(sys.platform != "linux", reason="the XDG layout is Linux's")
def test_on_linux_it_is_xdg(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("BYTEPAIR_CACHE_DIR", raising=False)
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "xdg"))
    assert registry.cache_dir() == tmp_path / "xdg" / "bytepair"
    monkeypatch.delenv("XDG_CACHE_HOME")
    assert registry.cache_dir() == Path.home() / ".cache" / "bytepair"
