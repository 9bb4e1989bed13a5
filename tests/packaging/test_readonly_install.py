"""A read-only installation runs: site-packages and HOME unwritable, a non-root user.

The wheel built from this tree is installed with ``pip install --target`` into
a folder that is then made read-only; the test environment's own
site-packages provides the dependencies (and is not writable by that user
either).  HOME is a read-only folder, so the default cache directory cannot be
created: every process must fall back, once and with one warning, to a private
temporary directory, remove it at exit, and never write into the installation.
As root (CI runs as root) the commands run as an unprivileged user (created
with ``useradd``) through ``setpriv``, or -- when the interpreter lives where
other users cannot reach it, as under ``/root`` -- as root with every
capability dropped, for which a read-only folder is read-only too.
"""

from __future__ import annotations

import os
import pwd
import shutil
import stat
import subprocess
import sys
import tempfile
from pathlib import Path

import pytest
from deadlines import deadline

USER = "mfstein-readonly"

COMMANDS = {
    "simulate": [
        "simulate",
        "--N",
        "10",
        "--lam",
        "0.9",
        "--b",
        "3",
        "--steps",
        "20000",
        "--reps",
        "2",
        "--workers",
        "1",
        "--no-progress",
    ],
    "exact": ["exact", "--N", "6", "--lam", "0.9", "--b", "3"],
    "table": [
        "table",
        "--gamma",
        "0.1",
        "--alpha",
        "0.05",
        "--N",
        "10",
        "--b",
        "3",
        "--sim-steps",
        "20000",
        "--reps",
        "2",
        "--workers",
        "1",
        "--exact",
        "--no-progress",
    ],
    # a user model from the model library, simulated by two worker processes
    # (they must find the parent's generated modules in its private cache)
    "model": [
        "simulate",
        "--model",
        "derive.models.examples.birth_death:birth_death",
        "--param",
        "lam=0.5",
        "--N",
        "10",
        "--steps",
        "20000",
        "--reps",
        "2",
        "--workers",
        "2",
        "--no-progress",
    ],
}

PROBE = """
import os, sys, tempfile, sim, mfstein
assert mfstein.__file__.startswith(sys.argv[1]), mfstein.__file__
for where in (sys.argv[1], sys.argv[1] + "/sim", os.environ["HOME"]):
    try:
        tempfile.TemporaryFile(dir=where).close()
    except OSError:
        continue
    raise AssertionError(f"{where} is writable")
r = sim.simulate_supermarket(10, "0.9", b=3, steps=20000, reps=2, seed=1, workers=1, progress=False)
print("n_mse", r.n_mse.mean)
"""


#: root without any capability: ordinary permission checks apply to it
NO_CAPABILITIES = ["setpriv", "--bounding-set=-all", "--inh-caps=-all", "--no-new-privs"]


def _readable_by_others(path: Path) -> bool:
    return all(p.stat().st_mode & stat.S_IXOTH for p in (path, *path.parents))


def _runner() -> list[str]:
    """Command prefix that runs without the power to write where it may not.

    Not root: nothing.  Root: an unprivileged user (created if absent) when the
    interpreter is reachable by other users, else root with every capability
    dropped (``setpriv --bounding-set=-all``: no ``CAP_DAC_OVERRIDE``, so a
    read-only folder is read-only for it too).
    """
    if os.geteuid() != 0:
        return []
    if shutil.which("setpriv") is None:
        pytest.skip("running as root without setpriv: cannot drop privileges")
    python_dir = Path(sys.executable).resolve().parent
    if not _readable_by_others(python_dir) or shutil.which("useradd") is None:
        return NO_CAPABILITIES
    try:
        pwd.getpwnam(USER)
    except KeyError:
        made = subprocess.run(
            ["useradd", "--system", "--no-create-home", "--shell", "/usr/sbin/nologin", USER],
            capture_output=True,
            text=True,
        )
        if made.returncode not in (0, 9):  # 9: the user exists already (a parallel run)
            return NO_CAPABILITIES
    entry = pwd.getpwnam(USER)
    return ["setpriv", f"--reuid={entry.pw_uid}", f"--regid={entry.pw_gid}", "--clear-groups"]


