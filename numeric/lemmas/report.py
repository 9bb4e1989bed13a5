"""Human-readable tables of a :class:`~numeric.lemmas.runner.Report`."""

from __future__ import annotations

import textwrap
from fractions import Fraction
from typing import Any

import mpmath

#: Significant digits shown in the tables (JSON carries the full precision).
SHOWN_DIGITS = 12


def decimal_string(x: Any, digits: int | None = None) -> str:
    """A decimal string for an mpf, int or Fraction (exact fractions keep ``p/q`` form too)."""
    if isinstance(x, bool):
        return str(x).lower()
    if isinstance(x, int):
        return str(x)
    if isinstance(x, Fraction):
        if x.denominator == 1:
            return str(x.numerator)
        dec = mpmath.nstr(mpmath.mpf(x.numerator) / x.denominator, digits or mpmath.mp.dps)
        return dec
    n = digits or mpmath.mp.dps
    return mpmath.nstr(mpmath.mpf(x), n)


def _cell(x) -> str:
    return decimal_string(x, SHOWN_DIGITS)


def format_report(report: Any) -> str:
    """The text of :class:`~numeric.lemmas.runner.Report` ``report`` (its ``to_text()``)
    and a newline."""
    return report_text(report) + "\n"


def report_text(report: Any) -> str:
    """One table per claim (N, lhs, rhs, margin, holds) and a one-line verdict each,
    of a :class:`~numeric.lemmas.runner.Report`."""
    p = report.params
    if p.get("lam") is not None:
        head = f"lam = {p['lam']}"
    else:
        head = f"gamma = {p['gamma']}, alpha = {p['alpha']} (lam = 1 - gamma/N^alpha)"
    lines = [
        f"{head}; xi = {p['xi']}; b = {p['b']}; d = {p['d']}; dps = {p['dps']}",
    ]
    if p.get("b_used"):
        used = ", ".join(f"N={n}: b={b}" for n, b in p["b_used"].items())
        lines.append(f"buffer used: {used}")
    if p.get("digits"):
        dig = ", ".join(f"N={n}: {v}" for n, v in p["digits"].items())
        lines.append(f"digits trusted (numeric's claim, capped at dps): {dig}")
    lines.append("")
    for r in report.results:
        c = r.claim
        lines.append(f"== {c.id}  [{c.equation}]")
        lines.extend(textwrap.wrap(c.statement, 96, initial_indent="   ", subsequent_indent="   "))
        if r.skipped:
            lines.append(f"   verdict: skipped: {r.skipped}")
            lines.append("")
            continue
        width = SHOWN_DIGITS + 8
        lines.append(f"   {'N':>12} {'lhs':>{width}} {'rhs':>{width}} {'margin':>{width}}  holds")
        notes = []
        for N, pt in zip(r.Ns, r.points, strict=True):
            lines.append(
                f"   {N:>12} {_cell(pt.lhs):>{width}} {_cell(pt.rhs):>{width}} "
                f"{_cell(pt.margin):>{width}}  {'yes' if pt.holds else 'NO'}"
            )
            if pt.note and pt.note not in notes:
                notes.append(pt.note)
        for note in notes[:3]:
            lines.append(f"   note: {note}")
        verdict, _, corrected = r.verdict.partition("; corrected: ")
        lines.append(f"   verdict: {verdict}")
        if corrected:
            lines.extend(
                textwrap.wrap(
                    corrected, 96, initial_indent="   corrected: ", subsequent_indent="      "
                )
            )
        lines.append("")
    return "\n".join(lines).removesuffix("\n")
