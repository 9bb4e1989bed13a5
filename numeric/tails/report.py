"""One entry point for the exact tail statistics of JSQ, M/M/n and the SSQ.

:func:`exact_tails` returns a :class:`TailReport`: for the scaled queue
``eps X`` (``X = qbar`` for JSQ and M/M/n, ``X = q`` for the SSQ) of "Exponential
Tail Bounds on Queues: A Confluence of Non-Asymptotic Heavy Traffic and Large
Deviations" (Jhunjhunwala, Hurtado-Lange, Maguluri):

* ``P(eps X > x)`` at the requested ``x`` (the quantity bounded in Theorem 2);
* ``E[eps X]`` (Lemma 4's MGF at 0 has derivative ``E[eps qbar]``; Theorem 1's
  limit has mean 1);
* ``sup_x |P(eps X > x) - exp(-x / m)|``, the distance to the exponential
  heavy-traffic limit of mean ``m`` (``m = 1`` for JSQ and M/M/n, Kingman's
  ``(Var a + Var s) / (2 E s)`` for the SSQ);
* the exact tail decay: the factor ``r`` with ``P(X = k + 1) ~ r P(X = k)``
  (``rho`` for JSQ and M/M/n, the Cramér root for the SSQ), the scaled rate
  ``-log(r) / eps`` (Theorem 2's exponent; it tends to 1 as ``eps -> 0``) and,
  for JSQ, the level decay factor ``sp(R) = rho^n``;
* JSQ only: ``E ||q_perp||_2^2`` and ``E exp(theta ||q_perp||_2)``
  (Proposition 3, state-space collapse), ``q_perp = q - (qbar / n) 1``.

The ``accuracy`` mapping states how accurate the law is (residuals, neglected mass,
truncation change), the ``errors`` mapping each number's absolute error
(:mod:`numeric.tails.errors`), and every number is printed (JSON, ``repr``, text)
down to the place that error allows.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, ClassVar

import numpy as np

from mfstein.ground.display import Presentable, error_figure, printed_to_error, renamed_to_text
from mfstein.ground.errors import ParameterError
from numeric.tails.errors import (
    UNIT,
    LawError,
    decay_rate_error,
    law_statistic_errors,
    mmn_law_error,
    printed_accuracy,
)
from numeric.tails.params import check_eps, check_n, check_nonnegative_list

__all__ = ["MODELS", "TailReport", "exact_tails"]

MODELS = ("jsq", "mmn", "ssq")


@dataclass(frozen=True, repr=False)
class TailReport(Presentable):
    """Exact tail statistics of one model (see the module docstring); ``errors`` holds
    the absolute error of each number (``tail``: one for every ``x``; ``perp_mgf``:
    one per ``theta``; ``None`` where there is no estimate, a fixed truncation)."""

    #: ``"jsq"``, ``"mmn"`` or ``"ssq"``.
    model: str
    #: The number of servers (JSQ, M/M/n); for the SSQ the size of the default binomial family.
    n: int
    #: ``1 - rho``, as given, or for the SSQ with explicit pmfs computed from them (``1 - E a / E
    #: s``).
    eps: float
    #: The points ``x >= 0`` of ``tail``, as given.
    x: list[float]
    #: ``P(eps X > x)`` at each ``x`` (the quantity bounded in Theorem 2).
    tail: list[float]
    #: ``E[eps X]``.
    scaled_mean: float
    #: The mean ``m`` of the exponential heavy-traffic limit, 1 for JSQ and M/M/n, Kingman's ``(Var
    #: a + Var s) / (2 E s)`` for the SSQ.
    limit_mean: float
    #: ``sup_x |P(eps X > x) - exp(-x / m)|``, the distance to the heavy-traffic limit.
    sup_distance: float
    #: A point ``x`` where ``sup_distance`` is attained.
    sup_distance_at: float
    #: The tail decay factor ``r`` of ``P(X = k + 1) ~ r P(X = k)``; ``rho`` for JSQ and M/M/n, the
    #: Cramér root for the SSQ.
    decay_factor: float
    #: ``-log(r) / eps`` (Theorem 2's exponent; it tends to 1 as ``eps -> 0``).
    scaled_decay_rate: float
    #: For JSQ, the QBD's level decay factor ``sp(R)`` (equals ``rho^n``); ``None`` otherwise.
    level_decay: float | None = None
    #: For JSQ, ``E ||q_perp||_2^2`` (Proposition 3); ``None`` otherwise.
    perp_second_moment: float | None = None
    #: For JSQ, the points ``theta`` of ``perp_mgf``, as given; empty otherwise.
    thetas: list[float] = field(default_factory=list)
    #: For JSQ, ``E exp(theta ||q_perp||_2)`` at each ``theta`` (Proposition 3).
    perp_mgf: list[float] = field(default_factory=list)
    #: How accurate the law is (the method and its checks, residuals, and for JSQ the phase
    #: truncation's neglected mass and change); :meth:`accuracy_text` prints it.
    accuracy: dict[str, Any] = field(default_factory=dict)
    #: The law of ``X`` (:class:`numeric.tails.statistics.TotalQueueLaw`; left out of
    #: :meth:`to_dict`).
    law: Any = None
    #: The absolute error of each number by field name (class docstring;
    #: :mod:`numeric.tails.errors`).
    errors: dict[str, Any] = field(default_factory=dict)

    _MORE: ClassVar[str] = "every x and theta in to_dict(); describe() for the full text"

    def printed(self, name: str) -> Any:
        """The number (or list) ``name`` as :meth:`to_dict` prints it: down to the
        place its absolute error in ``errors`` allows
        (:func:`mfstein.ground.display.printed_to_error`; :data:`UNBOUNDED_DIGITS
        <mfstein.ground.display.UNBOUNDED_DIGITS>` digits without an estimate); the
        inputs ``x``, ``thetas`` and (but for the SSQ, where it is computed) ``eps``
        as given."""
        value = getattr(self, name)
        if name in ("x", "thetas") or (name == "eps" and "eps" not in self.errors):
            return value
        error = self.errors.get(name)
        if isinstance(error, list):
            return [printed_to_error(v, e) for v, e in zip(value, error, strict=True)]
        return printed_to_error(value, error)

    def to_dict(self) -> dict[str, Any]:
        """Plain JSON-ready dict (the law itself is omitted): each number down to the
        place its error in ``errors`` allows; ``accuracy`` states the law's precision
        (residuals, neglected mass, truncation change)."""
        out = {k: self.printed(k) if k in _NUMBERS else v for k, v in self.__dict__.items()}
        del out["law"]
        out["errors"] = error_figure(self.errors)
        out["accuracy"] = printed_accuracy(self.accuracy, self.errors)
        return out

    def _text(self, name: str) -> str:
        """``repr`` of the printed number ``name``."""
        return repr(self.printed(name))

    def _rows(self) -> list[tuple[str, str]]:
        p = self.printed
        rows = [("model", f"{self.model}, n = {self.n}, eps = {p('eps')!r}")]
        tails = zip(self.x[:3], p("tail")[:3], strict=True)
        rows += [(f"P(eps X > {x:g})", repr(t)) for x, t in tails]
        rows += [
            ("E[eps X]", f"{self._text('scaled_mean')} (heavy-traffic mean "
                         f"{self._text('limit_mean')})"),
            ("sup distance", f"{self._text('sup_distance')} at x = "
                             f"{self._text('sup_distance_at')}"),
            ("decay factor", self._text("decay_factor")),
        ]  # fmt: skip
        if self.perp_second_moment is not None:
            rows.append(("E ||q_perp||^2", self._text("perp_second_moment")))
        return [*rows, ("accuracy", self.accuracy_text())]

    def accuracy_text(self) -> str:
        """The ``accuracy`` mapping as ``"name = value, ..."`` (floats to 2 digits)."""
        return ", ".join(
            f"{k} = {v:.2g}" if isinstance(v, float) else f"{k} = {v}"
            for k, v in self.accuracy.items()
        )

    describe = renamed_to_text("describe")

    def to_text(self) -> str:
        """Human-readable summary (the CLI's text output), each number as printed."""
        p, t = self.printed, self._text
        rho = f"{1 - self.eps:.6g}"
        lines = [f"model = {self.model}, n = {self.n}, eps = {p('eps')!r} (rho = {rho})"]
        for x, v in zip(self.x, p("tail"), strict=True):
            lines.append(
                f"P(eps X > {x:g}) = {v!r}   (exp(-x/m) = {np.exp(-x / self.limit_mean):.10g})"
            )
        lines.append(f"E[eps X] = {t('scaled_mean')}   (heavy-traffic mean m = {t('limit_mean')})")
        lines.append(
            f"sup_x |P(eps X > x) - exp(-x/m)| = {t('sup_distance')} at x = "
            f"{t('sup_distance_at')}"
        )
        lines.append(
            f"tail decay factor per job = {t('decay_factor')}, scaled decay rate "
            f"-log(r)/eps = {t('scaled_decay_rate')}"
        )
        if self.level_decay is not None:
            lines.append(
                f"QBD level decay sp(R) = {t('level_decay')}   (rho^n = "
                f"{(1 - self.eps) ** self.n:.12g})"
            )
        if self.perp_second_moment is not None:
            lines.append(f"E ||q_perp||^2 = {t('perp_second_moment')}")
            for th, v in zip(self.thetas, p("perp_mgf"), strict=True):
                lines.append(f"E exp({th:g} ||q_perp||) = {v!r}")
        lines.append(f"accuracy: {self.accuracy_text()}")
        return "\n".join(lines)


#: The fields of :class:`TailReport` printed through :meth:`TailReport.printed`.
_NUMBERS = frozenset(
    ("eps", "tail", "scaled_mean", "limit_mean", "sup_distance", "sup_distance_at",
     "decay_factor", "scaled_decay_rate", "level_decay", "perp_second_moment", "perp_mgf")
)  # fmt: skip


def exact_tails(
    model: str,
    n: int,
    eps: float,
    x: list[float] | str = (1.0,),
    *,
    thetas: list[float] | str = (),
    arrival_pmf: list[float] | None = None,
    service_pmf: list[float] | None = None,
    max_phases: int | None = None,
    progress: bool = False,
) -> TailReport:
    """Exact tail statistics of ``model`` (``"jsq"``, ``"mmn"`` or ``"ssq"``).

    Parameters
    ----------
    n:
        Servers (JSQ, M/M/n); for the SSQ, the size of the default binomial
        family (:func:`numeric.tails.ssq.binomial_pmfs`) when no pmfs are given.
    eps:
        ``1 - rho`` in ``(0, 1)``; for the SSQ with explicit pmfs it is derived
        from them and ``eps`` must be ``None``.
    x:
        Points ``x >= 0`` for ``P(eps X > x)``.
    thetas:
        JSQ only: points for ``E exp(theta ||q_perp||)``.
    arrival_pmf, service_pmf:
        SSQ only: explicit pmfs (both or neither).
    max_phases:
        JSQ only: cap on the QBD phase space.
    progress:
        JSQ only: a progress bar of the spreads tried on standard error.
    """
    if model not in MODELS:
        raise ParameterError(f"model must be one of {', '.join(MODELS)}, got {model!r}.")
    n = check_n(n)
    xs = check_nonnegative_list("x", x)
    ths = check_nonnegative_list("theta", thetas)
    if ths and model != "jsq":
        raise ParameterError("theta is only defined for --model jsq (q_perp of Proposition 3).")
    if (arrival_pmf is None) != (service_pmf is None):
        raise ParameterError("arrival_pmf and service_pmf must be given together.")
    if arrival_pmf is not None and model != "ssq":
        raise ParameterError("arrival_pmf and service_pmf are only used with model ssq.")
    if model == "ssq":
        eps, law, m, decay, kw = _ssq(n, eps, arrival_pmf, service_pmf)
    elif model == "mmn":
        eps, law, m, decay, kw = _mmn(n, eps)
    else:
        eps, law, m, decay, kw = _jsq(n, eps, ths, max_phases, progress)
    dist, at = law.sup_distance(eps, m)
    mean, rate = law.scaled_mean(eps), float(-np.log(decay) / eps)
    e = kw.pop("errors")
    stats = law_statistic_errors(
        e.pop("law"), eps, mean, m, limit_mean_error=e["limit_mean"], eps_error=e.get("eps", 0.0)
    )
    kw["errors"] = e | stats | {
        "sup_distance_at": 2 * UNIT * at,
        "scaled_decay_rate": decay_rate_error(decay, e["decay_factor"], eps, rate),
    }
    return TailReport(
        model=model,
        n=n,
        eps=float(eps),
        x=xs,
        tail=[float(v) for v in law.tail(np.asarray(xs), eps)],
        scaled_mean=mean,
        limit_mean=float(m),
        sup_distance=dist,
        sup_distance_at=at,
        decay_factor=float(decay),
        scaled_decay_rate=rate,
        law=law,
        **kw,
    )


#: What each model's solver returns to :func:`exact_tails`: ``(eps, law, m, r, fields)``
#: -- ``eps``, the law of ``X``, the heavy-traffic mean ``m``, the tail decay factor
#: ``r`` and the model's own fields of :class:`TailReport` (``accuracy`` among them).
_Solved = tuple[float, Any, float, float, dict[str, Any]]


def _ssq(n: int, eps: float | None, arrival_pmf: Any, service_pmf: Any) -> _Solved:
    """The SSQ by the roots method (:func:`numeric.tails.ssq.solve_ssq`): the given pmfs,
    or the default binomial family on ``0..n`` at ``eps``; ``r`` is the Cramér root
    and ``m`` Kingman's ``(Var a + Var s) / (2 E s)``."""
    from numeric.tails.ssq import MAX_SUPPORT, binomial_pmfs, solve_ssq

    if arrival_pmf is None:
        eps = check_eps(eps)
        if n + 1 > MAX_SUPPORT:
            raise ParameterError(
                f"n must be <= {MAX_SUPPORT - 1} for the default SSQ family "
                f"(binomial pmfs on 0..n), got {n}."
            )
        arrival_pmf, service_pmf = binomial_pmfs(n, eps)
    elif eps is not None:
        raise ParameterError("eps must be omitted when the SSQ pmfs are given (it is 1 - E a/E s).")
    sol = solve_ssq(arrival_pmf, service_pmf)
    e = sol.errors()
    errors = {k: e[k] for k in ("eps", "limit_mean", "cramer_exponent", "drift")} | {
        "law": sol.law_error,
        "decay_factor": e["cramer_root"],
    }
    return sol.eps, sol.law, sol.limit_mean, sol.cramer_root, {
        "accuracy": sol.accuracy(),
        "errors": errors,
    }


def _mmn(n: int, eps: float) -> _Solved:
    """M/M/n in closed form (Erlang C): ``r = rho``, ``m = 1``."""
    from numeric.tails.mmn import mmn_law

    eps = check_eps(eps)
    law = mmn_law(n, eps)
    accuracy = dict(method="closed form (Erlang C)", mass_residual=abs(law.total_mass() - 1.0))
    errors = {"law": mmn_law_error(n, law.mean()), "limit_mean": 0.0, "decay_factor": UNIT}
    return eps, law, 1.0, 1.0 - eps, {"accuracy": accuracy, "errors": errors}


def _jsq(
    n: int, eps: float, ths: list[float], max_phases: int | None, progress: bool = False
) -> _Solved:
    """JSQ by the level-phase QBD (:func:`numeric.tails.jsq_qbd.solve_jsq`): ``r = rho``,
    ``m = 1``, and the QBD's level decay and the moments of ``q_perp``."""
    from numeric.tails.jsq_qbd import MAX_PHASES, solve_jsq

    eps = check_eps(eps)
    sol = solve_jsq(n, eps, thetas=ths, max_phases=max_phases or MAX_PHASES, progress=progress)
    kw: dict[str, Any] = dict(
        level_decay=sol.level_decay,
        perp_second_moment=sol.perp_second_moment(),
        thetas=ths,
        perp_mgf=[float(v) for v in sol.perp_mgf(ths)] if ths else [],
    )
    kw["accuracy"] = sol.accuracy()
    e = sol.errors(ths)
    kw["errors"] = {k: e[k] for k in ("level_decay", "perp_second_moment", "perp_mgf")} | {
        "law": LawError(e["law"]["mass"], e["law"]["first"]),
        "limit_mean": 0.0,
        "decay_factor": UNIT,
    }
    return eps, sol.law, 1.0, 1.0 - eps, kw
