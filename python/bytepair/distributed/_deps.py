"""The optional modules of ``bytepair.distributed`` (the ``ray`` extra)."""

from __future__ import annotations

from typing import Any

from bytepair._optional import require


def require_ray() -> Any:
    """The ``ray`` module (``engine="ray"``)."""
    return require("ray", "engine='ray' (or use engine='local')", "ray")


def require_pyarrow(what: str, module: str = "pyarrow") -> Any:
    """``pyarrow`` or one of its modules (``"pyarrow.fs"``, ``"pyarrow.parquet"``): parquet,
    compressed and remote inputs."""
    return require(module, what, "ray")
