"""Whether the cache directory can be written (:func:`mfstein.ground.cache.cache_dir`):
a folder that is missing is made and used; a file in its place, or a folder the process
may not write into, leaves it to a private temporary directory, with one warning."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from mfstein.ground import cache

pytestmark = pytest.mark.skipif(sys.platform != "linux", reason="POSIX permissions")

ROOT = Path(__file__).resolve().parents[2]
#: The child prints the directory it uses, then each warning's message.
CODE = """
import warnings
from mfstein.ground import cache
with warnings.catch_warnings(record=True) as caught:
    warnings.simplefilter("always")
    print(cache.cache_dir())
print(len(caught), *(str(w.message) for w in caught))
"""


def _run(where: Path, prefix: tuple[str, ...] = ()) -> list[str]:
    env = dict(os.environ, PYTHONPATH=str(ROOT), **{cache.ENV_VAR: str(where)})
    out = subprocess.run(
        [*prefix, sys.executable, "-c", CODE], env=env, capture_output=True, text=True, check=True
    )
    return out.stdout.splitlines()


def test_a_missing_folder_is_made_and_used(tmp_path: Path) -> None:
    where = tmp_path / "a" / "b"
    assert _run(where) == [str(where), "0"] and where.is_dir()


def test_a_file_in_the_folders_place_leaves_the_cache_to_a_temporary_folder(
    tmp_path: Path,
) -> None:
    where = tmp_path / "file"
    where.write_text("")
    used, warned = _run(where)
    assert used != str(where) and "is not writable" in warned and warned.startswith("1 ")


def test_a_folder_the_process_may_not_write_is_left_for_a_temporary_one(tmp_path: Path) -> None:
    """A read-only folder (for root: run without its capabilities, so that the
    permissions apply to it, as ``tests/packaging/test_readonly_install.py`` does)."""
    prefix: tuple[str, ...] = ()
    if os.geteuid() == 0:
        if shutil.which("setpriv") is None:
            pytest.skip("running as root without setpriv: cannot drop privileges")
        prefix = ("setpriv", "--bounding-set=-all", "--inh-caps=-all", "--no-new-privs")
    where = tmp_path / "cache"
    where.mkdir()
    where.chmod(0o500)
    try:
        used, warned = _run(where, prefix)
        assert used != str(where) and "is not writable" in warned
        where.chmod(0o700)
        assert _run(where, prefix) == [str(where), "0"]
    finally:
        where.chmod(0o700)
