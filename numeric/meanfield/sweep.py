"""``numeric.sweep``: the mean field of one model over a grid of parameter values.

``sweep(model, params_grid, *, order, dps, precision, observables, M, start, workers,
scheduler, progress)`` solves the model at every point of the grid and returns one
:class:`numeric.meanfield.sweep_result.SweepResult` with the curves (``s*``, ``V``,
``c``, ``c2``, the observables' expansions and the digits of each point).

* ``params_grid`` maps each parameter to one value (fixed) or to several: a list
  of values, or the text ``"START:STOP:COUNT"`` (``COUNT`` equally spaced values,
  computed exactly: ``"0.5:0.99:50"`` is 0.5, 0.51, ..., 0.99).  Several swept
  parameters give their Cartesian product, the last one varying fastest.
* The model is prepared once (:func:`numeric.meanfield.structure.prepared_system`:
  its rate kernels, jump matrix and conservation laws; the generated kernels of the
  working-precision route are cached per model by :mod:`derive.kernels`), and each
  fixed point is continued from its neighbour: the previous grid point's ``s*``,
  extrapolated linearly along the swept direction, starts Newton's method
  (:func:`numeric.meanfield.float64_point.fixed_point` in float64; at working
  precision :func:`numeric.meanfield.fixed_point.continuing`, in place of the
  global search with its random starts).  When that start does not
  give an accepted fixed point -- or carries other conserved values than the
  point's own start -- the point is searched exactly as a single ``solve`` does, so
  every row is what :func:`numeric.solve` answers at that point (within the digits
  it states; a model with several stable fixed points is followed along the branch
  of the first point's).
* ``precision="float64"``: the float64 route of
  :mod:`numeric.meanfield.float64_route` at each point, without building a
  :class:`numeric.meanfield.solution.MeanFieldSolution` unless observables are asked for.
  ``precision="dps"``: :func:`numeric.solve` at ``dps`` digits at each point.
* A point refused in one sentence (an unstable fixed point, a rate out of its
  range) is a row with that sentence and no numbers; the sweep goes on.
* ``workers > 1`` splits the grid into that many contiguous pieces solved in local
  processes; ``scheduler`` (a Dask scheduler's address) solves them on that
  cluster (Dask is optional: ``pip install mfstein[dist]``).  Each piece
  continues along its own points, so the rows do not depend on the split beyond
  the digits they state.  Pieces given to threads of one process (a Dask worker
  with several threads) run one at a time: mpmath's precision is per process.
"""

from __future__ import annotations

import itertools
import threading
import time
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from fractions import Fraction
from typing import Any

import numpy as np

from mfstein.ground.arguments import check_keywords
from mfstein.ground.errors import ParameterError, check_int

#: Most grid points one sweep may ask for.
MAX_POINTS = 1_000_000
#: A sweep of at least this many points shows a progress bar (on a terminal).
PROGRESS_MIN_POINTS = 20


@dataclass(frozen=True)
class Grid:
    """The parsed grid: the fixed parameters (name -> value as given), the swept
    ones (name -> values, as text read exactly) and the points (name -> value)."""

    fixed: dict[str, Any]
    axes: dict[str, list[str]]

    def points(self) -> list[dict[str, Any]]:
        """Every point of the Cartesian product, the last axis varying fastest."""
        names = list(self.axes)
        return [
            {**self.fixed, **dict(zip(names, combo, strict=True))}
            for combo in itertools.product(*(self.axes[n] for n in names))
        ]

    @property
    def size(self) -> int:
        """The number of points."""
        return int(np.prod([len(v) for v in self.axes.values()], dtype=object))


#: Significant digits of the decimal text of a grid value (else it is written ``p/q``).
TEXT_DIGITS = 40


def exact_value_text(x: Fraction) -> str:
    """``x`` as text the parameter parser reads exactly: a short decimal when ``x``
    has one (at most :data:`TEXT_DIGITS` significant digits), else ``p/q``."""
    from mfstein.ground.numbers import decimal_text

    if _short_decimal(x):
        return decimal_text(x, TEXT_DIGITS)
    return f"{x.numerator}/{x.denominator}"


