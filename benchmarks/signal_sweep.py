"""Signal sweep: what a ``kill -9``, SIGTERM or Ctrl-C leaves behind (issue 23).

Every long-running command with worker processes -- ``simulate`` (the
supermarket short form and ``--model``), ``pi``, ``tail --simulate``, ``table``
(the core paper's table, which simulates) and ``table --model ... --simulate``
-- is run with ``--workers 1`` and ``2``, with and without ``--checkpoint``
(where the command has one), in a session of its own
(``start_new_session=True``: the session id is the main process's id, so
every process it starts is found in ``/proc`` by its session), and sent

* ``KILL``: SIGKILL to the main process (nothing of mfstein runs after it);
* ``TERM``: SIGTERM (a batch system, ``timeout``);
* ``INT``: SIGINT (Ctrl-C), and ``INT2``: SIGINT twice, 0.1 s apart;

at one of three moments, each an observable event rather than a guessed delay:

* ``early``: as soon as the first worker process exists (the first unit of
  work, the warm-up, is running; with a checkpoint, none has been written);
* ``mid``: after the first completed unit (the checkpoint exists) and half of
  the unit phase of an undisturbed run of the same command;
* ``final``: the workers have ended but the main process has not (the
  batches are being pooled and printed).  The window is short; when the
  process ends before the signal lands the case is counted as ``missed``.

After the signal the sweep waits for the main process (a ``hang`` after
``--hang`` seconds), then up to ``--grace`` seconds for the session to empty,
and records

* ``orphans``: processes of the session still alive (a worker that outlived
  its parent);
* ``tmp``: ``*.tmp`` files left in the working directory (a half-written
  checkpoint);
* ``status``: the exit status against the expected one (-9 for KILL, 143 for
  TERM, 130 for INT; 0 for a missed signal);
* ``stderr``: the number of non-blank lines (one for TERM and INT);
* ``ck``: whether the checkpoint left behind is intact JSON that the same
  command resumes from (resumed to the end, its report must equal the
  undisturbed run's, timing lines aside; ``--resume all|mid|none`` says
  which cases are resumed, the others are read as JSON only).

Symbolic-link checkpoints are swept too: a dangling link (written through,
the link kept), a link to a good checkpoint (resumed through it), a link that
loops (refused in one sentence, status 2), and SIGTERM of a run whose
checkpoint is a link (no ``*.tmp`` beside the link or its target).

Run:  .venv/bin/python benchmarks/signal_sweep.py [--rounds N] [--only TEXT]
      [--signals KILL,TERM,INT,INT2] [--delays early,mid,final] [--workers 1,2]
      [--resume mid] [--grace 5] [--hang 60] [--show-all]

A table of every case that failed (all cases with ``--show-all``) and the
tally are printed; the exit status is 1 when a case failed.  Linux only (reads
``/proc``).  The full sweep runs about 250 commands, each a fresh interpreter:
about a quarter of an hour on two shared cores.
"""

from __future__ import annotations

import argparse
import json
import os
import re
import shutil
import signal
import subprocess
import sys
import tempfile
import time
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path

EXE = str(Path(sys.executable).with_name("mfstein"))

SIR = ["--model", "sir", "--param", "beta=3", "--param", "gamma=1"]
SIR += ["--param", "rho=0.5", "--param", "a=0.1"]
PI_LAW = ["--arrivals", "0:.4,2:.2,4:.3,6:.1", "--service", "1:1", "--service", "1:.5,2:.5"]

#: name -> (command line without --workers, whether it takes --checkpoint).  Each
#: runs a second or two of work on a shared core and prints no warning undisturbed.
COMMANDS: dict[str, tuple[list[str], bool]] = {
    "simulate": (
        "simulate --N 100 --lam 0.9 --b 8 --steps 1e8 --batches 20".split(),
        True,
    ),
    "simulate --model": (["simulate", *SIR, *"--N 1000 --steps 3e7 --batches 20".split()], True),
    "pi": (["pi", *PI_LAW, *"--slots 5e5 --batches 20".split()], True),
    "tail": ("tail --simulate --n 20 --eps 0.1 --events 1e7".split(), True),
    "table": ("table --gamma 0.1 --alpha 0.05 --N 100 --sim-steps 1e8".split(), False),
    "table --model": (
        ["table", *SIR, *"--N 1000 --observable infected --simulate --sim-steps 3e7".split()],
        False,
    ),
}
#: Every command runs with these: two replications, no progress bar.
COMMON = ["--reps", "2", "--no-progress"]

