"""Independent replications in parallel, with progress, interruption and checkpoints.

Replication ``i`` starts from the ``i``-th child of
``numpy.random.SeedSequence(seed).spawn(reps)`` and runs a warm-up (discarded)
then ``batches`` batches, one unit of work each.  Units of different
replications run concurrently on local processes
(:class:`concurrent.futures.ProcessPoolExecutor`), on an existing Dask cluster
(``scheduler`` address), or inline (``workers=1``).  Since every unit is a pure
function of its replication's state, the batch sums -- and hence every number
reported -- depend on ``seed`` only, not on the number or kind of workers.

After every completed unit the whole run (each replication's RNG and chain
state, and all its batch sums so far) is written to ``checkpoint`` atomically
(:func:`mfstein.io.atomic_write`), so Ctrl-C or a crash loses at most the
units in flight, and the same command resumes where it stopped.
"""

from __future__ import annotations

import json
import os
from dataclasses import asdict, dataclass, field
from pathlib import Path

import numpy as np

from mfstein.errors import ParameterError
from mfstein.io import atomic_write
from sim import engine
from sim.rng import seed_states

CHECKPOINT_VERSION = 2


@dataclass(frozen=True)
class Plan:
    """How the events of one replication are split: warm-up, then equal batches."""

    steps: int
    batches: int
    warmup: int
    batch_len: int

    @classmethod
    def make(cls, steps: int, batches: int, warmup_fraction: float) -> Plan:
        """``warmup = steps - batches * batch_len`` with ``batch_len`` as large as allowed."""
        batch_len = int((steps * (1.0 - warmup_fraction)) // batches)
        if batch_len < 1:
            raise ParameterError(
                f"steps must be at least {int(np.ceil(batches / (1 - warmup_fraction)))} "
                f"to fill {batches} batches, got {steps}."
            )
        return cls(steps, batches, steps - batches * batch_len, batch_len)


@dataclass
class Replication:
    """One replication's state and the sums of its completed batches."""

    state: dict
    warm: bool = False
    batches: list[dict] = field(default_factory=list)


@dataclass
class RunOutput:
    """What :func:`run` returns: every replication's batches, and how the run went."""

    reps: list[Replication]
    plan: Plan
    complete: bool
    interrupted: bool
    wall_seconds: float


def _config(spec: engine.Spec, plan: Plan, reps: int, seed: int) -> dict:
    cfg = asdict(spec)
    cfg["s_star"] = list(spec.s_star)
    cfg.update(asdict(plan))
    cfg.update(reps=reps, seed=seed, version=CHECKPOINT_VERSION)
    return cfg


def _write_checkpoint(path: Path, config: dict, reps: list[Replication]) -> None:
    payload = {
        "config": config,
        "reps": [
            {
                "warm": r.warm,
                "state": engine.state_to_json(r.state),
                "batches": [engine.sums_to_json(s) for s in r.batches],
            }
            for r in reps
        ],
    }
    atomic_write(path, json.dumps(payload))


def _read_checkpoint(path: Path, config: dict) -> list[Replication] | None:
    if not path.exists():
        return None
    try:
        payload = json.loads(path.read_text())
    except (OSError, ValueError) as exc:
        raise ParameterError(f"checkpoint {path} is not a readable mfstein checkpoint.") from exc
    if payload.get("config") != json.loads(json.dumps(config)):
        raise ParameterError(
            f"checkpoint {path} belongs to a different run; use the same parameters or a new file."
        )
    return [
        Replication(
            state=engine.state_from_json(r["state"]),
            warm=r["warm"],
            batches=[engine.sums_from_json(s) for s in r["batches"]],
        )
        for r in payload["reps"]
    ]


class _Inline:
    """A serial stand-in for an executor (``workers=1``): runs each unit on submit."""

    def submit(self, fn, *args):
        from concurrent.futures import Future

        fut: Future = Future()
        try:
            fut.set_result(fn(*args))
        except BaseException as exc:  # delivered through the future, like a pool would
            fut.set_exception(exc)
        return fut

    def shutdown(self, **_kw) -> None:
        return None


def _ignore_sigint() -> None:
    """Worker initialiser: Ctrl-C is handled by the parent, which keeps what is done."""
    import signal

    signal.signal(signal.SIGINT, signal.SIG_IGN)


def _executor(workers: int, scheduler: str | None, reps: int):
    """Return ``(submit, wait_first, shutdown)`` for the chosen back end."""
    if scheduler:
        try:
            from dask.distributed import Client, as_completed
        except ImportError as exc:  # pragma: no cover - optional dependency
            raise ParameterError(
                "scheduler needs dask.distributed; install mfstein[dist]."
            ) from exc
        try:
            client = Client(scheduler, timeout="10s", set_as_default=False)
        except (OSError, TimeoutError) as exc:
            raise ParameterError(
                f"scheduler must be the address of a running Dask scheduler, "
                f"could not connect to {scheduler!r}."
            ) from exc
        finished = as_completed(loop=client.loop)

        def submit(fn, *args):
            fut = client.submit(fn, *args, pure=False)
            finished.add(fut)
            return fut

        def wait_first(futs):
            return {next(finished)}

        def shutdown():
            client.close()

        return submit, wait_first, shutdown
    from concurrent.futures import FIRST_COMPLETED, ProcessPoolExecutor
    from concurrent.futures import wait as cf_wait

    if workers == 1 or reps == 1:
        pool = _Inline()
    else:
        pool = ProcessPoolExecutor(max_workers=workers, initializer=_ignore_sigint)

    def wait_first(futs):
        return cf_wait(list(futs), return_when=FIRST_COMPLETED).done

    def shutdown():
        pool.shutdown(wait=False, cancel_futures=True)

    return pool.submit, wait_first, shutdown


def run(
    spec: engine.Spec,
    plan: Plan,
    *,
    reps: int,
    seed: int,
    workers: int,
    scheduler: str | None = None,
    checkpoint: str | os.PathLike | None = None,
    progress: bool = False,
    max_units: int | None = None,
    advance=None,
    fresh_state=None,
) -> RunOutput:
    """Run (or resume) ``reps`` replications of ``spec`` according to ``plan``.

    Parameters
    ----------
    max_units:
        Stop after this many units of work (warm-ups and batches) in this call,
        keeping the checkpoint; ``None`` runs to completion.  A later call with
        the same checkpoint finishes the run with identical numbers.
    advance, fresh_state:
        The simulator's unit of work ``advance(spec, state, steps) -> (state, sums)``
        and initial state ``fresh_state(spec, rng) -> state`` (picklable
        module-level functions; default :func:`sim.engine.advance` and
        :func:`sim.engine.fresh_state`, the supermarket engines).

    Notes
    -----
    Ctrl-C stops the run after cancelling the units in flight; every
    completed batch is kept (and saved when ``checkpoint`` is given), and the
    returned :class:`RunOutput` has ``interrupted=True``.
    """
    import time

    from tqdm import tqdm

    config = _config(spec, plan, reps, seed)
    path = Path(checkpoint) if checkpoint is not None else None
    state = _read_checkpoint(path, config) if path is not None else None
    advance = engine.advance if advance is None else advance
    fresh_state = engine.fresh_state if fresh_state is None else fresh_state
    if state is None:
        state = [Replication(fresh_state(spec, rng)) for rng in seed_states(seed, reps)]

    def pending(r: Replication) -> int | None:
        if not r.warm:
            return plan.warmup
        return plan.batch_len if len(r.batches) < plan.batches else None

    total_units = reps * (plan.batches + 1)
    done_units = sum(int(r.warm) + len(r.batches) for r in state)
    t0 = time.perf_counter()
    bar = tqdm(
        total=total_units,
        initial=done_units,
        unit="batch",
        desc=f"simulate N={spec.N}",
        disable=not progress,
        leave=False,
    )
    submit, wait_first, shutdown = _executor(workers, scheduler, reps)
    running: dict = {}
    launched = 0
    interrupted = False

    def launch(i: int) -> None:
        nonlocal launched
        steps = pending(state[i])
        if steps is None or (max_units is not None and launched >= max_units):
            return
        launched += 1
        running[submit(advance, spec, state[i].state, steps)] = i

    def record(fut) -> None:
        i = running.pop(fut)
        new_state, sums = fut.result()
        rep = state[i]
        if rep.warm:
            rep.batches.append(sums)
        else:
            rep.warm = True
        rep.state = new_state
        if path is not None:
            _write_checkpoint(path, config, state)
        bar.update(1)

    try:
        for i in range(reps):
            launch(i)
        while running and not interrupted:
            done = wait_first(running)
            for fut in sorted(done, key=lambda f: running[f]):
                i = running[fut]
                try:
                    record(fut)
                except KeyboardInterrupt:
                    interrupted = True
                    continue
                if not interrupted:
                    launch(i)
    except KeyboardInterrupt:
        interrupted = True
    finally:
        if interrupted:
            # keep every unit that finished before the interruption
            for fut in [f for f in running if f.done()]:
                try:
                    record(fut)
                except BaseException:  # the interrupted unit itself: nothing to keep
                    running.pop(fut, None)
        shutdown()
        bar.close()
    complete = all(pending(r) is None for r in state)
    return RunOutput(state, plan, complete, interrupted, time.perf_counter() - t0)
