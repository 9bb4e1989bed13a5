"""``mfstein cache``: the cache directory's parts and ``--clear``, on a cache filled by a
plain model's run (mfstein.ground.cache_contents)."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import textwrap

from deadlines import deadline
from in_process import run_main

from mfstein.ground.cache_contents import PARTS

SIS = textwrap.dedent(
    """
    import sympy as sp
    from derive import Model, Transition

    def sis():
        s, i, beta, gamma = sp.symbols("s i beta gamma")
        return Model("plain-sis", (s, i), (beta, gamma),
                     [Transition((-1, 1), beta * s * i), Transition((1, -1), gamma * i)])
    """
)


def _run(args: list[str], cache, cwd) -> subprocess.CompletedProcess:
    """``mfstein ARGS`` as a new process with ``MFSTEIN_CACHE_DIR=cache``."""
    return subprocess.run(
        [sys.executable, "-m", "mfstein", *args],
        env={**os.environ, "MFSTEIN_CACHE_DIR": str(cache)},
        capture_output=True,
        text=True,
        cwd=cwd,
        timeout=deadline(300),
    )


def test_cache_lists_its_parts_and_clear_keeps_what_is_not_mfsteins(tmp_path, capsys):
    model = tmp_path / "sis.py"
    model.write_text(SIS)
    cache = tmp_path / "cache"
    solve = ["solve", "--model", f"{model}:sis", "--param", "beta=2", "--param", "gamma=1"]
    solve += ["--start", "0.9,0.1", "--json"]
    first = _run(solve, cache, tmp_path)
    assert first.returncode == 0, first.stderr
    # the user's own files in a directory they chose for the cache
    (cache / "notes.txt").write_text("mine\n")
    (cache / "mine").mkdir()
    (cache / "mine" / "script.py").write_text("print('mine')\n")
    (cache / "helper.py").write_text("x = 1\n")  # a .py file mfstein did not write
    # a folder with one of mfstein's names but the user's files in it
    other = tmp_path / "other"
    (other / "models").mkdir(parents=True)
    (other / "models" / "draft.txt").write_text("keep\n")
    (other / "models" / "sis.json").write_text("{}\n")

    env = {"MFSTEIN_CACHE_DIR": str(cache)}
    shown = run_main(["cache", "--json"], tmp_path, capsys, timeout=60, env=env)
    assert shown.returncode == 0, shown.stderr
    report = json.loads(shown.stdout)
    assert report["directory"] == str(cache) and report["cleared"] is False
    parts = {p["name"]: p for p in report["parts"]}
    assert list(parts) == [name for name, _ in PARTS] + ["not mfstein's"]
    assert parts["generated code"]["files"] >= 1  # the model's kernels
    assert parts["not mfstein's"]["files"] == 3
    assert parts["not mfstein's"]["bytes"] == len("mine\n") + len("print('mine')\n") + 6
    mine = sum(p["files"] for name, p in parts.items() if name != "not mfstein's")
    on_disk = sum(len(files) for _, _, files in os.walk(cache))
    assert mine + 3 == on_disk  # every file counted once

    cleared = run_main(["cache", "--clear"], tmp_path, capsys, timeout=60, env=env)
    assert cleared.returncode == 0, cleared.stderr
    assert f"mfstein's files removed from it: {mine:,} files" in cleared.stdout
    left = sorted(
        os.path.relpath(os.path.join(d, f), cache) for d, _, fs in os.walk(cache) for f in fs
    )
    assert left == ["helper.py", "mine/script.py", "notes.txt"]

    # the user's folder named like mfstein's is theirs: listed, never removed
    env_other = {"MFSTEIN_CACHE_DIR": str(other)}
    theirs = json.loads(run_main(["cache", "--json"], tmp_path, capsys, env=env_other).stdout)
    assert [p["files"] for p in theirs["parts"]] == [0, 0, 0, 0, 2]
    assert run_main(["cache", "--clear"], tmp_path, capsys, env=env_other).returncode == 0
    assert sorted(p.name for p in (other / "models").iterdir()) == ["draft.txt", "sis.json"]

    # everything is made again: the same answer from the emptied cache
    again = _run(solve, cache, tmp_path)
    assert again.returncode == 0, again.stderr
    assert json.loads(again.stdout) == json.loads(first.stdout)
    after = json.loads(run_main(["cache", "--json"], tmp_path, capsys, env=env).stdout)
    assert after["parts"][0]["files"] >= 1


def test_an_absent_cache_directory_is_empty_and_not_made(tmp_path, capsys):
    cache = tmp_path / "none"
    env = {"MFSTEIN_CACHE_DIR": str(cache)}
    done = run_main(["cache"], tmp_path, capsys, timeout=60, env=env)
    assert done.returncode == 0, done.stderr
    assert "(none yet)" in done.stdout and "0 files, 0 bytes" in done.stdout
    assert not cache.exists()
