"""The JSQ simulator against the exact QBD, and its reproducibility."""

from __future__ import annotations

import numpy as np
import pytest

from numeric.tails import solve_jsq
from sim.tails import simulate_jsq_tails


@pytest.mark.parametrize(("n", "eps"), [(2, 0.3), (3, 0.2)])
def test_simulator_within_ci_of_exact(n, eps):
    x, th = [0.5, 1.0, 2.0], [0.5]
    r = simulate_jsq_tails(n, eps, x, thetas=th, events=4 * 10**5, reps=8, seed=7)
    ex = solve_jsq(n, eps, thetas=th)
    # a fixed seed makes this deterministic; 3 x CI95 ~ a 1e-3 two-sided level per number
    exact_tail = ex.law.tail(np.array(x), eps)
    assert np.all(np.abs(r.tail.mean - exact_tail) <= 3 * r.tail.ci95)
    assert abs(r.scaled_mean.mean - ex.law.scaled_mean(eps)) <= 3 * r.scaled_mean.ci95
    assert abs(r.perp_second_moment.mean - ex.perp_second_moment()) <= 3 * r.perp_second_moment.ci95
    assert np.all(np.abs(r.perp_mgf.mean - ex.perp_mgf(th)) <= 3 * r.perp_mgf.ci95)
    assert np.all(r.tail.ci95 < 0.02)  # the comparison has teeth


def test_same_seed_same_numbers_and_large_n():
    a = simulate_jsq_tails(1000, 1e-3, [1.0], events=3 * 10**5, reps=2, seed=3)
    b = simulate_jsq_tails(1000, 1e-3, [1.0], events=3 * 10**5, reps=2, seed=3)
    c = simulate_jsq_tails(1000, 1e-3, [1.0], events=3 * 10**5, reps=2, seed=4)
    assert _numbers(a) == _numbers(b)  # bit for bit (the values, not their print)
    assert _numbers(a)["tail"] != _numbers(c)["tail"]
    # alpha = 1 (eps n = 1): every server is busy, eps qbar >= eps n rho ~ 1 - eps
    assert float(a.scaled_mean.mean) > 0.99


def test_checkpoint_resumes(tmp_path):
    path = tmp_path / "ck.json"
    a = simulate_jsq_tails(4, 0.2, [1.0], events=10**5, reps=3, seed=5, checkpoint=path)
    assert path.exists()
    b = simulate_jsq_tails(4, 0.2, [1.0], events=10**5, reps=3, seed=5, checkpoint=path)
    assert _numbers(a)["tail"] == _numbers(b)["tail"]


#: The estimates of a tail simulation (sim.tails.JSQTailSimulation).
ESTIMATES = ("tail", "scaled_mean", "perp_second_moment", "perp_mgf", "sup_distance")


def _numbers(r) -> dict:
    """Every estimate of a run (not its timings), for bit-for-bit comparisons: the
    values held, not their print (which keeps only the digits each interval allows)."""
    out = r.to_dict()
    for k in ("wall_seconds", "events_per_second", "warnings", "complete"):
        out.pop(k)
    for k in ESTIMATES:
        e = getattr(r, k)
        out[k] = [np.asarray(e.mean).tobytes(), np.asarray(e.ci95).tobytes()]  # NaN too
    out["survival"] = r.survival.tolist()
    return out


def test_interrupted_run_resumes_bit_for_bit(tmp_path):
    import json

    from mfstein.ground.errors import ParameterError

    args = dict(thetas=[0.2], events=2 * 10**4, reps=3, seed=9)
    whole = simulate_jsq_tails(5, 0.2, [0.5, 1.0], **args)
    path = tmp_path / "ck.json"
    # 3 warm-ups and 1 replication: too few for a confidence interval, the checkpoint stays
    with pytest.raises(ParameterError, match="at least 2 replications"):
        simulate_jsq_tails(5, 0.2, [0.5, 1.0], checkpoint=path, max_units=4, **args)
    saved = json.loads(path.read_text())
    assert saved["config"]["kind"] == "jsq-tails-v2" and len(saved["checksum"]) == 64
    assert sum(len(r["batches"]) for r in saved["reps"]) == 1
    part = simulate_jsq_tails(5, 0.2, [0.5, 1.0], checkpoint=path, max_units=1, **args)
    assert not part.complete and "2 of 3 replications" in part.warnings[0]
    resumed = simulate_jsq_tails(5, 0.2, [0.5, 1.0], checkpoint=path, **args)
    assert resumed.complete and _numbers(resumed) == _numbers(whole)
    # the checkpoint is checksummed: an edited number is refused, as is another run's file
    saved = json.loads(path.read_text())
    saved["reps"][0]["batches"][0]["acc"][0] *= 2
    path.write_text(json.dumps(saved))
    with pytest.raises(ParameterError, match="checksum"):
        simulate_jsq_tails(5, 0.2, [0.5, 1.0], checkpoint=path, **args)
    with pytest.raises(ParameterError, match="different run"):
        simulate_jsq_tails(5, 0.25, [0.5, 1.0], checkpoint=path, **args)


def test_a_checkpoint_of_the_former_format_is_refused(tmp_path):
    import json

    from mfstein.ground.errors import ParameterError

    path = tmp_path / "old.json"  # what sim.tails wrote before it ran on sim.runner
    config = dict(n=4, eps=0.2, x=[1.0], thetas=[], events=10**5, reps=3, seed=5, version=1)
    path.write_text(json.dumps({"config": config, "reps": {"0": {"acc": [1, 2, 3, 4]}}}))
    with pytest.raises(ParameterError, match="format 1, this mfstein writes 3"):
        simulate_jsq_tails(4, 0.2, [1.0], events=10**5, reps=3, seed=5, checkpoint=path)
    assert json.loads(path.read_text())["config"] == config  # left as it was