SIGNALS = {"KILL": [signal.SIGKILL], "TERM": [signal.SIGTERM], "INT": [signal.SIGINT]}
SIGNALS["INT2"] = [signal.SIGINT, signal.SIGINT]
EXPECTED_STATUS = {"KILL": -9, "TERM": 143, "INT": 130, "INT2": 130}
DELAYS = ("early", "mid", "final")
#: Report lines that carry a timing (they differ from run to run).
TIMING = re.compile(r"/s\b|\bwall\b|seconds")


# ------------------------------------------------------------------ processes in /proc
def _stat(pid: int) -> tuple[str, int, int] | None:
    """``(state, ppid, session)`` of process ``pid``, ``None`` when it is gone."""
    try:
        text = Path(f"/proc/{pid}/stat").read_text()
    except OSError:
        return None
    fields = text.rsplit(")", 1)[1].split()
    return fields[0], int(fields[1]), int(fields[3])


def session_members(sid: int, exclude: int | None = None) -> list[int]:
    """Live (not zombie) processes of session ``sid`` other than ``exclude``."""
    out = []
    for entry in os.listdir("/proc"):
        if not entry.isdigit() or int(entry) == exclude:
            continue
        st = _stat(int(entry))
        if st is not None and st[2] == sid and st[0] not in "ZX":
            out.append(int(entry))
    return out


def workers_of(pid: int) -> list[int]:
    """Live child processes of ``pid`` (its workers)."""
    return [p for p in session_members(pid, exclude=pid) if (_stat(p) or ("Z", 0, 0))[1] == pid]


def _wait_until(cond, proc: subprocess.Popen, timeout: float, step: float = 0.01) -> bool:
    """Poll ``cond()`` until true (True), or until ``proc`` ends or ``timeout`` passes."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if cond():
            return True
        if proc.poll() is not None:
            return False
        time.sleep(step)
    return False


# ------------------------------------------------------------------------- one case
@dataclass
class Case:
    command: str
    workers: int
    checkpoint: bool
    sig: str  # "none" for the undisturbed run
    delay: str
    round: int = 0
    link: str = ""  # symbolic-link variant of the checkpoint path, "" for a plain file

    def label(self) -> str:
        ck = f"ck{'/' + self.link if self.link else ''}" if self.checkpoint else "-"
        return f"{self.command:16} w={self.workers} {ck:11} {self.sig:5} {self.delay:6}"


@dataclass
class Outcome:
    case: Case
    sent: bool = False
    status: int | None = None
    orphans: int = 0
    tmp: int = 0
    stderr: str = ""
    stdout: str = ""
    ck: str = "-"  # "-", "none", "ok", "resumed", or what is wrong
    hang: bool = False
    seconds: float = 0.0
    problems: list[str] = field(default_factory=list)

    @property
    def stderr_lines(self) -> int:
        return len([line for line in self.stderr.splitlines() if line.strip()])


@dataclass
class Baseline:
    """An undisturbed run: its report and when its workers came and went."""

    stdout: str
    unit_seconds: float  # from the first worker to the last worker's end


def _argv(case: Case, ck_path: str | None) -> list[str]:
    argv, _ = COMMANDS[case.command]
    out = [EXE, *argv, *COMMON, "--workers", str(case.workers)]
    if ck_path is not None:
        out += ["--checkpoint", ck_path]
    return out


def _report(text: str) -> list[str]:
    return [line for line in text.splitlines() if not TIMING.search(line)]


def _start(argv: list[str], cwd: Path) -> subprocess.Popen:
    env = {**os.environ, "PYTHONWARNINGS": "ignore"}
    return subprocess.Popen(
        argv,
        cwd=cwd,
        env=env,
        stdin=subprocess.DEVNULL,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        start_new_session=True,
    )


def _finish(proc: subprocess.Popen, out: Outcome, hang: float, grace: float) -> None:
    """Wait for the main process, then for its session to empty; count what is left
    and kill it (by process id: only processes this sweep started)."""
    try:
        out.stdout, out.stderr = proc.communicate(timeout=hang)
    except subprocess.TimeoutExpired:
        out.hang = True
        try:
            os.killpg(proc.pid, signal.SIGKILL)
        except ProcessLookupError:
            pass
        out.stdout, out.stderr = proc.communicate()
    out.status = proc.returncode
    deadline = time.monotonic() + grace
    left = session_members(proc.pid)
    while left and time.monotonic() < deadline:
        time.sleep(0.05)
        left = session_members(proc.pid)
    out.orphans = len(left)
    for pid in left:
        try:
            os.kill(pid, signal.SIGKILL)
        except ProcessLookupError:
            pass


def _ck_intact(path: Path) -> str:
    """``"ok"`` when ``path`` holds a checkpoint's JSON (config, reps, a 64-hex checksum)."""
    try:
        payload = json.loads(path.read_text())
    except (OSError, ValueError) as exc:
        return f"unreadable ({type(exc).__name__})"
    if not isinstance(payload, dict) or not {"config", "reps", "checksum"} <= payload.keys():
        return "not a checkpoint"
    if not re.fullmatch(r"[0-9a-f]{64}", str(payload["checksum"])):
        return "no checksum"
    return "ok"


