"""The batch-arrival, random-capacity model of the Persistent-Idle (PI) paper, validated.

"On the Persistent-Idle Load Distribution Policy Under Batch Arrivals and Random
Service Capacity" studies ``n`` servers in discrete time.  In slot ``t`` a batch of
``a(t)`` jobs arrives and server ``i`` can serve up to ``s_i(t)`` jobs; the batches
and capacities are independent, each i.i.d. over slots.  This module holds the
model (two finite pmfs and the number of servers) and refuses, with a
:class:`mfstein.ground.errors.ParameterError` naming the parameter, everything the paper
excludes:

* a pmf with a negative entry or not summing to one (within ``1e-9``; the
  probabilities are then divided by their sum);
* ``P(a = 0) = 0``: the paper assumes ``P(a(1) = 0) > 0`` so that the empty
  states ``(0, ..., 0, i)`` communicate, which makes the chain ``X = (Q, LI)`` of
  eq. (4) irreducible and aperiodic;
* a capacity pmf with mass at ``0``: every non-idle server serves at least one job
  per slot (assumption (1)), which the path bound (37) uses;
* for stationary quantities, load ``rho = E[a] / sum_i E[s_i] >= 1``: the main
  theorem gives stability exactly when ``E[a] < sum_i E[s_i]``.

It lives with the model descriptions below :mod:`numeric` and :mod:`sim`, both
of which read it (:mod:`numeric.pi.exact` solves its chain exactly, :mod:`sim.pi`
simulates it).  It is not a population process of :mod:`derive.model` (no
transitions, no :func:`derive.models.load_model` entry): two pmfs and a number
of servers.  Nothing here imports SymPy, numba or SciPy, so the command-line
parser stays light.
"""

from __future__ import annotations

import functools
import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from mfstein.ground.display import INPUT_DIGITS, claimed
from mfstein.ground.errors import ParameterError

#: Tolerance on ``|sum p - 1|`` for a pmf given by the user.
PMF_TOL = 1e-9
#: Largest value a pmf may put mass on (queue lengths are int64 in the simulators).
MAX_VALUE = 10**6


@dataclass(frozen=True)
class Pmf:
    """A pmf with finite support on the non-negative integers."""

    #: Support points, increasing, each with positive probability.
    values: tuple[int, ...]
    #: The probabilities of the support points (summing to one in float64).
    probs: tuple[float, ...]

    @functools.cached_property  # read once per server and slot statistic (10^6 servers)
    def mean(self) -> float:
        """``E[X]``."""
        return float(np.dot(self.values, self.probs))

    @property
    def second_moment(self) -> float:
        """``E[X^2]``."""
        v = np.asarray(self.values, dtype=float)
        return float(np.dot(v * v, self.probs))

    def prob(self, k: int) -> float:
        """``P(X = k)``."""
        return dict(zip(self.values, self.probs, strict=True)).get(k, 0.0)

    @property
    def is_point_mass(self) -> bool:
        """Whether the support is a single point."""
        return len(self.values) == 1

    def text(self) -> str:
        """The ``value:prob,...`` form the command line accepts."""
        return ",".join(f"{v}:{p:.17g}" for v, p in zip(self.values, self.probs, strict=True))

    def to_dict(self) -> dict[str, list]:
        """``{"values": [...], "probs": [...]}``."""
        return {"values": list(self.values), "probs": list(self.probs)}


