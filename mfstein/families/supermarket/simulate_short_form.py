"""The paper's short form ``simulate_supermarket(N, lam, b, d)`` over :func:`sim.simulate`.

It lives beside the supermarket family's engines (:mod:`mfstein.families.supermarket.simulate`),
not in
the general entry :mod:`sim.api`, which names no model family (issue 31);
import it as ``sim.simulate_supermarket``.
"""

from __future__ import annotations

from typing import Any

from mfstein.families.supermarket.simulate import check_inputs, resolve_policy
from mfstein.ground.arguments import renamed_keywords
from sim.api import simulate
from sim.base import RunOptions, SimulationResult

__all__ = ["simulate_supermarket"]


@renamed_keywords(simulator="engine")
def simulate_supermarket(
    N: int,
    lam: Any,
    b: int,
    d: int = 2,
    *,
    replacement: bool = True,
    policy: str = "pod",
    engine: str | None = None,
    **options: Any,
) -> SimulationResult:
    """The paper's short form: simulate the supermarket model with ``N`` servers.

    ``simulate_supermarket(N, lam, b, d)`` builds the power-of-``d`` supermarket
    model with buffer ``b`` ("Beyond Scaling: Calculable Error Bound of the
    Power-of-Two-Choices Mean-Field Model in Heavy-Traffic", Section 3) and
    runs :func:`simulate` on it with ``engine`` (``"aggregated"``, the default
    for ``policy="pod"``, or ``"per-server"``, the default for ``"jsq"`` and
    ``"random"``; ``simulator=`` is its deprecated alias).  ``options`` are those of
    :func:`simulate` (``steps``, ``reps``, ``seed``, ``workers``, ``scheduler``, ``checkpoint``,
    ``batches``, ``warmup_fraction``, ``progress``, ``max_units``).
    """
    from derive.models import load_model
    from numeric.precision import parse_lam

    defaults = RunOptions()
    run = {k: options.get(k, getattr(defaults, k)) for k in ("steps", "reps", "seed", "workers")}
    check_inputs(
        N, b, d, run["reps"], run["seed"], options.get("batches", defaults.batches),
        run["steps"], run["workers"], policy, engine, replacement,
    )  # fmt: skip
    policy, engine = resolve_policy(policy, engine)
    parse_lam(lam)  # the same one-sentence refusal as before any model is built
    # by name: the same model object on every call of this process (load_model keeps
    # it), so a warm call reaches the runs and simulators its first call prepared
    model = load_model(
        "supermarket", b=int(b), d=1 if policy == "random" else int(d), replacement=replacement
    )
    return simulate(model, {"lam": lam}, N=N, engine=engine, policy=policy, **options)
