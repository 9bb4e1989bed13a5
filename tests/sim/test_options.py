"""Policy names, the thinning rule, the shared rate options and the atomic writer."""

from __future__ import annotations

import argparse
import os
import stat

import pytest

from mfstein.cli.arrival import add_arrival_rate, arrival_rate_text
from mfstein.families.supermarket.simulate import resolve_policy
from mfstein.ground.errors import ParameterError
from mfstein.ground.io import atomic_write
from sim import thinning


def test_policy_and_simulator_choice() -> None:
    assert resolve_policy("pod", None) == ("pod", "aggregated")
    assert resolve_policy("pod", "per-server") == ("pod", "per-server")
    assert resolve_policy("jsq", None) == ("jsq", "per-server")
    with pytest.raises(ParameterError, match="aggregated engine runs policy 'pod' only"):
        resolve_policy("random", "aggregated")
    with pytest.raises(ParameterError, match="policy must be one of"):
        resolve_policy("fifo", None)
    with pytest.raises(ParameterError, match="policy must be one of pod, jsq, random"):
        resolve_policy("aggregated", None)  # a simulator, not a dispatch policy


def test_the_simulate_entry_reads_the_policies_of_the_registered_simulators() -> None:
    """``sim.simulate(policy=...)`` checks the name against ``"pod"`` and the policies
    each fast-path simulator declares (``Simulator.policies``), not a general tuple:
    the refusal is the one sentence of every unknown option, and a family registered
    at run time adds its own policies to it."""
    import sim as sim_api
    from mfstein.families.supermarket.fast_path import SupermarketFastPath
    from mfstein.ground.fast_paths import FastPath, register, unregister
    from sim.base import Simulator, dispatch_policies

    assert SupermarketFastPath.policies == ("pod", "jsq", "random") == dispatch_policies()
    run = dict(N=6, steps=10, reps=1, progress=False)
    refusal = "policy must be one of pod, jsq, random, got 'fifo'."
    with pytest.raises(ParameterError) as refused:
        sim_api.simulate("supermarket", {"b": 3, "lam": "0.9"}, policy="fifo", **run)
    assert str(refused.value) == refusal

    class Fifo(Simulator):  # never built: the policy is refused before any model
        policies = ("pod", "fifo", "lifo")

        def _prepare(self) -> None: ...

        def _run(self, opts: object) -> None:
            raise AssertionError

    register("c31-fifo-family", FastPath(simulation=Fifo))
    try:
        assert dispatch_policies() == ("pod", "jsq", "random", "fifo", "lifo")
        with pytest.raises(
            ParameterError, match=r"one of pod, jsq, random, fifo, lifo, got 'x'\.$"
        ):
            sim_api.simulate("supermarket", {"b": 3, "lam": "0.9"}, policy="x", **run)
    finally:
        unregister("c31-fifo-family")
    assert dispatch_policies() == ("pod", "jsq", "random")


def test_the_old_name_of_the_policies_warns() -> None:
    import sim.base

    with pytest.warns(DeprecationWarning, match="POLICIES is deprecated"):
        assert sim.base.POLICIES == ("pod", "jsq", "random")


def test_thinning_grows_with_b_and_keeps_the_event_bits_free() -> None:
    assert thinning.thin_bits(1) == thinning.THIN_BITS == 6
    assert thinning.thin_bits(10) == 6  # 55 <= 64
    assert thinning.thin_bits(11) == 7  # 66 > 64
    assert thinning.thin_bits(50) == 11  # 1275 <= 2048
    assert thinning.thin_bits(200) == thinning.MAX_THIN_BITS == 11
    for b in range(1, 64):
        t = thinning.thin_bits(b)
        assert t <= 11 and (b * (b + 1) // 2 <= 2**t or t == 11)


def _parser(lam: bool = True) -> argparse.ArgumentParser:
    p = argparse.ArgumentParser()
    add_arrival_rate(p, lam=lam)
    return p


def test_rate_options_resolve_either_form() -> None:
    args = _parser().parse_args(["--lam", "0.9"])
    assert arrival_rate_text(args, 10) == "0.9"
    args = _parser().parse_args(["--gamma", "0.1", "--alpha", "0.05"])
    lam = float(arrival_rate_text(args, 100))
    assert abs(lam - (1 - 0.1 / 100**0.05)) < 1e-15
    with pytest.raises(ParameterError, match="not both"):
        arrival_rate_text(_parser().parse_args(["--lam", "0.9", "--gamma", "0.1"]), 10)
    with pytest.raises(ParameterError, match="give --lam, or both"):
        arrival_rate_text(_parser().parse_args(["--gamma", "0.1"]), 10)
    with pytest.raises(SystemExit):  # table: gamma and alpha required, no --lam
        _parser(lam=False).parse_args(["--lam", "0.9"])


def test_atomic_write_mode_content_and_failure(tmp_path) -> None:
    target = tmp_path / "sub" / "out.json"
    atomic_write(target, '{"a": 1}')
    assert target.read_text() == '{"a": 1}'
    mask = os.umask(0)
    os.umask(mask)
    assert stat.S_IMODE(target.stat().st_mode) == 0o666 & ~mask
    atomic_write(target, lambda fh: fh.write(b"binary"))
    assert target.read_bytes() == b"binary"

    def boom(fh) -> None:
        fh.write(b"partial")
        raise RuntimeError("disk full")

    with pytest.raises(RuntimeError):
        atomic_write(target, boom)
    assert target.read_bytes() == b"binary"  # old content intact
    assert sorted(p.name for p in target.parent.iterdir()) == ["out.json"]  # no temp left
