"""mfstein: error analysis of mean-field load-balancing models by Stein's method.

The work is split into three packages that depend on each other one way only,
``sim -> numeric -> derive`` (with the model families solved their own way,
``mfstein.families``, on top of ``sim``):

* :mod:`derive`  -- symbolic models (SymPy), LaTeX, closed forms, generated kernels;
* :mod:`numeric` -- equilibrium, Lyapunov/Stein solutions and the Theorem-1
  constant at any precision, the exact finite-N solver, lemma checks;
* :mod:`sim`     -- numba simulators of the finite-N system with confidence intervals.

This package holds the version, the ``mfstein`` console dispatcher and the
light ground modules every package uses (errors, limits, file writing, the
cache directory, lazy exports).

One pattern for every task, ``result = task(model, params, *, options)``::

    import mfstein as mf

    sol = mf.solve("sir", {"beta": 3, "gamma": 1, "rho": "0.5", "a": "0.1"}, dps=30)
    ex = mf.exact("sir", {"beta": 3, "gamma": 1, "rho": "0.5", "a": "0.1"}, N=50)
    sim = mf.simulate("supermarket", {"b": 6, "lam": "0.9"}, N=10, steps=10**6, seed=1)
    tr = mf.transient("sir", {...}, times=[0, 1, 2], start="0.76,0.24,0")
    cert = mf.certify("supermarket", {"b": 4, "lam": "0.9"}, dps=20)

``model`` is a :class:`derive.Model` or a name :func:`derive.models.load_model`
takes (``mf.load_model``, the library ``mf.models``); every result prints a
short summary, shows a table in Jupyter and has ``to_dict()``/``to_json()``.
The names are imported on first use: ``import mfstein`` and ``mfstein --help``
load no SymPy, numba or SciPy.
"""


def _quiet_interrupt_during_startup() -> None:
    """Ctrl-C while the ``mfstein`` command is still starting (importing modules,
    building and running the argument parser): exit 130 with one line instead of
    a traceback; SIGTERM likewise, with status 143 (``mfstein: terminated``).
    Nothing has been computed or written yet, so leaving at once loses nothing.
    :func:`mfstein.cli.main` replaces the guard by Python's own handler (and
    SIGTERM's by :func:`mfstein.ground.signals.raise_interrupt`) just before the
    subcommand's work starts.

    The guard is installed only when this process *is* the ``mfstein`` command
    (the console script, or ``python -m mfstein``); importing mfstein as a
    library leaves Ctrl-C alone.  This is the first code of the package, so the
    window in which Ctrl-C still shows a traceback is CPython's own start-up
    (``site`` and the installed packages' ``.pth`` hooks) plus the console
    script's first lines.
    """
    import itertools
    import os
    import signal
    import sys

    from mfstein.ground.signals import end_at_once

    argv0 = os.path.basename(sys.argv[0]) if sys.argv else ""
    orig = list(getattr(sys, "orig_argv", ()))
    targets = ("mfstein", "mfstein.cli")
    as_module = any(a == "-m" and b in targets for a, b in itertools.pairwise(orig))
    if argv0 != "mfstein" and not as_module:
        return

    leave_now = end_at_once("mfstein")

    def interrupted(signum: int, frame: object) -> None:  # its name marks the guard
        leave_now(signum, frame)

    # Ctrl-C only where Python would raise KeyboardInterrupt (a background job of a
    # script ignores SIGINT, and keeps ignoring it); SIGTERM wherever it would kill
    if signal.getsignal(signal.SIGINT) is signal.default_int_handler:
        signal.signal(signal.SIGINT, interrupted)
    if signal.getsignal(signal.SIGTERM) == signal.SIG_DFL:
        signal.signal(signal.SIGTERM, interrupted)


_quiet_interrupt_during_startup()

from mfstein.ground.lazy import VERSION, lazy_package  # noqa: E402  (after the start-up guard)

#: The entries of ``import mfstein as mf``, imported on first use (PEP 562):
#: ``mf.exact`` is ``numeric.exact.general.solve``, ``mf.models`` the module
#: ``derive.models``.
__all__, __getattr__, _entries = lazy_package(
    __name__,
    {
        "derive.models": ("load_model", ("models", "")),
        "numeric.exact.general": (("exact", "solve"),),
        "numeric.expansion.transient": ("transient",),
        "numeric": ("bound",),
        "numeric.meanfield.entry": ("certify", "solve"),
        "numeric.meanfield.sweep": ("sweep",),
        "sim.api": ("simulate",),
    },
    unlisted=VERSION,
)


def __dir__() -> list[str]:
    return sorted({*globals(), *_entries()})
