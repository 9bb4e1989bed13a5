"""Hostile-input probe sweep over every ``mfstein`` subcommand (issue 15).

Each probe runs ``.venv/bin/mfstein ...`` in a subprocess, in a fresh working
directory, with a timeout and a memory limit, and is classified as

* ``exit 0``: status 0, standard error empty or only one-line ``mfstein ...``
  notes (warnings);
* ``exit 2 one-line`` / ``exit 1 one-line``: status 2 (bad input) or 1
  (environment, failed self-check) with exactly one line ``mfstein CMD: ...``
  on standard error;
* ``traceback``, ``hang`` (no answer within the timeout), ``multi-line
  stderr`` or ``other`` (any other status, e.g. killed by the kernel).

A probe fails when its outcome is one of the last four, when its status is not
one it allows (bad input must never end in status 0), when it leaves a
half-written file (``*.tmp``) behind, or when its own check fails (a damaged
file the run must not touch was changed).  The classes are those of the issue:
huge sizes (b, d, N, dps, steps, reps, ...), non-numbers and out-of-range
values for every numeric option, unwritable, missing and directory output
paths, damaged checkpoints and kernel caches, bad ``--model`` files, factories
and parameters, starts outside the state space, duplicate N lists.

Run:  .venv/bin/python benchmarks/probe_cli.py [--only TEXT] [--skip CLASS] [--timeout 60]
      [--jobs 1] [--list] [--show-all]

The tally and every failure (with the exact command) are printed at the end;
the exit status is 1 when any probe failed.  A full sweep takes several
minutes (each probe starts a fresh interpreter; the machine is shared).
"""

from __future__ import annotations

import argparse
import atexit
import json
import os
import resource
import shutil
import signal
import stat
import subprocess
import sys
import tempfile
import threading
import time
from collections import Counter
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
EXE = str(Path(sys.executable).with_name("mfstein"))

OK, INPUT, ENV = "exit 0", "exit 2 one-line", "exit 1 one-line"
#: Status 130 after the sweep's SIGINT (``Probe.interrupt``), only ``mfstein ...`` lines.
STOPPED = "exit 130 on Ctrl-C"
ANY = (OK, INPUT, ENV)
BAD_OUTCOMES = ("traceback", "hang", "multi-line stderr", "other")


@dataclass
class Probe:
    """One command line and the outcomes it may end in.

    ``argv`` may contain ``{dir}`` (the probe's working directory) and
    ``{shared}`` (a directory prepared once per sweep, see :func:`prepare`).
    ``setup(work)`` may create files and returns extra environment variables;
    ``check(work, proc)`` returns a failure text or ``None``.
    """

    cls: str
    argv: list[str]
    allowed: tuple[str, ...]
    setup: Callable[[Path], dict[str, str]] | None = None
    check: Callable[[Path, subprocess.CompletedProcess], str | None] | None = None
    timeout: float | None = None
    #: Seconds after which the sweep presses Ctrl-C (SIGINT to the process group, as a
    #: terminal does); the run must then stop within :data:`STOP_SECONDS`.
    interrupt: float | None = None
    #: Start the command with its standard output closed (``mfstein ... >&-``).
    close_stdout: bool = False


#: Seconds an interrupted probe may take to stop.
STOP_SECONDS = 30.0


@dataclass
class Result:
    probe: Probe
    outcome: str
    status: int | None
    stderr: str
    seconds: float
    problems: list[str] = field(default_factory=list)

    @property
    def failed(self) -> bool:
        return bool(self.problems)


# ----------------------------------------------------------------------------- probes
SIM = ["--steps", "2000", "--reps", "2", "--workers", "1", "--no-progress"]
SIM_BASE = ["simulate", "--N", "10", "--lam", "0.9", "--b", "5", *SIM]
TABLE_BASE = ["table", "--gamma", "0.1", "--alpha", "0.05", "--N", "10", "--sim-steps", "4000"]
TABLE_BASE += ["--reps", "2", "--workers", "1", "--no-progress"]
PI_BASE = ["pi", "--arrivals", "0:.4,2:.2,4:.3,6:.1", "--service", "1:1", "--service", "1:.5,2:.5"]
PI_BASE += ["--slots", "2000", "--reps", "2", "--batches", "2", "--workers", "1", "--no-progress"]
TAIL_SIM = ["tail", "--model", "jsq", "--n", "3", "--eps", "0.2", "--simulate", "--events", "4000"]
TAIL_SIM += ["--reps", "2", "--workers", "1", "--no-progress"]
MODEL_SM = ["--model", "supermarket", "--param", "b=3", "--param", "lam=0.9"]

#: (command base, option, values allowed to succeed) for the value sweep.
#: Every value in NONSENSE must be refused (exit 2); the others may end in any
#: of the three contract outcomes but never in a traceback, hang or multi-line error.
NONSENSE = ["nan", "abc", "-1"]
EDGE = ["inf", "0", "1e300", "2147483648"]

NUMERIC: list[tuple[list[str], str, tuple[str, ...]]] = [
    (["derive", "--b", "3", "--show", "f"], "--b", ()),
    (["derive", "--b", "3", "--show", "f"], "--d", ()),
    (["derive", "--b", "3", "--show", "f"], "--mu", ()),
    (["bound", "--lam", "0.9", "--N", "10", "--b", "5"], "--lam", ()),
    (["bound", "--lam", "0.9", "--N", "10", "--b", "5"], "--N", ()),
    (["bound", "--lam", "0.9", "--N", "10", "--b", "5"], "--b", ("inf",)),
    (["bound", "--lam", "0.9", "--N", "10", "--b", "5"], "--d", ()),
    (["bound", "--lam", "0.9", "--N", "10", "--b", "5"], "--dps", ()),
    (["bound", "--gamma", "0.1", "--alpha", "0.05", "--N", "10", "--b", "5"], "--gamma", ()),
    (["bound", "--gamma", "0.1", "--alpha", "0.05", "--N", "10", "--b", "5"], "--alpha", ()),
    (["refined", "--lam", "0.9", "--N", "10", "--b", "4"], "--lam", ()),
    (["refined", "--lam", "0.9", "--N", "10", "--b", "4"], "--b", ("inf",)),
    (["refined", "--lam", "0.9", "--N", "10", "--b", "4"], "--dps", ()),
    (["solve", *MODEL_SM], "--dps", ()),
    (["exact", "--N", "5", "--lam", "0.9", "--b", "3"], "--N", ()),
    (["exact", "--N", "5", "--lam", "0.9", "--b", "3"], "--b", ()),
    (["exact", "--N", "5", "--lam", "0.9", "--b", "3"], "--d", ()),
    (["exact", "--N", "5", "--lam", "0.9", "--b", "3"], "--lam", ()),
    (["exact", "--N", "5", "--lam", "0.9", "--b", "3"], "--memory-limit", ()),
    (["exact", "--N", "5", "--lam", "0.9", "--b", "3"], "--mu", ()),
    (["exact", "--N", "5", *MODEL_SM], "--truncation", ()),
    (["lemmas", "--lam", "0.9", "--N", "10", "--b", "3", "--only", "lemma5"], "--N", ()),
    (["lemmas", "--lam", "0.9", "--N", "10", "--b", "3", "--only", "lemma5"], "--b", ()),
    (["lemmas", "--lam", "0.9", "--N", "10", "--b", "3", "--only", "lemma5"], "--d", ()),
    (["lemmas", "--lam", "0.9", "--N", "10", "--b", "3", "--only", "lemma5"], "--xi", ()),
    (["lemmas", "--lam", "0.9", "--N", "10", "--b", "3", "--only", "lemma5"], "--dps", ()),
    (SIM_BASE, "--N", ()),
    (SIM_BASE, "--b", ()),
    (SIM_BASE, "--d", ()),
    (SIM_BASE, "--lam", ()),
    (SIM_BASE, "--steps", ()),
    (SIM_BASE, "--reps", ()),
    (SIM_BASE, "--seed", ()),
    (SIM_BASE, "--batches", ()),
    (SIM_BASE, "--workers", ()),
    (TABLE_BASE, "--N", ()),
    (TABLE_BASE, "--b", ()),
    (TABLE_BASE, "--sim-steps", ()),
    (TABLE_BASE, "--reps", ()),
    (TABLE_BASE, "--gamma", ()),
    (["tail", "--model", "jsq", "--n", "3", "--eps", "0.2"], "--n", ()),
    (["tail", "--model", "jsq", "--n", "3", "--eps", "0.2"], "--eps", ()),
    (["tail", "--model", "mmn", "--n", "3", "--eps", "0.2"], "--x", ()),
    (["tail", "--model", "mmn", "--n", "3", "--eps", "0.2"], "--theta", ()),
    (TAIL_SIM, "--events", ()),
    (TAIL_SIM, "--reps", ()),
    (PI_BASE, "--slots", ()),
    (PI_BASE, "--reps", ()),
    (PI_BASE, "--n", ()),
    (["transient", *MODEL_SM, "--t", "0:1:3"], "--dps", ()),
    (["transient", *MODEL_SM, "--t", "0:1:3"], "--order", ()),
]


#: Options that set a simulation's length: a huge finite value is a valid (long) run.
RUN_LENGTHS = ("--steps", "--sim-steps", "--events", "--slots")


_EXACT_WOR = ["exact", "--N", "10", "--lam", "0.9", "--b", "3", "--without-replacement"]


def _with(base: list[str], option: str, value: str) -> list[str]:
    """``base`` with ``option`` set to ``value`` (replaced when present)."""
    argv = list(base)
    if option in argv:
        argv[argv.index(option) + 1] = value
    else:
        argv += [option, value]
    return argv


def numeric_probes() -> list[Probe]:
    out = []
    for base, option, words in NUMERIC:
        for value in NONSENSE:
            allowed = ANY if option == "--seed" and value == "-1" else (INPUT,)
            out.append(Probe(f"value {option}", _with(base, option, value), allowed))
        for value in EDGE:
            if option in RUN_LENGTHS and value == "2147483648":
                continue  # a valid, long simulation (lengths are the user's choice)
            allowed = ANY if value not in words else (OK,)
            out.append(Probe(f"value {option}", _with(base, option, value), allowed))
    return out


def _untouched(name: str, text: str) -> Callable[[Path, subprocess.CompletedProcess], str | None]:
    def check(work: Path, proc: subprocess.CompletedProcess) -> str | None:
        path = work / name
        if path.is_file() and path.read_text(errors="replace") != text:
            return f"{name} was changed by a failed run"
        return None

    return check


def _mentions(word: str) -> Callable[[Path, subprocess.CompletedProcess], str | None]:
    def check(work: Path, proc: subprocess.CompletedProcess) -> str | None:
        return None if word in proc.stderr else f"no warning mentioning {word!r}"

    return check


def _file(name: str, text: str) -> Callable[[Path], dict[str, str]]:
    def setup(work: Path) -> dict[str, str]:
        (work / name).write_text(text)
        return {}

    return setup


def _readonly_dir(name: str) -> Callable[[Path], dict[str, str]]:
    def setup(work: Path) -> dict[str, str]:
        d = work / name
        d.mkdir()
        d.chmod(stat.S_IRUSR | stat.S_IXUSR)
        return {}

    return setup


def _blocker(work: Path) -> dict[str, str]:
    (work / "file").write_text("x")
    return {}


def output_path_probes() -> list[Probe]:
    """--plot, --checkpoint into missing, unwritable and directory places."""
    out: list[Probe] = []
    targets = [
        ("a file as directory", "{dir}/file/out.x", _blocker),
        ("missing directory", "{dir}/no/such/dir/out.x", None),
        ("a directory", "{dir}", None),
        ("/proc", "/proc/mfstein-probe/out.x", None),
        ("read-only directory", "{dir}/ro/out.x", _readonly_dir("ro")),
    ]
    users = [
        (["table", *TABLE_BASE[1:]], "--plot", ".png"),
        (["transient", *MODEL_SM, "--t", "0:1:3", "--N", "10"], "--plot", ".png"),
        ([*SIM_BASE], "--checkpoint", ".json"),
        ([*TAIL_SIM], "--checkpoint", ".json"),
        ([*PI_BASE], "--checkpoint", ".json"),
    ]
    for base, option, ext in users:
        for what, target, setup in targets:
            t = target.replace("out.x", f"out{ext}")
            # a missing directory is created (atomic_write makes parents): success allowed
            allowed = ANY if what == "missing directory" else (INPUT, ENV)
            if what == "read-only directory" and os.geteuid() == 0:
                allowed = ANY  # root writes anywhere
            out.append(Probe(f"output {option} {what}", _with(base, option, t), allowed, setup))
    return out


CK_ARGS = ["simulate", "--N", "20", "--lam", "0.9", "--b", "6", "--steps", "20000", "--reps", "2"]
CK_ARGS += ["--batches", "4", "--workers", "1", "--no-progress"]


