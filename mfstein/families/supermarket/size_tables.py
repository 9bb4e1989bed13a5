"""The results of ``mfstein bound`` and ``mfstein refined``: one supermarket solution
per system size ``N``, shown as the command's table or JSON.

:class:`BoundTable` holds Theorem 1's constant ``c`` of the core paper (sign
corrected) and the bound ``c/N`` on ``E||S - s*||^2`` at each ``N``, with the Arb
certificates when asked; :class:`RefinedTable` the fixed point ``s*``, the refined
bias ``V`` (``E[S] = s* + V/N + O(1/N^2)``, Gast and Van Houdt) and the
Ornstein-Uhlenbeck covariance ``W`` (``J W + W J^T + Q = 0``), at order 2 also
``E[S] = s* + V/N + A/N^2``.  The command builds one and prints its ``to_json()``
or :meth:`render` (the aligned table).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, ClassVar

import mpmath

from mfstein.ground.display import Presentable, columns, renamed_to_text


@dataclass(frozen=True, repr=False)
class _SizeTable(Presentable):
    """What both tables hold: the sizes ``N`` and the solution at each one
    (:class:`numeric.meanfield.solution.MeanFieldSolution`; one object for sizes that share
    an arrival rate)."""

    #: The system sizes ``N``, in the order given, each once.
    sizes: tuple[int, ...]
    #: The supermarket solution at each size
    #: (:class:`numeric.meanfield.solution.MeanFieldSolution`, in the order of ``sizes``; one
    #: object for the sizes that share an arrival rate).
    solutions: tuple[Any, ...]

    def _pairs(self) -> list[tuple[int, Any]]:
        return list(zip(self.sizes, self.solutions, strict=True))

    def _workdps(self) -> Any:
        """The working precision the text is formatted at (20 digits of guard)."""
        return mpmath.workdps(self.solutions[0].dps + 20)

    def _rows(self) -> list[tuple[str, str]]:
        from numeric.precision import to_str

        with self._workdps():
            return [
                (f"N = {n}", f"lam = {to_str(s.lam, min(s.dps, 20))}, b = {s.n}, d = {s.d}, "
                             f"c = {to_str(s.constant, s.digits)}")
                for n, s in self._pairs()
            ]  # fmt: skip


@dataclass(frozen=True, repr=False)
class BoundTable(_SizeTable):
    """``mfstein bound``'s result: ``c`` and ``c/N`` at each size (module docstring);
    ``certificates``: each size's :class:`numeric.certified.enclosures.CertifiedSolution`,
    or ``None`` when not asked."""

    #: Each size's :class:`numeric.certified.enclosures.CertifiedSolution` (Arb enclosures of the
    #: constant, in the order of ``sizes``); ``None`` when not asked for.
    certificates: tuple[Any, ...] | None = None

    _MORE: ClassVar[str] = "each size's solution in .solutions; .to_text() for the table"

    def to_dict(self) -> dict[str, Any]:
        """``{"results": [...]}``: per size ``N``, the solution's keys
        (:meth:`numeric.meanfield.solution.MeanFieldSolution.to_dict`), ``bound = c/N`` and the
        certificate's keys."""
        from numeric.precision import to_str

        results = []
        with self._workdps():
            for i, (n, s) in enumerate(self._pairs()):
                bound = to_str(s.constant / n, s.dps)
                cert = self.certificates[i].to_dict() if self.certificates else {}
                results.append({"N": n, **s.to_dict(), "bound": bound, **cert})
        return {"results": results}

    render = renamed_to_text("render")

    def to_text(self) -> str:
        """The table ``N, lam, b, constant, bound, digits``, the routes, and with
        certificates the certified interval of each size."""
        from numeric.precision import to_str

        with self._workdps():
            rows = [
                [str(n), to_str(s.lam, s.dps), str(s.n), to_str(s.constant, s.digits),
                 to_str(s.constant / n, s.digits), str(s.digits)]
                for n, s in self._pairs()
            ]  # fmt: skip
            lines = [
                columns(rows, ["N", "lam", "b", "constant", "bound", "digits"]),
                f"routes: {', '.join(self.solutions[0].routes)}; bound = constant/N "
                "(E||S - s*||^2 ~ c/N)",
            ]
            if self.certificates:
                pairs = zip(self.sizes, self.certificates, strict=True)
                crow = [[str(n), c.interval(), str(c.certified_digits)] for n, c in pairs]
                lines += [
                    columns(crow, ["N", "certified constant [lo, hi]", "certified digits"]),
                    "certified: Arb ball arithmetic, Krawczyk + Lyapunov certificates (exact lam)",
                ]
        return "\n".join(lines)


