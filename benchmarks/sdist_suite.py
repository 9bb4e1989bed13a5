"""Run the test suite from the unpacked source distribution, as a packager would.

    python benchmarks/sdist_suite.py [--keep] [PYTEST ARGS ...]

Builds the sdist of this tree (``python -m build --sdist``, offline with
``--no-isolation``), unpacks it into a temporary directory, creates a fresh
virtual environment there, installs the unpacked tree with its ``test`` extra
(``pip install ".[test]"``, not editable: the tests run against the installed
package) and runs ``python -m pytest -q`` (plus any arguments given) inside the
unpacked tree.  Exits with pytest's status.  The full suite takes as long as it
does in a clone (about 7 minutes on 2 quiet cores), so this is a script and not
a test; ``tests/packaging`` checks the sdist's file list on every run.
"""

from __future__ import annotations

import shutil
import subprocess
import sys
import tarfile
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


def main(argv: list[str]) -> int:
    keep = "--keep" in argv
    args = [a for a in argv if a != "--keep"]
    work = Path(tempfile.mkdtemp(prefix="mfstein-sdist-"))
    try:
        t0 = time.perf_counter()
        subprocess.run(
            [
                sys.executable,
                "-m",
                "build",
                "--sdist",
                "--no-isolation",
                "--outdir",
                str(work),
                str(ROOT),
            ],
            check=True,
            capture_output=True,
        )
        sdist = next(work.glob("*.tar.gz"))
        with tarfile.open(sdist) as tar:
            tar.extractall(work, filter="data")
        tree = work / sdist.name.removesuffix(".tar.gz")
        venv = tree / ".venv"
        subprocess.run([sys.executable, "-m", "venv", str(venv)], check=True)
        subprocess.run(
            [str(venv / "bin" / "pip"), "install", "-q", ".[test]"], cwd=tree, check=True
        )
        print(f"sdist {sdist.name} unpacked and installed in {time.perf_counter() - t0:.0f} s")
        t1 = time.perf_counter()
        done = subprocess.run([str(venv / "bin" / "python"), "-m", "pytest", "-q", *args], cwd=tree)
        print(
            f"pytest from the unpacked sdist: status {done.returncode} in "
            f"{time.perf_counter() - t1:.0f} s"
        )
        return done.returncode
    finally:
        if keep:
            print(f"kept {work}")
        else:
            shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