@pytest.fixture(scope="module")
def installed(dists, request):
    """(command prefix, environment, installation folder, folder for temporary folders).

    One installation for the module's tests: it is read-only, and each test checks
    that its run left it as it was."""
    runner = _runner()
    root = Path(tempfile.mkdtemp(prefix="mfstein-ro-"))
    request.addfinalizer(lambda: shutil.rmtree(root, ignore_errors=True))
    os.chmod(root, 0o755)
    target, home, tmp = root / "site", root / "home", root / "tmp"
    subprocess.run(
        [
            sys.executable,
            "-m",
            "pip",
            "install",
            "-q",
            "--no-deps",
            "--no-index",
            "--target",
            str(target),
            str(dists["wheel"]),
        ],
        check=True,
        capture_output=True,
        text=True,
        timeout=deadline(300),
    )
    home.mkdir()
    tmp.mkdir()
    for p in [target, *target.rglob("*")]:
        mode = p.stat().st_mode
        os.chmod(p, mode & ~0o222 | 0o444 | (0o111 if p.is_dir() else 0))
    os.chmod(home, 0o555)
    env = {
        k: v
        for k, v in os.environ.items()
        if not k.startswith(("MFSTEIN_", "NUMBA_", "PYTHON", "XDG_", "VIRTUAL_ENV"))
    }
    env.update(HOME=str(home), PYTHONPATH=str(target), PYTHONNOUSERSITE="1")
    return runner, env, target, tmp


@pytest.fixture
def install(installed):
    """(command prefix, environment, installation folder, temporary folder): the
    module's installation with a temporary folder of the test's own (TMPDIR)."""
    runner, env, target, folders = installed
    tmp = Path(tempfile.mkdtemp(dir=folders))
    os.chmod(tmp, 0o1777)
    return runner, {**env, "TMPDIR": str(tmp)}, target, tmp


def _listing(folder: Path) -> list[str]:
    return sorted(str(p.relative_to(folder)) for p in folder.rglob("*"))


#: commands whose read-only run the default tier's others repeat: ``table --exact``
#: runs the same supermarket simulation and exact solve, cold, in one process; ``model``
#: is the ``simulate`` command too (with worker processes), and the Python API test
#: runs the same simulation.  They run with ``--run-slow``.
COVERED = {"simulate", "exact"}


@pytest.mark.parametrize(
    "name", [pytest.param(n, marks=[pytest.mark.slow] * (n in COVERED)) for n in sorted(COMMANDS)]
)
def test_commands_run_from_a_read_only_install(install, name) -> None:
    runner, env, target, tmp = install
    before = _listing(target)
    out = subprocess.run(
        [*runner, sys.executable, "-m", "mfstein", *COMMANDS[name]],
        env=env,
        cwd=env["HOME"],
        capture_output=True,
        text=True,
        timeout=deadline(300),
    )
    assert out.returncode == 0, out.stderr[-2000:]
    assert "internal error" not in out.stderr
    assert out.stderr.count("is not writable") == 1, out.stderr  # said once per process
    assert _listing(tmp) == [], "the private cache was not removed at exit"
    assert _listing(target) == before


def test_python_api_runs_from_a_read_only_install(install) -> None:
    runner, env, target, tmp = install
    out = subprocess.run(
        [*runner, sys.executable, "-c", PROBE, str(target)],
        env=env,
        cwd=env["HOME"],
        capture_output=True,
        text=True,
        timeout=deadline(300),
    )
    assert out.returncode == 0, out.stderr[-2000:]
    assert float(out.stdout.split()[-1]) > 0
    assert _listing(tmp) == []
