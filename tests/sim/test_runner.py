"""Reproducibility across workers and back ends, checkpoints and resumption."""

from __future__ import annotations

import json

import numpy as np
import pytest

from mfstein.ground.errors import ParameterError
from sim import simulate_supermarket

ARGS = dict(N=30, lam="0.9", b=6, d=2, steps=400_000, reps=3)


#: The estimates of a simulation result (sim.base.SimulationResult).
ESTIMATES = ("n_mse", "mean", "n_bias", "n_cov", "marginal_pmf", "queue_length_pmf",
             "mean_jobs", "blocking")  # fmt: skip


def _numbers(r) -> dict:
    """The run's numbers for bit-for-bit comparisons: its JSON without timings, and the
    estimates' values (the JSON prints only the digits each interval allows)."""
    out = r.to_dict()
    for k in ("events_per_second", "wall_seconds"):
        out.pop(k)
    for k in ESTIMATES:
        e = getattr(r, k)
        if e is not None:
            out[k] = [np.asarray(e.mean).tobytes(), np.asarray(e.ci95).tobytes()]  # NaN too
    return out


def test_same_seed_same_numbers_for_one_and_two_workers():
    one = simulate_supermarket(**ARGS, seed=9, workers=1)
    two = simulate_supermarket(**ARGS, seed=9, workers=2)
    assert _numbers(one) == _numbers(two)
    other = simulate_supermarket(**ARGS, seed=10, workers=1)
    assert other.n_mse.mean != one.n_mse.mean
    assert not np.array_equal(other.mean.mean, one.mean.mean)


def test_per_server_reproducible():
    a = simulate_supermarket(**{**ARGS, "steps": 100_000}, policy="pod", seed=1, workers=1)
    b = simulate_supermarket(**{**ARGS, "steps": 100_000}, policy="pod", seed=1, workers=2)
    assert _numbers(a) == _numbers(b)


def test_checkpoint_resume_equals_uninterrupted(tmp_path):
    full = simulate_supermarket(**ARGS, seed=4, workers=1, batches=5)
    ck = tmp_path / "run.json"
    part = simulate_supermarket(**ARGS, seed=4, workers=1, batches=5, checkpoint=ck, max_units=7)
    assert not part.complete and ck.exists()
    saved = json.loads(ck.read_text())
    assert sum(len(r["batches"]) for r in saved["reps"]) == 7 - 3  # 3 warm-ups done
    resumed = simulate_supermarket(**ARGS, seed=4, workers=2, batches=5, checkpoint=ck)
    assert resumed.complete
    assert _numbers(resumed) == _numbers(full)
    assert not list(tmp_path.glob("*.tmp")), "temporary files must not be left behind"
    with pytest.raises(ParameterError, match="different run"):
        simulate_supermarket(**{**ARGS, "b": 5}, seed=4, workers=1, batches=5, checkpoint=ck)


def _as_written_before_the_rename(path, new: str = "engine", old: str = "simulator") -> None:
    """Rewrite the checkpoint at ``path`` as mfstein wrote it before a configuration key
    ``old`` was renamed ``new`` (``Spec.simulator`` -> ``engine``, ``GenericSpec.b`` ->
    ``n``): the key ``old``, and the checksum of that content (SHA-256 of the canonical
    JSON of config and replications)."""
    import hashlib

    saved = json.loads(path.read_text())
    cfg = saved["config"]
    cfg = {(old if k == new else k): v for k, v in cfg.items()}
    text = json.dumps({"config": cfg, "reps": saved["reps"]}, sort_keys=True,
                      separators=(",", ":"))  # fmt: skip
    saved.update(config=cfg, checksum=hashlib.sha256(text.encode()).hexdigest())
    path.write_text(json.dumps(saved))


def test_a_checkpoint_with_the_old_simulator_key_loads(tmp_path):
    """A checkpoint written before ``Spec.simulator`` became ``Spec.engine`` resumes to
    the uninterrupted numbers, and is written back with the new key; its old key is
    still matched by value (another engine's checkpoint is refused)."""
    args = {**ARGS, "seed": 4, "workers": 1, "batches": 5}
    full = simulate_supermarket(**args)
    ck = tmp_path / "old.json"
    simulate_supermarket(**args, checkpoint=ck, max_units=7)
    assert json.loads(ck.read_text())["config"]["engine"] == "aggregated"
    _as_written_before_the_rename(ck)
    old = json.loads(ck.read_text())["config"]
    assert old["simulator"] == "aggregated" and "engine" not in old
    with pytest.raises(ParameterError, match="different run"):
        simulate_supermarket(**args, policy="pod", engine="per-server", checkpoint=ck)
    resumed = simulate_supermarket(**args, checkpoint=ck)
    assert resumed.complete and _numbers(resumed) == _numbers(full)
    new = json.loads(ck.read_text())["config"]
    assert new["engine"] == "aggregated" and "simulator" not in new


def test_a_generic_checkpoint_with_the_old_dimension_key_loads(tmp_path):
    """A checkpoint of the generic engine written before ``GenericSpec.b`` became
    ``GenericSpec.n`` resumes to the uninterrupted numbers, bit for bit, and is written
    back with the new key."""
    from derive.models import load_model
    from sim import simulate

    sir, params = load_model("sir"), {"beta": 3, "gamma": 1, "rho": "0.5", "a": "0.1"}
    kw = dict(N=30, steps=4 * 10**4, reps=2, seed=7, batches=4, workers=1)
    whole = simulate(sir, params, **kw)
    ck = tmp_path / "old.json"
    part = simulate(sir, params, **kw, checkpoint=ck, max_units=3)
    assert not part.complete and json.loads(ck.read_text())["config"]["n"] == 3
    _as_written_before_the_rename(ck, new="n", old="b")
    old = json.loads(ck.read_text())["config"]
    assert old["b"] == 3 and "n" not in old
    rest = simulate(sir, params, **kw, checkpoint=ck)
    assert rest.complete and rest.engine == "generic"
    assert float(rest.n_mse.mean) == float(whole.n_mse.mean)
    np.testing.assert_array_equal(rest.mean.mean, whole.mean.mean)
    new = json.loads(ck.read_text())["config"]
    assert new["n"] == 3 and "b" not in new