def parse_pmf(spec: Any, name: str) -> Pmf:
    """Read a pmf and check it.

    Parameters
    ----------
    spec:
        ``"v:p,v:p,..."`` (as on the command line, e.g. ``"0:.4,2:.2,4:.3,6:.1"``),
        a mapping ``{value: probability}``, a sequence of probabilities of
        ``0, 1, 2, ...``, or a :class:`Pmf`.
    name:
        The parameter's name, used in error messages.

    Raises
    ------
    ParameterError
        Malformed text, non-integer or negative values, negative or non-finite
        probabilities, or a sum other than one.
    """
    if isinstance(spec, Pmf):
        pairs = list(zip(spec.values, spec.probs, strict=True))
    elif isinstance(spec, str):
        pairs = _text_pairs(spec, name)
    elif isinstance(spec, Mapping):
        pairs = list(spec.items())
    elif isinstance(spec, Sequence | np.ndarray):
        pairs = list(enumerate(np.asarray(spec, dtype=float).ravel().tolist()))
    else:
        raise ParameterError(
            f"{name} must be a pmf (text value:probability,..., a mapping or a sequence), "
            f"got {type(spec).__name__}."
        )
    merged: dict[int, float] = {}
    for v, p in pairs:
        if isinstance(v, bool) or not float(v).is_integer() or not 0 <= v <= MAX_VALUE:
            raise ParameterError(f"{name} values must be integers in [0, {MAX_VALUE}], got {v!r}.")
        p = float(p)
        if not math.isfinite(p) or p < 0:
            raise ParameterError(f"{name} probabilities must be finite and >= 0, got {p!r}.")
        merged[int(v)] = merged.get(int(v), 0.0) + p
    total = math.fsum(merged.values())
    if not merged or abs(total - 1.0) > PMF_TOL:
        raise ParameterError(
            f"{name} probabilities must sum to 1 (within {PMF_TOL:g}), got {total:.12g}."
        )
    support = sorted(v for v, p in merged.items() if p > 0)
    probs = np.array([merged[v] for v in support]) / total
    return Pmf(tuple(support), tuple(float(p) for p in probs))


def _text_pairs(spec: str, name: str) -> list[tuple[int, float]]:
    """``"v:p,v:p,..."`` as (value, probability) pairs, each number read by the one
    number parser (:mod:`mfstein.ground.numbers`: ``1/2``, ``2.0`` and ``1e1`` are read as
    everywhere, other scripts' digits and empty items refused)."""
    from mfstein.ground.numbers import parse_real, read_integer

    refusal = ParameterError(
        f"{name} must be a list value:probability,... of non-negative integers "
        f"with probabilities summing to 1 and no empty item, got {spec!r}."
    )
    pairs = []
    for item in spec.split(","):
        parts = item.split(":")
        if len(parts) != 2:
            raise refusal
        value = read_integer(parts[0])
        try:
            prob = float(parse_real(name, parts[1]))
        except (ParameterError, OverflowError):
            raise refusal from None
        if value is None:
            raise refusal
        if not 0 <= value <= MAX_VALUE:
            raise ParameterError(
                f"{name} values must be integers in [0, {MAX_VALUE}], got {parts[0].strip()!r}."
            )
        pairs.append((value, prob))
    return pairs


@dataclass(frozen=True)
class PIModel:
    """``n`` servers, the batch-size pmf and one capacity pmf per server."""

    #: The pmf of ``a(t)``.
    arrivals: Pmf
    #: The pmfs of ``s_1(t), ..., s_n(t)`` (``n`` entries).
    services: tuple[Pmf, ...]

    @property
    def n(self) -> int:
        """Number of servers."""
        return len(self.services)

    @property
    def mean_arrival(self) -> float:
        """``E[a]``."""
        return self.arrivals.mean

    @functools.cached_property  # a sum over the servers, read several times per run
    def capacity(self) -> float:
        """``sum_i E[s_i]``."""
        return math.fsum(s.mean for s in self.services)

    @property
    def load(self) -> float:
        """``rho = E[a] / sum_i E[s_i]``; the main theorem: stable iff ``rho < 1``."""
        return self.mean_arrival / self.capacity

    def summary(self) -> str:
        """One line: ``n``, ``E[a]``, ``sum_i E[s_i]`` and the load (6 significant digits)."""
        return (
            f"n = {self.n}, E[a] = {self.mean_arrival:.6g}, "
            f"sum E[s_i] = {self.capacity:.6g}, load = {self.load:.6g}"
        )

    def to_dict(self) -> dict[str, Any]:
        """The model as a plain JSON-ready dict (each distinct pmf object converted
        once: 10^6 identical servers share one, :func:`make_model`)."""
        once: dict[int, dict[str, list]] = {}
        services = []
        for s in self.services:
            d = once.get(id(s))
            if d is None:
                d = once[id(s)] = s.to_dict()
            services.append(d)
        return {
            "n": self.n,
            "arrivals": self.arrivals.to_dict(),
            "services": services,
            # float64 sums of the pmfs' products: INPUT_DIGITS (0.44, not 0.43999999999999995)
            "mean_arrival": claimed(self.mean_arrival, INPUT_DIGITS),
            "capacity": claimed(self.capacity, INPUT_DIGITS),
            "load": claimed(self.load, INPUT_DIGITS),
        }


