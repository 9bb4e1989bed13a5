"""Start-up cost, before vs after: ``mfstein --help`` and ``mfstein table`` overhead;
and (``--sigint``) what Ctrl-C does at each moment of start-up.

Run:  .venv/bin/python benchmarks/bench_startup.py [--before /tmp/before] [--repeat 5]
      .venv/bin/python benchmarks/bench_startup.py --sigint [--to 300] [--step 5] [--repeat 2]
      .venv/bin/python benchmarks/bench_startup.py --first [--before /tmp/before] [--repeat 5]
          [--only simulate]

"before" (optional) is another tree, e.g. the committed one exported with
``git -C /work/main archive HEAD | tar -x -C /tmp/before``, run with
``PYTHONPATH`` pointing at it; "after" is this working tree (measured alone
without ``--before``).  Each figure is the
best of ``--repeat`` wall-clock runs of a fresh interpreter:

* ``mfstein --help``: build the full parser (every subcommand registered);
* ``table start-up``: ``mfstein table --help`` (parser plus the table module's
  registration), the fixed cost before any computation;
* ``imports``: the heavy modules loaded by ``--help`` (should be none).

``--first`` (issue 34): the CPU and wall seconds of a fresh process (interpreter start
included, warm cache: each tree has a cache of its own, :func:`trees.tree_cache`, and each
case runs once per tree before timing) making one first
call -- bare ``import numpy, scipy``; the first ``mf.solve("sir", ...)`` at the default
precision and with ``precision="float64"``; the first ``sim.simulate`` of SIR
(2e5 events) -- for both trees, repetitions alternating between them; min and median
of ``--repeat`` runs, and the heavy modules each case imported.  A warm cache includes
Python's bytecode: ``PYTHONDONTWRITEBYTECODE`` is removed from the children's
environment (``--no-bytecode`` keeps it: every module of the trees is compiled anew in
every process, some 0.25 s of CPU for a first solve).
"""

from __future__ import annotations

import argparse
import os
import subprocess
import sys
import time

from trees import tree_cache

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def _run(tree: str, code: str, repeat: int) -> tuple[float, str]:
    env = dict(os.environ, PYTHONPATH=tree)
    best, out = float("inf"), ""
    for _ in range(repeat):
        t = time.perf_counter()
        r = subprocess.run(
            [sys.executable, "-c", code], env=env, cwd=tree, capture_output=True, text=True
        )
        best = min(best, time.perf_counter() - t)
        out = r.stdout.strip() or r.stderr.strip()[-200:]
    return best, out


HELP = (
    "import sys; sys.argv=['mfstein','--help']\n"
    "try:\n from mfstein.cli import main; main()\nexcept SystemExit: pass"
)
TABLE = HELP.replace("'--help'", "'table','--help'")
MODS = (
    "import io, contextlib, sys\nwith contextlib.redirect_stdout(io.StringIO()):\n"
    "  sys.argv=['mfstein','--help']\n  from mfstein.cli import main\n  try: main()\n"
    "  except SystemExit: pass\n"
    "import mfstein; print(mfstein.__file__.split('/mfstein/')[0], [m for m in "
    "('sympy','numba','scipy','numpy','mpmath','matplotlib') if m in sys.modules])"
)


#: A simulation long enough never to finish on its own (Ctrl-C ends it).
LONG_RUN = ["simulate", "--N", "100", "--lam", "0.9", "--b", "8", "--steps", "4e9"]
LONG_RUN += ["--reps", "2", "--batches", "400", "--no-progress", "--workers", "1"]


#: One standard-error text per outcome, shown after the sweep.
EXAMPLES: dict[str, str] = {}


