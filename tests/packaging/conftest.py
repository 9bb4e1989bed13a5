"""Distributions of this source tree, built once per test session (offline).

``python -m build --no-isolation`` uses the ``build`` and ``setuptools`` of
the test environment (both in the ``test`` extra), so no index is contacted.
"""

from __future__ import annotations

import shutil
import subprocess
import sys
from pathlib import Path

import pytest
from deadlines import deadline

ROOT = Path(__file__).resolve().parents[2]


@pytest.fixture(scope="session")
def dists(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    """``{"sdist": .tar.gz, "wheel": .whl}`` built from a copy of the tree."""
    pytest.importorskip("build", reason="the test extra's 'build' package is not installed")
    out = tmp_path_factory.mktemp("dist")
    # build from a copy so that no build/ or *.egg-info appears in the tree
    src = out / "src"
    shutil.copytree(
        ROOT,
        src,
        symlinks=True,
        ignore=shutil.ignore_patterns(
            ".venv",
            ".git",
            "__pycache__",
            ".pytest_cache",
            ".ruff_cache",
            ".hypothesis",
            "_build",
            "build",
            "dist",
            "*.egg-info",
        ),
    )
    subprocess.run(
        [sys.executable, "-m", "build", "--no-isolation", "--outdir", str(out), str(src)],
        check=True,
        capture_output=True,
        text=True,
        timeout=deadline(300),
    )
    return {"sdist": next(out.glob("*.tar.gz")), "wheel": next(out.glob("*.whl"))}
