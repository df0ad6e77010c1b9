"""What the wheel and the sdist promise: the metadata in pyproject.toml, one version everywhere,
``python -m bytepair``, and (slow) the sdist's contents.

Under ``scripts/check-wheel.sh`` the tests run against an installed wheel: it sets
``BYTEPAIR_TEST_INSTALLED`` to the installed package's folder, and the test of the
installed files exists only then.
"""

from __future__ import annotations

import importlib.metadata
import os
import re
import subprocess
import sys
import tarfile
from pathlib import Path
from typing import Any

import pytest

import bytepair

from conftest import ROOT

if sys.version_info >= (3, 11):
    import tomllib
else:
    import tomli as tomllib

SUPPORTED_PYTHONS = ["3.10", "3.11", "3.12", "3.13"]
INSTALLED = os.environ.get("BYTEPAIR_TEST_INSTALLED", "")


def pyproject() -> dict[str, Any]:
    return tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))


def cargo_version() -> str:
    workspace = tomllib.loads((ROOT / "Cargo.toml").read_text(encoding="utf-8"))
    version: str = workspace["workspace"]["package"]["version"]
    return version


def test_licence_is_a_pep_639_expression_with_its_file() -> None:
    project = pyproject()["project"]
    assert project["license"] == "MIT"
    assert project["license-files"] == ["LICENSE"]
    assert "MIT License" in (ROOT / "LICENSE").read_text(encoding="utf-8")
    # PEP 639: a licence classifier beside an expression is an error for the build backends.
    assert not [c for c in project["classifiers"] if c.startswith("License ::")]
    # The maturin that writes License-Expression (metadata 2.4).
    assert re.fullmatch(r"maturin>=1\.9\.4,<2", pyproject()["build-system"]["requires"][0])


def test_classifiers_name_every_supported_python_os_and_typing() -> None:
    project = pyproject()["project"]
    classifiers = set(project["classifiers"])
    versions = sorted(
        c.removeprefix("Programming Language :: Python :: ")
        for c in classifiers
        if re.fullmatch(r"Programming Language :: Python :: 3\.\d+", c)
    )
    assert versions == SUPPORTED_PYTHONS
    assert project["requires-python"] == f">={SUPPORTED_PYTHONS[0]}"
    assert {
        "Operating System :: POSIX :: Linux",
        "Operating System :: MacOS",
        "Operating System :: Microsoft :: Windows",
        "Typing :: Typed",
    } <= classifiers


def test_project_urls_and_authors() -> None:
    project = pyproject()["project"]
    assert set(project["urls"]) == {
        "Homepage",
        "Repository",
        "Documentation",
        "Changelog",
        "Issues",
    }
    assert all(url.startswith("https://") for url in project["urls"].values())
    assert project["authors"] and all(author["name"] for author in project["authors"])


def test_the_version_has_one_source() -> None:
    project = pyproject()["project"]
    assert "version" not in project
    assert project["dynamic"] == ["version"]
    bindings = tomllib.loads((ROOT / "bindings/Cargo.toml").read_text(encoding="utf-8"))
    assert bindings["package"]["version"] == {"workspace": True}
    assert importlib.metadata.version("bytepair") == cargo_version()
    assert bytepair.__version__ == cargo_version()


def test_python_m_bytepair_is_the_command() -> None:
    done = subprocess.run(
        [sys.executable, "-m", "bytepair", "--help"], capture_output=True, text=True, timeout=120
    )
    assert done.returncode == 0, done.stderr
    assert "Usage:" in done.stdout
    for command in ("count", "encode", "decode", "show", "train"):
        assert re.search(rf"^\s+{command}\s", done.stdout, re.MULTILINE), command
    version = subprocess.run(
        [sys.executable, "-m", "bytepair", "--version"], capture_output=True, text=True, timeout=120
    )
    assert version.returncode == 0, version.stderr
    assert cargo_version() in version.stdout


def test_the_package_under_test_is_the_one_this_run_means() -> None:
    package = Path(bytepair.__file__).resolve().parent
    if INSTALLED:
        assert package == Path(INSTALLED).resolve()
        assert not package.is_relative_to(ROOT.resolve())
    else:
        assert package == (ROOT / "python" / "bytepair").resolve()


# Only against a wheel (an editable install lists other files); defined, not skipped, since
# CI fails a session with skips.
if INSTALLED:

    def test_the_wheel_installs_the_stubs_the_licence_and_the_metadata() -> None:
        files = {str(f).replace("\\", "/") for f in importlib.metadata.files("bytepair") or []}
        assert {"bytepair/_core.pyi", "bytepair/py.typed", "bytepair/__main__.py"} <= files
        assert f"bytepair-{cargo_version()}.dist-info/licenses/LICENSE" in files
        assert any(re.fullmatch(r"bytepair/_core\..*(so|pyd)", f) for f in files)
        metadata = importlib.metadata.metadata("bytepair")
        assert metadata["License-Expression"] == "MIT"
        assert metadata["Requires-Python"] == f">={SUPPORTED_PYTHONS[0]}"
        assert "Typing :: Typed" in metadata.get_all("Classifier", [])
        urls = metadata.get_all("Project-URL", [])
        assert "Repository, https://github.com/bytepair/bytepair" in urls


@pytest.mark.slow
def test_sdist_has_what_the_build_needs_and_no_test_data(tmp_path: Path) -> None:
    pytest.importorskip("maturin", reason="maturin builds the sdist (in the dev extra)")
    done = subprocess.run(
        [sys.executable, "-m", "maturin", "sdist", "--out", str(tmp_path)],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=600,
    )
    assert done.returncode == 0, done.stderr
    (sdist,) = tmp_path.glob("bytepair-*.tar.gz")
    assert sdist.name == f"bytepair-{cargo_version()}.tar.gz"
    with tarfile.open(sdist) as archive:
        prefix = f"bytepair-{cargo_version()}/"
        names = {name.removeprefix(prefix) for name in archive.getnames()}
    assert {
        "LICENSE",
        "README.md",
        "pyproject.toml",
        "Cargo.toml",
        "Cargo.lock",
        "core/Cargo.toml",
        "bindings/Cargo.toml",
        "core/src/lib.rs",
        "bindings/src/lib.rs",
        "python/bytepair/__init__.py",
        "python/bytepair/_core.pyi",
        "python/bytepair/py.typed",
    } <= names
    assert not [n for n in names if n.startswith(("tests/", "benchmarks/", "fuzz/", "target/"))]
    assert not [n for n in names if "shared" in Path(n).parts or n.startswith("..")]
    # Built extensions from a working tree must not travel with the sources.
    assert not [n for n in names if n.endswith((".so", ".pyd", ".whl"))]