def _sigint_outcome(delay: float, presses: int, timeout: float = 20.0) -> str:
    """Spawn ``.venv/bin/mfstein simulate ...``, press Ctrl-C ``presses`` times from
    ``delay`` seconds after the spawn (0.05 s apart) and classify the ending:

    * ``silent``: killed by SIGINT before Python installed its handler (no output);
    * ``one line``: status 130 with one line on standard error, no traceback;
    * ``traceback``: a Python traceback on standard error, either raised in
      mfstein's own code or before its first statement ran (CPython's start-up,
      ``site`` and ``.pth`` hooks, the console script's first lines);
    * ``hang``: still running ``timeout`` seconds after the last press;
    * ``other``: anything else (shown with its status).
    """
    import signal

    exe = os.path.join(os.path.dirname(sys.executable), "mfstein")
    proc = subprocess.Popen(
        [exe, *LONG_RUN],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
        text=True,
        cwd=ROOT,
        start_new_session=True,  # the pool's workers too are killed after a hang
    )
    time.sleep(delay)
    for i in range(presses):
        if i:
            time.sleep(0.05)
        proc.send_signal(signal.SIGINT)
    try:
        err = proc.communicate(timeout=timeout)[1]
    except subprocess.TimeoutExpired:
        os.killpg(proc.pid, signal.SIGKILL)
        proc.communicate()
        return "hang"
    if "Traceback" in err:
        ours = any(f'"{ROOT}/{pkg}/' in err for pkg in ("mfstein", "numeric", "derive", "sim"))
        kind = "traceback (mfstein code)" if ours else "traceback (before mfstein runs)"
    elif proc.returncode == -signal.SIGINT and not err.strip():
        kind = "silent"
    elif proc.returncode == 130 and len(err.strip().splitlines()) == 1:
        kind = "one line"
    else:
        kind = f"other (status {proc.returncode})"
    EXAMPLES.setdefault(kind, f"t = {delay * 1e3:.0f} ms:\n{err.strip()[-1200:]}")
    return kind


def sigint_sweep(start_ms: int, stop_ms: int, step_ms: int, repeat: int, presses: int) -> None:
    """Print one row per delay: how Ctrl-C at that moment of start-up ended."""
    from collections import Counter

    total: Counter = Counter()
    bad: list[int] = []
    print(f"Ctrl-C x{presses} at t ms after spawning mfstein {' '.join(LONG_RUN[:1])} ...")
    print(f"{'t (ms)':>7}  outcomes ({repeat} runs each)")
    for ms in range(start_ms, stop_ms + 1, step_ms):
        got = Counter(_sigint_outcome(ms / 1000, presses) for _ in range(repeat))
        total += got
        if any(k.startswith(("traceback", "hang", "other")) for k in got):
            bad.append(ms)
        print(f"{ms:>7}  " + ", ".join(f"{k}: {v}" for k, v in sorted(got.items())))
    print("total:", dict(total))
    if bad:
        print(f"traceback/hang/other at t = {bad[0]} .. {bad[-1]} ms ({len(bad)} delays)")
    else:
        print("no traceback, hang or other ending at any delay")
    for kind, text in EXAMPLES.items():
        if kind.startswith(("traceback", "other")):
            print(f"\n--- first {kind}, {text}")


SIR = "{'beta': 3, 'gamma': 1, 'rho': '0.5', 'a': '0.1'}"
#: What a first call in a fresh process runs, by case.
FIRST = {
    "import numpy, scipy": "import numpy, scipy",
    "first solve (dps 30)": f"import mfstein as mf\nmf.solve('sir', {SIR})",
    "first solve (float64)": f"import mfstein as mf\nmf.solve('sir', {SIR}, precision='float64')",
    "first simulate (2e5)": (
        "import sim\nr = sim.simulate('sir', {k: str(v) for k, v in " + SIR + ".items()}, "
        "N=1000, steps=200000, reps=1, workers=1, seed=1)\nassert r.complete"
    ),
}
#: The heavy modules a case is checked for (SciPy's subpackages each cost 0.1-0.3 s).
HEAVY = ("sympy", "mpmath", "scipy", "scipy.linalg", "scipy.special", "scipy.sparse", "numba")


