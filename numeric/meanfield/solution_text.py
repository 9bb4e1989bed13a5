"""The text form of a mean-field solution: what ``mfstein solve`` prints.

:func:`solution_text` writes a :class:`numeric.meanfield.solution.MeanFieldSolution`
(and, after ``--certify``, its :class:`numeric.certified.enclosures.CertifiedSolution`)
as the table of ``s*``, ``V`` and the diagonal of ``W`` per state, the constant
``c = tr(P Q)`` with the digits the routes agree on (core paper, Theorem 1), the
``1/N^2`` terms (:meth:`MeanFieldSolution.order2_text`), the observables' expansions
``E[g(S_N)] = g0 + g1/N + g2/N^2`` and the certified enclosure of ``c``.  Every entry
keeps only the digits its own error allows (:mod:`numeric.precision`).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

import mpmath

from mfstein.ground.display import columns, params_text

#: Significant digits an entry of the table shows at most.
SHOWN = 12


def solution_text(
    sol: Any, states: Sequence[str] | None = None, *, dps: int | None = None, cert: Any = None
) -> str:
    """The text of ``sol`` (``mfstein solve``'s output).

    ``states`` names the coordinates (default :meth:`MeanFieldSolution.state_names`);
    ``dps`` is the precision asked for (default ``sol.dps``; the float64 route reports
    its own), which bounds the digits shown (at most :data:`SHOWN`); ``cert``, the
    solution's certificate, adds the enclosure of ``c``.
    """
    states = list(sol.state_names() if states is None else states)
    dps = sol.dps if dps is None else dps
    with mpmath.workdps(dps + 20):
        parts = [_table(sol, states, dps)]
        if sol.c2 is not None:
            parts.append(sol.order2_text(states))
        if sol.observables:
            parts.append(observables_text(sol.observables))
        if cert is not None:
            parts.append(
                f"certified: c in {cert.interval()}  ({cert.certified_digits} certified "
                f"digits; Arb, {cert.prec} bits)"
            )
    return "\n".join(parts)


def _conservation_line(sol: Any, states: Sequence[str]) -> str:
    """``conserved: S + I + R; ...``: each conservation law as a weighted sum of states."""
    laws = [
        " + ".join(
            f"{c}*{s}" if c != "1" else s for c, s in zip(row, states, strict=True) if c != "0"
        )
        for row in sol.conservation
    ]
    return f"conserved: {'; '.join(laws)}"


def _table(sol: Any, states: Sequence[str], dps: int) -> str:
    """The heading, the conservation laws, the table of ``s*``, ``V`` and ``W``'s
    diagonal, the constant and the notes."""
    from numeric.precision import solution_entries, to_str

    shown = min(SHOWN, dps)
    lines = [f"model {sol.model} ({', '.join(states)}); {params_text(sol.params)}"]
    if sol.conservation:
        lines.append(_conservation_line(sol, states))
    s_str, _ = solution_entries(sol, "s_star", shown)
    v_str, ev = solution_entries(sol, "V", shown)
    w_str, ew = solution_entries(sol, "W", shown, [k * sol.n + k for k in range(sol.n)])
    rows = [[states[k], s_str[k], v_str[k], w_str[k]] for k in range(sol.n)]
    lines.append(columns(rows, ["state", "s*", "V", "W (diagonal)"]))
    lines.append(
        f"c = {to_str(sol.constant, sol.digits)}  ({sol.digits} correct digits; routes "
        f"{', '.join(sol.routes)} agree)"
    )
    lines.append(
        f"({shown} significant digits shown at most, only those each entry's error allows; "
        f"--json prints {dps} and all of W; the V and W shown are within {ev} and {ew} "
        "absolute, entries without a correct digit print as 0)"
    )
    lines += [f"note: {note}" for note in sol.notes]
    lines += [
        f"other stable fixed point: ({', '.join(f'{v:.10g}' for v in fp)})"
        for fp in sol.fixed_points
    ]
    return "\n".join(lines)


#: The heading of each term of an observable's expansion.
_HEADS = {
    "g0": "mean field g0",
    "g1": "1/N term g1",
    "g2": "1/N^2 term g2",
    "variance": "lim N Var g",
}


def observables_text(expansions: Mapping[str, Any]) -> str:
    """Text table of each observable's expansion ``E[g(S_N)] = g0 + g1/N + g2/N^2`` and
    ``lim N Var g`` (:class:`numeric.meanfield.observables.ObservableExpansion`): every
    entry with at most :data:`SHOWN` of the digits its error bound allows, a dash where
    not one digit is earned."""
    keys = ["g0", "g1"] + (["g2"] if any(e.g2 is not None for e in expansions.values()) else [])
    keys.append("variance")
    rows = []
    for name, e in expansions.items():
        row = [name]
        for k in keys:
            value = getattr(e, k)
            text = None if value is None else e.text(k)
            if text is not None:  # rounded to at most SHOWN of the digits it earned
                text = mpmath.nstr(value, min(SHOWN, e.digits[k]), strip_zeros=False)
            row.append("-" if text is None else f"{text} ({e.digits[k]} digits)")
        rows.append(row)
    return (
        columns(rows, ["observable"] + [_HEADS[k] for k in keys])
        + "\nE[g(S_N)] = g0 + g1/N"
        + (" + g2/N^2" if "g2" in keys else "")
        + f" + ...  ({SHOWN} significant digits shown at most; (n digits) is what each "
        "term earned, all printed by --json)"
    )
