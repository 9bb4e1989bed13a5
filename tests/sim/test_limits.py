"""Every simulator checks its sizes against mfstein.ground.limits before any work (issue 15).

Each bad size must be refused in one sentence naming the parameter, and fast:
the checks run before any symbolic, compiled or allocating work, so a test
that took longer than a few seconds would show that work ran first.
"""

from __future__ import annotations

import time

import pytest

from derive.models import load_model
from mfstein.families.supermarket.simulate_short_form import simulate_supermarket
from mfstein.ground.errors import ParameterError
from mfstein.ground.limits import SIM_MAX_BATCHES, SIM_MAX_N, SIM_MAX_REPS, SIM_MAX_STEPS
from sim.api import simulate
from sim.generic import GenericSimulator
from sim.pi import simulate_pi
from sim.tails import simulate_jsq_tails

SIR = {"beta": 3, "gamma": 1, "rho": "0.5", "a": "0.1"}
TOO_MANY = {
    "steps": SIM_MAX_STEPS + 1,
    "reps": SIM_MAX_REPS + 1,
    "batches": SIM_MAX_BATCHES + 1,
    "workers": 10**6,
    "seed": -1,
    "warmup_fraction": 1.0,
}


def _refused(call, match: str) -> None:
    t0 = time.perf_counter()
    with pytest.raises(ParameterError, match=match) as info:
        call()
    text = str(info.value)
    assert "\n" not in text and text.endswith(".")
    assert time.perf_counter() - t0 < 5.0


@pytest.fixture(scope="module")
def sir():
    return load_model("sir")


def test_generic_simulator_refuses_a_huge_population(sir):
    """The issue's example: N = 2^40 raised a memory error or ran; now one sentence."""
    _refused(
        lambda: simulate(sir, SIR, N=2**40), f"N must be an integer >= 1 and <= {SIM_MAX_N}"
    )
    _refused(lambda: GenericSimulator(sir, 2**40, SIR), "N must be an integer")
    sm = load_model("supermarket", b=3)
    _refused(lambda: simulate(sm, {"lam": "0.5"}, N=2**40), "N must be an integer")


@pytest.mark.parametrize("name", sorted(TOO_MANY))
def test_run_options_share_one_check(sir, name):
    """The same option, the same limit and sentence in the supermarket simulator, the
    generic one, the pi simulator and the JSQ tail simulator."""
    value = TOO_MANY[name]
    messages = []
    for call in (
        lambda: simulate_supermarket(10, "0.5", 3, **{name: value}),
        lambda: simulate(sir, SIR, N=10, **{name: value}),
        lambda: simulate_pi(
            "0:.5,1:.5", "1:1", n=2, **{"slots" if name == "steps" else name: value}
        ),
    ):
        with pytest.raises(ParameterError) as info:
            call()
        messages.append(str(info.value).replace("slots", "steps"))
    assert len(set(messages)) == 1 and name in messages[0]
    _refused(lambda: simulate(sir, SIR, N=10, **{name: value}), name)
    if name != "batches":  # the tail simulator has no batches
        tail = {"events" if name == "steps" else name: value}
        _refused(lambda: simulate_jsq_tails(2, 0.3, **tail), "events" if name == "steps" else name)


def test_pi_and_tail_simulators_refuse_huge_systems():
    _refused(lambda: simulate_pi("0:.5,1:.5", "1:1", n=10**7), "n must be an integer")
    _refused(
        lambda: simulate_jsq_tails(2**40, 0.3), f"n must be an integer >= 1 and <= {SIM_MAX_N}"
    )
    _refused(lambda: simulate_jsq_tails(2**30, 0.3, reps=8, workers=8), "memory")
    _refused(lambda: simulate_jsq_tails(2, 0.3, reps=1), "reps must be an integer >= 2")
