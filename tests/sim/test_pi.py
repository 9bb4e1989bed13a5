"""Simulator invariants: the path bound, PI-Split's dispatch, tokens, stability, seeds."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import numba
import numpy as np
import pytest
from deadlines import deadline

from derive.models.persistent_idle import parse_pmf
from mfstein.ground.errors import ParameterError
from sim.pi import simulate_pi

ARR = "0:.4,2:.2,4:.3,6:.1"
SVC = ["1:1", "1:.5,2:.3,3:.2"]


def _numbers(r) -> dict:
    out = r.to_dict()
    for k in ("server_slots_per_second", "wall_seconds"):
        out.pop(k)
    return out


@pytest.mark.parametrize(("services", "n"), [(SVC, None), ("1:.6,2:.4", 5), ("1:1", 40)])
def test_pi_path_bound_never_violated(services, n) -> None:
    """tau_0 <= max(1, max_{i != LI(1)} Q_i(0)) from every slot of every path (eq. (37)
    as the proof establishes it); as printed, (37) holds whenever no server other than
    LI(0) is idle -- the case the proof treats."""
    arrivals = ARR if n is None else {0: 0.5, 3: 0.3, 8: 0.2}
    r = simulate_pi(arrivals, services, n=n, slots=400_000, reps=2, seed=3, workers=1)
    assert r.model.load < 1
    assert r.bound_checks >= 2 * 400_000 - 100  # every origin but the last few
    assert r.bound_violations == 0
    assert r.eq37_violations_proof_case == 0
    assert r.unchecked == 0


def test_path_bound_counter_can_fire() -> None:
    """The same check is violated under JIQ (jobs go to busy non-LI servers), and eq. (37)
    as printed fails from origins where a server other than LI(0) is idle (e.g. all
    other servers idle: tau_0 = 1 > 0)."""
    r = simulate_pi(ARR, SVC, policy="jiq", slots=200_000, reps=2, seed=3, workers=1)
    assert r.bound_violations > 0
    p = simulate_pi(ARR, SVC, policy="pi", slots=200_000, reps=2, seed=3, workers=1)
    assert p.eq37_violations > 0 and p.eq37_violations_proof_case == 0


def test_pi_split_never_sends_to_busy_while_idle() -> None:
    for policy in ("pi", "pi-split", "jiq", "jsq"):
        r = simulate_pi(ARR, SVC, n=None, policy=policy, slots=200_000, reps=2, workers=1)
        assert r.busy_while_idle == 0, policy
    r = simulate_pi({0: 0.5, 5: 0.5}, "1:.5,2:.5", n=6, policy="pi-split", slots=200_000, workers=1)
    assert r.busy_while_idle == 0
    # the counter is live: Random does send to busy servers while others idle
    r = simulate_pi(ARR, "1:.5,2:.5", n=3, policy="random", slots=200_000, reps=2, workers=1)
    assert r.busy_while_idle > 0


def test_messages_per_slot_at_most_batch_probability() -> None:
    """Under PI a token comes back only with a non-empty batch, so along every path the
    tokens sent are at most the non-empty batches plus the n tokens outstanding at the
    start of a batch; in steady state messages/slot <= P(a > 0)."""
    p_batch = 1 - parse_pmf(ARR, "arrivals").prob(0)
    for n in (2, 10):
        r = simulate_pi(ARR, "1:.5,2:.3,3:.2", n=n, slots=300_000, reps=2, seed=1, workers=1)
        units = r.reps * r.batches
        slack = n * units / r.measured_slots
        assert 0 < float(r.messages_per_slot.mean) <= float(r.batch_fraction.mean) + slack
        assert float(r.messages_per_slot.mean) <= p_batch + 3 * float(r.messages_per_slot.ci95)
    # PI-Split may return several tokens for one batch
    s = simulate_pi(ARR, "1:.5,2:.3,3:.2", n=10, policy="pi-split", slots=300_000, workers=1)
    assert float(s.messages_per_batch.mean) > 1.0


@numba.njit
def lowest_idle_rule(q, a, b, out):
    """All jobs to the idle server of lowest index: satisfies (7) and (8)."""
    for i in range(q.shape[0]):
        if q[i] == 0:
            out[i] = a
            return


@numba.njit
def busy_rule(q, a, b, out):
    """Half the batch to server 1 whatever its queue: violates (8) (and (7) for odd a)."""
    out[0] = a // 2
    out[q.shape[0] - 1] += a - a // 2


def test_user_split_rule_checked() -> None:
    r = simulate_pi(
        ARR, SVC, policy="pi-split", split_rule=lowest_idle_rule, slots=200_000, workers=1
    )
    assert r.busy_while_idle == 0 and r.split_rule.endswith("lowest_idle_rule")
    with pytest.raises(ParameterError, match=r"eq\. \(8\)"):
        simulate_pi(ARR, SVC, policy="pi-split", split_rule=busy_rule, slots=1000, workers=1)
    with pytest.raises(ParameterError, match="pi-split only"):
        simulate_pi(ARR, SVC, policy="pi", split_rule=lowest_idle_rule, slots=1000)


@numba.njit
def deep_queue_rule(q, a, b, out):
    """Lowest idle server, but raises once some queue holds 4 jobs: a state
    :func:`sim.pi.probe_rule` (queues 0..3) never shows, the simulation soon does."""
    if q.max() >= 4:
        raise ValueError("deep queue")
    lowest_idle_rule(q, a, b, out)


def test_user_split_rule_that_raises_is_reported() -> None:
    """The kernel calls the rule through a C pointer, which cannot raise: the exception
    is caught there and reported with the state that raised it."""
    with pytest.raises(ParameterError, match=r"for queues \[.*\] and batch \d+ it raised"):
        simulate_pi(
            ARR, SVC, policy="pi-split", split_rule=deep_queue_rule, slots=100_000, workers=1
        )


SECOND_PROCESS = """
import json, os, sys
from mfstein.ground.jit import numba
from sim import pi_kernels as K
from sim.pi import simulate_pi

