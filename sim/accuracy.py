"""The accuracy table of an observable as a result: :class:`AccuracyTable`.

:func:`accuracy` runs :func:`sim.observable_table.accuracy_table` (the rows: for
each N the mean-field value ``g(s*)``, the refined values ``g0 + g1/N`` and
``g0 + g1/N + g2/N^2``, the exact finite-N value or the reason it is absent, a
simulation estimate with its 95% batch-means CI) and wraps them with the run's
settings (seed, events, replications), so that ``mfstein table --model ...``
prints ``to_json()``, a CSV row per N or an aligned text table, and draws the
observable against N (:meth:`AccuracyTable.plot`).  Numbers stay the decimal
strings the rows carry; nothing is re-rounded here.
"""

from __future__ import annotations

import csv
import io
import os
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, ClassVar

from mfstein.ground.display import Presentable, estimate_text, renamed_to_text

#: The columns of the text and CSV forms, with their headers.
COLUMNS = (
    ("N", "N"),
    ("mean_field", "mean field"),
    ("order1", "+ 1/N"),
    ("order2", "+ 1/N^2"),
    ("exact", "exact"),
    ("simulation", "simulation (95% CI)"),
)


@dataclass(frozen=True, repr=False)
class AccuracyTable(Presentable):
    """Rows of the accuracy table of one observable of one model.

    ``rows`` are dicts with the keys ``N``, ``mean_field``, ``order1``, ``order2``,
    ``exact``, ``exact_note``, ``simulation`` (``{"mean", "ci95"}`` or ``None``),
    ``simulation_note``, ``simulation_seed`` and ``params`` (the parameters at
    that N); numbers are
    decimal strings, ``None`` where absent.  ``seed``/``steps``/``reps`` are the
    simulation's settings (``None`` without simulation).
    """

    #: The columns of the text table (key, heading).
    _columns: ClassVar[tuple[tuple[str, str], ...]] = COLUMNS

    #: The model's name.
    model: str
    #: The observable's name (declared, or the expression's text).
    observable: str
    #: The observable's expression as text; ``None`` for the quadratic observable and in a
    #: heterogeneous population's table.
    expression: str | None
    #: The expansion order asked for, 1 (``g0 + g1/N``) or 2 (also ``+ g2/N^2``).
    order: int
    #: One dict per N, in the order of the sizes given (keys in the class docstring; also
    #: ``expansion_note``, which expansion values earn no digit and how large they may be).
    rows: list[dict[str, Any]] = field(default_factory=list)
    #: The simulation's seed, the same at each N; ``None`` without simulation.
    seed: int | None = None
    #: The simulation's events per replication at each N; ``None`` without simulation.
    steps: int | None = None
    #: The simulation's replications at each N; ``None`` without simulation.
    reps: int | None = None
    #: The parameters as given (name -> value as text; a value may be an expression in
    #: ``N``, each row's ``params`` holds its value at that N).
    params: dict[str, str] = field(default_factory=dict, kw_only=True)
    #: The start every column was computed from, as given (the initial state in
    #: fractions, or a string such as ``"reference"``); ``None`` for the model's own.
    start: Any = field(default=None, kw_only=True, repr=False, compare=False)

    _MORE: ClassVar[str] = "rows in to_dict()"

    def to_dict(self) -> dict[str, Any]:
        """``{"model", "observable", "rows"}`` (the issue's JSON shape, kept as it is:
        each row carries its ``params`` at that N; numbers are decimal strings with
        their claimed digits, simulations ``{"mean", "ci95"}``)."""
        return {"model": self.model, "observable": self.observable, "rows": list(self.rows)}

    def _title(self) -> str:
        named = self.observable.isidentifier() and self.expression not in (None, self.observable)
        expr = f" = {self.expression}" if named else ""  # a declared name: show what it is
        return f"AccuracyTable: {self.observable}{expr}, {self.model} model, order {self.order}"

    def _rows(self) -> list[tuple[str, str]]:
        out = []
        for r in self.rows:
            best = r["order2"] or r["order1"] or r["mean_field"]
            extra = f", exact {r['exact']}" if r["exact"] is not None else ""
            sim = r["simulation"]
            if sim is not None:
                extra += f", simulation {estimate_text(sim['mean'], sim['ci95'])}"
            out.append((f"N = {r['N']}", f"{best}{extra}"))
        return out

    def settings_text(self) -> str:
        """One line naming the simulation's seed, events and replications."""
        if self.seed is None:
            return "no simulation"
        return (
            f"simulation: seed = {self.seed}, {self.reps} replications x {self.steps:.3g} "
            "events per N, 95% batch-means CIs"
        )

    def cells(self, row: Mapping[str, Any]) -> list[str]:
        """The text cells of one row (a dash where a value is absent)."""
        out = []
        for key, _ in self._columns:
            v = row.get(key)
            if key == "simulation":
                out.append("-" if v is None else estimate_text(v["mean"], v["ci95"]))
            else:
                out.append("-" if v is None else str(v))
        return out

    render = renamed_to_text("render")

    def to_text(self) -> str:
        """An aligned text table, the notes (why a value is absent) and the settings."""
        head = [h for _, h in self._columns]
        body = [self.cells(r) for r in self.rows]
        widths = [max(len(x) for x in col) for col in zip(head, *body, strict=True)]
        lines = [self._title().removeprefix("AccuracyTable: ")]
        for cells in [head, *body]:
            lines.append("  ".join(c.rjust(w) for c, w in zip(cells, widths, strict=True)))
        if len({tuple(sorted(r.get("params", {}).items())) for r in self.rows}) > 1:
            for r in self.rows:  # parameters that are expressions in N, at each N
                pv = ", ".join(f"{k} = {v}" for k, v in r["params"].items())
                lines.append(f"N = {r['N']}: {pv}")
        for r in self.rows:
            for key in ("expansion_note", "exact_note", "simulation_note"):
                if r.get(key):
                    lines.append(f"N = {r['N']}: {key.split('_')[0]}: {r[key]}")
        lines.append(self.settings_text())
        return "\n".join(lines)

    def to_csv(self) -> str:
        """One CSV row per N (the simulation as its mean, ci95 and seed)."""
        buf = io.StringIO()
        w = csv.writer(buf, lineterminator="\n")
        w.writerow(
            [
                "N",
                "mean_field",
                "order1",
                "order2",
                "exact",
                "simulation_mean",
                "simulation_ci95",
                "simulation_seed",
            ]
        )
        for r in self.rows:
            sim = r["simulation"] or {}
            w.writerow(
                [
                    r["N"],
                    r["mean_field"],
                    r["order1"] or "",
                    r["order2"] or "",
                    r["exact"] or "",
                    sim.get("mean", ""),
                    sim.get("ci95", ""),
                    "" if r.get("simulation_seed") is None else r["simulation_seed"],
                ]
            )
        return buf.getvalue()

    def plot(self, path: str | os.PathLike) -> None:
        """The observable against N (log x): the expansion orders as lines, exact
        values as markers, the simulation with its 95% CI as error bars.  Written
        atomically (:func:`mfstein.ground.io.atomic_write`)."""
        from sim.figures import new_figure, save_figure

        Ns = [r["N"] for r in self.rows]
        fig, ax = new_figure()
        for key, label, style in (
            ("mean_field", "mean field", "-"),
            ("order1", "+ 1/N", "--"),
            ("order2", "+ 1/N^2", ":"),
        ):
            if all(r[key] is not None for r in self.rows):
                ax.plot(Ns, [float(r[key]) for r in self.rows], style, marker=".", label=label)
        ex = [(r["N"], float(r["exact"])) for r in self.rows if r["exact"] is not None]
        if ex:
            ax.plot(
                *zip(*ex, strict=True),
                "D",
                markerfacecolor="none",
                color="k",
                label="exact (finite N)",
            )
        sims = [r for r in self.rows if r["simulation"] is not None]
        if sims:
            ax.errorbar(
                [r["N"] for r in sims],
                [float(r["simulation"]["mean"]) for r in sims],
                yerr=[float(r["simulation"]["ci95"]) for r in sims],
                fmt="o",
                capsize=4,
                label=f"simulation (95% CI), seed = {self.seed}",
            )
        save_figure(
            fig, ax, path, "N", f"E[{self.observable}]", f"{self.model}: {self.observable}"
        )


