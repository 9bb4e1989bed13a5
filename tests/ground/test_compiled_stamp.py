"""A compiled function's cache is stamped with the files it imports, not only its own
(mfstein.ground.jit.source_stamp): numba inlines helpers and freezes constants of other
modules into the object code, and its own stamp (the file's time and size) kept stale
code after a helper in another file changed."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

from deadlines import deadline

from mfstein.ground.jit import import_closure, source_stamp

ROOT = Path(__file__).resolve().parents[2]


def _write(root: Path, rel: str, text: str) -> Path:
    path = root / rel
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text)
    return path


def _plain_tree(root: Path) -> dict[str, Path]:
    """A package tree as a researcher's edits leave it: grouped and aliased imports,
    comments inside the parentheses, an import inside a function, a package import."""
    files = {
        "a": _write(
            root,
            "sim/a.py",
            "import numpy as np\n"
            "from sim.b import (  # the helpers\n    g,\n    h as hh,\n)\n"
            "from sim import c\n"
            "def f():\n    from sim.d import late\n    return late\n",
        ),
        "b": _write(root, "sim/b.py", "from derive.e import TABLE\ng = h = 1\n"),
        "c": _write(root, "sim/c.py", "x = 2\n"),
        "d": _write(root, "sim/d.py", "late = 3\n"),
        "e": _write(root, "derive/e.py", "TABLE = (1, 2)\n"),
    }
    _write(root, "sim/__init__.py", "")
    _write(root, "derive/__init__.py", "")
    return files


def test_the_closure_follows_module_level_imports_of_the_library_only(tmp_path) -> None:
    files = _plain_tree(tmp_path)
    closure = import_closure(str(files["a"]), tmp_path)
    names = {os.path.relpath(p, tmp_path) for p in closure}
    # sim/d.py is imported inside a function (no compiled code reads it); numpy is not ours
    assert names == {"sim/a.py", "sim/b.py", "sim/c.py", "sim/__init__.py", "derive/e.py"}


def test_the_stamp_changes_with_an_imported_file_and_not_with_others(tmp_path) -> None:
    files = _plain_tree(tmp_path)
    first = source_stamp(str(files["a"]), tmp_path)
    files["d"].write_text("late = 30\n")  # not in the closure
    assert source_stamp(str(files["a"]), tmp_path) == first
    files["e"].write_text("TABLE = (1, 2, 3)\n")  # two imports away
    second = source_stamp(str(files["a"]), tmp_path)
    assert second != first
    # the same content elsewhere (a copy, a re-installed file) keeps its stamp
    copy = tmp_path / "elsewhere" / "a.py"
    copy.parent.mkdir()
    shutil.copy(files["a"], copy)
    assert source_stamp(str(copy), tmp_path) == second


def test_the_event_loops_are_stamped_with_their_shared_helpers() -> None:
    closure = {os.path.relpath(p, ROOT) for p in import_closure(str(ROOT / "sim/table_loop.py"))}
    assert {"sim/generic_kernels.py", "sim/rng.py", "derive/rate_ops.py"} <= closure


def test_a_changed_helper_of_another_file_is_compiled_again(tmp_path) -> None:
    """``sim.generic_kernels.begin`` inlines ``sim.rng.low_bits``: after ``low_bits``
    changes in a copy of the packages, a new process loads ``begin`` from the cache
    only if the cache was made with the new ``low_bits`` (numba's own stamp returned
    the old mask, 7, here)."""
    copy = tmp_path / "src"
    for package in ("mfstein", "derive", "numeric", "sim"):
        shutil.copytree(
            ROOT / package, copy / package, ignore=shutil.ignore_patterns("__pycache__")
        )
    code = (
        "import numpy as np\n"
        "import sim\n"
        "from sim.generic_kernels import begin\n"
        f"assert sim.__file__.startswith({str(copy)!r}), sim.__file__\n"
        "out = begin(np.array([3, 1], dtype=np.int64), 4, np.array([True]), np.zeros(2), 0,"
        " np.zeros((2, 0)), 3)\n"
        "print(int(out[-1]))\n"
    )
    env = {**os.environ, "PYTHONPATH": str(copy), "MFSTEIN_CACHE_DIR": str(tmp_path / "cache")}

    def mask() -> int:
        done = subprocess.run(
            [sys.executable, "-c", code],
            env=env,
            capture_output=True,
            text=True,
            timeout=deadline(120),
            cwd=tmp_path,
        )
        assert done.returncode == 0, done.stderr
        return int(done.stdout.split()[-1])

    assert mask() == 7  # the low 3 bits
    rng = copy / "sim" / "rng.py"
    old = "return (_U64(1) << _U64(bits)) - _U64(1)"
    assert old in rng.read_text()
    rng.write_text(rng.read_text().replace(old, "return (_U64(1) << _U64(bits + 1)) - _U64(1)"))
    assert mask() == 15
