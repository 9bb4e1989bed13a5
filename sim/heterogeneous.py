"""Simulation of a heterogeneous population: K objects, one event at a time.

Each event is a move of one object (``A[k, s, s']``) or of an ordered pair of
distinct objects (``B[k, k1, s, s1, s', s1']``), chosen with probability
proportional to its rate in the current state (Gillespie's direct method; every
move's rate is recomputed at each event, so an event costs ``O(moves)``: meant
for the populations the exact chain cannot reach, up to a few hundred objects).
The occupation ``X_{k,s}`` is averaged over time after a warm-up, in batches;
replications are independent (xoshiro256** streams from ``SeedSequence(seed)``,
:mod:`sim.rng`).  Compiled with numba.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, ClassVar

import numpy as np

from mfstein.ground.display import Presentable, heading_rows
from mfstein.ground.errors import check_int
from mfstein.ground.jit import numba
from sim.rng import INV_2_53, load_state, next_u64, seed_states, store_state


@numba.njit(cache=True)
def _move(state, counts, src, dst, S):
    """Object ``src // S`` moves from ``src % S`` to ``dst % S``."""
    counts[src % S] -= 1.0
    counts[dst % S] += 1.0
    state[dst // S] = dst % S


@numba.njit(cache=True)
def _occupation(state, rng, uf, ut, a, p1, p2, q1, q2, b, vf, vt, vg, pexp, pcoef,
                S, steps, warm, batches):
    """Time-weighted occupation of each ``(k, s)`` per batch, ``(batches, K*S)``.

    ``uf``/``ut``: flat from/to of the unilateral moves; ``p1, p2`` the flat
    coordinates a pairwise move leaves and ``q1, q2`` those it enters; ``vf``/``vt``
    flat from/to of the averaged moves and ``vg`` the index of their rate
    polynomial: ``sum_t pcoef[g, t] prod_v m_v ** pexp[g, t, v]`` in the ``2S``
    averages ``m`` (``mean`` then ``others``)."""
    K = state.size
    occ = np.zeros((batches, K * S))
    span = np.zeros(batches)
    nu = a.size + b.size
    rates = np.zeros(nu + vf.size)
    counts = np.zeros(S)
    for k in range(K):
        counts[state[k]] += 1.0
    m = np.zeros(2 * S)
    per = max((steps - warm) // batches, 1)
    s0, s1, s2, s3 = load_state(rng)
    for step in range(steps):
        total = 0.0
        for i in range(a.size):
            r = a[i] if state[uf[i] // S] == uf[i] % S else 0.0
            rates[i] = r
            total += r
        for j in range(b.size):
            ok = state[p1[j] // S] == p1[j] % S and state[p2[j] // S] == p2[j] % S
            r = b[j] if ok else 0.0
            rates[a.size + j] = r
            total += r
        for i in range(vf.size):
            k, s = vf[i] // S, vf[i] % S
            r = 0.0
            if state[k] == s:
                for v in range(S):
                    m[v] = counts[v] / K
                    m[S + v] = (counts[v] - (1.0 if v == s else 0.0)) / max(K - 1, 1)
                g = vg[i]
                for j in range(pcoef.shape[1]):
                    term = pcoef[g, j]
                    for v in range(2 * S):
                        for _ in range(pexp[g, j, v]):
                            term *= m[v]
                    r += term
                r = max(r, 0.0)  # a polynomial that vanishes here may round below 0
            rates[nu + i] = r
            total += r
        if total <= 0.0:
            break
        u, s0, s1, s2, s3 = next_u64(s0, s1, s2, s3)
        dt = -np.log(1.0 - (u >> np.uint64(11)) * INV_2_53) / total
        if step >= warm:
            batch = min((step - warm) // per, batches - 1)
            span[batch] += dt
            for k in range(K):
                occ[batch, k * S + state[k]] += dt
        u, s0, s1, s2, s3 = next_u64(s0, s1, s2, s3)
        target = (u >> np.uint64(11)) * INV_2_53 * total
        acc, pick = 0.0, rates.size - 1
        for i in range(rates.size):
            acc += rates[i]
            if acc > target and rates[i] > 0.0:
                pick = i
                break
        if pick < a.size:
            _move(state, counts, uf[pick], ut[pick], S)
        elif pick < nu:
            j = pick - a.size
            _move(state, counts, p1[j], q1[j], S)
            _move(state, counts, p2[j], q2[j], S)
        else:
            _move(state, counts, vf[pick - nu], vt[pick - nu], S)
    store_state(rng, s0, s1, s2, s3)
    for t in range(batches):
        if span[t] > 0:
            occ[t] /= span[t]
    return occ


@dataclass(frozen=True, repr=False)
class HeterogeneousSimulation(Presentable):
    """Estimated ``E[X_{k,s}]`` (``mean``, flat ``k*S + s``) with 95% half-widths
    ``ci95`` over replications x batches (batch means, Student t)."""

    #: The heterogeneous population's name.
    model: str
    #: The number of objects.
    K: int
    #: The number of states of each object.
    S: int
    #: Every parameter of the model, as given, as strings.
    params: dict[str, str]
    #: Events per replication (the first ``warmup_fraction`` of them discarded as warm-up).
    steps: int
    #: The number of independent replications.
    reps: int
    #: The seed of the replications' xoshiro256** streams (``SeedSequence(seed)``).
    seed: int
    #: The estimate of ``E[X_{k,s}]``, the time-averaged occupation (flat ``k*S + s``), the mean of
    #: ``batch_means``.
    mean: np.ndarray
    #: The 95% half-width of each entry of ``mean`` (Student t over the ``reps x batches`` batch
    #: means).
    ci95: np.ndarray
    #: The time-averaged occupation of each batch after the warm-up, one row per batch (``reps x
    #: batches`` rows, replication after replication; ``K S`` columns).
    batch_means: np.ndarray = field(repr=False)
    #: Each requested observable of the model on this simulation, by name
    #: (:class:`numeric.heterogeneous.observables.ObservableValue`); empty when none was asked for.
    observables: dict[str, Any] = field(default_factory=dict)
    #: The objects' names, in order (``K`` of them).
    object_names: tuple[str, ...] = ()
    #: The states' names, in order (``S`` of them).
    state_names: tuple[str, ...] = ()

    _MORE: ClassVar[str] = "all numbers: .mean, .ci95, .batch_means; .to_dict() for JSON"

    def to_dict(self) -> dict[str, Any]:
        """JSON-ready dict (float64; estimates as printed, :meth:`sim.stats.Estimate.to_dict`)."""
        from sim.stats import Estimate

        return {"model": self.model, "K": self.K, "S": self.S, "params": dict(self.params),
                "steps": self.steps, "reps": self.reps, "seed": self.seed,
                **Estimate(self.mean, self.ci95).to_dict(),
                "observables": {k: v.to_dict() for k, v in self.observables.items()}}

    def _rows(self) -> list[tuple[str, str]]:
        rows = heading_rows(self.model, self.params)
        rows.append(("run", f"K = {self.K} objects, {self.reps} x {self.steps:,} events, "
                            f"seed {self.seed}"))
        for k in range(min(self.K, 4)):
            cells = [plus_minus(self.mean[k * self.S + s], self.ci95[k * self.S + s])
                     for s in range(self.S)]
            rows.append((f"P(object {k} in s)", ", ".join(cells)))
        for name, g in self.observables.items():
            rows.append((name, g.text().partition(" = ")[2]))
        return rows

    def to_text(self) -> str:
        """What ``mfstein simulate`` prints: the heading, the run, ``P(object k in s)``
        by object with 95% CIs and the observables."""
        from numeric.heterogeneous.text import heading, object_lines, observable_lines

        out = [
            heading(self),
            f"simulation of the K = {self.K} objects (--N is K): seed {self.seed}, {self.reps} "
            f"x {self.steps:,} events, 95% CIs over replications x batches",
        ]
        cells = [plus_minus(m, h) for m, h in zip(self.mean, self.ci95, strict=True)]
        out += object_lines(self, cells, "P(in s) object")
        out += observable_lines("observables:", self.observables)
        return "\n".join(out)


def plus_minus(m: float, h: float) -> str:
    """``m +- h`` as printed (:func:`mfstein.ground.display.estimate_figures`: ``h`` with
    2 significant digits, ``m`` down to that place)."""
    from mfstein.ground.display import estimate_figures

    shown, half = estimate_figures(float(m), float(h))
    return f"{shown} +- {half}"


def _polynomials(R: Any, name: str) -> tuple[np.ndarray, ...]:
    """The averaged moves of ``R`` for :func:`_occupation`: ``(vf, vt, vg, pexp, pcoef)``,
    each rate a polynomial in the averages (anything else: one sentence)."""
    import sympy as sp

    from mfstein.ground.errors import ParameterError
    from numeric.heterogeneous.averaged import averages_symbols

    av = R.avg
    if av is None:
        empty = np.zeros(0, dtype=np.int64)
        return empty, empty, empty, np.zeros((0, 0, 0), dtype=np.int64), np.zeros((0, 0))
    args = averages_symbols(R.S)
    polys = []
    for e in av.exprs:
        try:
            polys.append(sp.Poly(e, *args).terms())
        except sp.PolynomialError:
            raise ParameterError(
                f"the simulator of model {name} takes rates that are polynomials in the "
                f"occupancy averages, got {e}."
            ) from None
    width = max(len(p) for p in polys)
    pexp = np.zeros((len(polys), width, len(args)), dtype=np.int64)
    pcoef = np.zeros((len(polys), width))
    for g, terms in enumerate(polys):
        for j, (powers, coeff) in enumerate(terms):
            pexp[g, j] = powers
            pcoef[g, j] = float(coeff)
    return av.src.copy(), av.dst.copy(), av.group.copy(), pexp, pcoef


def simulate_heterogeneous(model: Any, params: Mapping[str, Any] | None, *, N: Any,
                           steps: Any, reps: Any, seed: Any, batches: Any = 20,
                           warmup_fraction: float = 0.1,
                           start: Sequence[Any] | str | None = None) -> HeterogeneousSimulation:
    """Simulate the K objects of ``model`` (``N`` must be ``K``); see the module."""
    import mpmath
    from scipy.stats import t as student

    from mfstein.ground.errors import ParameterError
    from numeric.heterogeneous.entry import rates, start_point

    N = check_int("N", N, 1)
    if N != model.K:
        raise ParameterError(
            f"N must be the number of objects K = {model.K} of the heterogeneous population, "
            f"got {N}."
        )
    steps, reps = check_int("steps", steps, 100), check_int("reps", reps, 1)
    seed, batches = check_int("seed", seed, 0), check_int("batches", batches, 2, 1000)
    with mpmath.workdps(30):
        R, inputs = rates(model, params, float64=True)
    K, S = model.K, model.S
    x0 = start_point(model, start).reshape(K, S)
    first = np.argmax(x0, axis=1).astype(np.int64)
    warm = int(steps * float(warmup_fraction))
    if steps - warm < 10 * batches:
        raise ParameterError(
            f"steps must leave at least 10 events per batch after the warm-up, got {steps} "
            f"for {batches} batches."
        )
    averaged = _polynomials(R, model.name)
    runs = []
    for rng in seed_states(seed, reps):
        runs.append(_occupation(first.copy(), rng, R.uni[:, 0].copy(), R.uni[:, 1].copy(), R.a,
                                R.pair[:, 0].copy(), R.pair[:, 1].copy(), R.pair[:, 2].copy(),
                                R.pair[:, 3].copy(), R.b, *averaged, S, steps, warm, batches))
    means = np.concatenate(runs)
    n = means.shape[0]
    half = student.ppf(0.975, n - 1) * means.std(axis=0, ddof=1) / np.sqrt(n)
    return HeterogeneousSimulation(model.name, K, S, inputs, steps, reps, seed,
                                   means.mean(axis=0), half, means,
                                   object_names=model.object_names,
                                   state_names=model.state_names)