def make_model(arrivals: Any, services: Any, n: int | None = None) -> PIModel:
    """Validate the pmfs and build a :class:`PIModel`.

    Parameters
    ----------
    arrivals:
        The batch-size pmf (anything :func:`parse_pmf` reads); ``P(a = 0) > 0``.
    services:
        One capacity pmf for every server, or a list of ``n`` pmfs (one per
        server); each must have support ``>= 1``.
    n:
        Number of servers.  Default: the number of pmfs in ``services`` (one pmf
        means one server).  With a single pmf, ``n`` identical servers; with
        several, ``n`` must equal their number.

    Raises
    ------
    ParameterError
        Any of the conditions listed in the module docstring (except the load,
        see :func:`check_load`).
    """
    from mfstein.ground.errors import check_int
    from mfstein.ground.limits import PI_MAX_SERVERS

    single = isinstance(services, str | Pmf | Mapping) or (
        isinstance(services, Sequence | np.ndarray)
        and len(services) > 0
        and all(isinstance(x, int | float | np.number) for x in np.asarray(services).ravel())
        and np.asarray(services).ndim == 1
    )
    svc_list = [services] if single else list(services)
    if not svc_list:
        raise ParameterError("service must give at least one capacity pmf.")
    if n is None:
        n = len(svc_list)
    n = check_int("n", n, 1, PI_MAX_SERVERS)
    if len(svc_list) == 1:
        svc_list = svc_list * n
    elif len(svc_list) != n:
        raise ParameterError(
            f"n must equal the number of service pmfs ({len(svc_list)}) when more than one "
            f"is given, got {n}."
        )
    a = parse_pmf(arrivals, "arrivals")
    if a.prob(0) <= 0:
        raise ParameterError(
            "arrivals must have P(a = 0) > 0 (the paper's assumption that makes the empty "
            "states communicate, so that the chain (Q, LI) is irreducible and aperiodic)."
        )
    if a.prob(0) >= 1:
        raise ParameterError(
            "arrivals must give a batch size >= 1 some positive probability: with P(a = 0) = 1 "
            "no job ever arrives, and the mean delay E[Q_total]/E[a] is 0/0."
        )
    # identical servers are parsed once (linear, not quadratic, in n: 10^6 servers)
    same = len(set(map(str, svc_list))) == 1
    parsed = []
    for i, s in enumerate(svc_list[:1] if same else svc_list):
        label = "service" if same else f"service of server {i + 1}"
        p = parse_pmf(s, label)
        if p.values[0] < 1:
            raise ParameterError(
                f"{label} must have support >= 1 (P(s = 0) = 0: a non-idle server serves "
                f"at least one job per slot), got P(s = 0) = {p.prob(0):g}."
            )
        parsed.append(p)
    return PIModel(a, tuple(parsed * n if same else parsed))


def check_load(model: PIModel, allow_unstable: bool = False) -> None:
    """Refuse ``E[a] >= sum_i E[s_i]`` unless a transient run is asked for.

    Raises
    ------
    ParameterError
        The load is at least one and ``allow_unstable`` is false.
    """
    if model.load >= 1.0 and not allow_unstable:
        raise ParameterError(
            f"load E[a] / sum E[s_i] must be < 1 for stationary quantities (the stability "
            f"condition E[a] < sum_i E[s_i]), got {model.mean_arrival:.6g} / "
            f"{model.capacity:.6g} = {model.load:.6g}; use allow-unstable for a transient run."
        )