@dataclass(frozen=True, repr=False)
class AccuracyTables(Presentable):
    """The accuracy tables of several observables of one model, computed together
    (one mean-field solve, one exact chain and one simulation per N): each
    observable its own :class:`AccuracyTable`, in the order given.

    The text form is each table in turn (its title, columns and notes) and the
    simulation's settings once; the JSON ``{"model", "observables": [names],
    "tables": [each table's to_dict()]}``; the CSV one row per observable and N,
    the observable's name first.
    """

    #: One :class:`AccuracyTable` per observable, in the order given.
    tables: tuple[AccuracyTable, ...]

    _MORE: ClassVar[str] = "tables in to_dict()"

    def to_dict(self) -> dict[str, Any]:
        """``{"model", "observables", "tables"}``."""
        return {
            "model": self.tables[0].model,
            "observables": [t.observable for t in self.tables],
            "tables": [t.to_dict() for t in self.tables],
        }

    def _title(self) -> str:
        names = ", ".join(t.observable for t in self.tables)
        first = self.tables[0]
        return f"AccuracyTables: {names}, {first.model} model, order {first.order}"

    def _rows(self) -> list[tuple[str, str]]:
        return [
            (f"{t.observable}, {label}", text) for t in self.tables for label, text in t._rows()
        ]

    render = renamed_to_text("render")

    def to_text(self) -> str:
        """Each observable's aligned table with its notes, a blank line between them,
        then the simulation's settings."""
        blocks = [t.to_text().rsplit("\n", 1)[0] for t in self.tables]
        return "\n\n".join(blocks) + "\n" + self.tables[0].settings_text()

    def to_csv(self) -> str:
        """One CSV row per observable and N: ``observable`` then the columns of
        :meth:`AccuracyTable.to_csv`."""
        buf = io.StringIO()
        w = csv.writer(buf, lineterminator="\n")
        for j, t in enumerate(self.tables):
            rows = list(csv.reader(io.StringIO(t.to_csv())))
            if j == 0:
                w.writerow(["observable", *rows[0]])
            w.writerows([t.observable, *r] for r in rows[1:])
        return buf.getvalue()

    def plot(self, path: str | os.PathLike) -> None:
        """The first observable's plot (:meth:`AccuracyTable.plot`); the plot of
        several observables of different scales on one axis would hide them."""
        self.tables[0].plot(path)


