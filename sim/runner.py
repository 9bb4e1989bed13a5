"""Independent replications in parallel, with progress, interruption and checkpoints.

Replication ``i`` starts from the ``i``-th child of
``numpy.random.SeedSequence(seed).spawn(reps)`` and runs a warm-up (discarded)
then ``batches`` batches, one unit of work each.  Units of different
replications run concurrently on local processes
(:class:`concurrent.futures.ProcessPoolExecutor`), on an existing Dask cluster
(``scheduler`` address), or in this process: a run of at most
:data:`INLINE_EVENTS` events (all replications together) never starts a worker
process, whatever ``workers``, since starting one costs more than the run.
Since every unit is a pure function of its replication's state, the batch
sums -- and hence every number
reported -- depend on ``seed`` only, not on the number or kind of workers.

After every completed unit the whole run (each replication's RNG and chain
state, and all its batch sums so far) is written to ``checkpoint`` atomically
(:func:`mfstein.ground.io.atomic_write`), so Ctrl-C or a crash loses at most the
units in flight, and the same command resumes where it stopped.
"""

from __future__ import annotations

import json
import os
from collections.abc import Callable, Mapping
from contextlib import nullcontext
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any, Protocol

import numpy as np

from mfstein.ground.errors import ParameterError, check_int
from mfstein.ground.io import atomic_write
from sim.replication_json import (
    state_from_json,
    state_to_json,
    sums_from_json,
    sums_to_json,
)
from sim.rng import seed_states

CHECKPOINT_VERSION = 3
#: Seconds between checks for Ctrl-C while units run (how prompt an interrupt is).
POLL_SECONDS = 0.2
#: Events (all replications together, those still to run) up to which a run stays in
#: this process, whatever ``workers``: forking the workers, shipping each unit's state
#: and result and stopping the pool cost about 40 ms of CPU (0.3-0.4 s of wall time on a
#: loaded machine; SIR, 2 workers, 4e4 events: 9 ms of CPU in this process against 47 ms
#: with the pool), the time of 1e6 events of SIR in its compiled loop (3e7 events per
#: second of one core); also about the longest a Ctrl-C then waits for the unit in
#: progress (a fraction of a second for such models).
INLINE_EVENTS = 1_000_000


@dataclass(frozen=True)
class CheckedRun:
    """The run options every simulator shares, checked by :func:`check_run`."""

    #: Events (or slots) per replication, the warm-up included (``steps_name``).
    steps: int
    #: Independent replications.
    reps: int
    #: The root seed of :func:`sim.rng.seed_states`.
    seed: int
    #: Batches per replication; ``None`` for a simulator without batches.
    batches: int | None
    #: Worker processes (the number of cores by default, at most ``reps``).
    workers: int
    #: The fraction of each replication's events discarded as warm-up, in ``[0, 1)``.
    warmup_fraction: float


def check_run(
    steps: Any,
    reps: Any,
    seed: Any,
    workers: Any,
    warmup_fraction: Any,
    *,
    batches: Any = None,
    steps_name: str = "steps",
    min_reps: int = 1,
) -> CheckedRun:
    """Check the run options every simulator shares against :mod:`mfstein.ground.limits`.

    One sentence (:class:`ParameterError`) per bad value, before any work.
    Returns them checked (:class:`CheckedRun`); ``workers`` defaults to the number
    of cores, at most ``reps``; ``batches`` stays ``None`` for a simulator without
    batches.
    """
    from mfstein.ground.limits import SIM_MAX_BATCHES, SIM_MAX_REPS, SIM_MAX_STEPS, SIM_MAX_WORKERS

    steps = check_int(steps_name, steps, 1, SIM_MAX_STEPS)
    reps = check_int("reps", reps, min_reps, SIM_MAX_REPS)
    seed = check_int("seed", seed, 0, 2**128 - 1)
    if batches is not None:
        batches = check_int("batches", batches, 2, SIM_MAX_BATCHES)
    if workers is None:
        workers = min(os.cpu_count() or 1, reps)
    workers = check_int("workers", workers, 1, SIM_MAX_WORKERS)
    try:
        fraction = float(warmup_fraction)
    except (TypeError, ValueError):
        fraction = float("nan")
    if isinstance(warmup_fraction, bool) or not 0.0 <= fraction < 1.0:
        raise ParameterError(f"warmup_fraction must lie in [0, 1), got {warmup_fraction!r}.")
    return CheckedRun(steps, reps, seed, batches, workers, fraction)