def test_per_server_checkpoint_resume(tmp_path):
    args = {**ARGS, "steps": 100_000, "policy": "jsq", "seed": 2, "workers": 1, "batches": 4}
    full = simulate_supermarket(**args)
    ck = tmp_path / "ps.json"
    simulate_supermarket(**args, checkpoint=ck, max_units=5)
    assert _numbers(simulate_supermarket(**args, checkpoint=ck)) == _numbers(full)


def test_dask_local_cluster_equals_local():
    distributed = pytest.importorskip("dask.distributed")
    local = simulate_supermarket(**ARGS, seed=6, workers=1)
    with distributed.LocalCluster(
        n_workers=1,
        processes=False,
        protocol="tcp://",
        host="127.0.0.1",
        dashboard_address=None,
    ) as cluster:
        remote = simulate_supermarket(**ARGS, seed=6, scheduler=cluster.scheduler_address)
    assert _numbers(remote) == _numbers(local)


def test_blocking_warning_for_small_buffer():
    r = simulate_supermarket(5, "0.95", 2, steps=200_000, reps=2, seed=0, workers=1)
    assert r.blocking.mean > 1e-3
    assert any("buffer b = 2 is too small" in w for w in r.warnings)


def test_ctrl_c_keeps_completed_batches(tmp_path, monkeypatch):
    """A KeyboardInterrupt in the middle of a run (here raised when the 6th unit starts)
    returns the completed batches, leaves every completed unit in the checkpoint, and
    resuming gives the uninterrupted numbers."""
    from mfstein.families.supermarket import engine

    full = simulate_supermarket(**ARGS, seed=8, workers=1, batches=4)
    calls = {"n": 0, "completed": 0}
    real = engine.advance

    def interrupted_advance(*args):
        calls["n"] += 1
        if calls["n"] == 6:
            raise KeyboardInterrupt
        out = real(*args)
        calls["completed"] += 1
        return out

    monkeypatch.setattr(engine, "advance", interrupted_advance)
    ck = tmp_path / "ctrlc.json"
    part = simulate_supermarket(**ARGS, seed=8, workers=1, batches=4, checkpoint=ck)
    assert part.interrupted and not part.complete
    assert any("interrupted" in w for w in part.warnings)
    monkeypatch.setattr(engine, "advance", real)
    saved = json.loads(ck.read_text())
    kept = sum(r["warm"] + len(r["batches"]) for r in saved["reps"])
    assert kept == calls["completed"] >= 5  # every completed unit is kept
    assert _numbers(
        simulate_supermarket(**ARGS, seed=8, workers=1, batches=4, checkpoint=ck)
    ) == _numbers(full)


@pytest.mark.parametrize("run_was_interrupted", [False, True])
def test_a_press_while_a_finished_run_is_pooled_ends_the_command(run_was_interrupted) -> None:
    """A Ctrl-C during the pooling of a run that ended by itself is honoured
    (``KeyboardInterrupt``); after a run it interrupted, it is the second press and
    the estimates kept stand."""
    import os
    import signal
    import time

    from sim import runner

    out = runner.RunOutput([], runner.Plan(10, 2, 0, 5), True, run_was_interrupted, 0.0)
    with runner.Interrupts() as sig:
        os.kill(os.getpid(), signal.SIGINT)
        deadline = time.monotonic() + 5
        while not sig.stop and time.monotonic() < deadline:  # the handler runs between bytecodes
            time.sleep(0.01)
        assert sig.stop
        if run_was_interrupted:
            runner.honour_late_interrupt(sig, out)
        else:
            with pytest.raises(KeyboardInterrupt):
                runner.honour_late_interrupt(sig, out)


def test_a_press_during_the_last_unit_is_a_late_press(monkeypatch) -> None:
    """Ctrl-C while the run's last unit is running cuts nothing short: the run is
    complete, not interrupted (else ``simulate`` reported every batch and exited 130
    without a line), and the simulator honours the press as a late one
    (``KeyboardInterrupt``: one line, status 130)."""
    import os
    import signal

    from mfstein.families.supermarket import engine
    from sim import runner

    real = engine.advance
    units = 2 * (4 + 1)  # reps x (warm-up + batches)
    calls = {"n": 0}
    seen: list[runner.RunOutput] = []

    def press_in_the_last_unit(*args):
        calls["n"] += 1
        if calls["n"] == units:
            os.kill(os.getpid(), signal.SIGINT)  # the handler (a flag) runs in this thread
        return real(*args)

    def keep(*args, **kwargs):
        seen.append(real_run(*args, **kwargs))
        return seen[-1]

    real_run = runner.run
    monkeypatch.setattr(engine, "advance", press_in_the_last_unit)
    monkeypatch.setattr(runner, "run", keep)
    with pytest.raises(KeyboardInterrupt):
        simulate_supermarket(**{**ARGS, "reps": 2}, seed=8, workers=1, batches=4)
    assert calls["n"] == units
    assert seen[-1].complete and not seen[-1].interrupted
