"""The result of :func:`numeric.sweep`: one row per grid point, and the curves.

:class:`SweepPoint` is one point (a value inside the result: ``to_dict`` only):
``s*``, ``V``, ``c`` (and ``c2``) with the digits they claim, the observables'
expansions, or the sentence that refused the point.  :class:`SweepResult` holds
them in grid order and gives the curves as arrays (:meth:`SweepResult.curve`),
JSON (``to_json``), CSV (:meth:`SweepResult.to_csv`) and a plot
(:meth:`SweepResult.plot`, matplotlib imported only then).  Every number is
printed with the digits its point claims (:func:`numeric.precision.format_entries`
for the entries of ``s*`` and ``V``, whose absolute errors the route earned).
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

from mfstein.ground.display import Presentable, measured, params_text, start_json

#: The significant digits a float64 number is written with (the value computed;
#: ``digits`` says how many are correct), as the float64 route's solution does.
FLOAT64_DPS = 17


@dataclass(frozen=True)
class SweepPoint:
    """One grid point of a sweep (module docstring).  ``errors``: the absolute error
    of every entry of ``s_star`` and ``V`` (one number, or one per entry); ``dps``:
    the most digits any number is written with; ``refusal``: the sentence that
    refused the point (then every number is ``None``)."""

    #: The point's parameter values, as strings.
    params: dict[str, str]
    #: ``c = tr(P Q) = tr(M W)`` at the point
    #: (:attr:`numeric.meanfield.solution.MeanFieldSolution.constant`); ``None`` when refused.
    c: Any = None
    #: The correct significant digits claimed for ``c`` (0 when refused).
    digits: int = 0
    #: The fixed point ``s*``.
    s_star: tuple[Any, ...] = ()
    #: The refined bias ``V`` (``E[S] = s* + V/N + O(1/N^2)``).
    V: tuple[Any, ...] = ()
    #: The absolute error of the entries of ``s_star`` and ``V`` (keys ``"s_star"`` and ``"V"``):
    #: one per entry at ``dps`` digits, one number for all entries at float64 (the relative error
    #: estimate times the largest entry's magnitude).
    errors: dict[str, Any] = field(default_factory=dict)
    #: With ``order=2``, ``c2 = tr(M B)`` (``N E[(S - s*)^T M (S - s*)] = c + c2/N + O(1/N^2)``);
    #: ``None`` otherwise.
    c2: Any = None
    #: With ``order=2``, the digits claimed for ``c2``; ``None`` otherwise.
    digits2: int | None = None
    #: Name -> :class:`numeric.meanfield.observables.ObservableExpansion` of each observable asked
    #: for; empty when none was.
    observables: dict[str, Any] = field(default_factory=dict)
    #: Remarks a reader of the numbers needs (truncations, fallbacks), as the solution gives them.
    notes: tuple[str, ...] = ()
    #: The sentence that refused the point (then every number is ``None``); ``None`` when the point
    #: was solved.
    refusal: str | None = None
    #: The most significant digits any number of the point is written with (the requested digits,
    #: or :data:`FLOAT64_DPS` at float64).
    dps: int = FLOAT64_DPS

    @classmethod
    def refused(cls, params: dict[str, str], sentence: str) -> SweepPoint:
        """The row of a point refused in one sentence."""
        return cls(params=params, refusal=sentence)

    @classmethod
    def of_solution(cls, params: dict[str, str], sol: Any) -> SweepPoint:
        """The row of a :class:`numeric.meanfield.solution.MeanFieldSolution`."""
        return cls(
            params=params,
            c=sol.constant,
            digits=sol.digits,
            s_star=tuple(sol.s_star),
            V=tuple(sol.V),
            errors={"s_star": list(sol.errors["s_star"]), "V": list(sol.errors["V"])},
            c2=sol.c2,
            digits2=sol.digits2 if sol.c2 is not None else None,
            observables=dict(sol.observables or {}),
            notes=tuple(sol.notes),
            dps=sol.dps,
        )

    def value(self, name: str) -> float:
        """``c``, ``c2``, ``digits`` or ``digits2`` as a float (NaN when absent)."""
        v = getattr(self, name)
        return math.nan if v is None or self.refusal else float(v)

    def _entries(self, name: str) -> tuple[list[str], str]:
        import mpmath

        from numeric.precision import format_entries

        values = [mpmath.mpf(v) for v in getattr(self, name)]
        err = self.errors[name]
        errs = err if isinstance(err, list) else [mpmath.mpf(err)] * len(values)
        return format_entries(values, errs, self.dps)

    def to_dict(self) -> dict[str, Any]:
        """JSON-ready: the parameters, ``c`` with its ``digits`` (``c2`` with ``digits2``),
        ``s*`` and ``V`` keeping only their correct digits with the error bound of
        every entry, the observables, the notes; or the refusal."""
        import mpmath

        from numeric.precision import to_str

        out: dict[str, Any] = {"params": dict(self.params)}
        if self.refusal:
            out["refused"] = self.refusal
            return out
        with mpmath.workdps(self.dps + 20):
            s_str, es = self._entries("s_star")
            v_str, ev = self._entries("V")
            out.update(
                {
                    "c": to_str(mpmath.mpf(self.c), self.digits) if self.digits else "0",
                    "digits": self.digits,
                    "s_star": s_str,
                    "s_star_abs_error": es,
                    "V": v_str,
                    "V_abs_error": ev,
                }
            )
            if self.c2 is not None:
                d2 = self.digits2 or 0
                out["c2"] = to_str(mpmath.mpf(self.c2), d2) if d2 else "0"
                out["digits2"] = d2
        if self.observables:
            out["observables"] = {k: e.to_dict() for k, e in self.observables.items()}
        out["notes"] = list(self.notes)
        return out


@dataclass(frozen=True, repr=False)
class SweepResult(Presentable):
    """The rows of :func:`numeric.sweep` in grid order (the last swept parameter
    varying fastest), with what was swept and how.
    """

    #: The model's name.
    model: str
    #: The fixed parameters.
    fixed: dict[str, str]
    #: The swept parameters (name -> values, as text).
    axes: dict[str, list[str]]
    #: The quadratic observable ``M`` every point was solved with, as given (``None``
    #: for the identity); each point's ``c = tr(M W)``.
    M: Any = field(default=None, kw_only=True, repr=False, compare=False)
    #: The start every point was solved from, as given (the initial state in fractions,
    #: or a string such as ``"reference"``); ``None`` for the model's own start.
    start: Any = field(default=None, kw_only=True, repr=False, compare=False)
    #: The order of the expansion, ``1`` or ``2``.
    order: int
    #: The precision, ``"float64"`` or ``"<dps> digits"``.
    precision: str
    #: The state names (the columns of ``s*`` and ``V``).
    states: list[str]
    #: The observables' names.
    observables: list[str]
    #: One :class:`SweepPoint` per grid point.
    rows: list[SweepPoint]
    #: The wall time of the sweep.
    seconds: float
    #: The number of pieces the sweep ran in.
    workers: int = 1

    _MORE = "all points: .rows, .curve(name), .to_csv(path), .plot()"

    @property
    def params(self) -> dict[str, Any]:
        """The parameters as swept: the fixed ones (name -> value as text) and the
        swept ones (name -> their values as text), in the order given."""
        return {**self.fixed, **{k: list(v) for k, v in self.axes.items()}}

    @property
    def refused(self) -> list[SweepPoint]:
        """The rows of the points that were refused."""
        return [r for r in self.rows if r.refusal]

    def curve(self, name: str) -> Any:
        """One column as a NumPy array of floats (NaN at refused points): a swept
        parameter's name, ``c``, ``c2``, ``digits``, ``digits2``, a state's name
        (its ``s*``) or ``V:<state>``."""
        import numpy as np

        if name in self.axes:
            return np.array([float(_fraction(r.params[name])) for r in self.rows])
        if name in ("c", "c2", "digits", "digits2"):
            return np.array([r.value(name) for r in self.rows])
        what, _, state = name.rpartition(":")
        if state in self.states and what in ("", "V"):
            k = self.states.index(state)
            key = "V" if what else "s_star"
            return np.array(
                [math.nan if r.refusal else float(getattr(r, key)[k]) for r in self.rows]
            )
        from mfstein.ground.errors import ParameterError

        names = [*self.axes, "c", "c2", "digits", "digits2", *self.states]
        raise ParameterError(f"curve must be one of {', '.join(names)} or V:<state>, got {name!r}.")

    def to_dict(self) -> dict[str, Any]:
        """JSON-ready: what was swept and how, and every row (:meth:`SweepPoint.to_dict`)."""
        return {
            "model": self.model,
            "fixed": dict(self.fixed),
            "axes": {k: list(v) for k, v in self.axes.items()},
            "order": self.order,
            "precision": self.precision,
            "states": list(self.states),
            "observables": list(self.observables),
            "points": [r.to_dict() for r in self.rows],
            "refused": len(self.refused),
            "seconds": measured(self.seconds),
            "workers": self.workers,
            "start": start_json(self.start),
        }

    def _rows(self) -> list[tuple[str, str]]:
        from numeric.precision import to_str

        rows = [("model", self.model), ("fixed", params_text(self.fixed))]
        if self.start is not None:
            rows.append(("start", str(start_json(self.start))))
        for name, values in self.axes.items():
            rows.append((name, f"{len(values)} values from {values[0]} to {values[-1]}"))
        solved = [r for r in self.rows if not r.refusal]
        rows.append(
            (
                "points",
                f"{len(solved)} solved, {len(self.rows) - len(solved)} refused "
                f"({self.precision}, order {self.order})",
            )
        )
        if solved:
            lo = min(solved, key=lambda r: r.value("c"))
            hi = max(solved, key=lambda r: r.value("c"))
            import mpmath

            def text(r: SweepPoint) -> str:
                return to_str(mpmath.mpf(r.c), r.digits) if r.digits else "0"

            rows.append(("c", f"from {text(lo)} to {text(hi)}"))
            rows.append(("digits", f"{min(r.digits for r in solved)} at least"))
        rows.append(("time", f"{self.seconds:.3g} s on {self.workers} worker(s)"))
        return rows

    def to_text(self) -> str:
        """What ``mfstein sweep`` prints: one line per point -- the swept values, ``c``
        with the digits its point claims (``c2`` at order 2) or "refused" -- then the
        summary and each refusal."""
        from mfstein.ground.display import columns

        order2 = self.order == 2
        head = [*self.axes, "c", "digits"] + (["c2", "digits2"] if order2 else [])
        rows, refusals = [], []
        for r in self.rows:
            d = r.to_dict()
            swept = [r.params[n] for n in self.axes]
            if r.refusal:
                rows.append([*swept, "refused", "-"] + (["-", "-"] if order2 else []))
                refusals.append(f"{', '.join(swept)}: {r.refusal}")
                continue
            row = [*swept, d["c"], str(d["digits"])]
            if order2:
                row += [d.get("c2", "-"), str(d.get("digits2", "-"))]
            rows.append(row)
        lines = [f"model {self.model}; fixed: {params_text(self.fixed)}", columns(rows, head)]
        lines.append(
            f"({len(self.rows)} points, {self.precision}, order {self.order}, "
            f"{self.seconds:.3g} s; c printed with the digits its point claims; --json or "
            "--csv for s*, V and the observables)"
        )
        lines += [f"refused at {text}" for text in refusals]
        return "\n".join(lines)

    def _columns(self) -> list[str]:
        """The CSV header: swept parameters, c, digits (c2, digits2), s* and V per state,
        observables' terms, the refusal."""
        head = [*self.axes, "c", "digits"]
        if self.order == 2:
            head += ["c2", "digits2"]
        head += [f"s*:{s}" for s in self.states] + [f"V:{s}" for s in self.states]
        for g in self.observables:
            head += [f"{g}:{t}" for t in ("g0", "g1", "g2", "variance")]
        return [*head, "refused"]

    def _csv_row(self, row: SweepPoint) -> list[str]:
        d = row.to_dict()
        out = [row.params[n] for n in self.axes]
        if row.refusal:
            blank = len(self._columns()) - len(out) - 1
            return [*out, *[""] * blank, row.refusal]
        out += [d["c"], str(d["digits"])]
        if self.order == 2:
            out += [d.get("c2", ""), str(d.get("digits2", ""))]
        out += list(d["s_star"]) + list(d["V"])
        for g in self.observables:
            e = d["observables"][g]
            out += [
                str(e.get(t) if e.get(t) is not None else "")
                for t in ("g0", "g1", "g2", "variance")
            ]
        return [*out, ""]

    def to_csv(self, path: Any) -> Any:
        """Write the rows as CSV to ``path`` (atomically: nothing half-written is
        left); every number with the digits its point claims.  Returns the path."""
        import csv
        import io

        from mfstein.ground.io import atomic_write

        buf = io.StringIO()
        writer = csv.writer(buf, lineterminator="\n")
        writer.writerow(self._columns())
        for row in self.rows:
            writer.writerow(self._csv_row(row))
        return atomic_write(path, buf.getvalue())

    def plot(self, path: Any = None, *, curves: Sequence[str] = ("c",)) -> Any:
        """A figure of ``curves`` (names as :meth:`curve` takes; default ``c``) against
        the first swept parameter, one line per value of the others; written
        atomically to ``path`` (png, pdf, svg) when given.  Returns the figure."""
        import matplotlib

        matplotlib.use("Agg")
        import numpy as np
        from matplotlib.figure import Figure

        names = list(self.axes)
        x_name = names[0]
        x = self.curve(x_name)
        others = [tuple(r.params[n] for n in names[1:]) for r in self.rows]
        fig = Figure(figsize=(7, 4.5))
        ax = fig.add_subplot(1, 1, 1)
        for name in curves:
            y = self.curve(name)
            for key in dict.fromkeys(others):
                mask = np.array([o == key for o in others])
                label = name + (
                    f" ({params_text(dict(zip(names[1:], key, strict=True)))})" if key else ""
                )
                ax.plot(x[mask], y[mask], marker="." if mask.sum() < 60 else None, label=label)
        ax.set_xlabel(x_name)
        ax.set_title(f"{self.model}: {', '.join(curves)} ({self.precision}, order {self.order})")
        ax.legend(fontsize=7)
        fig.tight_layout()
        if path is not None:
            from pathlib import Path

            from mfstein.ground.io import atomic_write

            kind = Path(str(path)).suffix.lstrip(".").lower() or "png"
            atomic_write(path, lambda fh: fig.savefig(fh, format=kind, dpi=120))
        return fig


def _fraction(text: str) -> Any:
    """A parameter value's text as a number (exact for ``p/q``)."""
    from fractions import Fraction

    try:
        return Fraction(text)
    except (ValueError, ZeroDivisionError):
        return float(text)