def _short_decimal(x: Fraction) -> bool:
    """Whether ``x`` is a decimal of at most :data:`TEXT_DIGITS` significant digits
    (so its decimal text at that many digits reads back as ``x``): its denominator
    is ``2^i 5^j`` and ``x 10^max(i, j)``, trailing zeros dropped, has that many
    digits at most."""
    q = x.denominator
    twos = (q & -q).bit_length() - 1
    q >>= twos
    fives = 0
    while q % 5 == 0:
        q //= 5
        fives += 1
    if q != 1:
        return False
    digits = abs(x.numerator) * (10 ** max(twos, fives) // x.denominator)
    while digits and digits % 10 == 0:
        digits //= 10
    return len(str(digits)) <= TEXT_DIGITS


def parse_range(name: str, text: str) -> list[str]:
    """``"START:STOP:COUNT"`` -> ``COUNT`` equally spaced values from ``START`` to
    ``STOP`` (either direction; exact rationals written by :func:`exact_value_text`)."""
    from mfstein.ground.numbers import parse_integer, parse_real

    msg = (
        f"{name} must be one value, a list of values or START:STOP:COUNT with "
        f"START != STOP and an integer 2 <= COUNT <= {MAX_POINTS}, e.g. 0.5:0.99:50, "
        f"got {text!r}."
    )
    parts = text.split(":")
    if len(parts) != 3:
        raise ParameterError(msg)
    try:
        a, b = (parse_real(name, x) for x in parts[:2])
        n = parse_integer(name, parts[2], 2, MAX_POINTS)
    except ParameterError:
        raise ParameterError(msg) from None
    if a == b:
        raise ParameterError(msg)
    # a + (b - a) i / (n - 1) over one common denominator (each Fraction reduced
    # to lowest terms: the same values as the Fraction arithmetic, made faster)
    step = b - a
    base = a.numerator * step.denominator * (n - 1)
    inc = step.numerator * a.denominator
    den = a.denominator * step.denominator * (n - 1)
    return [exact_value_text(Fraction(base + inc * i, den)) for i in range(n)]


def parse_grid(model: Any, params_grid: Any) -> Grid:
    """The :class:`Grid` of ``params_grid`` (module docstring), its names checked
    against the model's parameters; one sentence on a bad entry."""
    from numeric.params import check_names

    if not isinstance(params_grid, Mapping):
        raise ParameterError(
            "params_grid must be a mapping of parameter names to a value, a list of "
            f"values or 'START:STOP:COUNT', got {type(params_grid).__name__}."
        )
    fixed: dict[str, Any] = {}
    axes: dict[str, list[str]] = {}
    for name, value in params_grid.items():
        if isinstance(value, str) and ":" in value:
            axes[str(name)] = parse_range(str(name), value)
        elif _is_swept(value):
            items = list(np.asarray(value).ravel()) if isinstance(value, np.ndarray) else value
            if not items:
                raise ParameterError(f"{name} must list at least one value, got none.")
            axes[str(name)] = list(items)
        else:
            fixed[str(name)] = value
    if not axes:
        raise ParameterError(
            "sweep needs at least one swept parameter: NAME=START:STOP:COUNT on the command "
            "line, a list of values or 'START:STOP:COUNT' in params_grid (e.g. lam=0.5:0.99:50)."
        )
    first = {n: v[0] for n, v in axes.items()}
    check_names(model, {**fixed, **first})
    _check_values(model, fixed, first, axes)
    grid = Grid(fixed, axes)
    if grid.size > MAX_POINTS:
        raise ParameterError(f"params_grid must have at most {MAX_POINTS} points, got {grid.size}.")
    return grid


def _check_values(
    model: Any, fixed: dict[str, Any], first: dict[str, Any], axes: dict[str, list[Any]]
) -> None:
    """Every value of every axis read and compared with its declared range, before any
    work (each value once: the ranges are per parameter; the names were checked by
    the caller, and each further value of an axis is read alone)."""
    import mpmath

    from numeric.params import parse_params, read_values

    with mpmath.workdps(30):
        parse_params(model, {**fixed, **first})
        for name, values in axes.items():
            for v in values[1:]:
                read_values(model, {name: v})


def _check_options(order: Any, precision: Any, dps: Any, workers: Any) -> tuple[int, int]:
    """``order``, ``precision``, ``dps`` and ``workers`` checked (one sentence each)."""
    from mfstein.ground.limits import SIM_MAX_WORKERS
    from numeric.precision import check_dps, check_precision

    if order not in (1, 2) or isinstance(order, bool):
        raise ParameterError(f"order must be 1 or 2, got {order!r}.")
    check_precision(precision)
    return check_dps(dps), check_int("workers", workers, 1, SIM_MAX_WORKERS)


@check_keywords
def sweep(
    model: Any,
    params_grid: Mapping[str, Any],
    *,
    order: int = 1,
    dps: int = 30,
    precision: str = "dps",
    observables: Sequence[Any] | str = (),
    M: Any = None,
    start: Sequence[Any] | str | None = None,
    workers: int = 1,
    scheduler: str | None = None,
    progress: bool | None = None,
) -> Any:
    """The mean field of ``model`` at every point of ``params_grid`` (module docstring).

    Parameters
    ----------
    model:
        A :class:`derive.model.Model` or a name :func:`derive.models.load_model`
        takes (entries of ``params_grid`` that are factory options build it; they
        cannot be swept).
    params_grid:
        Parameter name -> a value, a list of values or ``"START:STOP:COUNT"``.
    order, dps, precision, observables, M, start:
        As in :func:`numeric.solve`, at every point (``start``, the initial state in
        fractions, fixes the conserved quantities; ``None``: the model's own start).
    workers:
        Local processes (default 1: this process).
    scheduler:
        The address of a running Dask scheduler (``tcp://host:8786``): the pieces
        run on that cluster.
    progress:
        A progress bar on standard error (default: for sweeps of at least
        :data:`PROGRESS_MIN_POINTS` points, when standard error is a terminal).

    Returns
    -------
    numeric.meanfield.sweep_result.SweepResult
    """
    from derive.models import as_model
    from derive.spec import Truncated
    from mfstein.ground.arguments import check_start
    from numeric.meanfield.entry import parse_observables

    dps, workers = _check_options(order, precision, dps, workers)
    check_start(start)
    _check_factory_options(model, params_grid)
    name = model if isinstance(model, str) else None
    model, params = as_model(model, dict(params_grid) if isinstance(params_grid, Mapping) else {})
    # a model given by name is rebuilt by a worker from its name and factory options
    given = (
        None if name is None else (name, {k: v for k, v in params_grid.items() if k not in params})
    )
    if isinstance(model, Truncated):
        raise ParameterError(
            f"sweep needs a model of fixed dimension; give the {model.name} family its size "
            "(e.g. b=10)."
        )
    grid = parse_grid(model, params if isinstance(params_grid, Mapping) else params_grid)
    wanted = [g.name for g in parse_observables(model, observables)]  # refused before any work
    if scheduler is not None:
        from mfstein.ground.scheduler import check_scheduler_address

        check_scheduler_address(scheduler)
    wanted_obs = tuple(observables_list(observables))
    options = Options(order, dps, precision, wanted_obs, M, grid.size, start)
    pieces = _pieces(grid.points(), 1 if scheduler is None and workers == 1 else workers)
    started = time.perf_counter()
    if scheduler is not None:
        rows = _on_dask(scheduler, given, model, pieces, options)
    elif len(pieces) > 1:
        rows = _in_processes(given, model, pieces, options)
    else:
        rows = solve_piece(model, pieces[0], options, progress=_show_progress(progress, grid))
    from numeric.meanfield.sweep_result import SweepResult

    return SweepResult(
        model=model.name,
        fixed={k: str(v) for k, v in grid.fixed.items()},
        axes={k: [str(v) for v in vals] for k, vals in grid.axes.items()},
        M=M,
        start=start,
        order=order,
        precision="float64" if precision == "float64" else f"{dps} digits",
        states=[getattr(s, "name", s) for s in model.states],
        observables=wanted,
        rows=rows,
        seconds=time.perf_counter() - started,
        workers=len(pieces),
    )


def _is_swept(value: Any) -> bool:
    """Whether a ``params_grid`` entry asks for several values."""
    return (isinstance(value, str) and ":" in value) or isinstance(
        value, list | tuple | range | np.ndarray
    )


def _check_factory_options(model: Any, params_grid: Any) -> None:
    """Refuse a swept factory option of a model given by name (its size, ``b``): the
    model is built once, so only its parameters can be swept."""
    if not isinstance(model, str) or not isinstance(params_grid, Mapping):
        return
    from derive.models import factory, factory_keywords

    accepted = factory_keywords(factory(model))
    swept = sorted(k for k, v in params_grid.items() if k in accepted and _is_swept(v))
    if swept:
        raise ParameterError(
            f"{swept[0]} is an option of the factory of model {model}, which is built once "
            "per sweep; sweep the model's parameters only (and give "
            f"{swept[0]} one value)."
        )


def observables_list(observables: Sequence[Any] | str) -> list[Any]:
    """``observables`` as a list (one name or expression becomes a list of one)."""
    if isinstance(observables, str) or (
        isinstance(observables, tuple) and len(observables) == 2 and observables[0] == "quadratic"
    ):
        return [observables]
    return list(observables or ())


def _show_progress(progress: bool | None, grid: Grid) -> bool | None:
    """``True``/``False`` as asked; ``None`` (tqdm decides by the terminal) for a long sweep."""
    if progress is None:
        return None if grid.size >= PROGRESS_MIN_POINTS else False
    from mfstein.ground.errors import check_bool

    return check_bool("progress", progress)


@dataclass(frozen=True)
class Options:
    """What every point of a sweep is solved with."""

    order: int
    dps: int
    precision: str
    observables: tuple[Any, ...]
    M: Any
    points: int = 1
    #: The start of every point, as given (``None``: the model's own).
    start: Any = None


def _pieces(points: list[dict[str, Any]], count: int) -> list[list[dict[str, Any]]]:
    """``points`` split into at most ``count`` contiguous pieces of nearly equal size."""
    count = max(1, min(count, len(points)))
    edges = np.linspace(0, len(points), count + 1).round().astype(int)
    return [points[a:b] for a, b in itertools.pairwise(edges.tolist()) if b > a]


def solve_piece(
    model: Any, points: list[dict[str, Any]], options: Options, *, progress: bool | None = False
) -> list[Any]:
    """The rows of ``points`` in order, each fixed point continued from the last ones."""
    from tqdm import tqdm

    if options.precision == "float64":
        from numeric.meanfield.sweep_points import Float64Points

        solver: Any = Float64Points(model, options)
    else:
        from numeric.meanfield.sweep_points import WorkingPrecisionPoints

        solver = WorkingPrecisionPoints(model, options)
    rows = []
    disable = None if progress is None else not progress  # None: shown on a terminal only
    with tqdm(total=len(points), disable=disable, unit="point", desc="sweep", leave=False) as bar:
        for params in points:
            rows.append(solver.row(params))
            bar.update(1)
    return rows


#: Held by the piece a process is solving: mpmath's working precision is one setting
#: per process, so two pieces in threads of one process (a Dask worker's) would change
#: each other's precision mid-computation; they run one after the other.
_PIECE_LOCK = threading.Lock()


def _run_piece(sent: Any, points: list[dict[str, Any]], options: Options) -> list:
    """One piece in a worker process (or a worker's thread, :data:`_PIECE_LOCK`):
    ``sent`` is the model, or its name and factory options (:func:`_sendable`)."""
    from derive.models import as_model

    with _PIECE_LOCK:
        model = as_model(*sent)[0] if isinstance(sent, tuple) else sent
        return solve_piece(model, points, options)


def _sendable(given: tuple[str, dict[str, Any]] | None, model: Any) -> Any:
    """What a worker receives for the model: its name and factory options when it was
    given by name, else the model itself, which must pickle (one sentence when it
    does not)."""
    import pickle

    if given is not None:
        return given
    try:
        pickle.dumps(model)
    except Exception:
        raise ParameterError(
            f"workers > 1 and scheduler need a model that can be sent to another process: "
            f"model {model.name} does not pickle (give it by name or 'file.py:factory', or "
            "use workers=1)."
        ) from None
    return model


def _in_processes(given: Any, model: Any, pieces: list, options: Options) -> list:
    """The pieces on local processes, rows in grid order."""
    from concurrent.futures import ProcessPoolExecutor

    sent = _sendable(given, model)
    with ProcessPoolExecutor(max_workers=len(pieces)) as pool:
        futures = [pool.submit(_run_piece, sent, piece, options) for piece in pieces]
        return [row for f in futures for row in f.result()]


def _on_dask(scheduler: str, given: Any, model: Any, pieces: list, options: Options) -> list:
    """The pieces on the Dask cluster at ``scheduler``, rows in grid order."""
    from mfstein.ground.scheduler import dask_client

    sent = _sendable(given, model)
    client = dask_client(scheduler)
    try:
        futures = [client.submit(_run_piece, sent, piece, options, pure=False) for piece in pieces]
        return [row for part in client.gather(futures) for row in part]
    finally:
        client.close()
