"""What each of ``engine="auto"``'s loops still costs before its first event
(:mod:`sim.loop_prices`): the interpreted loop's own compilation counts on the rent
side while it is not compiled (an installation's first run), and the price of buying
includes the generation of the modules the cache lacks."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest
import sympy as sp
from deadlines import deadline

from derive import Model, Transition
from sim import loop_prices

ROOT = Path(__file__).resolve().parents[2]


def _queue(name: str) -> Model:
    """A birth-death queue (one coordinate, two polynomial rates)."""
    n, lam = sp.symbols("n lam")
    return Model(name, (n,), (lam,), [Transition((1,), lam * (1 - n)), Transition((-1,), n)])


def _pick(model: Model, events: int):
    from sim.base import RunOptions
    from sim.interpreted import pick_loop

    return pick_loop(model, [], RunOptions(steps=events, reps=1).checked())


def test_the_rent_of_a_run_includes_the_interpreted_loops_compilation(tmp_path, monkeypatch):
    """With ``pending`` seconds of the interpreted loop's compilation to pay, a run rents
    only while its events' extra plus those seconds stay within the price; the limit
    kept for later runs (which find the loop compiled) is the price's alone."""
    from sim.base import RunOptions
    from sim.interpreted import _short_enough, extra_seconds, model_tables

    monkeypatch.setenv("MFSTEIN_CACHE_DIR", str(tmp_path))
    model = _queue("queue_prices_rent")
    per_event = extra_seconds(model_tables(model), 1)
    price, pending = 5000 * per_event, 1200 * per_event  # in events: 5000 and 1200

    def short(events: int, paid: int = 0, pend: float = pending):
        opts = RunOptions(steps=events, reps=1).checked()
        return _short_enough(model, [], opts, price * (1 + 1e-12), paid, pend)

    assert short(3800) == 5000 and short(3801) is None
    assert short(3800, paid=1) is None and short(3799, paid=1) == 5000
    assert short(5000, pend=0.0) == 5000 and short(5001, pend=0.0) is None
    assert short(1, pend=price * 1.01) is None  # the compilation alone costs more


def test_the_price_includes_the_modules_the_cache_lacks(tmp_path, monkeypatch):
    """A model whose kernel module is not in the cache costs its generation too, and its
    chain module's; each leaves the price once written (checked by its file), and the
    limit of a run placed without generating anything follows."""
    from sim.generic_kernels import MIN_COMPILE_SECONDS, chain_files, chain_module
    from sim.interpreted import InterpretedSimulator, extra_seconds, model_tables

    monkeypatch.setenv("MFSTEIN_CACHE_DIR", str(tmp_path))  # nothing generated here
    # whether the session compiled the interpreted loop and the helpers does not matter here
    monkeypatch.setattr(loop_prices, "INTERPRETED_SECONDS", 0.0)
    monkeypatch.setattr(loop_prices, "HELPERS_SECONDS", 0.0)
    model = _queue("queue_prices_generate")  # a model no other test loads
    nt = len(model.transitions)
    kernels = loop_prices.KERNELS_SECONDS + loop_prices.KERNELS_SECONDS_PER_TRANSITION * nt
    chain = loop_prices.CHAIN_SECONDS_PER_TRANSITION * nt
    per_event = extra_seconds(model_tables(model), 1)
    kernel_file, chain_file = chain_files(model)
    assert not kernel_file.exists() and not chain_file.exists()
    assert loop_prices.generate_seconds(model) == pytest.approx(kernels + chain, rel=1e-12)
    cls, limit = _pick(model, 1000)
    assert cls is InterpretedSimulator
    assert limit == int((MIN_COMPILE_SECONDS + kernels + chain) / per_event)
    assert not chain_file.exists()  # placed without generating the loop
    model.kernels("numba")  # SymPy writes the kernel module (no compilation)
    assert kernel_file.is_file()
    assert loop_prices.generate_seconds(model) == pytest.approx(chain, rel=1e-12)
    cls_after, limit_after = _pick(model, 1000)
    assert cls_after is cls and limit_after == int((MIN_COMPILE_SECONDS + chain) / per_event)
    assert limit_after < limit
    chain_module(model)
    assert chain_file.is_file() and loop_prices.generate_seconds(model) == 0.0


