"""One unit of simulation work: advance one replication by a number of events.

:func:`advance` is a pure function of a :class:`Spec` and a replication's state
(plain NumPy arrays and numbers, so it pickles to worker processes and Dask
workers and serialises to a checkpoint).  It returns the new state and the
batch sums the statistics need; given the same inputs it returns the same
outputs on any worker, which is what makes results independent of the number
of workers.
"""

from __future__ import annotations

import time
from dataclasses import asdict, dataclass
from typing import ClassVar

import numpy as np

from mfstein.families.supermarket import aggregated, perserver
from mfstein.ground.arguments import renamed_attribute, renamed_keywords
from sim import thinning
from sim.replication_json import (  # noqa: F401  (their old import path)
    state_from_json,
    state_to_json,
    sums_from_json,
    sums_to_json,
)

#: The dispatch policies of the per-server engine (the codes of
#: :data:`mfstein.families.supermarket.perserver.POLICIES`): ``"pod"`` (power-of-d),
#: ``"jsq"`` and ``"random"``; the aggregated engine runs ``"pod"`` only.
POLICIES: tuple[str, ...] = tuple(perserver.POLICIES)
#: Engines: the chain on the counts (power-of-d only, fastest) or explicit servers.
ENGINES: tuple[str, ...] = ("aggregated", "per-server")
#: The old name of :data:`ENGINES` (same tuple).
SIMULATORS = ENGINES


@dataclass(frozen=True)
class Spec:
    """Everything a worker needs to simulate one system."""

    #: The number of servers.
    N: int
    #: The arrival rate per server.
    lam: float
    #: The buffer size.
    b: int
    #: The number of servers sampled per arrival.
    d: int
    #: Whether the ``d`` servers are sampled with replacement.
    replacement: bool
    #: The dispatch policy (:data:`POLICIES`).
    policy: str
    #: The reference point ``s*`` (float64) for ``||S - s*||^2``.
    s_star: tuple[float, ...]
    #: ``"aggregated"`` (:mod:`mfstein.families.supermarket.aggregated`) or ``"per-server"``
    #: (:mod:`mfstein.families.supermarket.perserver`).  ``simulator`` is its deprecated name (the
    #: keyword and the attribute warn); a checkpoint written with the old
    #: ``"simulator"`` key still loads (:attr:`RENAMED_CONFIG_KEYS`).
    engine: str = "aggregated"
    #: Second moments use one event in ``2^thin_bits``; ``None`` (default)
    #: takes :func:`sim.thinning.thin_bits` of ``b``.
    thin_bits: int | None = None
    #: The number of bins of the response-time histogram (per-server simulator).
    hist_bins: int = 400

    @property
    def hist_max(self) -> float:
        """Upper end of the response-time histogram: ``4 (b + 1)`` service times."""
        return 4.0 * (self.b + 1)

    @property
    def per_server(self) -> bool:
        """Whether the explicit per-server simulator runs this spec."""
        return self.engine == "per-server"

    @property
    def thinning(self) -> int:
        """The thinning exponent in use (``thin_bits``, or the default for ``b``)."""
        return thinning.thin_bits(self.b) if self.thin_bits is None else self.thin_bits

    #: Keys of :meth:`config` by their old names, for checkpoints written before the
    #: rename (:func:`sim.runner.run` reads such a file as if written with the new key).
    RENAMED_CONFIG_KEYS: ClassVar[dict[str, str]] = {"simulator": "engine"}

    simulator = renamed_attribute("Spec", "simulator", "engine")

    def config(self) -> dict:
        """The JSON-ready description a checkpoint of :mod:`sim.runner` is matched against."""
        return {**asdict(self), "s_star": list(self.s_star)}


Spec.__init__ = renamed_keywords(simulator="engine")(Spec.__init__)  # type: ignore[method-assign]


def fresh_state(spec: Spec, rng: np.ndarray) -> dict:
    """Initial state of a replication: the counts nearest ``N s*``, RNG state ``rng``."""
    counts = aggregated.initial_counts(spec.N, np.asarray(spec.s_star))
    state: dict = {"rng": np.asarray(rng, dtype=np.uint64).copy()}
    if spec.per_server:
        state.update(perserver.initial_state(spec.N, spec.b, counts))
    else:
        state["n"] = counts
    return state


def advance(spec: Spec, state: dict, steps: int) -> tuple[dict, dict]:
    """Run ``steps`` events from ``state`` (not modified); return ``(new_state, sums)``.

    ``sums`` holds ``scalars`` (see :mod:`mfstein.families.supermarket.aggregated` /
    :mod:`mfstein.families.supermarket.perserver`
    for the layout), ``mean`` (``sum w n_k``), ``cov`` (thinned ``sum w n_j n_k``,
    upper triangle), ``hist`` (response times, per-server only) and ``seconds``
    (CPU time of this unit, so the rate is per core even on a loaded machine).
    """
    b = spec.b
    s_star = np.asarray(spec.s_star, dtype=float)
    inv_rate = aggregated.inverse_rates(spec.N, spec.lam)
    mean_acc = np.zeros(b)
    cov_acc = np.zeros((b, b))
    new = {k: (v.copy() if isinstance(v, np.ndarray) else v) for k, v in state.items()}
    t0 = time.thread_time()
    if spec.per_server:
        hist = np.zeros(spec.hist_bins)
        out = perserver.run(
            new["q"],
            new["perm"],
            new["arrival_times"],
            new["head"],
            float(new["clock"]),
            new["rng"],
            int(steps),
            spec.lam,
            spec.d,
            spec.replacement,
            perserver.POLICIES[spec.policy],
            s_star,
            inv_rate,
            spec.thinning,
            mean_acc,
            cov_acc,
            hist,
            spec.hist_max,
        )
        new["clock"] = float(out[perserver.N_SCALARS])
        scalars = out[: perserver.N_SCALARS]
    else:
        hist = np.zeros(0)
        scalars = aggregated.run(
            new["n"],
            new["rng"],
            int(steps),
            spec.lam,
            spec.d,
            spec.replacement,
            s_star,
            inv_rate,
            spec.thinning,
            mean_acc,
            cov_acc,
        )
    seconds = time.thread_time() - t0
    sums = {
        "scalars": scalars,
        "mean": mean_acc,
        "cov": cov_acc,
        "hist": hist,
        "seconds": seconds,
    }
    return new, sums