def accuracy(
    model: Any,
    params: Mapping[str, Any],
    g: Any,
    Ns: Sequence[int],
    *,
    simulate: bool = False,
    steps: int = 10**7,
    reps: int = 4,
    seed: int = 0,
    workers: int | None = None,
    progress: bool = False,
    start: Sequence[Any] | str | None = None,
    **table: Any,
) -> AccuracyTable | AccuracyTables:
    """The :class:`AccuracyTable` of observable ``g`` of ``model`` at each N in ``Ns``;
    with ``g`` a list of observables, their :class:`AccuracyTables` (computed
    together; each table equals the one of its observable alone).  A list, not a
    tuple: ``("quadratic", M)`` is one observable.

    ``params`` may hold expressions in ``N``; ``simulate`` runs :func:`sim.simulate`
    with ``steps`` events x ``reps`` replications seeded from ``seed`` (the same seed
    at each N) on ``workers`` processes, each with a progress bar when ``progress``;
    Ctrl-C stops the table (:class:`KeyboardInterrupt`, :func:`sim.summary.whole`).
    ``start`` (initial state in fractions: it fixes the conservation laws) goes to
    every column.  ``table`` holds the other keywords of
    :func:`sim.observable_table.accuracy_table`, which computes the rows (``order``
    1 or 2, ``exact``, ``dps``, ``exact_max_states``).  Bad inputs are refused in one
    sentence before any work; a cell that cannot be computed at some N is ``None``
    with its reason in the row.
    """
    from mfstein.ground.arguments import check_start
    from sim.base import RunOptions
    from sim.observable_table import accuracy_tables

    check_start(start)
    if simulate:  # refused now, not taken for a cell that cannot be computed
        RunOptions(steps=steps, reps=reps, seed=seed, workers=workers).checked()
    sim_options = {
        "steps": steps,
        "reps": reps,
        "seed": seed,
        "workers": workers,
        "progress": progress,
    }
    gs = g if isinstance(g, list) else [g]
    tabs = accuracy_tables(
        model, params, gs, Ns, simulate=simulate, sim_options=sim_options, start=start, **table
    )
    out = []
    for tab in tabs:
        for row in tab["rows"]:
            row["simulation_seed"] = seed if simulate else None  # the same seed at each N
        out.append(
            AccuracyTable(
                model=tab["model"],
                observable=tab["observable"],
                expression=tab["expression"],
                order=tab["order"],
                rows=tab["rows"],
                seed=seed if simulate else None,
                steps=steps if simulate else None,
                reps=reps if simulate else None,
                params={k: str(v) for k, v in (params or {}).items()},
                start=start,
            )
        )
    return AccuracyTables(tuple(out)) if isinstance(g, list) else out[0]