#: A new process with an empty cache weighs SIR's run and the tandem line of 8
#: stations' (whose loop costs more to compile than the interpreted loop) without
#: compiling anything; prints the prices and the choices.
_FIRST_EVER = """
import json
from derive.models import load_model
from sim import loop_prices
from sim.base import RunOptions
from sim.generic_kernels import chain_module, compile_seconds
from sim.interpreted import extra_seconds, model_tables, pick_loop

def pick(model, events):
    cls, limit = pick_loop(model, [], RunOptions(steps=events, reps=1).checked())
    return [events, cls.__name__, limit]

out = {"pending": loop_prices.interpreted_seconds()}
for name, model in (("sir", load_model("sir")),
                    ("tandem8", load_model("examples/tandem.py:tandem", stations=8))):
    generate = loop_prices.generate_seconds(model)  # nothing in the cache yet
    short = pick(model, 1000)  # generates the model's loop (its price is weighed)
    buy = compile_seconds(chain_module(model)[1]) + loop_prices.helpers_seconds() + generate
    per_event = extra_seconds(model_tables(model), 1)
    longer = pick(model, max(2000, int((buy - out["pending"]) / per_event) + 1000))
    out[name] = {"buy": buy, "per_event": per_event, "picks": [short, longer]}
print(json.dumps(out))
"""


def test_an_installations_first_run_takes_the_cheaper_loop(tmp_path):
    """In an empty cache neither loop is compiled: SIR's loop costs less to compile than
    the interpreted loop, so even a short first run takes it; the tandem line of 8
    stations' loop costs more, so a short run rents (its limit the later runs', the
    interpreted loop compiled by then) and a run whose extra passes the difference buys.
    Decided in a new process, compiling nothing (the cache is its own)."""
    done = _in_empty_cache(_FIRST_EVER, tmp_path, 120)
    out = json.loads(done.stdout.strip().splitlines()[-1])
    pending = loop_prices.INTERPRETED_SECONDS + loop_prices.HELPERS_SECONDS
    assert out["pending"] == pending  # nothing of the interpreted loop compiled
    sir = out["sir"]
    assert sir["buy"] < pending  # cheaper to compile SIR's loop than the interpreted one
    assert [p[1:] for p in sir["picks"]] == [["GenericSimulator", None]] * 2
    tandem = out["tandem8"]
    assert tandem["buy"] > pending
    (short, *s_pick), (longer, *l_pick) = tandem["picks"]
    limit = int(tandem["buy"] / tandem["per_event"])
    assert s_pick == ["InterpretedSimulator", limit]
    assert short + pending / tandem["per_event"] <= limit
    assert l_pick == ["GenericSimulator", None]
    assert longer + pending / tandem["per_event"] > limit


def _in_empty_cache(code: str, cache: Path, seconds: float) -> subprocess.CompletedProcess:
    """``code`` run by a new interpreter whose cache directory is ``cache`` (empty),
    checked to have ended well."""
    import os

    from mfstein.ground.cache import ENV_VAR

    env = {k: v for k, v in os.environ.items() if k != "NUMBA_CACHE_DIR"}
    env[ENV_VAR] = str(cache)
    done = subprocess.run(
        [sys.executable, "-c", code],
        env=env, capture_output=True, text=True, timeout=deadline(seconds), cwd=ROOT,
    )  # fmt: skip
    assert done.returncode == 0, done.stderr
    return done


@pytest.mark.slow
def test_an_installations_first_short_run_of_sir_runs_compiled(tmp_path):
    """End to end (numba compiles SIR's loop: seconds): a first ``auto`` run of SIR in an
    empty cache runs on SIR's compiled loop, and compiles nothing of the interpreted
    loop."""
    code = (
        "import sim\nfrom sim.loop_prices import interpreted_seconds\n"
        "r = sim.simulate('sir', {'beta': 3, 'gamma': 1, 'rho': '0.5', 'a': '0.1'}, N=50, "
        "steps=1000, reps=1, workers=1, seed=1)\n"
        "print(r.loop, interpreted_seconds() > 0)\n"
    )
    done = _in_empty_cache(code, tmp_path, 300)
    assert done.stdout.split() == ["compiled", "True"]