@dataclass(frozen=True)
class Plan:
    """How the events of one replication are split: warm-up, then equal batches."""

    #: Events per replication, the warm-up included.
    steps: int
    #: Batches per replication.
    batches: int
    #: Events discarded first, ``steps - batches * batch_len``.
    warmup: int
    #: Events per batch, as many as ``steps (1 - warmup_fraction) / batches`` allows.
    batch_len: int

    @classmethod
    def make(
        cls, steps: int, batches: int, warmup_fraction: float, steps_name: str = "steps"
    ) -> Plan:
        """``warmup = steps - batches * batch_len`` with ``batch_len`` as large as allowed
        (one sentence naming ``steps_name`` when not even one step fits in a batch)."""
        batch_len = int((steps * (1.0 - warmup_fraction)) // batches)
        if batch_len < 1:
            need = int(np.ceil(batches / (1.0 - warmup_fraction)))
            raise ParameterError(
                f"{steps_name} must be at least {need} to fill {batches} batches after the "
                f"warm-up, got {steps}."
            )
        return cls(steps, batches, steps - batches * batch_len, batch_len)


@dataclass
class Replication:
    """One replication's state and the sums of its completed batches."""

    #: The engine's state of the replication after its last completed unit (what the next unit
    #: continues from).
    state: dict
    #: Whether its warm-up ran.
    warm: bool = False
    #: The engine's sums of each completed batch, in order.
    batches: list[dict] = field(default_factory=list)


@dataclass
class RunOutput:
    """What :func:`run` returns: every replication's batches, and how the run went
    (``interrupted``: Ctrl-C or SIGTERM stopped it before its last unit; never with
    ``complete``)."""

    #: Every replication, in order (:class:`Replication`).
    reps: list[Replication]
    #: How each replication's events were split (:class:`Plan`).
    plan: Plan
    #: Whether every unit (warm-ups and batches) of every replication ran.
    complete: bool
    #: Whether Ctrl-C or SIGTERM stopped the run before its last unit (never with ``complete``).
    interrupted: bool
    #: The run's elapsed (wall-clock) time in seconds.
    wall_seconds: float
    #: Whether the units ran in this process (no worker process was started).
    in_process: bool = False


class RunSpec(Protocol):
    """What the runner reads of an engine's spec (the rest is the engine's own:
    the spec goes to its ``advance`` and ``fresh_state`` unread).  A spec whose
    ``config()`` key was renamed may also carry ``RENAMED_CONFIG_KEYS`` (old key ->
    new key), so that its old checkpoints still load (:func:`_read_checkpoint`)."""

    @property
    def N(self) -> int:
        """The population size (the progress bar's label)."""
        ...

    def config(self) -> Mapping[str, Any]:
        """The JSON-ready description a checkpoint is matched against."""
        ...


def _config(spec: RunSpec, plan: Plan, reps: int, seed: int) -> dict:
    """What a checkpoint must match: the spec's ``config()``, the plan, ``reps``,
    ``seed`` and the checkpoint format."""
    cfg = dict(spec.config())
    cfg.update(asdict(plan))
    cfg.update(reps=reps, seed=seed, version=CHECKPOINT_VERSION)
    return cfg


def _checksum(config: dict, reps: list) -> str:
    """SHA-256 of the canonical JSON of a checkpoint's content (config and replications)."""
    import hashlib

    text = json.dumps({"config": config, "reps": reps}, sort_keys=True, separators=(",", ":"))
    return hashlib.sha256(text.encode()).hexdigest()


def _write_checkpoint(path: Path, config: dict, reps: list[Replication]) -> None:
    body = [
        {
            "warm": r.warm,
            "state": state_to_json(r.state),
            "batches": [sums_to_json(s) for s in r.batches],
        }
        for r in reps
    ]
    config = json.loads(json.dumps(config))
    body = json.loads(json.dumps(body))
    payload = {"config": config, "reps": body, "checksum": _checksum(config, body)}
    atomic_write(path, json.dumps(payload))


def check_writable(path: str | os.PathLike, what: str) -> Path:
    """Raise :class:`ParameterError` unless a file can be written at ``path``.

    Checked before a run starts, so that no work is lost to an output that
    cannot be saved; nothing is left behind.  An existing directory is tested
    by creating and removing a temporary file in it (``os.access`` alone
    misses read-only file systems, and is always true for root); a missing
    one by creating and removing the first missing directory.
    """
    import tempfile

    from mfstein.ground.io import write_target

    if str(path).strip() == "":
        raise ParameterError(f"{what} must be a file path, got {str(path)!r}.")
    target = write_target(path)  # a symbolic link is written through
    if target.is_dir():
        raise ParameterError(f"{what} must be a file path, got {str(path)!r}.")
    parent = target.parent
    while not parent.exists():
        if parent == parent.parent:
            break
        parent = parent.parent
    if not parent.is_dir():
        raise ParameterError(
            f"{what} {str(path)!r} cannot be written: {parent} is not a directory."
        )
    created = None
    try:
        if parent != target.parent:
            # create (and remove again) the first missing directory: the writer
            # will create the rest, exactly as here
            created = target.parent
            while created.parent != parent:
                created = created.parent
            created.mkdir()
        fd, tmp = tempfile.mkstemp(dir=created or parent, prefix=".mfstein.", suffix=".probe")
        os.close(fd)
        os.unlink(tmp)
    except OSError as exc:
        reason = exc.strerror or type(exc).__name__
        raise ParameterError(f"{what} {str(path)!r} cannot be written: {reason}.") from None
    finally:
        if created is not None and created.is_dir():
            try:
                created.rmdir()
            except OSError:
                pass
    if target.exists() and not os.access(target, os.W_OK):
        raise ParameterError(f"{what} {str(path)!r} exists and is not writable.")
    return target


def _bad(path: Path, why: str) -> ParameterError:
    return ParameterError(
        f"checkpoint {path} is not a valid mfstein checkpoint ({why}); delete it or use a new file."
    )


def _same_layout(a: Any, b: Any) -> bool:
    """Same keys, dtypes and shapes (arrays) or the same kind of value (scalars);
    an array with no rows in ``b`` (a list that grows, e.g. pending jobs) may
    have any number of rows in ``a``."""
    if isinstance(a, dict) != isinstance(b, dict):
        return False
    if isinstance(a, dict):
        return a.keys() == b.keys() and all(_same_layout(a[k], b[k]) for k in a)
    if isinstance(a, np.ndarray) or isinstance(b, np.ndarray):
        return (
            isinstance(a, np.ndarray)
            and isinstance(b, np.ndarray)
            and a.dtype == b.dtype
            and (
                a.shape == b.shape
                or (a.ndim == b.ndim >= 1 and b.shape[0] == 0 and a.shape[1:] == b.shape[1:])
            )
        )
    if isinstance(a, bool) or isinstance(b, bool):
        return isinstance(a, bool) and isinstance(b, bool)
    if isinstance(a, int | float) and isinstance(b, int | float):
        return True
    return type(a) is type(b)


def _finite(x: Any) -> bool:
    if isinstance(x, dict):
        return all(_finite(v) for v in x.values())
    if isinstance(x, np.ndarray):
        return x.dtype.kind in "iuf" and bool(np.all(np.isfinite(x)))
    if isinstance(x, bool):
        return False
    return isinstance(x, int | float) and np.isfinite(x)


def _renamed(config: dict, renamed: Mapping[str, str]) -> dict:
    """``config`` with each old key of ``renamed = {old: new}`` under its new name (a
    checkpoint written before a spec's field was renamed; a new key already present
    wins)."""
    return {renamed[k] if k in renamed and renamed[k] not in config else k: v
            for k, v in config.items()}  # fmt: skip


def _read_checkpoint(
    path: Path,
    config: dict,
    template: dict | None = None,
    plan: Plan | None = None,
    renamed: Mapping[str, str] | None = None,
) -> list[Replication] | None:
    """The replications saved in ``path`` (``None`` if there is no file).

    Anything but an intact checkpoint of this very run is refused with one
    sentence: unreadable or non-JSON content, another run's parameters, a
    checksum that does not match the content (a hand-edited or damaged file),
    or replications whose layout differs from a fresh replication's.  A key of
    the saved configuration named in ``renamed`` (old -> new: the spec's
    ``RENAMED_CONFIG_KEYS``) is read under its new name, so that a checkpoint
    written before a field was renamed still loads; the checksum is that of the
    file as written.
    """
    if not path.exists():
        return None
    try:
        payload = json.loads(path.read_text())
    except (OSError, ValueError, UnicodeDecodeError):
        raise _bad(path, "not readable JSON") from None
    if not isinstance(payload, dict) or not isinstance(payload.get("config"), dict):
        raise _bad(path, "no run configuration")
    cfg = payload["config"]
    want = config.get("version")
    if want is not None and cfg.get("version") != want:
        raise _bad(path, f"format {cfg.get('version')!r}, this mfstein writes {want}")
    if _renamed(cfg, renamed or {}) != json.loads(json.dumps(config)):
        raise ParameterError(
            f"checkpoint {path} belongs to a different run; use the same parameters or a new file."
        )
    reps = payload.get("reps")
    if not isinstance(reps, list) or payload.get("checksum") != _checksum(cfg, reps):
        raise _bad(path, "its checksum does not match its content")
    if isinstance(config.get("reps"), int) and len(reps) != config["reps"]:
        raise _bad(path, f"{len(reps)} replications saved, the run has {config['reps']}")
    out = []
    first_batch = None
    try:
        for r in reps:
            if not isinstance(r, dict) or not isinstance(r.get("warm"), bool):
                raise ValueError("a replication entry is malformed")
            state = state_from_json(r["state"])
            if template is not None and not _same_layout(state, template):
                raise ValueError("a replication state has the wrong layout")
            rng = state.get("rng")
            if isinstance(rng, np.ndarray) and not np.any(rng):
                raise ValueError("a random-number state is all zero")
            if not isinstance(r["batches"], list) or (not r["warm"] and r["batches"]):
                raise ValueError("a batch list is malformed")
            if plan is not None and len(r["batches"]) > plan.batches:
                raise ValueError("a replication has more batches than the run")
            batches = []
            for raw in r["batches"]:
                if not isinstance(raw, dict):
                    raise ValueError("a batch entry is malformed")
                sums = sums_from_json(raw)
                first_batch = sums if first_batch is None else first_batch
                if not _same_layout(sums, first_batch) or not _finite(sums):
                    raise ValueError("a batch entry is malformed")
                batches.append(sums)
            out.append(Replication(state=state, warm=r["warm"], batches=batches))
    except (KeyError, TypeError, ValueError, AttributeError, OverflowError) as exc:
        raise _bad(path, str(exc) if isinstance(exc, ValueError) else "malformed content") from None
    return out


def _ignore_sigint() -> None:
    """Worker initialiser: Ctrl-C is handled by the parent, which keeps what is done."""
    import signal

    signal.signal(signal.SIGINT, signal.SIG_IGN)


#: Seconds between a worker's checks that its parent is still alive (the portable
#: fallback of :func:`_die_with_parent`).
PARENT_POLL_SECONDS = 0.5

#: ``prctl`` option: the signal a Linux process receives when its parent dies.
_PR_SET_PDEATHSIG = 1


def _die_with_parent(parent: int) -> None:
    """Make this worker process end when ``parent`` does, whatever kills it.

    On Linux the kernel sends the worker SIGKILL when its parent dies
    (``prctl(PR_SET_PDEATHSIG, SIGKILL)`` via ctypes); everywhere a daemon
    thread also checks every :data:`PARENT_POLL_SECONDS` that the parent is
    still the worker's parent and ends the worker (``os._exit``) when it is not
    -- without either, a worker of a ``kill -9``-ed run stays blocked for ever
    on its task pipe.
    """
    import signal
    import sys
    import threading
    import time

    if sys.platform.startswith("linux"):
        try:
            import ctypes

            libc = ctypes.CDLL(None, use_errno=True)
            libc.prctl(_PR_SET_PDEATHSIG, int(signal.SIGKILL), 0, 0, 0)
        except (OSError, AttributeError):  # pragma: no cover - no prctl: the thread remains
            pass
    if os.getppid() != parent:  # the parent died before the request took effect
        os._exit(1)

    def watch() -> None:
        while os.getppid() == parent:
            time.sleep(PARENT_POLL_SECONDS)
        os._exit(1)

    threading.Thread(target=watch, name="mfstein-parent-watch", daemon=True).start()


def _init_worker(parent: int) -> None:
    """Worker initialiser: Ctrl-C is left to the parent, and the worker dies with it.

    SIGTERM gets its default action back: a forked worker inherits the parent's
    :class:`Interrupts` handler, which only sets a flag, and the parent's
    ``terminate()`` of an interrupted run would then leave the worker running
    its unit to the end (and the interpreter's exit waiting for it).
    """
    import signal

    _ignore_sigint()
    signal.signal(signal.SIGTERM, signal.SIG_DFL)
    _die_with_parent(parent)


def _check_scheduler_address(scheduler: str) -> None:
    """A Dask scheduler address must look like ``[tcp|tls|inproc|ucx]://host:port`` or
    ``host:port``; anything else is refused at once instead of after a connection timeout."""
    import re

    if not re.fullmatch(
        r"((tcp|tls|inproc|ucx|ws|wss)://)?[A-Za-z0-9_.\-\[\]:]+:\d{1,5}/?", scheduler
    ):
        raise ParameterError(
            f"scheduler must be the address of a running Dask scheduler, such as "
            f"tcp://127.0.0.1:8786, got {scheduler!r}."
        )


def _executor(workers: int, scheduler: str | None, reps: int):
    """Return ``(submit, wait_first, shutdown)`` for the chosen back end: the Dask
    cluster at ``scheduler``, else a pool of local worker processes (a run in this
    process has no executor: :meth:`_Units.drive_serial`).

    ``wait_first(futs, timeout=None)`` returns the finished futures (possibly
    none when ``timeout`` seconds pass first).
    """
    import time

    if scheduler:
        _check_scheduler_address(scheduler)
        try:
            from dask.distributed import Client, as_completed
        except ImportError as exc:  # pragma: no cover - optional dependency
            raise ParameterError(
                "scheduler needs dask.distributed; install mfstein[dist]."
            ) from exc
        try:
            client = Client(scheduler, timeout="10s", set_as_default=False)
        except Exception as exc:  # OSError, TimeoutError, ValueError (bad address), ...
            raise ParameterError(
                f"scheduler must be the address of a running Dask scheduler, "
                f"could not connect to {scheduler!r}."
            ) from exc
        finished = as_completed(loop=client.loop)

        def submit(fn, *args):
            fut = client.submit(fn, *args, pure=False)
            finished.add(fut)
            return fut

        def wait_first(futs, timeout=None):
            if timeout is None:
                return {next(finished)}
            deadline = time.monotonic() + timeout
            while True:  # poll: the main thread must stay free for Ctrl-C
                done = {f for f in futs if f.done()}
                if done or time.monotonic() >= deadline:
                    return done
                time.sleep(0.02)

        def shutdown():
            client.close()

        return submit, wait_first, shutdown
    from concurrent.futures import FIRST_COMPLETED, ProcessPoolExecutor
    from concurrent.futures import wait as cf_wait

    processes: list = []
    pool = ProcessPoolExecutor(
        max_workers=max(1, min(workers, reps)),
        initializer=_init_worker,
        initargs=(os.getpid(),),
    )

    def wait_first(futs, timeout=None):
        return cf_wait(list(futs), timeout=timeout, return_when=FIRST_COMPLETED).done

    def shutdown(terminate: bool = False):
        if terminate:
            # units in flight would otherwise run to their end (and the interpreter
            # waits for them at exit): stop the worker processes now
            processes.extend((getattr(pool, "_processes", None) or {}).values())
        pool.shutdown(wait=False, cancel_futures=True)
        for proc in processes:
            try:
                proc.terminate()
            except Exception:  # pragma: no cover - already gone
                pass
        for proc in processes:
            proc.join(timeout=2)

    return pool.submit, wait_first, shutdown


class Interrupts:
    """Ctrl-C as a flag: while installed, SIGINT (any number of presses) sets
    ``stop`` instead of raising, so no lock or future is left half-updated and
    the run loop stops at its next poll (every :data:`POLL_SECONDS`).

    SIGTERM is handled the same way (completed batches kept and saved, workers
    stopped, no temporary file left) and recorded (:func:`mfstein.ground.signals.note`);
    once the run has cleaned up, leaving the outermost block hands the SIGTERM
    on to the handler that was there before -- the ``mfstein`` command's
    (``KeyboardInterrupt``, status 143) or the default (the process ends)."""

    def __init__(self) -> None:
        import threading

        self.presses = 0
        self.installed = False
        self._old = None
        self._old_term = None
        self.terminated = False
        self._parent: Interrupts | None = None
        self._main = threading.current_thread() is threading.main_thread()

    @property
    def stop(self) -> bool:
        return self.presses > 0

    def _handler(self, signum, frame) -> None:
        import signal

        self.presses += 1
        if signum == signal.SIGTERM:
            from mfstein.ground.signals import note

            if not self.terminated and self._parent is None:
                note(signum)
            self.terminated = True
        if self._parent is not None:
            self._parent._handler(signum, frame)

    def __enter__(self) -> Interrupts:
        import signal

        self._parent = None
        if self._main:
            # SIGINT that the process ignores (a background job of a script) stays ignored
            self._old = signal.getsignal(signal.SIGINT)
            if self._old is not signal.SIG_IGN:
                signal.signal(signal.SIGINT, self._handler)
            self._old_term = signal.signal(signal.SIGTERM, self._handler)
            outer = getattr(self._old_term, "__self__", None)
            if isinstance(outer, Interrupts):  # nested: presses so far count here too
                self._parent = outer
                self.presses = outer.presses
            self.installed = True
        return self

    def __exit__(self, *exc) -> None:
        import signal

        if self.installed:
            if self._old is not signal.SIG_IGN:
                signal.signal(signal.SIGINT, self._old)
            signal.signal(signal.SIGTERM, self._old_term)
            self.installed = False
            if self.terminated and self._parent is None:
                # the run has saved its work: now let SIGTERM do what it did before
                signal.raise_signal(signal.SIGTERM)


def honour_late_interrupt(sig: Interrupts, out: RunOutput) -> None:
    """Raise ``KeyboardInterrupt`` for a Ctrl-C that came while the batches of a run that
    ended by itself were pooled (inside ``sig``, around :func:`run` and the pooling), so
    that the command ends as after any other press (one line, status 130); a press
    after a run it interrupted is that interruption's second press, and the estimates
    kept from the completed batches stand.  (SIGTERM is handed on by ``sig`` itself.)"""
    if sig.stop and not out.interrupted and not sig.terminated:
        raise KeyboardInterrupt


def run_and_pool(
    spec: RunSpec, plan: Plan, pool: Callable[[RunOutput], Any], **run_options: Any
) -> Any:
    """:func:`run` (``run_options`` its keywords), then ``pool(out)``, the estimates
    the simulator returns, with Ctrl-C a flag from the start of the run to the
    returned result: a press that lands after the run stopped does not lose the
    estimates being pooled, and one while a run that ended by itself is pooled ends
    the command as any other press (:func:`honour_late_interrupt`)."""
    with Interrupts() as sig:
        out = run(spec, plan, **run_options, interrupts=sig)
        result = pool(out)
        honour_late_interrupt(sig, out)
        return result


def _picklable(fn) -> bool:
    import pickle

    try:
        pickle.dumps(fn)
    except Exception:
        return False
    return True


def run(
    spec: RunSpec,
    plan: Plan,
    *,
    advance: Callable[[Any, Any, int], tuple[Any, Any]],
    fresh_state: Callable[[Any, np.ndarray], Any],
    reps: int,
    seed: int,
    workers: int,
    scheduler: str | None = None,
    checkpoint: str | os.PathLike | None = None,
    progress: bool = False,
    max_units: int | None = None,
    desc: str | None = None,
    interrupts: Interrupts | None = None,
) -> RunOutput:
    """Run (or resume) ``reps`` replications of ``spec`` according to ``plan``.

    Parameters
    ----------
    max_units:
        Stop after this many units of work (warm-ups and batches) in this call,
        keeping the checkpoint; ``None`` runs to completion.  A later call with
        the same checkpoint finishes the run with identical numbers.
    advance, fresh_state:
        The engine's unit of work ``advance(spec, state, steps) -> (state, sums)``
        and initial state ``fresh_state(spec, rng) -> state`` (picklable
        module-level functions, e.g. :func:`mfstein.families.supermarket.engine.advance` and
        :func:`mfstein.families.supermarket.engine.fresh_state` of the supermarket's engines).
    desc:
        Label of the progress bar (default ``simulate N=<spec.N>``).
    interrupts:
        The caller's installed :class:`Interrupts` (:func:`run_and_pool`'s), read instead
        of installing another one around the run (which would count the same presses).

    Notes
    -----
    Ctrl-C (any number of presses, at any moment of the run) stops the run
    within :data:`POLL_SECONDS`: units in flight are cancelled and their worker
    processes stopped; every completed batch is kept (and saved when
    ``checkpoint`` is given), and the returned :class:`RunOutput` has
    ``interrupted=True``.  A run of at most :data:`INLINE_EVENTS` events still
    to do runs in this process (no worker process; an interrupt then takes effect
    when the unit in progress ends).  A longer one called from the main thread
    with a picklable ``advance`` runs in worker processes even for ``workers=1``,
    so that the main process stays responsive; otherwise ``workers=1`` runs it
    inline.  The
    checkpoint's directory is checked for writability before any work, and the
    checkpoint carries a checksum of its content: a damaged or hand-edited file
    is refused.
    """
    import time

    path = Path(checkpoint) if checkpoint is not None else None
    # what a checkpoint is matched against: none to match, none made (some 0.1 ms a call)
    config = _config(spec, plan, reps, seed) if path is not None else {}
    state = _start(spec, plan, config, path, reps, seed, fresh_state)
    t0 = time.perf_counter()
    units = _Units(spec, plan, state, advance, path, config, max_units)
    with Interrupts() if interrupts is None else nullcontext(interrupts) as sig:
        bar = _NoBar()
        if progress:  # (tqdm is imported only for a bar that shows)
            from tqdm import tqdm

            bar = tqdm(
                total=reps * (plan.batches + 1),
                initial=sum(int(r.warm) + len(r.batches) for r in state),
                unit="batch",
                desc=desc or f"simulate N={spec.N}",
                leave=False,
            )
        units.bar = bar
        inline = _inline(scheduler, workers, reps, advance, units)
        units.in_process = not scheduler and (
            inline if inline is not None else workers == 1 or reps == 1
        )
        try:
            if units.in_process:
                units.drive_serial(sig)
            else:
                _drive_pool(units, sig, workers, scheduler, reps)
        except KeyboardInterrupt:
            units.interrupted = True
        finally:
            bar.close()
    complete = all(units.pending(r) is None for r in state)
    # a press after the last unit ended cut nothing short: the run is not interrupted,
    # and the caller's honour_late_interrupt ends the command for it (one line, 130)
    interrupted = units.interrupted and not complete
    wall = time.perf_counter() - t0
    return RunOutput(state, plan, complete, interrupted, wall, in_process=units.in_process)


def _drive_pool(units: _Units, sig: Interrupts, workers: int, scheduler: str | None, reps: int):
    """:meth:`_Units.drive` on worker processes or a Dask cluster (:func:`_executor`),
    keeping the units that finished before an interruption and stopping the workers
    whatever happens."""
    submit, wait_first, shutdown = _executor(workers, scheduler, reps)
    units.submit = submit
    try:
        units.drive(sig, wait_first)
    except KeyboardInterrupt:
        units.interrupted = True
    finally:
        if units.interrupted:
            units.keep_finished()
        try:
            shutdown(terminate=bool(units.running)) if not scheduler else shutdown()
        except TypeError:  # pragma: no cover - a back end without terminate
            shutdown()


class _NoBar:
    """The progress bar of a run that shows none (what a disabled tqdm bar does)."""

    def update(self, n: int = 1) -> None:
        pass

    def close(self) -> None:
        pass


def _start(
    spec: Any, plan: Plan, config: dict, path: Path | None, reps: int, seed: int, fresh_state
) -> list[Replication]:
    """Every replication's state: from the checkpoint at ``path`` when there is one (checked
    against a fresh replication's layout), else fresh from ``SeedSequence(seed)``."""
    fresh = [Replication(fresh_state(spec, rng)) for rng in seed_states(seed, reps)]
    if path is None:
        return fresh
    check_writable(path, "checkpoint")
    renamed = getattr(spec, "RENAMED_CONFIG_KEYS", None)
    saved = _read_checkpoint(path, config, template=fresh[0].state, plan=plan, renamed=renamed)
    return fresh if saved is None else saved


def _inline(scheduler: str | None, workers: int, reps: int, advance, units: _Units) -> bool | None:
    """``True`` (this process) for a local run of at most :data:`INLINE_EVENTS` events still
    to do; ``False`` (a worker process even for one worker, so that Ctrl-C stays prompt
    during long units) when the main thread runs one local worker with a picklable unit
    of work still to do; ``None`` (the executor's default) otherwise."""
    import threading

    if scheduler is not None:
        return None
    if units.events_left() <= INLINE_EVENTS:
        return True
    if (
        (workers == 1 or reps == 1)
        and threading.current_thread() is threading.main_thread()
        and _picklable(advance)
    ):
        return False
    return None


class _Units:
    """The units of work of one run: which comes next for each replication, launching it,
    and recording (and checkpointing) its result."""

    def __init__(self, spec, plan: Plan, state, advance, path, config, max_units) -> None:
        self.spec, self.plan, self.state, self.advance = spec, plan, state, advance
        self.path, self.config, self.max_units = path, config, max_units
        self.running: dict = {}
        self.launched = 0
        self.interrupted = False
        self.in_process = False
        self.submit = None
        self.bar = None

    def events_left(self) -> int:
        """Events of the units still to run (at most :attr:`max_units` of them)."""
        plan = self.plan
        sizes = []
        for r in self.state:
            if not r.warm:
                sizes.append(plan.warmup)
            sizes += [plan.batch_len] * (plan.batches - len(r.batches))
        if self.max_units is not None and sizes:
            return min(sum(sizes), max(0, self.max_units) * max(sizes))
        return sum(sizes)

    def pending(self, r: Replication) -> int | None:
        """Steps of the replication's next unit (its warm-up or a batch), ``None`` when done."""
        if not r.warm:
            return self.plan.warmup
        return self.plan.batch_len if len(r.batches) < self.plan.batches else None

    def launch(self, i: int) -> None:
        steps = self.pending(self.state[i])
        if steps is None or (self.max_units is not None and self.launched >= self.max_units):
            return
        self.launched += 1
        self.running[self.submit(self.advance, self.spec, self.state[i].state, steps)] = i

    def record(self, fut) -> None:
        """Keep the result of the finished unit ``fut`` (its exception is raised)."""
        i = self.running.pop(fut)
        new_state, sums = fut.result()
        self.keep(i, new_state, sums)

    def keep(self, i: int, new_state: Any, sums: Any) -> None:
        """Keep a unit's result: replication ``i``'s new state and, after its warm-up, the
        batch's sums; then the checkpoint and the bar."""
        rep = self.state[i]
        if rep.warm:
            rep.batches.append(sums)
        else:
            rep.warm = True
        rep.state = new_state
        if self.path is not None:
            _write_checkpoint(self.path, self.config, self.state)
        self.bar.update(1)

    def drive_serial(self, sig: Interrupts) -> None:
        """Run the units in this process, one after another in the order :meth:`drive`
        runs them on one worker (each replication's next unit in turn), with no executor
        or future: each ``advance`` is called directly and its result kept at once.
        ``sig`` is read before each unit (Ctrl-C takes effect when the unit in progress
        ends); a ``KeyboardInterrupt`` out of a unit keeps what was done before it."""
        from collections import deque

        spec, advance, state = self.spec, self.advance, self.state
        turn = deque(range(len(state)))
        while turn and not sig.stop:
            i = turn.popleft()
            steps = self.pending(state[i])
            if steps is None or (self.max_units is not None and self.launched >= self.max_units):
                continue
            self.launched += 1
            try:
                new_state, sums = advance(spec, state[i].state, steps)
            except KeyboardInterrupt:
                self.interrupted = True
                return
            self.keep(i, new_state, sums)
            turn.append(i)
        self.interrupted = self.interrupted or sig.stop

    def drive(self, sig: Interrupts, wait_first) -> None:
        """Launch every replication's next unit, and another each time one ends, until all
        are done or ``sig`` is raised (then :attr:`interrupted` is set)."""
        running = self.running
        for i in range(len(self.state)):
            if sig.stop:
                break
            self.launch(i)
        while running and not self.interrupted:
            if sig.stop:
                self.interrupted = True
                break
            done = wait_first(running, timeout=POLL_SECONDS)
            for fut in sorted(done, key=lambda f: running[f]):
                i = running[fut]
                try:
                    self.record(fut)
                except KeyboardInterrupt:
                    self.interrupted = True
                    continue
                if not self.interrupted and not sig.stop:
                    self.launch(i)
        self.interrupted = self.interrupted or sig.stop

    def keep_finished(self) -> None:
        """After an interruption: record every unit that finished before it."""
        for fut in [f for f in self.running if f.done()]:
            try:
                self.record(fut)
            except BaseException:  # the interrupted unit itself: nothing to keep
                self.running.pop(fut, None)