def _resume(case: Case, work: Path, ck_arg: str, base: Baseline, hang: float) -> str:
    """Run the same command to its end on the checkpoint; ``"resumed"`` when its report
    equals the undisturbed run's (timing lines aside)."""
    proc = _start(_argv(case, ck_arg), work)
    try:
        stdout, stderr = proc.communicate(timeout=hang)
    except subprocess.TimeoutExpired:
        os.killpg(proc.pid, signal.SIGKILL)
        proc.communicate()
        return "resume hung"
    if proc.returncode != 0:
        return f"resume exit {proc.returncode}: {stderr.strip()[-120:]}"
    if _report(stdout) != _report(base.stdout):
        return "resumed run differs from the undisturbed one"
    return "resumed"


def _link_setup(kind: str, work: Path) -> str:
    """The ``--checkpoint`` argument of a symbolic-link variant (the link's target in
    ``work/store``)."""
    store = work / "store"
    if kind == "dangling":  # neither the target nor its directory exist
        (work / "ck.json").symlink_to(store / "real.json")
    elif kind == "loop":
        (work / "ck.json").symlink_to(work / "other.json")
        (work / "other.json").symlink_to(work / "ck.json")
    return "ck.json"


def run_case(
    case: Case, base: Baseline | None, args: argparse.Namespace, resume: bool
) -> tuple[Outcome, Baseline | None]:
    work = Path(tempfile.mkdtemp(prefix="mfstein-sig-"))
    out = Outcome(case)
    ck_arg = None
    if case.checkpoint:
        ck_arg = _link_setup(case.link, work) if case.link else "ck.json"
    ck_file = work / ("store/real.json" if case.link == "dangling" else "ck.json")
    t0 = time.monotonic()
    proc = _start(_argv(case, ck_arg), work)
    up = down = None
    try:
        if case.sig == "none":
            seen = _wait_until(lambda: bool(workers_of(proc.pid)), proc, args.hang)
            up = time.monotonic() if seen else None
            if seen:
                _wait_until(lambda: not workers_of(proc.pid), proc, args.hang)
                down = time.monotonic()
        else:
            out.sent = _deliver(case, proc, ck_file, base, args)
    finally:
        _finish(proc, out, args.hang, args.grace)
    out.seconds = time.monotonic() - t0
    out.tmp = len([p for p in work.rglob("*.tmp")])
    _judge(out, work, ck_file, ck_arg, base, args, resume)
    shutil.rmtree(work, ignore_errors=True)
    new_base = None
    if case.sig == "none" and out.status == 0 and up is not None:
        new_base = Baseline(out.stdout, (down or time.monotonic()) - up)
    return out, new_base


