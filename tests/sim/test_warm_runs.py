"""A warm ``sim.simulate`` of a fast-path model finds its prepared simulator in one
lookup (:mod:`sim.warm_runs`, issue 31): nothing is prepared again, and the numbers are
those of a call that prepared everything afresh."""

from __future__ import annotations

import json

import pytest
import sympy as sp

from derive import Model, Transition
from derive.models import load_model
from numeric.prepared.cache import COUNTS, forget_all
from sim import simulate, warm_runs

PARAMS = {"lam": "0.9"}
RUN = {"N": 40, "steps": 1_000, "reps": 1, "seed": 5, "workers": 1}
KINDS = ("prepared:simulation", "prepared:centre", "prepared:problem", "prepared:params")


def _numbers(r):
    """The result as printed (:meth:`sim.base.SimulationResult.to_dict`) without its
    timing fields, as JSON text (every float by its shortest exact repr)."""
    out = {k: v for k, v in r.to_dict().items() if "second" not in k}
    return json.dumps(out, sort_keys=True, default=repr)


def test_a_warm_call_prepares_nothing_and_gives_the_fresh_numbers():
    model = load_model("supermarket", b=3)
    forget_all()
    fresh = simulate(model, PARAMS, **RUN)
    key = warm_runs.run_key(model, PARAMS, RUN["N"], None, None, "auto", "pod")
    kept = warm_runs.kept(key)
    assert kept is not None and kept.model is model
    before = {k: COUNTS[k] for k in KINDS}
    again = simulate(model, PARAMS, **RUN)
    assert {k: COUNTS[k] for k in KINDS} == before  # one lookup, nothing prepared
    assert warm_runs.kept(key) is kept
    assert _numbers(again) == _numbers(fresh)
    other = simulate(model, PARAMS, **{**RUN, "seed": 6})  # other options: same simulator
    assert {k: COUNTS[k] for k in KINDS} == before
    assert other.mean_jobs != fresh.mean_jobs


def test_other_inputs_have_other_keys_and_a_model_without_fast_path_none():
    model = load_model("supermarket", b=3)
    key = warm_runs.run_key(model, PARAMS, 40, None, None, "auto", "pod")
    assert key != warm_runs.run_key(model, {"lam": "0.8"}, 40, None, None, "auto", "pod")
    assert key != warm_runs.run_key(model, {"lam": 0.9}, 40, None, None, "auto", "pod")
    assert key != warm_runs.run_key(model, PARAMS, 41, None, None, "auto", "pod")
    assert key != warm_runs.run_key(model, PARAMS, 40, None, None, "per-server", "jsq")
    assert warm_runs.run_key(model, PARAMS, 40, None, None, "auto", "pod", ["s1"]) is None
    s, i = sp.symbols("s i")
    beta, gamma = sp.symbols("beta gamma")
    plain = Model(
        "plain_sis_warm", (s, i), (beta, gamma),
        [Transition((-1, 1), beta * i * s), Transition((1, -1), gamma * i)],
    )  # fmt: skip
    assert (
        warm_runs.run_key(plain, {"beta": "2", "gamma": "1"}, 40, None, None, "auto", "pod") is None
    )


def test_a_kept_centre_still_warns_its_note_on_every_call():
    """b = 5 is too large for the without-replacement mean field at N = 6: the centre
    falls back (a note), and a warm call, which solves nothing, warns it again at the
    caller's line."""
    model = load_model("supermarket", b=5, replacement=False)
    run = {**RUN, "N": 6}
    with pytest.warns(UserWarning, match="too large for the without-replacement") as got:
        first = simulate(model, PARAMS, **run)
        before = {k: COUNTS[k] for k in KINDS}
        again = simulate(model, PARAMS, **run)
    assert {k: COUNTS[k] for k in KINDS} == before
    assert [w.filename for w in got if "without-replacement" in str(w.message)] == [__file__] * 2
    assert _numbers(again) == _numbers(first)