@numba.njit
def rule(q, a, b, out):  # the batch to a shortest queue: an idle server
    out[q.argmin()] = a

arr, svc = sys.argv[1], sys.argv[2:]
simulate_pi(arr, svc, slots=2000, seed=1, workers=1)
simulate_pi(arr, svc, policy="pi-split", split_rule=rule, slots=2000, seed=1, workers=1)
stats = K.run_slots.stats
print(json.dumps([sum(stats.cache_hits.values()), sum(stats.cache_misses.values())]))
"""


def _run_slots_files() -> set[str]:
    root = Path(os.environ["MFSTEIN_CACHE_DIR"])
    return {p.name for p in root.rglob("pi_kernels.run_slots-*")}


def test_a_second_process_loads_run_slots_from_the_cache() -> None:
    """Issues 34/35: the kernel took the split rule as a dispatcher argument, whose type
    names the function's memory address, so every process missed numba's cache (and
    added a ``.N.nbc`` file).  After a first process has run PI and a user rule, a
    second one loads the kernel for both and compiles nothing, adding no file."""

    def run() -> list[int]:
        out = subprocess.run(
            [sys.executable, "-c", SECOND_PROCESS, ARR, *SVC],
            capture_output=True,
            text=True,
            timeout=deadline(120),
        )
        assert out.returncode == 0, out.stderr[-800:]
        return json.loads(out.stdout.splitlines()[-1])

    run()  # compiles or loads: the cache may be cold
    files = _run_slots_files()
    hits, misses = run()
    assert (hits, misses) == (1, 0)  # one signature whatever the rule
    assert _run_slots_files() == files


def test_instability_shows_as_drift() -> None:
    """E[a] = 2.2 >= sum E[s_i] = 2: refused for stationary use, positive drift when asked."""
    with pytest.raises(ParameterError, match="load"):
        simulate_pi(ARR, "1:1", n=2, slots=10_000)
    r = simulate_pi(ARR, "1:1", n=2, slots=50_000, reps=2, allow_unstable=True, seed=1, workers=1)
    assert any("unstable" in w for w in r.warnings)
    # PI loses no capacity once every server is busy: drift -> E[a] - sum E[s_i] = 0.2
    assert float(r.drift.mean) - 3 * float(r.drift.ci95) > 0.1
    stable = simulate_pi(ARR, SVC, slots=200_000, reps=2, seed=1, workers=1)
    assert abs(float(stable.drift.mean)) <= 3 * float(stable.drift.ci95) + 1e-4


def test_same_seed_same_numbers_any_workers() -> None:
    args = dict(arrivals=ARR, services=SVC, slots=200_000, reps=3, batches=5)
    one = simulate_pi(**args, seed=7, workers=1)
    two = simulate_pi(**args, seed=7, workers=2)
    assert _numbers(one) == _numbers(two)
    other = simulate_pi(**args, seed=8, workers=1)
    assert not np.array_equal(other.mean_queue.mean, one.mean_queue.mean)


def test_checkpoint_resume_identical(tmp_path) -> None:
    args = dict(arrivals=ARR, services=SVC, policy="pi-split", slots=100_000, reps=3, batches=4)
    full = simulate_pi(**args, seed=4, workers=1)
    ck = tmp_path / "pi.json"
    part = simulate_pi(**args, seed=4, workers=1, checkpoint=ck, max_units=7)
    assert not part.complete and ck.exists()
    saved = json.loads(ck.read_text())
    assert sum(r["warm"] + len(r["batches"]) for r in saved["reps"]) == 7
    resumed = simulate_pi(**args, seed=4, workers=2, checkpoint=ck)
    assert resumed.complete
    assert _numbers(resumed) == _numbers(full)
    assert not list(tmp_path.glob("*.tmp"))
    with pytest.raises(ParameterError, match="different run"):
        simulate_pi(**{**args, "policy": "pi"}, seed=4, workers=1, checkpoint=ck)


def test_ctrl_c_keeps_completed_units(tmp_path, monkeypatch) -> None:
    from sim import pi

    args = dict(arrivals=ARR, services=SVC, slots=100_000, reps=2, batches=4, seed=6)
    full = simulate_pi(**args, workers=1)
    real = pi.advance
    calls = {"n": 0, "completed": 0}

    def interrupted(*a):
        calls["n"] += 1
        if calls["n"] == 5:
            raise KeyboardInterrupt
        out = real(*a)
        calls["completed"] += 1
        return out

    monkeypatch.setattr(pi, "advance", interrupted)
    ck = tmp_path / "ctrlc.json"
    part = simulate_pi(**args, workers=1, checkpoint=ck)
    assert part.interrupted and not part.complete
    monkeypatch.setattr(pi, "advance", real)
    saved = json.loads(ck.read_text())
    kept = sum(r["warm"] + len(r["batches"]) for r in saved["reps"])
    assert kept == calls["completed"] >= 4  # every completed unit is kept
    assert _numbers(simulate_pi(**args, workers=1, checkpoint=ck)) == _numbers(full)