def _deliver(
    case: Case, proc: subprocess.Popen, ck_file: Path, base: Baseline | None, args
) -> bool:
    """Wait for the case's moment, then send its signal(s); whether they were sent."""
    if not _wait_until(lambda: bool(workers_of(proc.pid)), proc, args.hang):
        return False
    up = time.monotonic()
    if case.delay == "mid":
        half = 0.5 * (base.unit_seconds if base else 1.0)
        if case.checkpoint and not _wait_until(ck_file.exists, proc, args.hang):
            return False
        if not _wait_until(lambda: time.monotonic() - up >= half, proc, args.hang):
            return False
    elif case.delay == "final":
        if not _wait_until(lambda: not workers_of(proc.pid), proc, args.hang, step=0.002):
            return False
    sent = False
    for i, signum in enumerate(SIGNALS[case.sig]):
        if proc.poll() is not None:
            break
        if i:
            time.sleep(0.1)
        try:
            os.kill(proc.pid, signum)
            sent = True
        except ProcessLookupError:
            break
    return sent


def _judge(out: Outcome, work: Path, ck_file: Path, ck_arg, base, args, resume: bool) -> None:
    case = out.case
    p = out.problems
    if out.hang:
        p.append("hang")
    if out.orphans:
        p.append(f"{out.orphans} orphan(s)")
    if out.tmp:
        p.append(f"{out.tmp} *.tmp left")
    if case.link == "loop":
        if out.status != 2 or out.stderr_lines != 1 or "loops" not in out.stderr:
            p.append(f"loop link: status {out.status}, stderr {out.stderr.strip()!r}")
        return
    want = EXPECTED_STATUS.get(case.sig, 0) if out.sent else 0
    if out.status != want:
        p.append(f"status {out.status} (want {want})")
    lines = out.stderr_lines
    if case.sig in ("TERM", "INT", "INT2") and out.sent and lines != 1:
        p.append(f"{lines} stderr lines")
    if case.sig == "none" and lines:
        p.append(f"{lines} stderr lines undisturbed")
    if case.link and not (work / "ck.json").is_symlink():
        p.append("the symbolic link was replaced")
    if case.checkpoint:
        if not ck_file.exists():
            out.ck = "none"
        else:
            out.ck = _ck_intact(ck_file)
            if out.ck == "ok" and resume and base is not None:
                out.ck = _resume(case, work, ck_arg, base, args.hang)
            if out.ck not in ("ok", "resumed"):
                p.append(f"checkpoint: {out.ck}")


# --------------------------------------------------------------------------- driver
def cases(args: argparse.Namespace) -> list[Case]:
    out = []
    for rnd in range(args.rounds):
        for name, (_argv0, has_ck) in COMMANDS.items():
            if args.only and args.only not in name:
                continue
            for w in args.workers:
                for ck in (False, True) if has_ck else (False,):
                    for sig in args.signals:
                        for delay in args.delays:
                            out.append(Case(name, w, ck, sig, delay, rnd))
    if args.links and (not args.only or args.only in "simulate"):
        for link in ("dangling", "loop"):
            out.append(Case("simulate", 1, True, "none", "-", 0, link))
        out.append(Case("simulate", 2, True, "TERM", "mid", 0, "dangling"))
    return out