def _fresh(tree: str, code: str, bytecode: bool = True) -> tuple[float, float, str]:
    """Wall and CPU seconds of a fresh process running ``code`` in ``tree``, and the
    heavy modules it imported (with ``bytecode``, Python writes and reads ``.pyc``)."""
    import resource

    env = dict(os.environ, PYTHONPATH=tree, MFSTEIN_CACHE_DIR=tree_cache(tree))
    if bytecode:
        env.pop("PYTHONDONTWRITEBYTECODE", None)
    probe = f"{code}\nimport sys\nprint([m for m in {HEAVY!r} if m in sys.modules])"
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    t = time.perf_counter()
    r = subprocess.run(
        [sys.executable, "-c", probe],
        env=env,
        cwd=tree,
        capture_output=True,
        text=True,
    )
    wall = time.perf_counter() - t
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    if r.returncode:
        raise SystemExit(f"a first call failed in {tree}:\n{r.stderr[-2000:]}")
    cpu = after.ru_utime - before.ru_utime + after.ru_stime - before.ru_stime
    return wall, cpu, r.stdout.strip().splitlines()[-1]


def first_calls(
    trees: list[tuple[str, str]], repeat: int, bytecode: bool = True, only: str = ""
) -> None:
    """Print the table of ``--first`` (module docstring), for the cases whose name
    contains ``only``."""
    import statistics

    print(f"load before: {os.getloadavg()[0]:.2f} (1-minute average), {os.cpu_count()} cores; "
          f"bytecode (.pyc) {'on' if bytecode else 'off'}")  # fmt: skip
    print(f"{'case':<24}{'tree':<8}{'CPU min':>9}{'CPU med':>9}{'wall min':>10}"
          f"{'wall med':>10}  heavy imports")  # fmt: skip
    for case, code in FIRST.items():
        if only not in case:
            continue
        runs: dict[str, list[tuple[float, float, str]]] = {name: [] for name, _ in trees}
        for _, tree in trees:
            _fresh(tree, code, bytecode)  # the warm cache of this tree
        for _ in range(repeat):
            for name, tree in trees:
                runs[name].append(_fresh(tree, code, bytecode))
        for name, _ in trees:
            cpu = [r[1] for r in runs[name]]
            wall = [r[0] for r in runs[name]]
            cells = f"{min(cpu):>9.3f}{statistics.median(cpu):>9.3f}{min(wall):>10.3f}"
            cells += f"{statistics.median(wall):>10.3f}"
            print(f"{case:<24}{name:<8}{cells}  {runs[name][-1][2]}")
    print(f"load after: {os.getloadavg()[0]:.2f}")


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--before", help="another tree, measured beside this one")
    p.add_argument("--repeat", type=int, default=5)
    p.add_argument("--sigint", action="store_true", help="sweep Ctrl-C over start-up")
    p.add_argument("--from", dest="start", type=int, default=0, help="first delay (ms)")
    p.add_argument("--to", type=int, default=200, help="last delay (ms)")
    p.add_argument("--step", type=int, default=5, help="delay step (ms)")
    p.add_argument("--presses", type=int, default=1, help="Ctrl-C presses, 50 ms apart")
    p.add_argument("--first", action="store_true", help="first calls in a fresh process")
    p.add_argument("--no-bytecode", action="store_true", help="--first without .pyc files")
    p.add_argument("--only", default="", help="--first: the cases whose name contains this")
    a = p.parse_args()
    if a.before is not None and not os.path.isdir(a.before):
        p.error(f"--before must be a directory holding another tree; {a.before!r} is not one")
    trees = ([("before", a.before)] if a.before else []) + [("after", ROOT)]
    if a.first:
        first_calls(trees, a.repeat, not a.no_bytecode, a.only)
        return
    if a.sigint:
        sigint_sweep(a.start, a.to, a.step, a.repeat, a.presses)
        return
    rows = []
    for name, tree in trees:
        t_help, _ = _run(tree, HELP, a.repeat)
        t_table, _ = _run(tree, TABLE, a.repeat)
        _, mods = _run(tree, MODS, 1)
        rows.append((name, t_help, t_table, mods))
    print(f"{'tree':<8}{'mfstein --help':>16}{'table start-up':>16}  heavy imports (tree)")
    for name, t1, t2, mods in rows:
        print(f"{name:<8}{t1 * 1e3:>13.0f} ms{t2 * 1e3:>13.0f} ms  {mods}")


if __name__ == "__main__":
    main()