@dataclass(frozen=True, repr=False)
class RefinedTable(_SizeTable):
    """``mfstein refined``'s result: ``s*``, ``V``, ``s* + V/N`` and ``W`` at each size
    (module docstring), with the 1/N^2 terms when the solutions have them."""

    _MORE: ClassVar[str] = "each size's solution in .solutions; .to_text() for the tables"

    #: Significant digits the text shows at most.
    SHOWN: ClassVar[int] = 12

    @staticmethod
    def mean_entries(s: Any, n: int, digits: int, order2: bool = False) -> tuple[list[str], str]:
        """``s* + V/N`` (``+ A/N^2``) at size ``n`` as decimal strings keeping only the
        digits the per-entry errors of its terms allow, and their common bound."""
        from numeric.precision import format_entries

        e = s.errors
        values = [x + v / n for x, v in zip(s.s_star, s.V, strict=True)]
        errs = [a + b / n for a, b in zip(e["s_star"], e["V"], strict=True)]
        if order2:
            values = [x + a / n**2 for x, a in zip(values, s.A, strict=True)]
            errs = [x + a / n**2 for x, a in zip(errs, e["A"], strict=True)]
        return format_entries(values, errs, digits)

    def to_dict(self) -> dict[str, Any]:
        """``{"results": [...]}``: per size ``N``, the solution's keys and ``mean`` =
        ``s* + V/N`` (with order 2 also ``mean2`` = ``+ A/N^2``), each with its
        ``_abs_error``."""
        results = []
        with self._workdps():
            for n, s in self._pairs():
                out = {"N": n, **s.to_dict()}
                out["mean"], out["mean_abs_error"] = self.mean_entries(s, n, s.dps)
                if s.c2 is not None:
                    out["mean2"], out["mean2_abs_error"] = self.mean_entries(
                        s, n, s.dps, order2=True
                    )
                results.append(out)
        return {"results": results}

    render = renamed_to_text("render")

    def to_text(self) -> str:
        """Per size: its heading, the table ``k, s*_k, V_k, s*_k + V_k/N, W_kk`` and
        what the digits mean; with order 2 the 1/N^2 terms and ``c + c2/N``."""
        from numeric.precision import solution_entries, to_str

        digits, lines = self.SHOWN, []
        with self._workdps():
            for n, s in self._pairs():
                lines.append(f"N = {n}, lam = {to_str(s.lam, s.dps)}, b = {s.n}, d = {s.d}")
                s_str, _ = solution_entries(s, "s_star", digits)
                v_str, ev = solution_entries(s, "V", digits)
                mean, _ = self.mean_entries(s, n, digits)
                w_str, ew = solution_entries(s, "W", digits, [k * s.n + k for k in range(s.n)])
                rows = [[str(k + 1), s_str[k], v_str[k], mean[k], w_str[k]] for k in range(s.n)]
                lines.append(columns(rows, ["k", "s*_k", "V_k", "s*_k + V_k/N", "W_kk"]))
                lines.append(
                    f"({digits} significant digits shown at most, only those each entry's "
                    f"error allows; --json prints dps digits and all of W; the V and W shown "
                    f"are within {ev} and {ew} absolute, entries without a correct digit "
                    "print as 0)"
                )
                if s.c2 is not None:
                    lines.append(s.order2_text([str(k + 1) for k in range(s.n)]))
                    c = to_str(s.constant + s.c2 / n, min(s.digits, s.digits2))
                    lines.append(f"c + c2/N = {c}")
        return "\n".join(lines)