def _parse() -> argparse.Namespace:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--rounds", type=int, default=1, help="repeat every case N times")
    ap.add_argument("--only", default="", help="only the commands whose name contains TEXT")
    ap.add_argument("--signals", default="KILL,TERM,INT,INT2")
    ap.add_argument("--delays", default=",".join(DELAYS))
    ap.add_argument("--workers", default="1,2")
    ap.add_argument("--resume", choices=("all", "mid", "none"), default="mid")
    ap.add_argument("--no-links", dest="links", action="store_false")
    ap.add_argument("--grace", type=float, default=5.0, help="seconds for the session to empty")
    ap.add_argument("--hang", type=float, default=60.0, help="seconds before a run is a hang")
    ap.add_argument("--show-all", action="store_true")
    args = ap.parse_args()
    args.signals = [s for s in args.signals.split(",") if s]
    args.delays = [d for d in args.delays.split(",") if d]
    args.workers = [int(w) for w in args.workers.split(",")]
    bad = [s for s in args.signals if s not in SIGNALS]
    bad += [d for d in args.delays if d not in DELAYS]
    if bad:
        ap.error(f"unknown signal or delay: {', '.join(bad)}")
    return args


def main() -> int:
    if not sys.platform.startswith("linux"):
        print("signal_sweep reads /proc: Linux only.", file=sys.stderr)
        return 2
    args = _parse()
    # the commands start as a terminal's would: Ctrl-C not ignored (a background job
    # of a non-interactive shell, such as this sweep under nohup, inherits SIG_IGN)
    signal.signal(signal.SIGINT, signal.default_int_handler)
    todo = cases(args)
    bases: dict[tuple[str, int], Baseline] = {}
    results: list[Outcome] = []
    t0 = time.monotonic()
    for key in sorted({(c.command, c.workers) for c in todo if not c.link}):
        out, base = run_case(Case(key[0], key[1], False, "none", "-"), None, args, False)
        results.append(out)
        if base is not None:
            bases[key] = base
        _progress(out, len(results), len(todo) + len(bases))
    for case in todo:
        resume = args.resume == "all" or (args.resume == "mid" and case.delay == "mid")
        base = bases.get((case.command, case.workers))
        if case.link == "dangling" and case.sig == "none":
            resume = True
        out, _ = run_case(case, base, args, resume)
        results.append(out)
        _progress(out, len(results), len(todo) + len(bases))
    print()
    print(f"{'case':44} {'sent':>4} {'status':>6} {'orph':>4} {'tmp':>3} {'err':>3}  ck")
    for r in results:
        if args.show_all or r.problems:
            print(
                f"{r.case.label():44} {'yes' if r.sent else 'no':>4} {r.status!s:>6} "
                f"{r.orphans:>4} {r.tmp:>3} {r.stderr_lines:>3}  {r.ck}"
                + (f"   <- {'; '.join(r.problems)}" if r.problems else "")
            )
            if r.problems and r.stderr.strip():
                print(f"{'':8}stderr: {r.stderr.strip()[-300:]!r}")
    _tally(results, time.monotonic() - t0)
    return 1 if any(r.problems for r in results) else 0


def _progress(out: Outcome, i: int, n: int) -> None:
    mark = "x" if out.problems else ("." if out.sent or out.case.sig == "none" else "m")
    print(mark, end="" if i % 60 else f" {i}/{n}\n", flush=True)


def _tally(results: list[Outcome], seconds: float) -> None:
    sent = [r for r in results if r.sent]
    missed = [r for r in results if r.case.sig != "none" and not r.sent]
    count = Counter()
    for r in results:
        count["orphaned processes"] += r.orphans
        count["*.tmp files left"] += r.tmp
        count["hangs"] += r.hang
        count["wrong exit status"] += any(q.startswith("status") for q in r.problems)
        count["multi-line or missing stderr"] += any("stderr lines" in q for q in r.problems)
        count["bad checkpoints"] += any(q.startswith("checkpoint") for q in r.problems)
        count["replaced links"] += any("link" in q for q in r.problems)
    resumed = sum(r.ck == "resumed" for r in results)
    print(
        f"\n{len(results)} runs ({len(sent)} signalled, {len(missed)} missed: the run ended "
        f"first), {resumed} checkpoints resumed to identical reports, {seconds:.0f} s"
    )
    print("tally: " + ", ".join(f"{v} {k}" for k, v in count.items()))
    print(f"failed cases: {sum(bool(r.problems) for r in results)}")


if __name__ == "__main__":
    sys.exit(main())
