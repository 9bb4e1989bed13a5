"""The text form of a transient expansion: what ``mfstein transient`` prints
(:meth:`numeric.expansion.transient_result.TransientResult.to_text`).

A table of ``E[S(t)] = x(t) + V(t)/N + A(t)/N^2 + O(1/N^3)``'s terms at up to 11
times and the first 4 states (each entry down to the place of its stated error, as
``--json``), the fixed point ``x(t)`` tends to, the notes, then each observable's
``g(x(t))`` and ``g1(t)`` at the same times (float64, no digits claimed).
"""

from __future__ import annotations

from typing import Any

from mfstein.ground.display import columns, params_text

#: States the table shows at most (``--json`` prints all).
SHOWN_STATES = 4


def shown_times(res: Any) -> list[int]:
    """The indices of the times the tables show: all of them, or 11 evenly spaced."""
    m = len(res.times)
    return sorted({round(k * (m - 1) / 10) for k in range(11)}) if m > 11 else list(range(m))


def _columns(res: Any, rows_idx: list[int], n: int) -> dict[str, list[list[str]]]:
    """The printed entries of ``x`` (``V``, ``A``) at the times ``rows_idx``, first
    ``n`` states."""
    cols = {}
    for name in ["x"] + (["V"] if res.V is not None else []) + (["A"] if res.A is not None else []):
        if res.route == "float64":  # down to the place of its stated error, as --json
            printed = res.printed(name)
            cols[name] = [[repr(v) for v in printed[k][:n]] for k in rows_idx]
            continue
        import mpmath

        from numeric.precision import format_entries

        a = getattr(res, name)
        with mpmath.workdps(res.dps + 20):
            flat, _ = format_entries(
                [v for k in rows_idx for v in a[k][:n]],
                [e for k in rows_idx for e in res.errors[name][k][:n]],
                min(12, res.dps),
            )
        cols[name] = [flat[i * n : (i + 1) * n] for i in range(len(rows_idx))]
    return cols


def transient_text(res: Any) -> str:
    """The text of ``res`` (``mfstein transient``'s output; module docstring)."""
    rows_idx = shown_times(res)
    shown = res.states[:SHOWN_STATES]
    header = ["t"] + [f"x[{s}]" for s in shown]
    if res.V is not None:
        header += [f"V[{s}]" for s in shown]
    if res.A is not None:
        header += [f"A[{s}]" for s in shown]
    cols = _columns(res, rows_idx, len(shown))
    rows = []
    for i, k in enumerate(rows_idx):
        row = [f"{float(res.times[k]):.6g}"]
        for name in cols:
            row += cols[name][i]
        rows.append(row)
    lines = [
        f"model {res.model} ({', '.join(res.states)}); {params_text(res.params)}; "
        f"order {res.order}",
        "E[S(t)] = x(t) + V(t)/N + A(t)/N^2 + O(1/N^3) from S(0) = x(0)",
        columns(rows, header),
    ]
    more = []
    if len(res.times) > len(rows):
        more.append(f"{len(rows)} of {len(res.times)} times")
    if len(shown) < len(res.states):
        more.append(f"{len(shown)} of {len(res.states)} states")
    if more:
        lines.append(f"({' and '.join(more)} shown; --json prints all, with W and B)")
    if res.limit is not None:
        limit = ", ".join(repr(v) for v in res.printed_limit()[:8])
        lines.append(
            f"x(t) tends to the fixed point ({limit}{', ...' if len(res.limit) > 8 else ''})"
        )
    lines += [f"note: {note}" for note in res.notes]
    if res.observables:
        lines.append(observables_text(res, res.observables))
    return "\n".join(lines)


def observables_text(res: Any, observed: dict[str, Any]) -> str:
    """Each observable's mean-field value ``g(x(t))`` and ``1/N`` coefficient ``g1(t)``
    at the times the state table shows (float64, no digits claimed)."""
    header = ["t"]
    for name in observed:
        header.append(f"g[{name}]")
        if observed[name].g1 is not None:
            header.append(f"g1[{name}]")
    rows = []
    for k in shown_times(res):
        row = [f"{float(res.times[k]):.6g}"]
        for tr in observed.values():
            row.append(f"{tr.mean_field[k]:.10g}")
            if tr.g1 is not None:
                row.append(f"{tr.g1[k]:.10g}")
        rows.append(row)
    return (
        "E[g(S(t))] = g(x(t)) + g1(t)/N + O(1/N^2)  (observables in float64, no digits "
        "claimed)\n" + columns(rows, header)
    )
