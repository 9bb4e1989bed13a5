"""The result record of :func:`numeric.solve` and :func:`numeric.bound`."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

import mpmath
from mpmath import mpf

from mfstein.ground.arguments import renamed_attribute, renamed_keywords
from mfstein.ground.display import FamilyField, Presentable, count_row, shape_text
from mfstein.ground.display import family_fields as family_fields  # read from here too
from mfstein.ground.result_tasks import ResultTasks, task


class Stated(mpf):
    """An ``mpf`` that knows how many significant digits are claimed for it.

    ``str`` and ``repr`` print exactly those digits, whatever ``mpmath.mp.dps``
    is (a 30-digit constant prints 30 digits in a session at 15); arithmetic
    returns plain ``mpf`` (the claim does not survive computation).
    """

    __slots__ = ("digits",)

    def __new__(cls, value: Any, digits: int) -> Stated:
        self = mpf.__new__(cls)
        self._mpf_ = value._mpf_ if isinstance(value, mpf) else mpf(value)._mpf_
        self.digits = int(digits)
        return self

    def __reduce__(self) -> tuple[Any, tuple[Any, ...]]:
        return _stated, (self._mpf_, self.digits)

    def __str__(self) -> str:
        from numeric.precision import to_str

        return to_str(self, self.digits)

    def __repr__(self) -> str:
        return f"Stated('{self}', digits={self.digits})"


def _stated(raw: tuple, digits: int) -> Stated:
    x = mpf.__new__(Stated)
    x._mpf_ = raw
    x.digits = digits
    return x


def _observables_text(observables: dict[str, Any], most: int = 3) -> str:
    """``name: g0 + g1/N [+ g2/N^2]`` of the first ``most`` expansions (8 digits
    at most, never more than each term claims), ``, ...`` for the rest."""
    parts = []
    for name, e in list(observables.items())[:most]:
        terms = [(e.text("g0"), ""), (e.text("g1"), "/N"), (e.text("g2"), "/N^2")]
        shown = [(_short(t), unit) for t, unit in terms if t is not None]
        text = "".join(
            f"{v}{u}" if k == 0 else f" - {v[1:]}{u}" if v.startswith("-") else f" + {v}{u}"
            for k, (v, u) in enumerate(shown)
        )
        parts.append(f"{name}: {text or '(no digit earned)'}")
    more = ", ..." if len(observables) > most else ""
    return "; ".join(parts) + more


def _short(text: str, digits: int = 8) -> str:
    """A decimal string cut to at most ``digits`` significant digits (never more
    than it has)."""
    from mpmath import mpf, nstr, workdps

    with workdps(40):
        x = mpf(text)
        have = len(text.lstrip("-").replace(".", "").split("e")[0].lstrip("0")) or 1
        return nstr(x, min(digits, have))


def stated(value: Any, digits: int | None) -> Any:
    """``value`` as a :class:`Stated` number when it is an ``mpf`` and ``digits`` known."""
    if digits is None or not isinstance(value, mpf):
        return value
    return Stated(value, digits)


class Deferred:
    """A field value made at its first read: ``make()`` (a route hands over numbers
    it computed in float64 and their exact ``mpf`` conversion waits until a
    caller reads them; :class:`ConvertedOnRead`)."""

    __slots__ = ("make",)

    def __init__(self, make: Callable[[], Any]) -> None:
        self.make = make

    def __reduce__(self) -> tuple[Any, tuple[Any, ...]]:
        return _made, (self.make(),)  # pickled as its value


def _made(value: Any) -> Any:
    return value


class ConvertedOnRead:
    """A field of :class:`MeanFieldSolution` that may be given as a :class:`Deferred`:
    the value is made at the first read and kept in its place (every read, the
    dataclass's ``==``, :func:`dataclasses.replace` and pickling see the value)."""

    def __set_name__(self, owner: type, name: str) -> None:
        self.name = name

    def __get__(self, obj: Any, owner: type | None = None) -> Any:
        if obj is None:  # a required field: no class-level default
            raise AttributeError(self.name)
        value = obj.__dict__[self.name]
        if type(value) is Deferred:
            value = obj.__dict__[self.name] = value.make()
        return value

    def __set__(self, obj: Any, value: Any) -> None:
        obj.__dict__[self.name] = value


@dataclass(frozen=True, repr=False)
class MeanFieldSolution(Presentable):
    """Mean-field equilibrium, Stein/Lyapunov solution and Theorem 1's constant.

    A frozen record (assigning a field raises ``dataclasses.FrozenInstanceError``;
    a changed copy is :func:`dataclasses.replace`'s).  Model-neutral fields come
    first; what only a model family has (the supermarket's arrival rate ``lam``
    and choices ``d``) is in :attr:`family_fields`, read as ``sol.lam``,
    ``sol.d`` (``None`` for a model without them).

    For a model without a ``lam``/``d`` (any model but the supermarket family)
    ``sol.lam`` and ``sol.d`` are ``None``; ``P`` is then reported on the free
    coordinates (zero rows and columns for the others, so that
    ``(s - s*)^T P (s - s*)`` is the quadratic form of the reduced model on the
    invariant set), while ``W`` and ``V`` are in all coordinates.
    """

    #: Name of the model the solution belongs to.
    model: str
    #: Parameter values used (name -> decimal string).
    params: dict[str, str]
    #: Requested significant digits.
    dps: int
    #: The number of coordinates (for a supermarket with ``b = "auto"``/``"inf"`` the
    #: buffer actually used).  ``b`` is the deprecated name of ``n`` (warns).
    n: int
    #: Fixed point ``s*_1 .. s*_n``.
    s_star: list[mpf] = ConvertedOnRead()  # type: ignore[assignment]
    #: The Jacobian at ``s*``.
    J: mpmath.matrix = ConvertedOnRead()  # type: ignore[assignment]
    #: The paper's ``f~(s*)``.
    ftilde: list[mpf] = ConvertedOnRead()  # type: ignore[assignment]
    #: ``Q(s*) = 2 diag(f~)``.
    Q: mpmath.matrix = ConvertedOnRead()  # type: ignore[assignment]
    #: Solution of ``P J + J^T P = -M`` (Stein's equation for the linearised model).
    P: mpmath.matrix = ConvertedOnRead()  # type: ignore[assignment]
    #: Solution of ``J W + W J^T + Q = 0`` (Ornstein--Uhlenbeck covariance).
    W: mpmath.matrix = ConvertedOnRead()  # type: ignore[assignment]
    #: Refined mean-field bias, ``E[S] ~ s* + V/N``.
    V: list[mpf] = ConvertedOnRead()  # type: ignore[assignment]
    #: Eigenvalues of ``J(s*)``, ascending (real and negative).
    eigenvalues: list[Any] = ConvertedOnRead()  # type: ignore[assignment]
    #: ``c = tr(P Q) = tr(M W)``; for ``M = I`` this is ``2 tr(P F~)`` of the core paper's
    #: Theorem 1 (with the sign fixed), so ``E||S - s*||^2 ~ c/N``.
    constant: mpf
    #: Correct significant digits claimed for ``constant`` (all routes and two
    #: working precisions agree to at least this many).
    digits: int
    #: Route name -> value of ``constant`` computed by that route (decimal string).
    routes: dict[str, str] = field(default_factory=dict)
    #: Indices of the coordinates solved for; the others follow from the
    #: conservation laws (all indices when there are none).
    free: list[int] | None = None
    #: Linear invariants ``c . s`` of the jump vectors (rows of integers or
    #: fraction strings), empty when none.
    conservation: list[list[str]] = field(default_factory=list)
    #: Other stable fixed points found from other starts (float64 accuracy), empty
    #: when the fixed point is the only one found.
    fixed_points: list[list[float]] = field(default_factory=list)
    #: Remarks a reader of the numbers needs (truncations, fallbacks).
    notes: list[str] = field(default_factory=list)
    #: The tail truncation, ``None`` when every level was solved, else ``K`` (levels
    #: ``K+1..b`` are negligible at the requested precision).  On the supermarket's fast
    #: path ``J``, ``Q``, ``P`` and ``eigenvalues`` are then of size ``K`` while ``s_star``,
    #: ``V``, ``W`` and ``ftilde`` have all ``b`` entries; the general route's truncation
    #: pads ``s_star``, ``J``, ``Q``, ``P``, ``V``, ``W`` and ``ftilde`` to ``b`` (zeros
    #: in the dropped levels) and keeps the ``K`` eigenvalues.
    truncated_at: int | None = None
    #: One sentence saying what was truncated (see :attr:`truncated_at`); empty when
    #: nothing was.
    note: str = ""
    #: With ``order=2``, the ``1/N^2`` coefficient of the mean,
    #: ``E[S] = s* + V/N + A/N^2``; ``None`` otherwise.
    A: list[mpf] | None = None
    #: With ``order=2``, the ``1/N^2`` coefficient of the second moment,
    #: ``E[(S - s*)(S - s*)^T] = W/N + B/N^2``; ``None`` otherwise.
    B: mpmath.matrix | None = None
    #: With ``order=2``, ``c2 = tr(M B)``, so that
    #: ``N E[(S - s*)^T M (S - s*)] = c + c2/N + O(1/N^2)``
    #: (:mod:`numeric.meanfield.stationary`); ``None`` otherwise.
    c2: mpf | None = None
    #: With ``order=2``, the digits claimed for ``A``, ``B`` and ``c2``
    #: (:mod:`numeric.meanfield.stationary`); ``None`` otherwise.
    digits2: int | None = None
    #: Per-entry absolute error estimates earned by the two working precisions
    #: (:func:`numeric.precision.entry_errors`): ``"s_star"``, ``"V"``, ``"W"``
    #: (row-major), and with ``order=2`` also ``"A"``, ``"B"``.  Printing goes
    #: through :func:`numeric.precision.solution_entries`, which keeps only the
    #: digits these errors allow and states a bound valid for every entry.
    errors: dict[str, list[mpf]] = field(default_factory=dict)
    #: With ``order=2``, the third-moment coefficient ``E[Y (x) Y (x) Y] = C/N^2``
    #: (``Y = S - s*``) on the free coordinates (nested lists); ``None`` otherwise. In the
    #: model's coordinates ``C_ijk = sum T_ia T_jb T_kc C_abc`` with ``T`` =
    #: :attr:`free_map` (:mod:`numeric.meanfield.observables` contracts it).
    C: Any = None
    #: With ``order=2``, the map from the free coordinates to all of them
    #: (``n x len(free)`` rows) that carries :attr:`C` to the model's coordinates;
    #: ``None`` otherwise.
    free_map: list[list[mpf]] | None = None
    #: Name -> :class:`numeric.meanfield.observables.ObservableExpansion` of each
    #: observable requested by ``numeric.solve(..., observables=[...])``
    #: (empty when none; :meth:`observable` expands any other).
    observables: dict[str, Any] = field(default_factory=dict)
    #: What only the model's family defines (name -> value), e.g.
    #: ``{"lam": lam, "d": d}`` for the supermarket family (``lam`` at the working
    #: precision); empty for other models. Read through :attr:`lam` and :attr:`d`.
    family_fields: dict[str, Any] = field(default_factory=dict)
    #: The model the solution was computed from (a :class:`derive.Model`, a model read from disk or
    #: a factory called on first use); read it through :meth:`get_model`. ``None`` when the
    #: solution was built by hand.
    source_model: Any = field(default=None, repr=False, compare=False)
    #: The parameter values the solution was computed from, as given (name -> value, exact
    #: where given exactly; ``params`` holds them as decimal strings); :meth:`certify`
    #: certifies exactly these.
    inputs: dict[str, Any] = field(default_factory=dict, repr=False, compare=False)
    #: The start the solution was computed from, as given; :meth:`certify` certifies
    #: exactly this start.
    start: Any = field(default=None, repr=False, compare=False)
    #: The quadratic observable ``M`` the solution was computed from, as given (``None``
    #: for the identity); :meth:`certify` certifies exactly this ``M``.
    M: Any = field(default=None, repr=False, compare=False)
    #: What :meth:`certify` and :meth:`observable` ask of the routes, attached by the
    #: entry that built the solution (:data:`numeric.meanfield.result_tasks.SOLUTION_TASKS`);
    #: ``None`` when the solution was built by hand.  Not part of the JSON or of ``==``.
    tasks: ResultTasks | None = field(default=None, repr=False, compare=False)

    methods = renamed_attribute("MeanFieldSolution", "methods", "routes")

    def __post_init__(self) -> None:
        # the constants print with the digits claimed for them (see Stated)
        object.__setattr__(self, "constant", stated(self.constant, self.digits))
        object.__setattr__(self, "c2", stated(self.c2, self.digits2))

    b = renamed_attribute("MeanFieldSolution", "b", "n")

    lam = FamilyField("The family's arrival rate (:attr:`family_fields`).")
    d = FamilyField("The family's number of choices (:attr:`family_fields`).")

    # ------------------------------------------------------------------
    # the model it belongs to
    # ------------------------------------------------------------------
    def get_model(self) -> Any:
        """The :class:`derive.Model` this solution was computed from (``None`` if
        it was built by hand)."""
        m = self.source_model
        if hasattr(type(m), "full_model"):  # a model read from disk (derive.models.stored)
            m = m.full_model()
        if callable(m) and not hasattr(m, "transitions"):
            m = m()
            object.__setattr__(self, "source_model", m)  # a cache, not a field's value
        return m

    def state_names(self) -> list[str]:
        """The model's state names (``s1 .. sb`` when the model is not at hand)."""
        m = self.source_model
        states = getattr(m, "states", None) if hasattr(m, "transitions") else None
        if states is not None and len(states) == self.n:
            return [str(x) for x in states]
        return [f"s{k}" for k in range(1, self.n + 1)]

    def certify(self, **options: Any) -> Any:
        """Rigorous Arb enclosures of this solution, the one certification entry
        (:func:`numeric.certified.enclosures.certify_float_solution`; ``numeric.certify``
        solves and calls this): of the constant of the ``M`` it was computed with, at
        its own parameter values and start.  ``options``: ``params``, ``dps``, ``M``
        (must equal the solution's), ``start``, ``model``.  The certifier is the
        ``certify`` of :attr:`tasks`, attached by the entry that built the solution
        (this record imports no route)."""
        return task(self, "certify", "numeric.certify(model, params)")(self, **options)

    # ------------------------------------------------------------------
    # presentation
    # ------------------------------------------------------------------
    def to_dict(self) -> dict[str, Any]:
        """JSON-ready dict: high-precision numbers as decimal strings of at most
        ``dps`` digits, each entry of ``s*``, ``V``, ``W``, ``A``, ``B`` keeping only
        the digits its own error allows (``<name>_abs_error`` holds for every
        entry, :func:`numeric.precision.format_entries`), ``digits`` claimed for
        ``constant``; independent of ``mpmath.mp.dps``.  The keys of
        ``mfstein solve --json`` (and ``lam``, ``b``, ``d`` of ``mfstein bound``)."""
        from numeric.precision import matrix_rows, solution_entries, to_str

        p, n = self.dps, self.n
        shown = min(p, self.digits)  # a float64 solution claims fewer than its 17
        with mpmath.workdps(p + 20):
            out: dict[str, Any] = {"model": self.model, "params": dict(self.params)}
            if self.lam is not None:
                out["lam"] = to_str(self.lam, shown)
            out["b"] = n  # the documented key of --json (the dimension, `n`)
            if self.d is not None:
                out["d"] = self.d
            out["states"] = self.state_names()
            out["dps"] = p
            s_str, es = solution_entries(self, "s_star", p)
            v_str, ev = solution_entries(self, "V", p)
            w_str, ew = solution_entries(self, "W", p)
            out.update(
                {
                    "s_star": s_str,
                    "V": v_str,
                    "W": matrix_rows(w_str, n),
                    "s_star_abs_error": es,
                    "V_abs_error": ev,
                    "W_abs_error": ew,
                    "constant": to_str(self.constant, shown),
                    "digits": self.digits,
                    "methods": self._methods_text(),
                    "conservation": self.conservation,
                    "other_fixed_points": self.fixed_points,
                    "notes": list(self.notes),
                }
            )
            if self.truncated_at is not None:
                out["truncated_at"] = self.truncated_at
            if self.c2 is not None:
                out.update(self.order2_dict())
            if self.observables:
                out["observables"] = {k: e.to_dict() for k, e in self.observables.items()}
        return out

    def _methods_text(self) -> dict[str, str]:
        """Each route's value as printed: with the digits claimed for ``constant``
        (``c2:`` routes: for ``c2``), never more than ``dps``."""
        from mfstein.ground.display import claimed

        def digits(route: str) -> int:
            own = self.digits2 if route.startswith("c2:") and self.digits2 else self.digits
            return min(self.dps, own)

        return {k: claimed(v, digits(k)) for k, v in self.routes.items()}

    def order2_dict(self) -> dict[str, Any]:
        """The 1/N^2 terms as decimal strings (``A``, ``B`` with per-entry digits
        and error bounds valid for every entry)."""
        from numeric.precision import matrix_rows, solution_entries, to_str

        p, n = self.dps, self.n
        with mpmath.workdps(p + 20):
            a_str, ea = solution_entries(self, "A", p)
            b_str, eb = solution_entries(self, "B", p)
            return {
                "A": a_str,
                "B": matrix_rows(b_str, n),
                "A_abs_error": ea,
                "B_abs_error": eb,
                "c2": to_str(self.c2, min(p, self.digits2 or p)),
                "digits2": self.digits2,
            }

    def order2_text(self, states: list[str]) -> str:
        """The 1/N^2 terms as text (``mfstein solve`` and ``mfstein refined``): ``A`` and
        the diagonal of ``B`` per state, at most 12 digits, then ``c2 = tr(M B)``."""
        from mfstein.ground.display import columns
        from numeric.precision import solution_entries, to_str

        shown = min(12, self.dps)
        a_str, _ = solution_entries(self, "A", shown)
        b_str, _ = solution_entries(self, "B", shown, [k * self.n + k for k in range(self.n)])
        rows = [[states[k], a_str[k], b_str[k]] for k in range(self.n)]
        return (
            columns(rows, ["state", "A", "B (diagonal)"])
            + f"\nc2 = tr(M B) = {to_str(self.c2, self.digits2)}  ({self.digits2} correct "
            "digits): N E[(S - s*)^T M (S - s*)] = c + c2/N + O(1/N^2)"
        )

    def to_text(
        self, states: list[str] | None = None, *, dps: int | None = None, cert: Any = None
    ) -> str:
        """What ``mfstein solve`` prints (:func:`numeric.meanfield.solution_text.solution_text`):
        the table of ``s*``, ``V`` and ``W``'s diagonal per state, ``c = tr(P Q)`` with its
        digits (core paper, Theorem 1), the ``1/N^2`` terms, the observables and, with
        ``cert`` (this solution's :meth:`certify`), the enclosure of ``c``.  ``states``
        names the coordinates (default :meth:`state_names`); ``dps`` is the precision
        asked for (default ``self.dps``), which bounds the digits shown."""
        from numeric.meanfield.solution_text import solution_text

        return solution_text(self, states, dps=dps, cert=cert)

    def _rows(self) -> list[tuple[str, str]]:
        from numeric.precision import solution_entries, to_str

        with mpmath.workdps(self.dps + 20):
            rows = [("model", self.model)]
            if self.params:
                rows.append(("params", ", ".join(f"{k} = {v}" for k, v in self.params.items())))
            elif self.lam is not None:
                rows.append(("lam", to_str(self.lam, min(self.dps, self.digits, 20))))
            rows.append(("c", f"{to_str(self.constant, self.digits)}  ({self.digits} digits)"))
            if self.c2 is not None:
                rows.append(("c2", f"{to_str(self.c2, self.digits2)}  ({self.digits2} digits)"))
            # at most 8 digits, and only those each entry's error allows
            head = ", ".join(solution_entries(self, "s_star", min(8, self.dps))[0][:4])
            more = ", ..." if self.n > 4 else ""
            rows.append(("s*", f"({head}{more})  [{self.n} coordinates]"))
            rows.append(("V, W", f"{shape_text(self.V)}, {shape_text(self.W)}"))
            rows.append(("routes", ", ".join(self.routes)))
            if self.observables:
                rows.append(("observables", _observables_text(self.observables)))
            if self.notes:
                rows.append(count_row("notes", self.notes))
        return rows

    _MORE = "all numbers: .s_star, .V, .W, .P, .J, .routes, .observables; .to_dict() for JSON"

    def _repr_latex_(self) -> str:
        """The headline identity ``N E||S - s*||^2 -> c`` with its digits."""
        from numeric.precision import to_str

        with mpmath.workdps(self.dps + 20):
            c = to_str(self.constant, self.digits)
            text = rf"N\,\mathbb{{E}}\|S - s^*\|^2 \to c = {c}"
            if self.c2 is not None:
                text += rf",\quad c_2 = {to_str(self.c2, self.digits2)}"
        return f"${text}$"

    def observable(self, model: Any, g: Any, params: Any = None) -> Any:
        """The expansion of ``E[g(S_N)]`` (:func:`numeric.meanfield.observables.expand`,
        the ``observable`` of :attr:`tasks`)."""
        instead = "numeric.solve(model, params, observables=[g])"
        return task(self, "observable", instead)(self, model, g, params)


MeanFieldSolution.__init__ = renamed_keywords(methods="routes")(MeanFieldSolution.__init__)  # type: ignore[method-assign]
