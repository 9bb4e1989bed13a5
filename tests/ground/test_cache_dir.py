"""The user cache directory on Linux (:func:`mfstein.ground.cache.linux_cache_home`):
read from ``$XDG_CACHE_HOME`` or ``~/.cache`` without importing platformdirs, and
the same directory platformdirs gives."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from mfstein.ground import cache

pytestmark = pytest.mark.skipif(sys.platform != "linux", reason="the Linux rule")

ROOT = Path(__file__).resolve().parents[2]


def _platformdirs() -> Path:
    import platformdirs

    return Path(platformdirs.user_cache_dir("mfstein", appauthor=False))


@pytest.mark.parametrize(
    ("xdg", "home"),
    [
        ("/var/tmp/xdg-cache", "/home/someone"),  # an absolute XDG_CACHE_HOME
        ("/var/tmp/xdg-cache/", "/home/someone"),  # with a trailing slash
        (None, "/home/someone"),  # unset: ~/.cache
        ("", "/home/someone"),  # empty: ~/.cache
        ("   ", "/home/someone/"),  # blank: ~/.cache
        (None, None),  # no HOME either: the password database
    ],
)
def test_the_linux_rule_gives_the_directory_platformdirs_gives(monkeypatch, xdg, home):
    monkeypatch.delenv(cache.ENV_VAR, raising=False)
    for name, value in (("XDG_CACHE_HOME", xdg), ("HOME", home)):
        if value is None:
            monkeypatch.delenv(name, raising=False)
        else:
            monkeypatch.setenv(name, value)
    assert cache.linux_cache_home() is not None  # the rule answered, not platformdirs
    assert cache.configured_cache_dir() == _platformdirs()


@pytest.mark.parametrize(("xdg", "home"), [("relative/cache", "/home/someone"), (None, "rel")])
def test_a_relative_xdg_cache_home_or_home_is_left_to_platformdirs(monkeypatch, xdg, home):
    monkeypatch.delenv(cache.ENV_VAR, raising=False)
    monkeypatch.setenv("HOME", home)
    if xdg is None:
        monkeypatch.delenv("XDG_CACHE_HOME", raising=False)
    else:
        monkeypatch.setenv("XDG_CACHE_HOME", xdg)
    assert cache.linux_cache_home() is None


def test_the_cache_directory_is_found_without_importing_platformdirs(tmp_path):
    env = {k: v for k, v in os.environ.items() if k != cache.ENV_VAR}
    env.update(XDG_CACHE_HOME=str(tmp_path), PYTHONPATH=str(ROOT))
    code = (
        "import sys; from mfstein.ground import cache; print(cache.cache_dir()); "
        "print('platformdirs' in sys.modules)"
    )
    out = subprocess.run(
        [sys.executable, "-c", code], env=env, capture_output=True, text=True, check=True
    ).stdout.split()
    assert out == [str(tmp_path / "mfstein"), "False"]
