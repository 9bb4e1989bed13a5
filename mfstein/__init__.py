"""mfstein: error analysis of mean-field load-balancing models by Stein's method.

The work is split into three packages that depend on each other one way only,
``sim -> numeric -> derive``:

* :mod:`derive`  -- symbolic models (SymPy), LaTeX, closed forms, generated kernels;
* :mod:`numeric` -- equilibrium, Lyapunov/Stein solutions and the Theorem-1
  constant at any precision, the exact finite-N solver, lemma checks;
* :mod:`sim`     -- numba simulators of the finite-N system with confidence intervals.

This package only holds the version and the ``mfstein`` console dispatcher.
"""

__version__ = "0.1.0"


def _quiet_interrupt_during_startup() -> None:
    """Ctrl-C while the ``mfstein`` command is still importing its modules: exit 130
    with one line instead of a traceback (``mfstein.cli.main`` restores Python's
    own handler before any work starts).  Does nothing when mfstein is imported as
    a library."""
    import os
    import signal
    import sys

    if os.path.basename(sys.argv[0] if sys.argv else "") != "mfstein":
        return
    if signal.getsignal(signal.SIGINT) is not signal.default_int_handler:
        return

    def interrupted(signum: int, frame: object) -> None:
        sys.stderr.write("mfstein: interrupted\n")
        os._exit(130)

    signal.signal(signal.SIGINT, interrupted)


_quiet_interrupt_during_startup()