def checkpoint_probes(shared: Path) -> list[Probe]:
    """Damaged simulation checkpoints: refused in one sentence, the file left as it was."""
    good = shared / "good-checkpoint.json"
    damages: dict[str, Callable[[str], str]] = {
        "empty": lambda t: "",
        "truncated": lambda t: t[: len(t) // 2],
        "random bytes": lambda t: "\x00\x17garbage\xff" * 20,
        "JSON list": lambda t: "[]",
        "JSON null": lambda t: "null",
        "wrong config": lambda t: t.replace('"N": 20', '"N": 21', 1),
        "no checksum": lambda t: json.dumps(
            {k: v for k, v in json.loads(t).items() if k != "checksum"}
        ),
    }
    out = []
    for what, damage in damages.items():

        def setup(work: Path, damage=damage) -> dict[str, str]:
            (work / "ck.json").write_text(damage(good.read_text()))
            return {}

        def check(work: Path, proc, damage=damage) -> str | None:
            return _untouched("ck.json", damage(good.read_text()))(work, proc)

        argv = [*CK_ARGS, "--checkpoint", "{dir}/ck.json"]
        out.append(Probe(f"checkpoint {what}", argv, (INPUT,), setup, check))
    out.append(
        Probe(
            "checkpoint is a directory",
            [*CK_ARGS, "--checkpoint", "{dir}"],
            (INPUT, ENV),
        )
    )
    return out


def cache_probes(shared: Path) -> list[Probe]:
    """Damaged kernel caches: regenerated with a one-line warning (status 0), or a
    read-only / file cache directory: an in-memory build (status 0)."""
    src = shared / "cache"

    def damaged(how: str) -> Callable[[Path], dict[str, str]]:
        def setup(work: Path) -> dict[str, str]:
            cache = work / "cache"
            shutil.copytree(src, cache)
            files = sorted(p for p in cache.rglob("*") if p.is_file())
            for p in files:
                if how == "truncated" and p.suffix == ".py":
                    p.write_bytes(p.read_bytes()[: p.stat().st_size // 2])
                elif how == "empty":
                    p.write_bytes(b"")
                elif how == "random bytes":
                    p.write_bytes(os.urandom(256))
                elif how == "numba index" and p.suffix in (".nbi", ".nbc"):
                    p.write_bytes(os.urandom(64))
            return {"MFSTEIN_CACHE_DIR": str(cache)}

        return setup

    def file_cache(work: Path) -> dict[str, str]:
        (work / "cache").write_text("x")
        return {"MFSTEIN_CACHE_DIR": str(work / "cache")}

    def readonly_cache(work: Path) -> dict[str, str]:
        cache = work / "cache"
        cache.mkdir()
        cache.chmod(stat.S_IRUSR | stat.S_IXUSR)
        return {"MFSTEIN_CACHE_DIR": str(cache)}

    runs = [
        ["simulate", "--N", "10", "--lam", "0.9", "--b", "4", "--engine", "generic", *SIM],
        ["bound", "--lam", "0.9", "--N", "10", "--b", "4"],
        ["exact", "--N", "6", "--lam", "0.9", "--b", "3"],  # issue 23: EOFError once
    ]
    out = []
    for argv in runs:
        for how in ("truncated", "empty", "random bytes", "numba index"):
            check = None if how == "numba index" else _mentions("damaged")
            out.append(Probe(f"cache {how}", argv, (OK,), damaged(how), check, timeout=180))
        out.append(Probe("cache dir is a file", argv, (OK,), file_cache, timeout=180))
        out.append(
            Probe(
                "cache dir read-only",
                argv,
                ANY if os.geteuid() == 0 else (OK,),
                readonly_cache,
                timeout=180,
            )
        )
    return out


BAD_MODEL_FILE = "def factory(:\n"
RAISING_MODEL = "def factory(**kw):\n    raise RuntimeError('boom')\n"
NOT_A_MODEL = "def factory(**kw):\n    return 42\n"


def model_probes() -> list[Probe]:
    out = []
    files = {
        "syntax error": BAD_MODEL_FILE,
        "factory raises": RAISING_MODEL,
        "factory returns no model": NOT_A_MODEL,
    }
    for cmd in (
        ["solve"],
        ["exact", "--N", "4"],
        ["simulate", *SIM],
        ["transient", "--t", "0:1:3"],
    ):
        out.append(Probe("model unknown name", [*cmd, "--model", "bogus"], (INPUT,)))
        out.append(Probe("model missing file", [*cmd, "--model", "{dir}/none.py:f"], (INPUT,)))
        out.append(
            Probe(
                "model missing factory",
                [*cmd, "--model", f"{ROOT}/examples/birth_death.py:nope"],
                (INPUT,),
            )
        )
        for what, text in files.items():
            out.append(
                Probe(
                    f"model {what}",
                    [*cmd, "--model", "{dir}/m.py:factory"],
                    (INPUT,),
                    _file("m.py", text),
                )
            )
        base = [*cmd, "--model", "supermarket"]
        for param in (
            "b=abc",
            "b=0",
            "b=1000000",
            "lam=nan",
            "lam=-1",
            "nosuch=1",
            "x",
            "=1",
            "lam=1e300",
        ):
            out.append(
                Probe(
                    "model bad --param",
                    [*base, "--param", "b=3", "--param", param]
                    if not param.startswith("b=")
                    else [*base, "--param", param, "--param", "lam=0.9"],
                    (INPUT,),
                )
            )
        out.append(
            Probe(
                "model duplicate --param",
                [*base, "--param", "b=3", "--param", "b=4", "--param", "lam=0.9"],
                (INPUT,),
            )
        )
    for cmd in (
        ["solve"],
        ["exact", "--N", "4"],
        ["simulate", *SIM],
        ["transient", "--t", "0:1:3"],
    ):
        base = [*cmd, *MODEL_SM]
        for start in ("1.5,0.5,0.1", "0.5,0.9,0.1", "-1,0,0", "nan,0,0", "0.5,0.5", "a,b,c", ""):
            out.append(Probe("start outside state space", [*base, "--start", start], (INPUT,)))
    return out


def issue_probes() -> list[Probe]:
    """The issue's own command lines (hangs, tracebacks, refusals, quirks)."""
    P = Probe
    out = [
        P("size b", ["bound", "--lam", "0.9", "--N", "10", "--b", "1000000"], (INPUT,)),
        P("size dps", ["bound", "--lam", "0.9", "--N", "10", "--dps", "100000"], (INPUT,)),
        P("size b", ["derive", "--b", "1000000"], (INPUT,)),
        P("size b", ["derive", "--b", "300"], (INPUT,)),
        P("size b", ["refined", "--lam", "0.9", "--N", "10", "--b", "1000000"], (INPUT,)),
        P("size b", [*TABLE_BASE, "--b", "1000000"], (INPUT,)),
        P("size b", ["exact", "--N", "2", "--lam", "0.9", "--b", "1000000"], (INPUT,)),
        P("size N", ["exact", "--N", "30000000", "--lam", "0.9", "--b", "1"], (INPUT,)),
        P("size N", ["exact", "--N", "100000", "--lam", "0.9", "--b", "200"], (INPUT,)),
        P("size d", [*SIM_BASE, "--d", "1000000"], (INPUT,)),
        P("size d", ["bound", "--lam", "0.5", "--N", "10", "--d", "1"], (INPUT, OK)),
        P("size d", ["lemmas", "--lam", "0.9", "--N", "10", "--d", "1"], (INPUT,)),
        P("size d", [*TABLE_BASE, "--d", "1"], (INPUT,)),
        P("size N", [*SIM_BASE, "--N", "2147483648"], (INPUT,)),
        P("size N", [*SIM_BASE, "--N", "2000000000"], (INPUT,)),
        P("size steps", [*SIM_BASE, "--steps", "1e30"], (INPUT,)),
        P("size reps", [*SIM_BASE, "--reps", "1000000000"], (INPUT,)),
        P("size workers", [*SIM_BASE, "--workers", "1000000000"], (INPUT,)),
        P("value lam", ["bound", "--lam", "1e300", "--N", "10"], (INPUT,)),
        P("value scheduler", [*SIM_BASE, "--scheduler", "bogus"], (INPUT,)),
        P("value M", ["bound", "--lam", "0.9", "--N", "10", "--M", "diag:1,nan"], (INPUT,)),
        P("value M", ["bound", "--lam", "0.9", "--N", "10", "--M", "bogus"], (INPUT,)),
        P("rate", ["bound", "--gamma", "1", "--alpha", "0", "--N", "10"], (INPUT,)),
        P("rate", ["lemmas", "--gamma", "0.5", "--alpha", "0.99", "--N", "1e100"], (INPUT,)),
        P("rate", ["lemmas", "--alpha", "0.99", "--N", "1e100"], (INPUT,)),
        P("rate", ["bound", "--gamma", "0.5", "--alpha", "0.99", "--N", "1e100"], (INPUT,)),
        P(
            "rate",
            ["bound", "--lam", "0.9", "--gamma", "0.5", "--alpha", "0.5", "--N", "10"],
            (INPUT,),
        ),
        *(
            P("valid", [*_EXACT_WOR, "--d", str(d)], (OK,) if d <= 10 else (INPUT,))
            for d in (8, 10, 11)
        ),
        P("valid", ["lemmas", "--list"], (OK,)),
        P("valid", ["lemmas", "--lam", "0.9", "--N", "10", "--only", ","], (INPUT,)),
        P("valid", ["lemmas", "--lam", "0.9", "--N", "10", "--only", "bogus"], (INPUT,)),
        P("valid", ["lemmas", "--lam", "0.9", "--N", "1e16", "--only", "lemma5"], (OK,)),
        P("duplicate N", ["bound", "--lam", "0.9", "--N", "10,10,1e1"], (OK,)),
        P("duplicate N", ["refined", "--lam", "0.9", "--N", "10,10", "--b", "3"], (OK,)),
        P(
            "duplicate N",
            ["lemmas", "--lam", "0.9", "--N", "10,10", "--b", "3", "--only", "lemma5"],
            (OK,),
        ),
        P("duplicate N", [*TABLE_BASE[:5], "--N", "10,10", *TABLE_BASE[7:]], (OK,)),
        P("empty N", ["bound", "--lam", "0.9", "--N", ","], (INPUT,)),
        P("empty N", ["lemmas", "--lam", "0.9", "--N", ",", "--only", "lemma5"], (INPUT,)),
        P("usage", ["bogus-command"], (INPUT,)),
        P("usage", ["bound", "--no-such-option"], (INPUT,)),
        P("usage", ["derive", "--b", "3", "--show", "bogus"], (INPUT,)),
        P("usage", ["derive", "--b", "3", "--format", "bogus"], (INPUT,)),
        P("usage", ["tail", "--model", "bogus", "--n", "3", "--eps", "0.2"], (INPUT,)),
        P("usage", ["tail", "--model", "jsq", "--n", "3"], (INPUT,)),
        P(
            "usage",
            ["tail", "--model", "jsq", "--n", "3", "--eps", "0.2", "--alpha", "0.5"],
            (INPUT,),
        ),
        P("pmf", ["pi", "--arrivals", "1:1", "--service", "1:1"], (INPUT,)),
        P("pmf", ["pi", "--arrivals", "0:.5,1:.6", "--service", "1:1"], (INPUT,)),
        P("pmf", ["pi", "--arrivals", "abc", "--service", "1:1"], (INPUT,)),
        P("pmf", ["pi", "--arrivals", "0:.5,2:.5", "--service", "0:1"], (INPUT,)),
        P("pmf", ["pi", "--arrivals", "0:.5,2:.5", "--service", "1:nan"], (INPUT,)),
        P("pmf", ["pi", "--arrivals", "0:.1,9:.9", "--service", "1:1", *PI_BASE[5:]], (INPUT,)),
        P(
            "pmf",
            ["pi", "--arrivals", "0:.5,2:.5", "--service", "1:1", "--exact", "--n", "9"],
            (INPUT,),
        ),
        P(
            "pmf",
            ["tail", "--model", "ssq", "--n", "1", "--eps", "0.2", "--arrival-pmf", "x"],
            (INPUT,),
        ),
        P(
            "split rule",
            [*PI_BASE[:5], "--policy", "pi-split", "--split-rule", "nosuch:f", *PI_BASE[5:]],
            (INPUT,),
        ),
        P("transient t", ["transient", *MODEL_SM, "--t", "bogus"], (INPUT,)),
        P("transient t", ["transient", *MODEL_SM, "--t", "0:1:1000000000"], (INPUT,)),
        P("transient t", ["transient", *MODEL_SM, "--t", "1:0:3"], (INPUT, OK)),
        P("transient t", ["transient", *MODEL_SM, "--t", "0:1e300:3"], ANY),
        P("transient t", ["transient", *MODEL_SM, "--t", "0:nan:3"], (INPUT,)),
        P(
            "warning",
            [
                "exact",
                "--without-replacement",
                "--d",
                "10",
                "--N",
                "10",
                "--lam",
                "0.9",
                "--b",
                "3",
            ],
            (OK,),
        ),
    ]
    return out


FRACTIONAL_JUMP = (
    "import sympy as sp\nfrom derive import Model, Transition\n"
    "def factory():\n    x, lam = sp.symbols('x lam')\n"
    "    return Model('frac', (x,), (lam,), [Transition((0.5,), lam), Transition((-1,), x)])\n"
)
INT_RATE = (
    "import sympy as sp\nfrom derive import Model, Transition\n"
    "def factory():\n    x = sp.Symbol('x')\n"
    "    return Model('imm', (x,), (), [Transition((1,), 2), Transition((-1,), x)])\n"
)
LEAKY = (
    "import sympy as sp\nfrom derive import Model, Transition\n"
    "def factory():\n    x = sp.Symbol('x')\n"
    "    return Model('leaky', (x,), (), [Transition((1,), sp.Rational(1, 10)), "
    "Transition((-1,), 1)])\n"
)
MIN_RATE = (
    "import sympy as sp\nfrom derive import Model, Transition\n"
    "from derive.spec import ModelInfo, StateSpace\n"
    "def factory():\n    x, lam = sp.symbols('x lam')\n"
    "    return Model('mmc', (x,), (lam,), [Transition((1,), lam), "
    "Transition((-1,), sp.Min(x**2, 2))], info=ModelInfo(state_space=StateSpace('orthant'), "
    "reference=(sp.Rational(1, 2),)))\n"
)
SIR_PARAMS = ["--param", "beta=2", "--param", "gamma=1", "--param", "rho=0.5", "--param", "a=0.1"]


def _json_field_is(name: str, test: Callable[[object], bool]):
    def check(work: Path, proc: subprocess.CompletedProcess) -> str | None:
        try:
            value = json.loads(proc.stdout)[name]
        except (ValueError, KeyError) as exc:
            return f"no JSON field {name}: {exc}"
        return None if test(value) else f"{name} = {value!r}"

    return check


def _no_negative_variance(work: Path, proc: subprocess.CompletedProcess) -> str | None:
    """No negative ``diag N Cov(S)`` (supermarket) nor ``N Var(S_k)`` (the generic
    simulator's table, its last column)."""
    in_table = False
    for line in proc.stdout.splitlines():
        if line.startswith("diag N Cov(S)") and "-" in line.split("=", 1)[1]:
            return f"negative variance printed: {line}"
        if line.rstrip().endswith("N Var(S_k)"):
            in_table = True
        elif in_table and line[:1].isdigit():
            words = line.split()  # "... 0.1653 ± 0.0845" or "... not reported"
            value = words[-3] if len(words) > 2 and words[-2] == "±" else words[-1]
            if value.startswith("-"):
                return f"negative variance printed: {line}"
        else:
            in_table = False
    return None


def issue23_probes() -> list[Probe]:
    """Issue 23 (first part): printed precision, population processes, estimates."""
    P = Probe
    bd = f"{ROOT}/examples/birth_death.py:birth_death"
    out = [
        # every printed number keeps its promise (tests/validation checks the values)
        P(
            "precision",
            [
                "solve",
                "--model",
                "jsq_L",
                "--param",
                "L=4",
                "--param",
                "alpha=0.8797",
                "--param",
                "beta=1",
                "--dps",
                "25",
                "--order",
                "2",
                "--json",
            ],
            (OK,),
            check=_json_field_is("V_abs_error", lambda v: isinstance(v, str)),
        ),
        P(
            "precision",
            [
                "bound",
                "--lam",
                "0.447671",
                "--N",
                "10",
                "--b",
                "3",
                "--d",
                "2",
                "--dps",
                "20",
                "--certify",
            ],
            (OK,),
        ),
        # only population processes are answered
        P("process", ["solve", "--model", bd, "--param", "lam=0.5", "--param", "cap=-1"], (INPUT,)),
        P(
            "process",
            ["transient", "--model", bd, "--param", "lam=0.5", "--param", "cap=-1", "--t", "0:1:3"],
            (INPUT,),
        ),
        P("process", ["solve", "--model", "sir", *SIR_PARAMS, "--start", "0,0,0"], (INPUT,)),
        P(
            "process",
            ["transient", "--model", "sir", *SIR_PARAMS, "--start", "0,0,0", "--t", "0:1:3"],
            (INPUT,),
        ),
        P(
            "process",
            [
                "solve",
                "--model",
                "sir",
                *SIR_PARAMS,
                "--dps",
                "10",
                "--start",
                "0.3333333333333333,0.3333333333333333,0.3333333333333333",
            ],
            (OK,),
        ),
        # a fixed point on the kink of Min(x^2, 2): refused in one sentence
        P(
            "rates kink",
            ["solve", "--model", "{dir}/m.py:factory", "--param", "lam=2"],
            (INPUT,),
            _file("m.py", MIN_RATE),
        ),
        # estimates that cannot be negative
        P(
            "estimate",
            [
                "simulate",
                "--N",
                "10",
                "--lam",
                "0.9",
                "--b",
                "3",
                "--steps",
                "300",
                "--reps",
                "2",
                "--workers",
                "1",
                "--no-progress",
            ],
            (OK,),
            check=_no_negative_variance,
        ),
        # the generic simulator on a one-state model printed N Var = -1.14 (exact 0.22)
        *(
            P(
                "estimate",
                [
                    "simulate",
                    "--N",
                    "10",
                    "--model",
                    bd,
                    "--param",
                    "lam=0.5",
                    "--steps",
                    steps,
                    "--reps",
                    "2",
                    "--workers",
                    "1",
                    "--no-progress",
                ],
                (OK,),
                check=_no_negative_variance,
            )
            for steps in ("30", "300", "30000")
        ),
        P(
            "estimate",
            ["pi", "--arrivals", "0:1", "--service", "1:1", "--service", "1:1"],
            (INPUT,),
        ),
    ]
    for cmd in (
        ["solve"],
        ["exact", "--N", "4", "--truncation", "3"],
        ["simulate", "--N", "10", *SIM],
        ["transient", "--t", "0:1:3"],
    ):
        for what, text in (("fractional jump", FRACTIONAL_JUMP), ("leaves its space", LEAKY)):
            params = ["--param", "lam=0.5"] if what == "fractional jump" else []
            out.append(
                P(
                    f"process {what}",
                    [*cmd, "--model", "{dir}/m.py:factory", *params],
                    (INPUT,),
                    _file("m.py", text),
                )
            )
        out.append(
            P(
                "rates Min",
                [*cmd, "--model", "{dir}/m.py:factory", "--param", "lam=1.5"],
                (OK,),
                _file("m.py", MIN_RATE),
            )
        )
        out.append(
            P(
                "process int rate",
                [*cmd, "--model", "{dir}/m.py:factory"],
                (OK,),
                _file("m.py", INT_RATE),
            )
        )
    return out


def _queue_file(departure: str, arrival: str = "lam", space: str = "orthant") -> str:
    """A one-queue model file: arrivals at rate ``arrival``, departures at ``departure``
    (SymPy source in ``x`` and ``lam``), on the declared ``space``."""
    return (
        "import sympy as sp\nfrom derive import Model, Transition\n"
        "from derive.spec import ModelInfo, StateSpace\n"
        "def factory():\n    x, lam = sp.symbols('x lam')\n"
        f"    return Model('queue', (x,), (lam,), [Transition((1,), {arrival}), "
        f"Transition((-1,), {departure})], info=ModelInfo(state_space=StateSpace('{space}'), "
        "reference=(sp.Rational(1, 2),)))\n"
    )


#: Issue 23, rates as users write them: (name, departure, arrival) of a queue whose
#: fixed point (lam = 0.7) lies off every kink, and the commands each once broke.
FUNCTION_RATES = [
    ("Max", "sp.Max(x, x**2)", "lam", ("solve", "exact", "simulate", "transient")),
    ("Abs", "sp.Abs(x - 3)*x", "lam", ("solve", "exact", "simulate", "transient")),
    (
        "Piecewise",
        "sp.Piecewise((x, x < 1), (2*x - 1, True))",
        "lam",
        ("solve", "exact", "simulate", "transient"),
    ),
    ("Heaviside", "x*(1 + sp.Heaviside(x - 3))", "lam", ("solve", "exact", "simulate")),
    ("capped arrival", "x", "lam*sp.Min(1, 2 - x)", ("solve", "exact", "transient")),
    ("sqrt", "sp.sqrt(x)", "lam", ("exact", "transient")),
    ("exp", "x", "lam*sp.exp(-x)", ("exact", "transient")),
    ("log", "sp.log(1 + x)", "lam", ("exact", "transient")),
    ("sign", "x*(3 + sp.sign(x - 3))", "lam", ("solve", "exact", "simulate", "transient")),
]
#: ... and rates or models that are no population process (refused in one sentence).
BAD_RATES = [
    ("complex rate", _queue_file("sp.I*x")),
    ("string rate", _queue_file("'x'")),
    ("rate 10**400", _queue_file("sp.Integer(10)**400*x")),
    ("negative rate", _queue_file("x - 1")),
    ("leaves its box", _queue_file("x", space="box")),
    ("Piecewise with a gap", _queue_file("sp.Piecewise((x, x < 2))")),
    ("floor rate", _queue_file("x + sp.floor(2*x)/2")),
    ("gamma rate", _queue_file("x*sp.gamma(1 + x)")),
    ("besselj rate", _queue_file("x*(1 + sp.besselj(0, x)**2)")),
    (
        "state is a parameter",
        "import sympy as sp\nfrom derive import Model, Transition\n"
        "def factory():\n    x = sp.Symbol('x')\n"
        "    return Model('dup', (x,), (x,), [Transition((1,), x), Transition((-1,), x)])\n",
    ),
]
CONSTANT_STATE = (
    "import sympy as sp\nfrom derive import Model, Transition\n"
    "from derive.spec import ModelInfo, StateSpace\n"
    "def factory():\n    x, y, lam = sp.symbols('x y lam')\n"
    "    return Model('const', (x, y), (lam,), [Transition((1, 0), lam*y), "
    "Transition((-1, 0), x)], info=ModelInfo(state_space=StateSpace('orthant'), "
    "reference=(sp.Rational(1, 2), sp.Integer(1))))\n"
)
_ROUTES = {
    "solve": ["solve"],
    "exact": ["exact", "--N", "4", "--truncation", "3"],
    "simulate": ["simulate", "--N", "10", *SIM],
    "transient": ["transient", "--t", "0:1:3"],
}


def issue23_rates_probes() -> list[Probe]:
    """Issue 23 audit: every function the issue names in a rate, on each command that
    once broke on it (status 0); rates and models that are no population process on
    every command (status 2); a constant state and an unbounded orthant in exact."""
    P = Probe
    out = []
    for name, departure, arrival, commands in FUNCTION_RATES:
        for cmd in commands:
            out.append(
                P(
                    f"rates {name}",
                    [*_ROUTES[cmd], "--model", "{dir}/m.py:factory", "--param", "lam=0.7"],
                    (OK,),
                    _file("m.py", _queue_file(departure, arrival)),
                )
            )
    for name, text in BAD_RATES:
        for cmd in _ROUTES.values():
            out.append(
                P(
                    f"process {name}",
                    [*cmd, "--model", "{dir}/m.py:factory", "--param", "lam=0.7"],
                    (INPUT,),
                    _file("m.py", text),
                )
            )
    model = ["--model", "{dir}/m.py:factory", "--param", "lam=0.5"]
    out += [
        P(
            "process constant state",
            [*_ROUTES["exact"], *model],
            (OK,),
            _file("m.py", CONSTANT_STATE),
        ),
        P("process constant state", ["solve", *model], (OK,), _file("m.py", CONSTANT_STATE)),
        # an unbounded queue: exact chooses its truncation and reports the mass cut (issue 32)
        P(
            "process unbounded",
            ["exact", "--N", "4", *model],
            (OK,),
            _file("m.py", _queue_file("x")),
        ),
    ]
    # a kink at the fixed point: the chain needs only the rates (exact answers, NaN c)
    kinked = _file("m.py", _queue_file("sp.Max(x, 2*x - 1)"))
    out.append(
        P("rates kink exact", [*_ROUTES["exact"], *model[:2], "--param", "lam=1"], (OK,), kinked)
    )
    # a drift that jumps where the flow would stop: one sentence, not a search for ever
    chatter = _file("m.py", _queue_file("x*(1 + sp.sign(x - 3))"))
    out.append(P("rates chattering", ["solve", *model[:2], "--param", "lam=0.7"], (ENV,), chatter))
    return out


def _timed_file(name: str, text: str, seconds: str = "2") -> Callable[[Path], dict[str, str]]:
    """A model file, and a short model time limit (``MFSTEIN_MODEL_TIMEOUT``)."""

    def setup(work: Path) -> dict[str, str]:
        (work / name).write_text(text)
        return {"MFSTEIN_MODEL_TIMEOUT": seconds}

    return setup


def _dangling_link(work: Path) -> dict[str, str]:
    (work / "ck.json").symlink_to(work / "store" / "real.json")
    return {}


def _link_written_through(work: Path, proc: subprocess.CompletedProcess) -> str | None:
    if not (work / "ck.json").is_symlink():
        return "the symbolic link --checkpoint was replaced by a regular file"
    if not (work / "store" / "real.json").is_file():
        return "the checkpoint was not written to the link's target"
    return None


def _one_line_mentioning(word: str) -> Callable[[Path, subprocess.CompletedProcess], str | None]:
    def check(work: Path, proc: subprocess.CompletedProcess) -> str | None:
        lines = [line for line in proc.stderr.splitlines() if line.strip()]
        if len(lines) != 1 or word not in lines[0]:
            return f"expected one line mentioning {word!r}, got {proc.stderr!r}"
        return None

    return check


def issue23_files_probes() -> list[Probe]:
    """Issue 23 (second part): model files under a time limit, what they raise,
    conflicting flags, symbolic-link checkpoints.  (``kill -9`` and SIGTERM of a
    checkpointed run are probed by ``tests/sim/test_signals.py``.)"""
    P = Probe
    files = {
        "python loop": "while True:\n    pass\n",
        "sleep": "import time\ntime.sleep(3600)\n",
        "sys.exit": "import sys\nsys.exit(3)\n",
        "SystemExit": "raise SystemExit\n",
        "BaseException": "class B(BaseException):\n    pass\nraise B('boom')\n",
        "factory sys.exit": "import sys\ndef factory():\n    sys.exit()\n",
        "factory BaseException": (
            "class B(BaseException):\n    pass\ndef factory():\n    raise B\n"
        ),
        "factory loop": "def factory():\n    while True:\n        pass\n",
    }
    out = []
    for what, text in files.items():
        for cmd in (["solve"], ["exact", "--N", "4"]):
            out.append(
                P(
                    f"modelfile {what}",
                    [*cmd, "--model", "{dir}/m.py:factory", "--param", "lam=0.5"],
                    (INPUT,),
                    _timed_file("m.py", text),
                    timeout=30,
                )
            )
    # a loop inside C code: no Python handler runs; the watchdog prints the
    # sentence and kills the process (status -9: outcome "other", by design)
    out.append(
        P(
            "modelfile C loop",
            ["solve", "--model", "{dir}/m.py:factory", "--param", "lam=0.5"],
            ("other",),
            _timed_file("m.py", "import itertools\nsum(itertools.count())\n"),
            _one_line_mentioning("ran past"),
            timeout=30,
        )
    )
    flags = [
        "--lam 0.5 --model supermarket --param lam=0.9 --param b=3",
        "--gamma 0.5 --model supermarket --param lam=0.9 --param b=3",
        "--lam 0.5 --model sir --param gamma=1",
        "--b 3 --model supermarket --param b=4 --lam 0.5",
        "--d 3 --model supermarket --param d=2 --b 3 --lam 0.5",
    ]
    for text in flags:
        out.append(P("flags conflicting", ["exact", "--N", "4", *text.split()], (INPUT,)))
    # long work without an end: refused before it starts
    for dps in ("101", "10000"):
        out.append(
            P(
                "budget transient dps",
                ["transient", *MODEL_SM, "--t", "0:1:3", "--dps", dps],
                (INPUT,),
                timeout=30,
            )
        )
    out.append(
        P(
            "signals dangling-symlink checkpoint",
            [*SIM_BASE, "--checkpoint", "ck.json"],
            (OK,),
            _dangling_link,
            _link_written_through,
        )
    )
    return out


#: Issue 23, numbers of any size: spellings every integer option must refuse in one
#: sentence (no float overflow, no giant integers) ...
HUGE_INTEGERS = ["1e400", "10**5000", "9" * 5000, "1/2", "1e-400", "nan"]
#: ... spellings of a valid integer (5), which must be read as 5 (tests/cli checks
#: `` 5``, ``4e0``, ``2**2`` give the same answer as the plain integer) ...
SPELLED_FIVE = ["5.0"]
#: ... and reals every real option must refuse (or accept as the number they are).
HUGE_REALS = ["1e400", "10**5000", "nan", "1e-400", "1/2"]
GOOD_REALS = ("1/2", "1e-400")

PI_N = ["pi", "--arrivals", "0:.5,1:.5", "--service", "1:1", "--n", "3", "--slots", "200"]
PI_N += ["--reps", "2", "--batches", "2", "--workers", "1", "--no-progress"]
EXACT_SM = ["exact", "--N", "5", "--lam", "0.9", "--b", "3"]
TAIL_EXACT = ["tail", "--model", "jsq", "--n", "3", "--eps", "0.2"]
LEMMAS = ["lemmas", "--gamma", "0.5", "--alpha", "0.5", "--N", "10", "--b", "3"]
LEMMAS += ["--only", "lemma5", "--dps", "20"]

#: Every integer option of every command, on a base command line that works.
INTEGER_OPTIONS: list[tuple[list[str], str]] = [
    *((SIM_BASE, o) for o in ("--N", "--b", "--d", "--steps", "--reps", "--seed")),
    *((SIM_BASE, o) for o in ("--batches", "--workers")),
    *((TABLE_BASE, o) for o in ("--N", "--sim-steps", "--reps", "--seed", "--workers", "--d")),
    *((PI_N, o) for o in ("--n", "--slots", "--reps", "--batches", "--seed", "--workers")),
    *((EXACT_SM, o) for o in ("--N", "--b", "--d")),
    (["exact", "--N", "5", *MODEL_SM], "--N"),
    (["bound", "--lam", "0.9", "--N", "10", "--b", "5"], "--N"),
    (["bound", "--lam", "0.9", "--N", "10", "--b", "5"], "--b"),
    (["bound", "--lam", "0.9", "--N", "10", "--b", "5"], "--d"),
    (["bound", "--lam", "0.9", "--N", "10", "--b", "5"], "--dps"),
    (["refined", "--lam", "0.9", "--N", "10", "--b", "4"], "--dps"),
    (["solve", *MODEL_SM], "--dps"),
    (LEMMAS, "--N"),
    (LEMMAS, "--b"),
    (LEMMAS, "--dps"),
    (TAIL_EXACT, "--n"),
    (TAIL_SIM, "--events"),
    (TAIL_SIM, "--reps"),
    (TAIL_SIM, "--seed"),
    (TAIL_SIM, "--workers"),
    (["derive", "--b", "3", "--show", "f"], "--b"),
    (["derive", "--b", "3", "--show", "f"], "--d"),
    (["transient", *MODEL_SM, "--t", "0:1:3"], "--dps"),
]

#: Every real option of every command.
REAL_OPTIONS: list[tuple[list[str], str]] = [
    (SIM_BASE, "--lam"),
    (EXACT_SM, "--lam"),
    (EXACT_SM, "--mu"),
    (EXACT_SM, "--memory-limit"),
    (["simulate", "--N", "10", *SIM, *MODEL_SM[:4]], "--mu"),
    (TABLE_BASE, "--gamma"),
    (TABLE_BASE, "--alpha"),
    (["bound", "--lam", "0.9", "--N", "10", "--b", "5"], "--lam"),
    (["bound", "--gamma", "0.1", "--alpha", "0.05", "--N", "10", "--b", "5"], "--gamma"),
    (["bound", "--gamma", "0.1", "--alpha", "0.05", "--N", "10", "--b", "5"], "--alpha"),
    (["refined", "--lam", "0.9", "--N", "10", "--b", "4"], "--lam"),
    (LEMMAS, "--xi"),
    (LEMMAS, "--gamma"),
    (TAIL_EXACT, "--eps"),
    (TAIL_EXACT, "--x"),
    (TAIL_EXACT, "--theta"),
    (["exact", "--N", "5", *MODEL_SM], "--truncation"),
]


def numbers_probes() -> list[Probe]:
    """Issue 23, "numbers of any size": every integer and real option with huge,
    tiny, fractional, non-finite and oddly spelt values; the issue's own command
    lines; conflicting flags on every command that has them."""
    out: list[Probe] = []
    for base, option in INTEGER_OPTIONS:
        for value in HUGE_INTEGERS:
            out.append(Probe(f"numbers {option}", _with(base, option, value), (INPUT,)))
        for value in SPELLED_FIVE:
            out.append(Probe(f"numbers {option}", _with(base, option, value), ANY))
    for base, option in REAL_OPTIONS:
        for value in HUGE_REALS:
            # an exponent or a truncation factor has no upper limit: 1e400 is a valid value
            unbounded = option in ("--alpha", "--truncation") and value == "1e400"
            allowed = ANY if value in GOOD_REALS or unbounded else (INPUT,)
            out.append(Probe(f"numbers {option}", _with(base, option, value), allowed))
    sm = ["--model", "supermarket", "--param", "b=3"]
    issue = [
        (["refined", "--lam", "0.9", "--N", "10", "--b", "3", "--M", "diag:1e400"], (INPUT,)),
        (["solve", *MODEL_SM, "--M", "diag:1e400"], (INPUT,)),
        (["bound", "--lam", "0.9", "--N", "10", "--b", "3", "--M", "diag:1/2,10**5000"], (INPUT,)),
        (["bound", "--lam", "0.9", "--N", "10", "--b", "3", "--M", "diag:1/2,1e-400"], ANY),
        (["exact", "--N", "5", "--lam", "1/2", "--b", "3"], (OK,)),
        (["exact", "--N", "5", "--lam", "0.5", "--b", "3", "--mu", "1e-400"], (INPUT,)),
        (["transient", *MODEL_SM, "--t", "0:1e400:3"], (INPUT,)),
        (["transient", *MODEL_SM, "--t", "0:1:10**5000"], (INPUT,)),
        (["transient", *MODEL_SM, "--t", "0:1/2:3e0"], (OK,)),
        ([*TAIL_EXACT, "--theta", "1000"], (INPUT,)),
        ([*TAIL_EXACT, "--theta", "10"], (INPUT,)),
        ([*TAIL_EXACT, "--theta", "0.5"], (OK,)),
        # a million servers: the setup is linear in n (it was quadratic: minutes)
        ([*_with(_with(PI_N, "--n", "1000000"), "--slots", "10"), "--json"], (OK,)),
        (_with(PI_N, "--n", "1000001"), (INPUT,)),
        # conflicting flags, on every command that has both spellings
        ([*EXACT_SM[:5], "--d", "2", *sm, "--param", "d=3"], (INPUT,)),
        ([*EXACT_SM[:3], "--lam", "0.5", *sm, "--param", "lam=0.9"], (INPUT,)),
        ([*EXACT_SM[:3], "--gamma", "0.5", "--alpha", "0.5", *sm, "--param", "lam=0.9"], (INPUT,)),
        ([*EXACT_SM[:3], "--b", "2", *sm, "--param", "lam=0.9"], (INPUT,)),
        ([*EXACT_SM[:3], "--mu", "2", *sm, "--param", "lam=0.9", "--param", "mu=1"], (INPUT,)),
        (["simulate", "--N", "10", *SIM, "--d", "2", *sm, "--param", "d=3"], (INPUT,)),
        (["simulate", "--N", "10", *SIM, "--lam", "0.5", *sm, "--param", "lam=0.9"], (INPUT,)),
        (["simulate", "--N", "10", *SIM, "--lam", "0.5", "--model", "sir"], (INPUT,)),
        (
            [
                *TABLE_BASE[:1],
                "--N",
                "10",
                "--model",
                "sir",
                "--observable",
                "infected",
                "--d",
                "2",
            ],
            (INPUT,),
        ),
        (["solve", *MODEL_SM, "--param", "lam=0.8"], (INPUT,)),
    ]
    out += [Probe("numbers issue 23", argv, allowed) for argv, allowed in issue]
    return out


#: A one-state model whose drift a0 + a1 x + a2 x^2 - d1 x - d3 x^3 is bistable
#: (Schlogl: a0 = 6, a2 = 6, d1 = 11, d3 = 1), blows up (a0 = 0.1, a2 = 2, d1 = 1),
#: or has only an unstable (a1 = 1) or a non-hyperbolic (d3 = 1) fixed point.
POLY_MODEL = """
import sympy as sp
from derive.model import Model, Transition


def poly():
    x = sp.Symbol("x")
    a0, a1, a2, d1, d3 = sp.symbols("a0 a1 a2 d1 d3")
    return Model(
        "poly", (x,), (a0, a1, a2, d1, d3),
        [Transition((1,), a0 + a1 * x + a2 * x**2), Transition((-1,), d1 * x + d3 * x**3)],
    )
"""


def _poly(values: str) -> list[str]:
    """``--model {dir}/poly.py:poly`` with ``a0=..,a1=..`` as ``--param`` options."""
    names = ("a0", "a1", "a2", "d1", "d3")
    out = ["--model", "{dir}/poly.py:poly"]
    for name, value in zip(names, values.split(","), strict=True):
        out += ["--param", f"{name}={value}"]
    return out


SM_ORDER2 = ["--param", "lam=0.9", "--order", "2", "--t", "0:10:11"]


def transient_probes() -> list[Probe]:
    """Issue 23 (transient): where the mean field goes (another basin, an unstable or
    non-hyperbolic fixed point, unbounded growth: one warning line, status 0), and
    long work (refused by its estimate before it starts, or finishing)."""
    P = Probe
    poly = _file("poly.py", POLY_MODEL)
    sir = ["--model", "sir", *SIR_PARAMS, "--start", "0.75,0.25,0"]
    cases = [
        ("6,0,6,11,1", "1.5", None),  # Schlogl, the basin of s* = 1: silent
        ("6,0,6,11,1", "2.5", "another basin"),
        ("6,0,6,11,1", "2", "not stable"),  # on the unstable fixed point
        ("0.1,0,2,1,0", "0.5", "grows without bound"),  # x(1) finite, blows up later
        ("0,1,0,0,0", "0", "not stable"),  # the only fixed point unstable
        ("0,0,0,0,1", "1", "not hyperbolic"),  # f = -x^3
    ]
    out = []
    for values, start, words in cases:
        argv = ["transient", *_poly(values), "--start", start, "--t", "0:1:3"]
        check = _one_line_mentioning(words) if words else _no_stderr
        out.append(P("transient basin", argv, (OK,), poly, check, timeout=120))
    out += [
        P(
            "transient budget",
            ["transient", *sir, "--order", "2", "--dps", "60", "--t", "0:100:3"],
            (INPUT,),
            check=_one_line_mentioning("would take about"),
            timeout=60,
        ),
        P("transient budget", ["transient", *sir, "--dps", "10000", "--t", "0:1:3"], (INPUT,)),
        P(
            "transient long",
            ["transient", "--model", "supermarket", "--param", "b=30", *SM_ORDER2],
            (OK,),
            timeout=180,
        ),
        # under the budget (about 165 s on two shared cores; a bar on a terminal)
        P(
            "transient long",
            ["transient", *sir, "--order", "2", "--dps", "50", "--t", "0:10:100"],
            (OK,),
            timeout=600,
        ),
    ]
    return out


def _no_stderr(work: Path, proc: subprocess.CompletedProcess) -> str | None:
    return None if not proc.stderr.strip() else f"expected no stderr, got {proc.stderr!r}"


def known_size_probes() -> list[Probe]:
    """Issue 23, "work with a known size": the issue's 8-station tandem network
    (``examples/tandem.py``) with default options, and long runs of every simulating
    command pressed with Ctrl-C after 20 s: each stops within :data:`STOP_SECONDS`
    with status 130 and only one-line ``mfstein ...`` messages."""
    tandem = ["--model", f"{ROOT}/examples/tandem.py:tandem", "--param", "lam=1"]
    tandem += ["--param", "mu=1"]
    quiet = ["--workers", "1", "--no-progress"]
    model_table = ["table", *tandem, "--N", "10,100", "--observable", "x1", "--simulate"]
    table = ["table", "--gamma", "0.1", "--alpha", "0.05", "--N", "10,100"]
    long_runs = [
        ["simulate", *tandem, "--N", "100", "--steps", "1e12", "--reps", "2", *quiet],
        ["simulate", "--N", "100", "--lam", "0.9", "--b", "5", "--steps", "1e13", *quiet],
        [*model_table, "--sim-steps", "1e12", "--reps", "2", *quiet],
        [*table, "--sim-steps", "1e12", "--reps", "2", *quiet],
        [*PI_BASE[:7], "--slots", "1e12", "--reps", "2", *quiet],
        [*TAIL_SIM[:8], "--events", "1e12", "--reps", "2", *quiet],
        ["exact", "--N", "300", "--lam", "0.9", "--b", "3"],
    ]
    out = [
        Probe("known size", ["simulate", *tandem, "--N", "100", "--steps", "1e6"], (OK,)),
        Probe(
            "known size",
            [*model_table, "--sim-steps", "1e5", "--reps", "2", *quiet],
            (OK,),
        ),
    ]
    out += [Probe("known size ctrl-c", argv, (STOPPED,), interrupt=20.0) for argv in long_runs]
    # exact at 12.5 M states (N = 420: the compiled solver of issue 34 ends N = 300 in
    # under a minute on a quiet machine), pressed in each phase: the search (2 s), the
    # assembly or the start of BiCGSTAB (8-12 s), the Krylov iterations (30 s)
    big_exact = ["exact", "--N", "420", "--lam", "0.9", "--b", "3"]
    for t in (2.0, 10.0, 30.0):
        out.append(Probe("known size ctrl-c", big_exact, (STOPPED,), interrupt=t))
    # 10^6 identical PI servers: the alias tables and the configuration are built once
    # per distinct pmf (15 s per unit of work before), so the run ends within minutes
    million = [*PI_BASE[:3], "--service", "1:1", "--n", "1000000", "--slots", "2000"]
    million += ["--reps", "2", "--batches", "2", "--workers", "1", "--no-progress"]
    out.append(Probe("known size", million, (OK,)))
    # bounded before it starts (about 7 min estimated); Ctrl-C or a one-line failure
    bound = ["bound", "--lam", "0.9", "--N", "10", "--b", "10", "--dps", "10000"]
    out.append(Probe("known size ctrl-c", bound, (STOPPED, ENV), interrupt=20.0))
    return out


def _rows_never_negative(work: Path, proc: subprocess.CompletedProcess) -> str | None:
    """Every expansion value of a ``table --json`` of a square is absent or ``> 0``."""
    try:
        rows = json.loads(proc.stdout)["rows"]
    except (ValueError, KeyError) as exc:
        return f"no JSON rows: {exc}"
    for row in rows:
        for key in ("mean_field", "order1", "order2"):
            if row[key] is not None and float(row[key]) <= 0:
                return f"N = {row['N']}: {key} = {row[key]} printed for a square"
    return None


def _exact_digits_below(limit: int) -> Callable[[Path, subprocess.CompletedProcess], str | None]:
    def check(work: Path, proc: subprocess.CompletedProcess) -> str | None:
        try:
            rows = json.loads(proc.stdout)["rows"]
        except (ValueError, KeyError) as exc:
            return f"no JSON rows: {exc}"
        for row in rows:
            text = row["exact"]
            if text is not None and len(text.split("e")[0].replace(".", "").lstrip("-0")) >= limit:
                return f"N = {row['N']}: exact {text} claims {limit} or more digits"
        return None

    return check


def issue36_observables_probes() -> list[Probe]:
    """Issue 36: observables that cancel print only the digits they earn (expansion and
    exact chain); every documented function works in every back end; a long sum works
    and an over-long term is refused with its limit."""
    P = Probe
    sq = ["--observable", "s1**2-2*s1*s2+s2**2", "--json"]
    sm = ["table", "--model", "supermarket"]
    sir = ["table", "--model", "sir", *SIR_PARAMS, "--N", "10"]
    long_sum = "+".join(f"{i % 7 + 1}*S**{i % 5}*I**{(i // 5) % 9}" for i in range(3000))
    return [
        P("issue36 digits", [*sm, "--param", "b=30", "--param", "d=5", "--param", "lam=1.2",
                     "--N", "10,100", *sq], (OK,), check=_rows_never_negative),
        P("issue36 digits", [*sm, "--param", "b=20", "--param", "d=2", "--param", "lam=3",
                     "--N", "10", *sq], (OK,), check=_rows_never_negative),
        P("issue36 form", [*sir, "--observable", "Abs(I-0.2)", "--exact"], (OK,)),
        P("issue36 form", [*sir, "--observable", "Min(I,0.2)", "--exact"], (OK,)),
        # simulated in the event loop since issue 32 (refused before: not a sum of one-
        # coordinate functions and pair products)
        P("issue36 form", [*sir, "--observable", "Max(S,I)", "--exact", "--simulate",
                           "--sim-steps", "20000", "--reps", "2", "--workers", "1"], (OK,)),
        P("issue36 size", [*sir, "--observable", long_sum, "--exact"], (OK,)),
        P("issue36 size", [*sir, "--observable", "*".join(["S"] * 3000)], (INPUT,),
          check=_one_line_mentioning("1000 operators")),
        P("issue36 digits", [*sir, "--observable", "(S + 10**8)**2 - 2*10**8*S - 10**16", "--exact",
                     "--json"], (OK,), check=_exact_digits_below(10)),
    ]  # fmt: skip


#: Issue 36 (float64): plain model files the float64 route must check as the default
#: route does (shared with tests/numeric/meanfield/test_float64_checks.py).
FLOAT64_MODELS = ROOT / "benchmarks/models/float64_checks.py"


def _stdout_has(text: str) -> Callable[[Path, subprocess.CompletedProcess], str | None]:
    def check(work: Path, proc: subprocess.CompletedProcess) -> str | None:
        return None if text in proc.stdout else f"expected {text!r} in the output"

    return check


def _no_internal_error(work: Path, proc: subprocess.CompletedProcess) -> str | None:
    return "an internal error" if "internal error" in proc.stderr else None


def issue36_float64_probes() -> list[Probe]:
    """Issue 36 (IV): ``solve --float64`` proves what it returns -- no answer without a
    fixed point (the drift jumps), on a kink, at an unstable point, after an internal
    error, with ``--method fast``; SIS answered from a start whose search ends at the
    unstable root; ``--order 2`` at ``lam = 1000`` answered by the default route."""
    P = Probe
    setup = _file("m.py", FLOAT64_MODELS.read_text())
    m = "{dir}/m.py"
    f64 = ["--float64"]
    return [
        P("float64 no fixed point", ["solve", "--model", f"{m}:jump", "--param", "lam=0.5", *f64],
          (ENV,), setup, _one_line_mentioning("is not a fixed point")),
        P("float64 kink", ["solve", "--model", f"{m}:kink", "--param", "lam=0.5", *f64],
          (INPUT,), setup, _one_line_mentioning("lies on the kink")),
        P("float64 sis unstable root", ["solve", "--model", f"{m}:sis", "--param", "beta=2.981",
          "--param", "gamma=1.628", "--start", "0.208", *f64],
          (OK,), setup, _stdout_has("0.453874538745")),
        P("float64 only unstable", ["solve", "--model", f"{m}:grow", "--param", "c=1", *f64],
          (INPUT,), setup, _one_line_mentioning("is not stable")),
        P("float64 tiny J", ["solve", "--model", f"{m}:grow", "--param", "c=1e-300", *f64],
          (INPUT,), setup, _one_line_mentioning("not below -1e-09 max|J_ij|")),
        P("float64 supermarket lam=1", ["solve", "--model", "supermarket", "--param", "b=30",
          "--param", "d=5", "--param", "lam=1.0", *f64], (ENV, INPUT),
          check=_no_internal_error),
        P("float64 method fast", ["solve", *MODEL_SM, *f64, "--method", "fast"], (INPUT,),
          check=_one_line_mentioning("cannot be combined")),
        P("float64 order 2 lam=1000", ["solve", "--model", f"{m}:birth_death",
          "--param", "lam=1000", "--order", "2"], (OK,), setup,
          _stdout_has("0.999000999001")),
    ]  # fmt: skip


def issue36_known_size_probes() -> list[Probe]:
    """Issue 36, "no input breaks it (IV)": order 2 near heavy traffic answers (a
    truncation nested in every ring of the next never ended), an order-2 expansion
    past the time budget is refused in one sentence before any work, and
    ``--certify`` holds above 308 digits (float64 flushed its error terms to zero)."""

    def certified_400(work: Path, proc: subprocess.CompletedProcess) -> str | None:
        import re

        m = re.search(r"\((\d+) certified digits", proc.stdout)
        if not m or int(m.group(1)) < 400:
            return f"expected at least 400 certified digits, got {proc.stdout[-300:]!r}"
        return None

    heavy = ["solve", "--model", "supermarket", "--order", "2"]
    return [
        Probe(
            "known size",
            [*heavy, "--param", "b=20", "--param", "lam=0.999", "--dps", "5"],
            (OK,),
            timeout=300,
        ),
        Probe(
            "known size",
            [*heavy, "--param", "b=18", "--param", "lam=0.999", "--dps", "5"],
            (OK,),
            timeout=300,
        ),
        Probe(
            "known size",
            [*heavy, "--param", "b=15", "--param", "lam=0.9", "--dps", "6000"],
            (INPUT,),
        ),
        Probe(
            "known size",
            [
                "solve",
                "--model",
                "supermarket",
                "--param",
                "b=3",
                "--param",
                "lam=0.9",
                "--dps",
                "400",
                "--certify",
            ],
            (OK,),
            check=certified_400,
            timeout=300,
        ),
    ]


#: A one-queue model file (:func:`_queue_file`) that prints when it is imported and
#: when its factory runs.
PRINTING_MODEL = _queue_file("x").replace(
    "def factory():\n", "print('hello from the import')\ndef factory():\n    print('hello')\n"
)
#: The Brusselator on the orthant: at a = 1, b = 3 its fixed point (1, 3) is unstable
#: and the mean field circles a limit cycle.
BRUSSELATOR = (
    "import sympy as sp\nfrom derive import Model, Transition\n"
    "from derive.spec import ModelInfo, StateSpace\n"
    "def factory():\n    x, y, a, b = sp.symbols('x y a b')\n"
    "    return Model('brusselator', (x, y), (a, b), [Transition((1, 0), a), "
    "Transition((-1, 1), b*x), Transition((1, -1), x**2*y), Transition((-1, 0), x)], "
    "info=ModelInfo(state_space=StateSpace('orthant'), reference=(sp.Integer(1), sp.Integer(3))))\n"
)


def _strict_json(note: str = "", *, stderr: str = "") -> Callable[..., str | None]:
    """Standard output is exactly one line of strict JSON (no NaN or Infinity token),
    an object whose ``notes`` mention ``note`` (when given); standard error mentions
    ``stderr`` (when given)."""

    def refuse(token: str) -> float:
        raise ValueError(f"the token {token} is not JSON")

    def check(work: Path, proc: subprocess.CompletedProcess) -> str | None:
        text = proc.stdout
        if not text.endswith("\n") or text.count("\n") != 1:
            return f"not one line of JSON: {text[:200]!r}"
        try:
            data = json.loads(text, parse_constant=refuse)
        except ValueError as exc:
            return f"not one strict JSON document: {exc}"
        if not isinstance(data, dict):
            return f"not a JSON object: {text[:200]!r}"
        if note and not any(note in str(n) for n in data.get("notes", [])):
            return f"no note mentioning {note!r}: {data.get('notes')!r}"
        if stderr and stderr not in proc.stderr:
            return f"standard error does not mention {stderr!r}"
        return None

    return check


def issue36_json_probes() -> list[Probe]:
    """Issue 36, "JSON is always JSON": every ``--json`` prints one document, strict
    JSON (a value that is not finite is null, named in a note), whatever the model
    prints; a closed standard output is an error (status 1, one line)."""
    P = Probe
    null = "written as null"
    m = ["--model", "{dir}/m.py:factory"]
    exact = ["exact", "--N", "4", "--truncation", "3"]
    poly = _file("poly.py", POLY_MODEL)
    # one server: 2 batches, too few for the lag-1 autocorrelation (NaN in the result)
    one_server = ["pi", "--arrivals", "0:.5,1:.5", "--service", "1:1", *PI_BASE[7:]]
    return [
        # NaN in the result (no stable hyperbolic fixed point): null with a note
        P(
            "json nan",
            [*exact, *m, "--param", "lam=1", "--json"],
            (OK,),
            _file("m.py", _queue_file("sp.Max(x, 2*x - 1)")),
            _strict_json(null),
        ),
        P(
            "json nan",
            [*exact, *m, "--param", "a=1", "--param", "b=3", "--json"],
            (OK,),
            _file("m.py", BRUSSELATOR),
            _strict_json(null),
            timeout=180,
        ),
        P("json nan", [*exact, *_poly("0,0,0,0,1"), "--json"], (OK,), poly, _strict_json(null)),
        P(
            "json nan",
            [*exact, *m, "--param", "lam=0.5", "--json"],
            (OK,),
            _file("m.py", _queue_file("sp.Float(1e-300)*x", "sp.Float(1e-300)*lam")),
            _strict_json(null),
        ),
        P(
            "json nan",
            ["simulate", "--N", "10", *SIM, *m, "--param", "lam=0.5", "--json"],
            (OK,),
            _file("m.py", _queue_file("sp.Float(1e300)*x", "sp.Float(1e300)*lam")),
            _strict_json(null),
            timeout=180,
        ),
        P(
            "json nan",
            [*one_server, "--policy", "random", "--json"],
            (OK,),
            check=_strict_json(null),
        ),
        P(
            "json nan",
            [*one_server, "--policy", "jiq", "--json"],
            (OK,),
            check=_strict_json(null),
        ),
        # one document, whatever the mode
        P("json one document", ["lemmas", "--list", "--json"], (OK,), check=_strict_json()),
        P(
            "json one document",
            ["lemmas", "--N", "10,100", "--lam", "0.9", "--b", "3", "--json"],
            (OK,),
            check=_strict_json(),
            timeout=120,
        ),
        P(
            "json one document",
            ["derive", "--b", "2", "--show", "closed-form", "--json"],
            (OK,),
            check=_strict_json(),
        ),
        P(
            "json one document",
            ["solve", *MODEL_SM, "--certify", "--json"],
            (OK,),
            check=_strict_json(),
        ),
        # a print() in the model file goes to standard error, not into the JSON
        P(
            "json print",
            ["solve", *m, "--param", "lam=0.5", "--json"],
            (OK, "multi-line stderr"),
            _file("m.py", PRINTING_MODEL),
            _strict_json(stderr="hello from the import"),
        ),
        # standard output closed (>&-): an error, not status 0 with the answer lost
        P(
            "json closed stdout",
            ["bound", "--lam", "0.9", "--N", "10", "--json"],
            (ENV,),
            check=_mentions("standard output is closed"),
            close_stdout=True,
        ),
    ]


#: The runs whose numba caches the issue-36 probes damage (:func:`_issue36_cache`), and
#: which of their cached functions is damaged (of the library's own code: the cache
#: of a generated module is filed under the cache directory's path, so a copy of the
#: cache elsewhere does not reuse it).
ISSUE36_RUNS = [
    (["exact", "--N", "120", "--lam", "0.9", "--b", "3"], "lattice.rehash-"),
    (["simulate", "--N", "10", "--lam", "0.9", "--b", "4", *SIM], "aggregated.run-"),
]
_issue36_lock = threading.Lock()
_issue36_dirs: dict[int, Path] = {}


def _issue36_cache(run: int) -> Path:
    """A cache directory populated by ``ISSUE36_RUNS[run]``, made once per sweep by the
    first probe that damages it (removed at exit)."""
    with _issue36_lock:
        if run not in _issue36_dirs:
            root = Path(tempfile.mkdtemp(prefix="probe-issue36-"))
            atexit.register(shutil.rmtree, root, ignore_errors=True)
            argv = ISSUE36_RUNS[run][0]
            proc = subprocess.run(
                [EXE, *argv],
                env=_env({"MFSTEIN_CACHE_DIR": str(root)}),
                capture_output=True,
                text=True,
                timeout=600,
            )
            if proc.returncode != 0:
                sys.exit(f"preparing the issue-36 cache failed: {' '.join(argv)}\n{proc.stderr}")
            _issue36_dirs[run] = root
        return _issue36_dirs[run]


def issue36_processes_probes() -> list[Probe]:
    """Issue 36, processes and caches: a model factory that calls ``os._exit`` (was a
    silent exit 0, its watchdog living on for a minute); Ctrl-C while numba compiles
    on a first run (was a ctypes or llvmlite traceback, or SIGSEGV); one damaged numba
    index or object-code file of a populated cache (a garbled length field was "not
    enough memory" on every later run, garbled object code aborted inside LLVM)."""
    P = Probe
    quits = "import os\ndef factory():\n    os._exit(0)\n"
    out = [
        P(
            "issue36 factory os._exit",
            [*cmd, "--model", "{dir}/m.py:factory", "--param", "lam=0.5"],
            (INPUT,),
            _file("m.py", quits),
            _one_line_mentioning("os._exit(0)"),
            timeout=60,
        )
        for cmd in (["solve"], ["exact", "--N", "4"])
    ]

    def empty_cache(work: Path) -> dict[str, str]:
        return {"MFSTEIN_CACHE_DIR": str(work / "cache")}

    first_run = ["exact", "--N", "150", "--lam", "0.9", "--b", "3"]
    for seconds in (6.0, 10.0, 15.0):  # start-up is 2-5 s, the first compilation 10-30 s
        # on a quiet machine the whole run may end before the press: then status 0 with
        # its answer; never a traceback, a crash or a second line
        out.append(
            P("issue36 compile ctrl-c", first_run, (STOPPED, OK), empty_cache, interrupt=seconds)
        )

    def damaged(run: int, suffix: str, how: str) -> Callable[[Path], dict[str, str]]:
        def setup(work: Path) -> dict[str, str]:
            cache = work / "cache"
            shutil.copytree(_issue36_cache(run), cache)
            stem = ISSUE36_RUNS[run][1]
            path = sorted(cache.rglob(f"{stem}*{suffix}"))[0]  # one function's file
            data = path.read_bytes()
            third = len(data) // 3
            path.write_bytes(
                {
                    "zero-length": b"",
                    "truncated": data[: len(data) // 2],
                    "garbled": data[:third] + os.urandom(third) + data[2 * third :],
                    # a pickle length field asking for 2**62 bytes
                    "length field": data[:2] + b"\x8e" + (2**62).to_bytes(8, "little") + data[2:],
                }[how]
            )
            return {"MFSTEIN_CACHE_DIR": str(cache)}

        return setup

    for run, (argv, _) in enumerate(ISSUE36_RUNS):
        for suffix in (".nbi", ".nbc"):
            for how in ("zero-length", "truncated", "garbled", "length field"):
                out.append(
                    P(
                        f"issue36 cache {suffix} {how}",
                        argv,
                        (OK,),
                        damaged(run, suffix, how),
                        _mentions("damaged cache files"),
                        timeout=180,
                    )
                )
    return out


#: Issue 36: rmf_tool's Example_nonStableSIR, small (x2 = 1 - x0 - x1 implicit): the
#: return rate vanishes exactly on the face x0 + x1 = 1, where float64 gave -5e-16.
NONSTABLE_SIR = (
    "import sympy as sp\nfrom derive import Model, Transition\n"
    "from derive.spec import ModelInfo, StateSpace\n"
    "def factory():\n    x0, x1 = sp.symbols('x0 x1')\n"
    "    return Model('nssir', (x0, x1), (), [Transition((-1, 1), 10*x0*x1), "
    "Transition((0, -1), 5*x1), Transition((1, 0), (10*x0 + 0.1)*(1 - x0 - x1), 'return')], "
    "info=ModelInfo(state_space=StateSpace('simplex')))\n"
)


def issue36_rates_probes() -> list[Probe]:
    """Issue 36: a rate vanishing on a face is round-off, not a negative rate (status
    0); ``lam/x`` at ``x = 0`` in solve's sentence on every route; a ``sqrt(y)`` rate
    from inside (status 0) and from ``y = 0`` (one sentence); a reachable negative
    rate refused by simulate as by exact."""
    P = Probe
    sir = _file("m.py", NONSTABLE_SIR)
    model = ["--model", "{dir}/m.py:factory"]
    out = [
        P("issue36 face", ["transient", *model, "--start", start, "--t", "0:1:3"], (OK,), sir)
        for start in ("0.5,0.5", "0.7,0.3", "0.2,0.8")
    ]
    inverse = _file("m.py", _queue_file("x", arrival="lam/x"))
    cannot = _one_line_mentioning("cannot be evaluated")
    for argv in (
        ["transient", "--t", "0:1:3", "--start", "0"],
        ["solve", "--start", "0"],
        [*_ROUTES["exact"]],
        ["simulate", "--N", "4", "--steps", "20000", "--reps", "1", "--workers", "1"],
    ):
        out.append(
            P("issue36 lam/x", [*argv, *model, "--param", "lam=0.5"], (INPUT,), inverse, cannot)
        )
    root = _file(
        "m.py",
        "import sympy as sp\nfrom derive import Model, Transition\n"
        "from derive.spec import ModelInfo, StateSpace\n"
        "def factory():\n    x, y, lam = sp.symbols('x y lam')\n"
        "    return Model('sq', (x, y), (lam,), [Transition((1, 0), lam), "
        "Transition((-1, 0), x), Transition((0, 1), x), Transition((0, -1), sp.sqrt(y))], "
        "info=ModelInfo(state_space=StateSpace('orthant')))\n",
    )
    sq = ["transient", *model, "--param", "lam=0.5", "--t", "0:1:3"]
    out += [
        P("issue36 sqrt", [*sq, "--start", "0.5,0.5"], (OK,), root),
        P("issue36 sqrt", sq, (INPUT,), root, _one_line_mentioning("no finite derivative")),
    ]
    # the mean field settles at x = 1; the chain passes it, where (1 - x)/2 < 0
    dip = _file(
        "m.py",
        "import sympy as sp\nfrom derive import Model, Transition\n"
        "from derive.spec import ModelInfo, StateSpace\n"
        "def factory():\n    x, lam = sp.symbols('x lam')\n"
        "    return Model('dip', (x,), (lam,), [Transition((1,), lam), Transition((-1,), x), "
        "Transition((1,), (1 - x)/2, 'dip')], info=ModelInfo(state_space=StateSpace('orthant'), "
        "reference=(sp.Rational(1, 2),)))\n",
    )
    out.append(
        P(
            "issue36 negative reachable",
            ["simulate", "--N", "10", *SIM, *model, "--param", "lam=1"],
            (INPUT,),
            dip,
            _one_line_mentioning("negative rate"),
        )
    )
    return out


def issue36_parsing_probes() -> list[Probe]:
    """Issue 36, "no input breaks it (IV)": one parser for every option and
    parameter (fractions, unicode digits, empty list items), a bad value refused
    whatever path the command takes, an option the path does not use refused,
    and the issue's internal errors as one sentence."""
    sir = ["--model", "sir", "--param", "beta=2", "--param", "gamma=1", "--param", "rho=1"]
    sir += ["--param", "a=0.1"]
    sm = ["--model", "supermarket", "--param", "b=3"]
    mmn = ["tail", "--model", "mmn", "--n", "10", "--eps", "0.1"]
    split = [*PI_BASE, "--policy", "pi-split", "--split-rule", "os:system"]
    table = ["table", *sm, "--param", "lam=9/10", "--N", "10", "--observable", "queue_length"]
    missing = "{dir}/missing/x.json"
    cases: list[tuple[list[str], tuple[str, ...], str | None]] = [
        ([*table, "--exact"], (OK,), None),
        (["exact", "--N", "5", *sm, "--param", "lam=9/10"], (OK,), None),
        (["exact", "--N", "5", *sm[:2], "--param", "b=3.0", "--param", "lam=0.9"], (OK,), None),
        (["exact", "--N", "5", *sm[:2], "--param", "b=3.5", "--param", "lam=1"], (INPUT,), "'3.5'"),
        ([*mmn, "--reps", "abc"], (INPUT,), "reps"),
        ([*mmn, "--events", "abc"], (INPUT,), "events"),
        ([*mmn, "--checkpoint", missing], (INPUT,), "--checkpoint"),
        ([*EXACT_SM, "--truncation", "abc"], (INPUT,), "truncation"),
        ([*EXACT_SM, "--start", "abc"], (INPUT,), "--start"),
        ([*SIM_BASE, "--truncation", "abc"], (INPUT,), "truncation"),
        (["exact", "--N", "5", *sir, "--d", "3"], (INPUT,), "--d"),
        (["bound", "--lam", "0.9", "--N", "10,,100"], (INPUT,), "'10,,100'"),
        (["tail", "--model", "mmn", "--n", "9" * 23, "--eps", "0.1"], (INPUT,), "n must be"),
        ([*split], (INPUT,), "split-rule"),
        (["tail", "--model", "mmn", "--n", "10", "--eps", "1e-300"], (INPUT,), "eps"),
        (["exact", "--N", "\uff15", "--lam", "0.9", "--b", "3"], (INPUT,), "N must be"),
        (["solve", *sm, "--param", "lam=\u0660.9"], (INPUT,), "lam must be"),
        (["derive", "--b", "2", "--show", "f", "--mu", "\u0663"], (INPUT,), "--mu"),
        (["pi", "--arrivals", "0:.5,,1:.5", "--service", "1:1"], (INPUT,), "no empty item"),
        (["transient", *sm, "--param", "lam=0.9", "--t", "0:1:3", "--N", "10"], (INPUT,), "--N"),
    ]
    out = []
    for argv, allowed, word in cases:
        check = None if word is None else _one_line_mentioning(word)
        out.append(Probe("issue36 parsing", argv, allowed, check=check))
    return out


def issue36_warnings_probes() -> list[Probe]:
    """Issue 36: NumPy's floating-point warnings never stand before an error line
    (held by the dispatcher, printed only after a success), and a rate with ``exp``
    in the exact solver's rational evaluation (``math`` was not a name there)."""
    blow = _file(
        "m.py",
        "import sympy as sp\nfrom derive import Model, Transition\n"
        "def factory():\n    x, lam = sp.symbols('x lam')\n"
        "    return Model('blow', (x,), (lam,), [Transition((1,), lam*sp.exp(50*x)),"
        " Transition((-1,), x)])\n",
    )
    noisy = _file(
        "m.py",
        "import numpy as np\nimport sympy as sp\nfrom derive import Model, Transition\n"
        "def factory():\n    np.log(np.zeros(2))\n    x, lam = sp.symbols('x lam')\n"
        "    return Model('noisy', (x,), (lam,), [Transition((1,), lam*(1 - x)),"
        " Transition((-1,), x)])\n",
    )
    m = ["--model", "{dir}/m.py:factory"]
    P = Probe
    return [
        P("issue36 warnings", ["solve", "--float64", *m, "--param", "lam=1e300"], (ENV,), blow),
        P("issue36 warnings", ["solve", *m, "--param", "lam=-1"], (INPUT,), noisy),
        P(
            "issue36 warnings",
            ["exact", "--N", "5", "--truncation", "3", *m, "--param", "lam=1"],
            (OK,),
            blow,
        ),
    ]
#: Issue 37 (hompp): model files built by derive.population (issue 33's homogeneous
#: populations): rate tensors whose entries come from factory keywords.
POPULATION_MODELS = """
import numpy as np
import sympy as sp
from derive import population

S, I, R, beta = sp.symbols("S I R beta")


def sirs(a="1/10", rho="1/2"):
    B = np.zeros((3, 3, 3, 3), dtype=object)
    B[0, 1, 1, 1] = beta
    A = [[0, sp.Rational(a), 0], [0, 0, 1], [sp.Rational(rho), 0, 0]]
    return population(A, B, states=(S, I, R), params=(beta,))


def table():
    return population(states=("S", "I"), transitions=[("S", "I", 1), ("I", "J", 1)])


def pair_of_one():
    B = np.zeros((3, 3, 3, 3))
    B[1, 1, 0, 2] = 1.0
    return population([[0, 1, 0], [0, 0, 0], [0, 1, 0]], B)


def ragged():
    return population([[0, 1], [1]])
"""


def issue37_hompp_probes() -> list[Probe]:
    """Issue 33 (homogeneous half): a population built by ``derive.population`` in a
    model file goes through solve, exact, simulate, transient and table; its bad
    entries (a negative rate from a factory keyword, an unknown state, a pair that
    takes two objects out of one state, a ragged tensor) end in one sentence, status 2."""
    P = Probe
    setup = _file("pop.py", POPULATION_MODELS)
    m = ["--model", "{dir}/pop.py:sirs", "--param", "beta=3"]
    bad = ["solve", "--model"]
    return [
        P("hompp solve", ["solve", *m], (OK,), setup, _stdout_has("0.292075359905")),
        P("hompp solve", ["solve", *m, "--order", "2", "--json"], (OK,), setup),
        P("hompp exact", ["exact", *m, "--N", "8"], (OK,), setup),
        P("hompp simulate", ["simulate", *m, "--N", "20", "--steps", "1e4", "--reps", "2"],
          (OK,), setup),
        P("hompp transient", ["transient", *m, "--t", "0:2:3"], (OK,), setup),
        P("hompp table", ["table", *m, "--N", "10", "--observable", "I", "--exact"], (OK,),
          setup),
        P("hompp negative entry", ["solve", *m, "--param", "a=-1"], (INPUT,), setup,
          _one_line_mentioning("A[0, 1]: the rate must be >= 0")),
        P("hompp unknown state", [*bad, "{dir}/pop.py:table"], (INPUT,), setup,
          _one_line_mentioning("got 'J'")),
        P("hompp pair of one", [*bad, "{dir}/pop.py:pair_of_one"], (INPUT,), setup,
          _one_line_mentioning("both objects of a pair")),
        P("hompp ragged", [*bad, "{dir}/pop.py:ragged"], (INPUT,), setup,
          _one_line_mentioning("A must be an S x S array")),
    ]  # fmt: skip


def issue37_cliopts_probes() -> list[Probe]:
    """Issue 32 (``cliopts``): ``derive`` of any model, ``models``, and the shared
    model options (``--model --param --start --observable``) of ``solve``,
    ``transient``, ``exact`` and ``simulate``: answers in text and strict JSON, bad
    input one sentence with exit 2."""
    sis = ["--model", "sis", "--param", "a=0.1", "--param", "beta=2", "--param", "gamma=1"]
    sim = ["--steps", "20000", "--reps", "2", "--workers", "1", "--no-progress"]
    cases: list[tuple[list[str], tuple[str, ...], object]] = [
        (["derive", "--model", "sis", "--show", "J", "--format", "latex"], (OK,), None),
        (
            ["derive", *sis[:2], "--param", "beta=2", "--show", "f", "--show", "H", "--json"],
            (OK,),
            _strict_json(),
        ),
        (["derive", *sis[:2], "--show", "stein", "--format", "python"], (OK,), None),
        (["derive", "--model", "sis", "--b", "2"], (INPUT,), "--b"),
        (["derive", "--model", "sis", "--param", "zeta=1"], (INPUT,), "zeta"),
        (["derive", "--model", "sis", "--show", "closed-form"], (INPUT,), "closed-form"),
        (["derive", "--show", "J"], (INPUT,), "b is required"),
        (["models"], (OK,), None),
        (["models", "--json"], (OK,), _strict_json()),
        (["models", "supermarket", "--json"], (OK,), _strict_json()),
        (["models", "nope"], (INPUT,), "model must be one of"),
        (
            ["solve", *sis, "--observable", "infected", "--order", "2", "--json"],
            (OK,),
            _strict_json(),
        ),
        (["exact", *sis, "--N", "8", "--observable", "I**2", "--json"], (OK,), _strict_json()),
        (
            ["exact", "--N", "5", "--lam", "0.9", "--b", "2", "--observable", "queue_length"],
            (OK,),
            None,
        ),
        (
            ["transient", *sis, "--t", "0:2:3", "--observable", "infected", "--json"],
            (OK,),
            _strict_json(),
        ),
        (
            ["simulate", *sis, "--N", "8", *sim, "--observable", "infected", "--json"],
            (OK,),
            _strict_json(),
        ),
        (["solve", *sis, "--observable", "I+q"], (INPUT,), "uses q"),
        (["exact", *sis, "--N", "5", "--observable", "sin(I)"], (INPUT,), "may only hold"),
        (["simulate", *sis, "--N", "5", *sim, "--observable", "quadratic"], (INPUT,), "quadratic"),
        (["transient", *sis, "--t", "0:1:2", "--observable", "quadratic"], (INPUT,), "quadratic"),
        (["solve", *sis, "--observable", "I", "--observable", "I"], (INPUT,), "twice"),
        (["exact", *sis, "--N", "5", "--observable", ""], (INPUT,), "observable"),
    ]
    out = []
    for argv, allowed, check in cases:
        if isinstance(check, str):
            check = _one_line_mentioning(check)
        out.append(Probe("issue37 cliopts", argv, allowed, check=check))
    return out


def issue37_sweep_probes() -> list[Probe]:
    """Issue 34 (sweeps): ``mfstein sweep`` answers a grid (JSON with one entry per
    point, a CSV file with a header and one row per point), a point without an answer
    is a row with its sentence (exit 0), and every bad grid, option or output file is
    one sentence with exit 2 before any work (no file left behind)."""
    P = Probe
    base = ["sweep", "--model", "supermarket", "--param", "b=4", "--float64", "--no-progress"]
    grid = [*base, "--param", "lam=0.5:0.9:5"]

    def points(n: int) -> Callable[[Path, subprocess.CompletedProcess], str | None]:
        def check(work: Path, proc: subprocess.CompletedProcess) -> str | None:
            got = len(json.loads(proc.stdout)["points"])
            return None if got == n else f"expected {n} points, got {got}"

        return check

    def csv_rows(work: Path, proc: subprocess.CompletedProcess) -> str | None:
        lines = (work / "s.csv").read_text().splitlines()
        ok = len(lines) == 6 and lines[0].startswith("lam,c,digits")
        return None if ok else f"unexpected CSV {lines[:2]!r} ({len(lines)} lines)"

    def no_file(work: Path, proc: subprocess.CompletedProcess) -> str | None:
        left = [f.name for f in work.iterdir() if f.name.startswith(("s.", ".mfstein"))]
        return f"files left behind: {left}" if left else _one_line_mentioning("")(work, proc)

    decay = _file(
        "m.py",
        "import sympy as sp\nfrom derive import Model, Transition\n"
        "from derive.spec import ModelInfo, Parameter, StateSpace\n"
        "def factory():\n    x, lam = sp.symbols('x lam')\n"
        "    return Model('decay', (x,), (lam,), [Transition((1,), lam), "
        "Transition((-1,), (2 - lam) * x)], info=ModelInfo(parameters=(Parameter('lam', "
        "low=0, high=4),), state_space=StateSpace('orthant')))\n",
    )

    def one_refused(work: Path, proc: subprocess.CompletedProcess) -> str | None:
        rows = json.loads(proc.stdout)["points"]
        refused = [r["params"]["lam"] for r in rows if "refused" in r]
        ok = refused == ["2", "3"]  # lam >= 2: no fixed point (lam = 2) or a negative rate
        return None if ok else f"expected lam = 2 and 3 refused, got {refused}"

    out = [
        P("issue37 sweep json", [*grid, "--json"], (OK,), None, points(5)),
        P("issue37 sweep order 2", [*grid, "--order", "2", "--json"], (OK,), None, points(5)),
        P("issue37 sweep csv", [*grid, "--csv", "{dir}/s.csv"], (OK,), None, csv_rows),
        P(
            "issue37 sweep two axes",
            [
                "sweep",
                "--model",
                "sir",
                "--param",
                "beta=2:3:2",
                "--param",
                "gamma=1:1.5:2",
                "--param",
                "rho=0.5",
                "--param",
                "a=0.1",
                "--dps",
                "15",
                "--json",
            ],
            (OK,),
            None,
            points(4),
        ),
        P(
            "issue37 sweep refused point",
            [
                "sweep",
                "--model",
                "{dir}/m.py:factory",
                "--param",
                "lam=1:3:3",
                "--float64",
                "--json",
            ],
            (OK,),
            decay,
            one_refused,
        ),
    ]
    bad = [
        ["--param", "lam=0.5:0.9:1"],
        ["--param", "lam=0.5:0.5:3"],
        ["--param", "lam=a:b:3"],
        ["--param", "lam=0.5:0.9:1e9"],
        ["--param", "lam=0.5:0.9:2.5"],
        ["--param", "lam=0:2:3"],
        ["--param", "lam=nan:1:3"],
        ["--param", "lam=0.9"],
        ["--param", "lam=0.5:0.9:3", "--param", "b=2:3:2"],
        ["--param", "lam=0.5:0.9:3", "--workers", "0"],
        ["--param", "lam=0.5:0.9:3", "--scheduler", "not an address"],
        ["--param", "lam=0.5:0.9:3", "--observable", "bogus + 1"],
        ["--param", "lam=0.5:0.9:3", "--dps", "20"],
        ["--param", "lam=0.5:0.9:3", "--plot", "{dir}/s.txt"],
        ["--param", "lam=0.5:0.9:3", "--csv", "{dir}/nowhere/s.csv"],
        ["--param", "lam=0.5:0.9:3", "--csv", "{dir}/s.txt"],
        ["--param", "lam=0.5:0.9:3", "--M", "diag:x"],
    ]
    out += [P("issue37 sweep bad", [*base, *argv], (INPUT,), None, no_file) for argv in bad]
    return out


def issue37_simfast_probes() -> list[Probe]:
    """Issue 34, simulation without per-call overhead: a small run stays in the
    command's process whatever ``--workers`` (no worker process below
    ``sim.runner.INLINE_EVENTS`` events), with the numbers of one worker, and a bad
    ``--workers`` is still one sentence before any work."""
    sir = ["simulate", "--model", "sir", "--param", "beta=3", "--param", "gamma=1"]
    sir += ["--param", "rho=0.5", "--param", "a=0.1", "--N", "20", "--steps", "20000"]
    sir += ["--reps", "2", "--seed", "3", "--no-progress"]

    def same_as_one_worker(work: Path, proc: subprocess.CompletedProcess) -> str | None:
        one = subprocess.run(
            [EXE, *sir, "--workers", "1"], capture_output=True, text=True, timeout=600,
            env=_env({}), cwd=work,
        )  # fmt: skip
        strip = [ln for ln in proc.stdout.splitlines() if "events/s" not in ln]
        if one.returncode != 0 or strip != [
            ln for ln in one.stdout.splitlines() if "events/s" not in ln
        ]:
            return "two workers and one worker gave different reports for the same seed"
        return None

    return [
        Probe("issue37 simfast", [*sir, "--workers", "2"], (OK,), check=same_as_one_worker),
        Probe(
            "issue37 simfast",
            [*sir, "--workers", "0"],
            (INPUT,),
            check=_one_line_mentioning("workers"),
        ),
    ]


SPACE_MODELS = """import sympy as sp
from derive import Model, Transition
from derive.spec import ModelInfo, StateSpace

def mmc():
    x = sp.Symbol("x"); lam = sp.Symbol("lam")
    return Model("mmc", (x,), (lam,), [Transition((1,), lam), Transition((-1,), sp.Min(x, 2))])

def tandem():
    x, y = sp.symbols("x y"); lam = sp.Symbol("lam")
    return Model("tandem", (x, y), (lam,), [Transition((1, 0), lam),
        Transition((-1, 1), sp.Min(x, 1)), Transition((0, -1), sp.sqrt(y))])

def cache():
    a, b = sp.symbols("a b")
    return Model("cache", (a, b), (), [Transition((-1, 1), a*2), Transition((1, -1), b)],
        info=ModelInfo(state_space=StateSpace("box")))
"""


def issue37_space_probes() -> list[Probe]:
    """Issue 32 (state space, truncation): an exact chain on an unbounded space
    chooses its truncation and reports the mass cut (text and JSON), its options
    refused in one sentence; a conserved cache on a box accepted from a start whose
    slice stays inside, refused from one that leaves; the tandem line's fixed point
    found from the state space and its transient from y = 0 refused naming the rate."""
    P = Probe
    files = _file("m.py", SPACE_MODELS)
    mmc = ["exact", "--model", "{dir}/m.py:mmc", "--param", "lam=1.5", "--N", "10"]
    cache = ["solve", "--model", "{dir}/m.py:cache"]
    tandem = ["--model", "{dir}/m.py:tandem", "--param", "lam=0.5"]

    def cut_below(limit: float) -> Callable[[object], bool]:
        return lambda t: isinstance(t, dict) and t["chosen"] and t["mass_cut"] <= limit

    return [
        P("issue37 truncation", mmc, (OK,), files, _stdout_has("(chosen); mass cut")),
        P("issue37 truncation", [*mmc, "--json"], (OK,), files,
          _json_field_is("truncation", cut_below(1e-12))),
        P("issue37 truncation", [*mmc, "--truncation-tol", "1e-6", "--json"], (OK,), files,
          _json_field_is("truncation", cut_below(1e-6))),
        P("issue37 truncation", [*mmc, "--truncation-tol", "0.5"], (INPUT,), files,
          _one_line_mentioning("truncation-tol must be")),
        P("issue37 truncation", [*mmc, "--truncation-tol", "1e-9", "--truncation", "3"],
          (INPUT,), files, _one_line_mentioning("cannot be given with")),
        P("issue37 truncation", [*mmc, "--memory-limit", "1e-6"], (INPUT,), files,
          _one_line_mentioning("needs a truncation at n_k <=")),
        P("issue37 truncation", [*EXACT_SM, "--truncation-tol", "1e-9"], (INPUT,), None,
          _one_line_mentioning("--truncation-tol")),
        P("issue37 conserved face", [*cache, "--start", "0.5,0.5"], (OK,), files),
        P("issue37 conserved face", [*cache, "--start", "0.7,0.7"], (INPUT,), files,
          _one_line_mentioning("can leave the state space")),
        P("issue37 sqrt", ["solve", *tandem], (OK,), files, _stdout_has("random starts")),
        P("issue37 sqrt", ["transient", *tandem, "--t", "0:1:3"], (INPUT,), files,
          _one_line_mentioning("the rate sqrt(y) of transition (0, -1)")),
        P("issue37 sqrt", ["transient", *tandem, "--start", "0.5,0.5", "--t", "0:1:3"], (OK,),
          files),
    ]


def _table_rows(
    check: Callable[[dict], str | None],
) -> Callable[[Path, subprocess.CompletedProcess], str | None]:
    """A probe check of every row of a ``table --json`` (``check(row)``: a failure or ``None``)."""

    def run(work: Path, proc: subprocess.CompletedProcess) -> str | None:
        try:
            rows = json.loads(proc.stdout)["rows"]
        except (ValueError, KeyError) as exc:
            return f"no JSON rows: {exc}"
        return next((f"N = {r['N']}: {bad}" for r in rows if (bad := check(r))), None)

    return run


def issue37_table_probes() -> list[Probe]:
    """Issue 32, "the table fills every cell it can": plain model files (no
    ``ModelInfo``), a nonlinear observable simulated at any N, ``--start`` in every
    column, a cell that cannot be computed a dash with its reason (exit 0), bad
    starts one sentence (exit 2)."""
    P = Probe
    plain = _file(
        "m.py",
        "import sympy as sp\nfrom derive import Model, Transition\n"
        "def sis():\n    x = sp.Symbol('x')\n"
        "    return Model('sis', (x,), (), [Transition((1,), 2*x*(1 - x) + (1 - x)/10), "
        "Transition((-1,), x)])\n"
        "from derive.spec import ModelInfo, StateSpace\n"
        "def cache():\n    a, b = sp.symbols('a b')\n"
        "    return Model('cache', (a, b), (), [Transition((-1, 1), 2*a), "
        "Transition((1, -1), b)], info=ModelInfo(state_space=StateSpace('box')))\n",
    )
    sis = ["table", "--model", "{dir}/m.py:sis", "--json"]
    cache = ["table", "--model", "{dir}/m.py:cache", "--observable", "a*b", "--json"]
    run = ["--simulate", "--sim-steps", "20000", "--reps", "2", "--workers", "1", "--no-progress"]
    sir = ["table", "--model", "sir", "--param", "beta=2", "--param", "gamma=1"]
    sir += ["--param", "rho=1", "--param", "a=0.1", "--observable", "S*I", "--json"]

    def simulated(r: dict) -> str | None:
        return None if r["simulation"] and not r["simulation_note"] else "no simulation"

    def exact(r: dict) -> str | None:
        return None if r["exact"] and not r["exact_note"] else "no exact value"

    def dash(key: str, words: str) -> Callable[[dict], str | None]:
        def check(r: dict) -> str | None:
            if r[key] is None and words in (r[f"{key}_note"] or "") and r["mean_field"]:
                return None
            return f"expected no {key} with a note mentioning {words!r}, got {r[key]!r}"

        return check

    return [
        P("issue37 table", [*sis, "--observable", "x**2", "--N", "10,200", *run], (OK,), plain,
          _table_rows(simulated)),
        P("issue37 table", [*sis, "--observable", "x", "--exact", "--N", "10"], (OK,), plain,
          _table_rows(exact)),
        P("issue37 table", [*cache, "--start", "0.7,0", "--exact", "--N", "10", *run], (OK,),
          plain, _table_rows(lambda r: exact(r) or simulated(r))),
        P("issue37 table", [*cache, "--start", "0,0", "--N", "10", *run], (OK,), plain,
          _table_rows(dash("simulation", "absorbing state"))),
        P("issue37 table", [*sir, "--exact", "--N", "3000"], (OK,), None,
          _table_rows(dash("exact", "states"))),
        P("issue37 table", [*cache, "--start", "0.7", "--N", "10"], (INPUT,), plain,
          _one_line_mentioning("start must have 2 coordinates")),
        P("issue37 table", [*cache, "--start=-0.1,0.5", "--N", "10"], (INPUT,), plain,
          _one_line_mentioning("start must lie in the state space")),
        P("issue37 table", [*cache, "--start", "0.7,0", "--N", "10", *run, "--reps", "1"],
          (INPUT,), plain, _one_line_mentioning("reps must be")),
        P("issue37 table", ["table", "--N", "10", "--gamma", "0.1", "--alpha", "0.05",
                            "--start", "0.5"], (INPUT,), None,
          _one_line_mentioning("--start needs --model")),
    ]  # fmt: skip


NAMES_FILE = """import sympy as sp
from derive import Model, Transition

def sirs():
    s, i, r = sp.symbols("s i r")
    beta, gamma, nu = sp.symbols("beta gamma nu")
    return Model("sirs", (s, i, r), (beta, gamma, nu), [
        Transition((-1, 1, 0), beta*s*(i + sp.Rational(1, 100))*sp.exp(-i)),
        Transition((0, -1, 1), gamma*i), Transition((1, 0, -1), nu*r)])

def clash():
    s, p, out = sp.symbols("s p out")
    mpmath, E, I, pi, x_0, exp = sp.symbols("mpmath E I pi x_0 exp")
    return Model("clash", (s, p, out), (mpmath, E, I, pi, x_0, exp), [
        Transition((-1, 1, 0), mpmath*s + E*s*p), Transition((0, -1, 1), I*p + pi*p**2),
        Transition((1, 0, -1), x_0*out + exp*out*s)])
"""


def issue37_names_probes() -> list[Probe]:
    """Issue 32 (any names, inputs remembered): states named ``s, i, r`` and parameters
    named like the generated code's own names or SymPy's constants on every route
    (status 0); ``b = auto | inf`` of the supermarket; a missing or unknown factory
    option in one sentence naming the options."""
    P = Probe
    files = _file("m.py", NAMES_FILE)
    sirs = ["--model", "{dir}/m.py:sirs", "--param", "beta=3", "--param", "gamma=1"]
    sirs += ["--param", "nu=0.5", "--start", "0.9,0.1,0"]
    clash = ["--model", "{dir}/m.py:clash", "--start", "0.5,0.3,0.2"]
    for name, value in (("mpmath", "1"), ("E", "2"), ("I", "0.5"), ("pi", "0.3")):
        clash += ["--param", f"{name}={value}"]
    clash += ["--param", "x_0=0.2", "--param", "exp=0.1"]
    out = [
        P("issue37 names", [*argv, *model], (OK,), files)
        for model in (sirs, clash)
        for argv in (
            ["solve"],
            ["solve", "--float64"],
            ["solve", "--order", "2"],
            ["solve", "--certify", "--M", "diag:2,1,1"],
            ["transient", "--t", "0:1:3"],
            ["exact", "--N", "6"],
            ["simulate", "--N", "6", *SIM],
        )
    ]
    sm = ["solve", "--model", "supermarket", "--param", "lam=0.9"]
    out += [P("issue37 b", [*sm, "--param", f"b={b}"], (OK,)) for b in ("auto", "inf", "AUTO")]
    out += [
        P(
            "issue37 b",
            [*sm[:-1], "lam=1.1", "--param", "b=auto"],
            (INPUT,),
            None,
            _one_line_mentioning("must be < the service rate 1 for b = auto"),
        ),
        P("issue37 b", sm, (INPUT,), None, _one_line_mentioning("needs the option b")),
        P(
            "issue37 b",
            ["exact", "--N", "4", *sm[1:]],
            (INPUT,),
            None,
            _one_line_mentioning("needs the option b"),
        ),
        P("issue37 b", [*sm, "--param", "b=autox"], (INPUT,), None, _one_line_mentioning("b")),
    ]
    return out


def issue37_hetpp_probes() -> list[Probe]:
    """Issue 33 (heterogeneous populations): the command line takes a model of K
    objects (exit 0, it says K), from the library and from a user's file (it refused
    them in one sentence until the het33 branch)."""
    het = ["--model", "power_of_two_heterogeneous", "--param", "K=4", "--param", "lam=0.5"]
    user = "{dir}/het.py:pop"
    text = (
        "import numpy as np\n"
        "from derive import heterogeneous\n"
        "def pop():\n"
        "    A = np.zeros((2, 2, 2)); A[:, 0, 1] = 1; A[:, 1, 0] = 1\n"
        "    return heterogeneous(A)\n"
    )

    def write(work: Path) -> dict[str, str]:
        (work / "het.py").write_text(text)
        return {}

    out = [
        Probe("issue33 heterogeneous", [cmd, *het, *extra], (OK,), check=_stdout_has(says))
        for cmd, extra, says in (("solve", [], "K = 4 objects"),
                                 ("exact", ["--N", "4"], "K = 4 objects"),
                                 ("simulate", ["--N", "4", "--steps", "1000"], "K = 4 objects"),
                                 ("transient", ["--t", "0:1:3"], "K = 4 objects"))
    ]
    out.append(Probe("issue33 heterogeneous", ["solve", "--model", user], (OK,), setup=write,
                     check=_stdout_has("heterogeneous population of K = 2 objects")))
    return out


def issue37_het33_probes() -> list[Probe]:
    """Issue 33 on the het33 branch: heterogeneous populations on every command with
    their declared observables (JSON that parses), the table over K, and the new
    library model's bad options and refusals, each one sentence with exit 2."""
    pod = ["--model", "power_of_d_heterogeneous", "--param", "d=3", "--param", "lam=0.5"]
    k4 = [*pod, "--param", "K=4", "--param", "speed_classes=1,2"]
    obs = ["--observable", "response_time", "--observable", "utilisation_class0"]
    table = ["table", *pod, "--observable", "response_time", "--N", "4,6"]
    P = Probe
    out = [
        P("het33 solve", ["solve", *k4, *obs], (OK,), check=_stdout_has("response_time = ")),
        P("het33 solve", ["solve", *k4, *obs, "--float64", "--json"], (OK,),
          check=_strict_json()),
        P("het33 exact", ["exact", *k4, *obs, "--N", "4", "--json"], (OK,),
          check=_strict_json()),
        P("het33 simulate", ["simulate", *k4, *obs, "--N", "4", "--steps", "20000", "--json"],
          (OK,), check=_strict_json()),
        P("het33 transient", ["transient", *k4, "--t", "0:1:3", "--observable", "jobs",
                              "--json"], (OK,), check=_strict_json()),
        P("het33 table", [*table, "--exact"], (OK,), check=_stdout_has("plays the role of N")),
        P("het33 table", [*table, "--json", "--exact"], (OK,), check=_strict_json()),
        P("het33 table", [*table, "--csv"], (OK,), check=_stdout_has("order1")),
        P("het33 table", [*table, "--simulate", "--sim-steps", "20000", "--reps", "2"], (OK,),
          check=_stdout_has("±")),
    ]
    bad = [
        (["solve", *k4, "--observable", "nope"], "not declared"),
        (["solve", *k4, "--observable", "lam*2"], "not declared"),
        (["solve", *k4, "--order", "2"], "order must be 1"),
        (["solve", *k4, "--M", "diag:1"], "--M is not available"),
        (["solve", *k4, "--certify"], "--certify"),
        (["solve", *k4, "--method", "general"], "route must be auto"),
        (["solve", *k4, "--route", "general"], "route must be auto"),
        (["exact", *k4, "--N", "5"], "N must be the number of objects"),
        (["simulate", *k4, "--N", "3", "--steps", "1000"], "N must be the number of objects"),
        (["transient", *k4, "--t", "0:1:3", "--observable", "nope"], "not declared"),
        (["transient", *k4, "--t", "0:1:3", "--order", "2"], "order must be 1"),
        ([*table, "--param", "K=4"], "K is given by --N"),
        ([*table, "--order", "2"], "order must be 1"),
        ([*table, "--start", "0.5"], "--start"),
        (["solve", *pod, "--param", "K=2"], "d must be at most K"),
        (["solve", *pod, "--param", "K=4", "--param", "speed_classes=1,2,3"], "C dividing K"),
        (["solve", *pod, "--param", "sampling=sometimes"], "sampling must be"),
        (["solve", *pod, "--param", "speed_classes=1,-2"], "speeds"),
        (["solve", *pod, "--param", "d=1"], "d"),
        (["solve", *pod, "--param", "d=100"], "d"),
        (["solve", *pod, "--param", "K=0"], "K"),
        (["solve", *pod, "--param", "lam=-1"], "lam"),
    ]
    out += [P("het33 refusal", argv, (INPUT,), check=_one_line_mentioning(word))
            for argv, word in bad]
    return out


def issue37_circles31_probes() -> list[Probe]:
    """Issue 31 (one fast-path table): ``simulate`` finds a family's own engines and
    dispatch policies through the table, not by name; a model of another family asking
    for them is refused in one sentence naming the family that has them (exit 2), and
    the supermarket still runs on them."""
    sir = ["simulate", "--model", "sir", *SIR_PARAMS, "--N", "10", *SIM]
    sm = ["simulate", "--model", "supermarket", "--param", "b=3", "--param", "lam=0.9",
          "--N", "10", *SIM]
    return [
        *(Probe("issue31 fast engines", [*sir, "--engine", e], (INPUT,),
                check=_one_line_mentioning("runs the supermarket family only"))
          for e in ("aggregated", "per-server")),
        Probe("issue31 fast engines", [*sir, "--policy", "jsq"], (INPUT,),
              check=_one_line_mentioning("dispatch rule of the supermarket's per-server engine")),
        Probe("issue31 fast engines", [*sir, "--engine", "fast"], (INPUT,),
              check=_one_line_mentioning("has no fast-path simulator")),
        Probe("issue31 fast engines", [*sm, "--policy", "jsq", "--engine", "generic"], (INPUT,),
              check=_one_line_mentioning("per-server engine")),
        Probe("issue31 fast engines", [*sm, "--engine", "per-server", "--json"], (OK,),
              check=_stdout_has('"simulator": "per-server"')),
        Probe("issue31 fast engines", [*sm, "--policy", "random", "--json"], (OK,),
              check=_stdout_has('"simulator": "per-server"')),
    ]  # fmt: skip


def issue37_names31_probes() -> list[Probe]:
    """Issue 31 (one meaning per name): ``solve --route``, ``exact --solver`` and
    ``transient --integrator`` are the new names of each command's ``--method``
    (which still works); a bad value is one line with exit 2, and the old and new
    flags answer alike."""
    sir = ["--model", "sir", *SIR_PARAMS]
    return [
        Probe("names31 route", ["solve", *MODEL_SM, "--route", "general", "--dps", "15"], (OK,)),
        Probe("names31 route", ["solve", *MODEL_SM, "--route", "fastest"], (INPUT,),
              check=_one_line_mentioning("--route")),
        Probe("names31 route", ["solve", *MODEL_SM, "--float64", "--route", "fast"], (INPUT,),
              check=_one_line_mentioning("route 'fast' cannot be combined")),
        Probe("names31 route", ["solve", *sir, "--route", "fast"], (INPUT,),
              check=_one_line_mentioning("has no registered fast path")),
        Probe("names31 solver", ["exact", *MODEL_SM, "--N", "5", "--solver", "gmres", "--json"],
              (OK,), check=_stdout_has('"method": "gmres"')),
        Probe("names31 solver", ["exact", *MODEL_SM, "--N", "5", "--method", "gmres", "--json"],
              (OK,), check=_stdout_has('"method": "gmres"')),
        Probe("names31 solver", ["exact", *MODEL_SM, "--N", "5", "--solver", "lu"], (INPUT,),
              check=_one_line_mentioning("--solver")),
        Probe("names31 integrator", ["transient", *sir, "--t", "0:1:3", "--integrator", "RK45"],
              (OK,)),
        Probe("names31 integrator", ["transient", *sir, "--t", "0:1:3", "--integrator", "Euler"],
              (INPUT,), check=_one_line_mentioning("integrator must be one of")),
        Probe("names31 integrator",
              ["transient", *sir, "--t", "0:1:3", "--dps", "10", "--integrator", "BDF"], (INPUT,),
              check=_one_line_mentioning("--integrator is only used by the float64 route")),
        Probe("names31 integrator", ["transient", *sir, "--t", "0:1:3", "--integrator"], (INPUT,),
              check=_one_line_mentioning("--integrator")),
    ]  # fmt: skip

#: Issue 34 (cold simulation): a model whose rates the interpreted loop evaluates
#: (Piecewise, Min, sqrt) and one with a function it does not (asinh).
COLD_MODELS = """import sympy as sp
from derive import Model, Transition

def queue():
    n, lam = sp.symbols("n lam")
    arrive = lam * sp.Piecewise((1, n < sp.Rational(1, 2)), (sp.sqrt(1 - n) / 2, True))
    return Model("queue", (n,), (lam,), [Transition((1,), arrive), Transition((-1,), sp.Min(n, 2))])

def smooth():
    n, lam = sp.symbols("n lam")
    return Model("smooth", (n,), (lam,), [Transition((1,), lam * (1 - sp.asinh(n) / 2)),
                                          Transition((-1,), n)])
"""


def issue37_cold34_probes() -> list[Probe]:
    """Issue 34 (cold simulation): ``simulate --engine interpreted`` runs any model on the
    event loop compiled once (the result names the loop), with observables and on the
    supermarket without ``--model``; a rate it cannot evaluate is one sentence."""
    P = Probe
    setup = _file("cold.py", COLD_MODELS)
    sir = ["simulate", "--model", "sir", "--param", "beta=3", "--param", "gamma=1", "--param",
           "rho=0.5", "--param", "a=0.1", "--N", "20", *SIM]
    queue = ["simulate", "--model", "{dir}/cold.py:queue", "--param", "lam=0.3", "--N", "10", *SIM]
    return [
        P("cold34 interpreted", [*sir, "--engine", "interpreted", "--json"], (OK,),
          check=_stdout_has('"loop": "interpreted"')),
        P("cold34 interpreted", [*queue, "--engine", "interpreted", "--observable", "Min(n, 1/3)"],
          (OK,), setup, _stdout_has("interpreted loop")),
        P("cold34 interpreted", [*SIM_BASE, "--engine", "interpreted"], (OK,),
          check=_stdout_has("interpreted loop")),
        P("cold34 interpreted", ["simulate", "--model", "{dir}/cold.py:smooth", "--param",
                                 "lam=0.5", "--N", "10", *SIM, "--engine", "interpreted"],
          (INPUT,), setup, _one_line_mentioning("cannot evaluate asinh")),
        P("cold34 interpreted", [*sir, "--engine", "interpret"], (INPUT,)),
    ]  # fmt: skip


def issue37_plain32_probes() -> list[Probe]:
    """Issue 32, the last open items: ``table --observable`` repeated (one table each,
    JSON/CSV/text; the same one twice or a bad one: one sentence), the table's exact
    cell of an unbounded chain (it chooses its truncation), ``derive --format json``
    of a one-coordinate model's Jacobian as a 1 x 1 matrix, and the documented
    limits of what a model may be (one sentence, exit 2)."""
    P = Probe
    plain = _file(
        "m.py",
        "import sympy as sp\nfrom derive import Model, Transition\n"
        "x = sp.Symbol('x')\n"
        "def sis():\n"
        "    return Model('sis', (x,), (), [Transition((1,), 2*x*(1 - x) + (1 - x)/10), "
        "Transition((-1,), x)])\n"
        "def mmc():\n    lam = sp.Symbol('lam')\n"
        "    return Model('mmc', (x,), (lam,), [Transition((1,), lam), "
        "Transition((-1,), sp.Min(x, 2))])\n"
        "def floor_rate():\n"
        "    return Model('f', (x,), (), [Transition((1,), 1 + sp.floor(x)), "
        "Transition((-1,), x)])\n"
        "def open_piecewise():\n"
        "    return Model('pw', (x,), (), [Transition((1,), sp.Piecewise((1, x < 1))), "
        "Transition((-1,), x)])\n",
    )
    sis = ["table", "--model", "{dir}/m.py:sis", "--start", "0.5", "--N", "5,20", "--exact"]
    two = [*sis, "--observable", "x", "--observable", "x**2"]

    def tables(work: Path, proc: subprocess.CompletedProcess) -> str | None:
        try:
            data = json.loads(proc.stdout)
        except ValueError as exc:
            return f"no JSON: {exc}"
        if data.get("observables") != ["x", "x**2"] or len(data.get("tables", [])) != 2:
            return f"expected two tables, got {list(data)}"
        rows = [r for t in data["tables"] for r in t["rows"]]
        return None if all(r["exact"] for r in rows) else "an exact cell is missing"

    def csv_rows(work: Path, proc: subprocess.CompletedProcess) -> str | None:
        lines = proc.stdout.splitlines()
        ok = lines and lines[0].startswith("observable,N,") and len(lines) == 5
        return None if ok else f"expected a header and 4 rows, got {lines[:2]}"

    def matrix(work: Path, proc: subprocess.CompletedProcess) -> str | None:
        J = json.loads(proc.stdout)["J"]
        return None if isinstance(J[0], list) and len(J) == len(J[0]) == 1 else f"J = {J}"

    mmc = ["table", "--model", "{dir}/m.py:mmc", "--param", "lam=1.5", "--start", "0.5"]
    return [
        P("issue37 plain32", [*two, "--json"], (OK,), plain, tables),
        P("issue37 plain32", [*two, "--csv"], (OK,), plain, csv_rows),
        P("issue37 plain32", two, (OK,), plain),
        P("issue37 plain32", [*sis, "--observable", "x", "--observable", "x "], (INPUT,), plain,
          _one_line_mentioning("given twice")),
        P("issue37 plain32", [*sis, "--observable", "x", "--observable", "y"], (INPUT,), plain,
          _one_line_mentioning("observable")),
        P("issue37 plain32", [*mmc, "--observable", "x", "--N", "10", "--exact", "--json"],
          (OK,), plain, _table_rows(lambda r: None if r["exact"] else r["exact_note"])),
        P("issue37 plain32", ["derive", "--model", "{dir}/m.py:sis", "--show", "J", "--json"],
          (OK,), plain, matrix),
        P("issue37 plain32", ["solve", "--model", "{dir}/m.py:floor_rate"], (INPUT,), plain,
          _one_line_mentioning("derivative")),
        P("issue37 plain32", ["table", "--model", "{dir}/m.py:open_piecewise", "--observable",
                              "x", "--N", "5"], (INPUT,), plain,
          _one_line_mentioning("last branch")),
    ]  # fmt: skip


def issue37_exact34_probes() -> list[Probe]:
    """Issue 34 (exact chains compiled once, compact, to 20 million states): the size
    limit is refused in one sentence naming it; the compiled BiCGSTAB answers through
    the command line to its residual target, and the general chain (the search and
    the model's cached rate loop) answers a model with a conservation law."""
    sir = ["--model", "sir", "--param", "beta=3", "--param", "gamma=1", "--param", "rho=0.5"]
    sir += ["--param", "a=0.1"]
    return [
        Probe("issue34 exact", ["exact", "--N", "500", "--lam", "0.9", "--b", "3"], (INPUT,),
              check=_one_line_mentioning("20,000,000")),
        Probe("issue34 exact",
              ["exact", "--N", "30", "--lam", "0.9", "--b", "3", "--method", "bicgstab", "--json"],
              (OK,), check=_json_field_is("residual", lambda v: 0 <= float(v) <= 1e-11)),
        Probe("issue34 exact", ["exact", *sir, "--N", "60", "--json"], (OK,),
              check=_json_field_is("states", lambda v: v == 1891)),
    ]


def issue37_het33b_probes() -> list[Probe]:
    """Issue 33 on the het33b branch: the transient of a heterogeneous population at
    ``--dps`` digits (fixed-point extrapolation route) answers, states its digits and
    prints JSON that parses."""
    m = ["transient", "--model", "power_of_two_heterogeneous", "--param", "K=4",
         "--param", "b=1", "--param", "lam=0.9", "--t", "0:1:3", "--dps", "20"]
    return [
        Probe("het33b transient dps", m, (OK,), check=_stdout_has("Gragg-Bulirsch-Stoer")),
        Probe("het33b transient dps", [*m, "--observable", "jobs", "--json"], (OK,),
              check=_strict_json()),
    ]


def issue37_het33c_probes() -> list[Probe]:
    """Issue 33 on the het33c branch: the transient of a population with averaged moves
    (JSQ(3) servers) at ``--dps`` digits runs the fixed-point extrapolation route for
    any K (it was refused above 6 free coordinates), states its digits, prints JSON."""
    m = ["transient", "--model", "power_of_d_heterogeneous", "--param", "K=4", "--param",
         "d=3", "--param", "lam=0.5", "--t", "0:1:2"]
    return [
        Probe("het33c transient dps averaged", [*m, "--dps", "30"], (OK,),
              check=_stdout_has("they agree on 30 significant digits")),
        Probe("het33c transient dps averaged", [*m, "--dps", "20", "--observable", "jobs",
                                                "--json"], (OK,), check=_strict_json()),
    ]


def all_probes(shared: Path) -> list[Probe]:
    return [
        *known_size_probes(),
        *issue_probes(),
        *issue23_probes(),
        *issue23_files_probes(),
        *transient_probes(),
        *issue23_rates_probes(),
        *numbers_probes(),
        *numeric_probes(),
        *output_path_probes(),
        *model_probes(),
        *checkpoint_probes(shared),
        *cache_probes(shared),
        *issue36_observables_probes(),
        *issue36_float64_probes(),
        *issue36_known_size_probes(),
        *issue36_json_probes(),
        *issue36_processes_probes(),
        *issue36_rates_probes(),
        *issue36_parsing_probes(),
        *issue36_warnings_probes(),
        *issue37_hompp_probes(),
        *issue37_cliopts_probes(),
        *issue37_sweep_probes(),
        *issue37_simfast_probes(),
        *issue37_space_probes(),
        *issue37_table_probes(),
        *issue37_names_probes(),
        *issue37_hetpp_probes(),
        *issue37_circles31_probes(),
        *issue37_names31_probes(),
        *issue37_het33_probes(),
        *issue37_cold34_probes(),
        *issue37_plain32_probes(),
        *issue37_exact34_probes(),
        *issue37_het33b_probes(),
        *issue37_het33c_probes(),
    ]


def prepare(shared: Path, timeout: float) -> None:
    """A good checkpoint and a populated kernel cache, shared by the damage probes."""
    env = _env({"MFSTEIN_CACHE_DIR": str(shared / "cache")})
    ck = shared / "good-checkpoint.json"
    for argv in (
        [*CK_ARGS, "--checkpoint", str(ck)],
        ["simulate", "--N", "10", "--lam", "0.9", "--b", "4", "--engine", "generic", *SIM],
        ["bound", "--lam", "0.9", "--N", "10", "--b", "4"],
        ["exact", "--N", "6", "--lam", "0.9", "--b", "3"],
    ):
        proc = subprocess.run(
            [EXE, *argv],
            cwd=shared,
            env=env,
            capture_output=True,
            text=True,
            timeout=max(timeout, 300),
        )
        if proc.returncode != 0:
            sys.exit(f"preparing the damage probes failed: {' '.join(argv)}\n{proc.stderr}")


# ----------------------------------------------------------------------------- running
#: ``--tree DIR``: run another copy of the sources (e.g. ``git archive HEAD``) instead.
TREE: list[str] = []


def _env(extra: dict[str, str]) -> dict[str, str]:
    env = {**os.environ, "COLUMNS": "200", **extra}
    if TREE:
        env["PYTHONPATH"] = TREE[0]
    for name in ("MFSTEIN_TRACEBACK", "PYTHONWARNINGS"):
        env.pop(name, None)
    return env


def _limit_memory(gb: float) -> Callable[[], None] | None:
    if gb <= 0:
        return None

    def limit() -> None:
        cap = int(gb * 2**30)
        resource.setrlimit(resource.RLIMIT_AS, (cap, cap))

    return limit


def _child_setup(gb: float, close_stdout: bool) -> Callable[[], None] | None:
    """What the probe's process does before it runs: the memory limit, and closing its
    standard output when the probe asks for it."""
    limit = _limit_memory(gb)
    if not close_stdout:
        return limit

    def setup() -> None:
        if limit is not None:
            limit()
        os.close(1)

    return setup


def classify(status: int | None, stderr: str) -> str:
    if status is None:
        return "hang"
    if "Traceback (most recent call last)" in stderr:
        return "traceback"
    lines = [line for line in stderr.splitlines() if line.strip()]
    ours = all(line.startswith("mfstein") for line in lines)
    if status == 0:
        return OK if ours else "multi-line stderr"
    if status == 130:
        return STOPPED if lines and ours else "multi-line stderr"
    if status in (1, 2):
        if len(lines) == 1 and ours:
            return INPUT if status == 2 else ENV
        return "multi-line stderr"
    return "other"


def run_probe(probe: Probe, shared: Path, timeout: float, mem_gb: float) -> Result:
    work = Path(tempfile.mkdtemp(prefix="probe-"))
    try:
        extra = probe.setup(work) if probe.setup else {}
        argv = [a.replace("{dir}", str(work)).replace("{shared}", str(shared)) for a in probe.argv]
        t0 = time.perf_counter()
        proc = subprocess.Popen(
            [EXE, *argv],
            cwd=work,
            env=_env(extra),
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
            errors="replace",
            start_new_session=True,
            preexec_fn=_child_setup(mem_gb, probe.close_stdout),
        )
        try:
            if probe.interrupt is not None:
                try:
                    out, err = proc.communicate(timeout=probe.interrupt)
                except subprocess.TimeoutExpired:
                    os.killpg(proc.pid, signal.SIGINT)
                    out, err = proc.communicate(timeout=STOP_SECONDS)
            else:
                out, err = proc.communicate(timeout=probe.timeout or timeout)
            status: int | None = proc.returncode
        except subprocess.TimeoutExpired:
            os.killpg(proc.pid, 9)
            out, err = proc.communicate()
            status = None
        out = out or ""  # None when the probe closed standard output
        seconds = time.perf_counter() - t0
        outcome = classify(status, err)
        r = Result(probe, outcome, status, err, seconds)
        if outcome not in probe.allowed:
            r.problems.append(f"{outcome} (status {status}), allowed: {', '.join(probe.allowed)}")
        leftovers = [p.name for p in work.rglob("*.tmp")]
        if leftovers:
            r.problems.append(f"half-written files left: {leftovers}")
        if probe.check is not None:
            msg = probe.check(work, subprocess.CompletedProcess(argv, status or 0, out, err))
            if msg:
                r.problems.append(msg)
        return r
    finally:
        for p in [work, *work.rglob("*")]:
            if p.is_dir() and not p.is_symlink():
                try:
                    p.chmod(0o755)
                except OSError:
                    pass
        shutil.rmtree(work, ignore_errors=True)


def _quote(argv: list[str]) -> str:
    import shlex

    return "mfstein " + " ".join(shlex.quote(a) for a in argv)


def main() -> int:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--only", help="run the probes whose class or command line contains TEXT")
    p.add_argument("--skip", help="leave out the probes whose class starts with TEXT")
    p.add_argument("--timeout", type=float, default=60.0, help="seconds per probe (60)")
    p.add_argument("--jobs", type=int, default=1, help="probes run at once (1)")
    p.add_argument("--memory-gb", type=float, default=8.0, help="address-space limit (8 GB)")
    p.add_argument("--list", action="store_true", help="list the probes and exit")
    p.add_argument("--show-all", action="store_true", help="print every probe's outcome")
    p.add_argument("--tree", help="source tree to probe instead of the installed one")
    a = p.parse_args()
    if signal.getsignal(signal.SIGINT) == signal.SIG_IGN:  # started as a background job:
        signal.signal(signal.SIGINT, signal.default_int_handler)  # probes must hear Ctrl-C
    if a.tree:
        TREE.append(str(Path(a.tree).resolve()))

    shared = Path(tempfile.mkdtemp(prefix="probe-shared-"))
    try:
        probes = all_probes(shared)
        if a.only:
            probes = [q for q in probes if a.only in q.cls or a.only in " ".join(q.argv)]
        if a.skip:
            probes = [q for q in probes if not q.cls.startswith(a.skip)]
        if a.list:
            for q in probes:
                print(f"{q.cls:32s} {_quote(q.argv)}")
            return 0
        if any(q.cls.startswith(("checkpoint", "cache")) for q in probes):
            prepare(shared, a.timeout)
        t0 = time.perf_counter()
        with ThreadPoolExecutor(max_workers=max(1, a.jobs)) as pool:
            results = list(pool.map(lambda q: run_probe(q, shared, a.timeout, a.memory_gb), probes))
        wall = time.perf_counter() - t0
    finally:
        shutil.rmtree(shared, ignore_errors=True)

    tally = Counter(r.outcome for r in results)
    failures = [r for r in results if r.failed]
    if a.show_all:
        for r in results:
            print(f"{r.outcome:18s} {r.seconds:6.1f} s  {_quote(r.probe.argv)}")
    print(f"\n{len(results)} probes in {wall:.0f} s (timeout {a.timeout:.0f} s per probe)")
    for outcome in (OK, INPUT, ENV, STOPPED, *BAD_OUTCOMES):
        print(f"  {outcome:20s} {tally.get(outcome, 0):5d}")
    print(f"  {'failed':20s} {len(failures):5d}")
    by_class = Counter(r.probe.cls.split()[0] for r in results)
    print("classes: " + ", ".join(f"{k} {v}" for k, v in sorted(by_class.items())))
    for r in failures:
        err = r.stderr.strip().splitlines()
        tail = " | ".join(err[-3:])[-400:] if err else "(no stderr)"
        print(f"\nFAIL [{r.probe.cls}] {_quote(r.probe.argv)}\n  {'; '.join(r.problems)}\n  {tail}")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
