"""Declared size limits and cost estimates, checked before any work starts.

Every size that drives the cost of a computation -- the buffer ``b``, the number
of choices ``d``, the number of servers ``N``, the working precision ``dps`` and
the number of simulated events -- has either a hard limit here (beyond it the
computation cannot be carried out at all: integer overflow, memory that no
machine has) or a cost estimate (a rough time in seconds, calibrated on a
2-core machine) that is compared with :data:`TIME_BUDGET_SECONDS` before the
first expensive step.  A refusal is a :class:`mfstein.ground.errors.ParameterError`
whose one sentence names the size, the limit and what would be needed.

The estimates are deliberately rough (a factor of a few either way); they only
have to separate "seconds to a minute" from "hours to forever".  Standard
library only, so the command-line parsers can import it cheaply.
"""

from __future__ import annotations

import math

from mfstein.ground.exceptions import ParameterError

__all__ = [
    "DERIVE_MAX_B",
    "DERIVE_OBJECT_MAX_B",
    "EXACT_MAX_STATES",
    "FLOAT_MIN_RATE",
    "MAX_D",
    "MAX_DPS",
    "MAX_GRID_EXPONENT",
    "MAX_LAM",
    "MAX_OBSERVABLE_ENTRY",
    "MEMORY_FRACTION",
    "MIN_DPS",
    "NUMERIC_MAX_B",
    "PI_MAX_SERVERS",
    "SIM_MAX_B",
    "SIM_MAX_BATCHES",
    "SIM_MAX_N",
    "SIM_MAX_REPS",
    "SIM_MAX_SEED",
    "SIM_MAX_STEPS",
    "SIM_MAX_WORKERS",
    "TIME_BUDGET_SECONDS",
    "TRANSIENT_MAX_DPS",
    "TRANSIENT_MAX_TIMES",
    "TRUNCATION_TOL",
    "TRUNCATION_TOL_RANGE",
    "available_memory",
    "check_memory",
    "check_time",
    "human_bytes",
    "human_seconds",
    "mean_field_seconds",
    "memory_cap",
    "order2_seconds",
    "transient_taylor_seconds",
]

#: Longest computation (estimated seconds) started without being asked for a
#: smaller problem.  Simulations are exempt: their length is the user's choice,
#: they show progress, and Ctrl-C keeps the completed batches.
TIME_BUDGET_SECONDS = 600.0

#: Largest number of significant digits any command accepts (``--dps``).
MAX_DPS = 10_000

#: Smallest number of significant digits any command accepts (``--dps``).
MIN_DPS = 5

#: Largest system size accepted in a grid of N (``1e100``): beyond, ``N^alpha``
#: and the derived rates are no longer meaningful at any working precision.
MAX_GRID_EXPONENT = 100
#: Largest ``dps`` of the mpmath (Taylor) route of ``transient``: its cost grows
#: about like ``dps^2`` (supermarket b = 3, order 0, t = 0..2 on two shared
#: cores: dps 30 ~ 2 s, dps 100 ~ 45 s, dps 200 > 100 s), so beyond this nothing
#: finishes within minutes.
TRANSIENT_MAX_DPS = 100
#: Largest number of output times of ``transient`` (``numeric.transient``'s ``times``,
#: the ``COUNT`` of ``mfstein transient --t START:STOP:COUNT``).
TRANSIENT_MAX_TIMES = 100_000


def transient_taylor_seconds(state: int, dps: int, horizon: float, rate: float) -> float:
    """Estimated seconds of the mpmath route of ``transient`` (``dps`` digits).

    ``state`` is the length of the integrated vector (``n``, ``2n + n^2`` or
    ``3n + 2n^2 + n^3`` at orders 0, 1, 2 for ``n`` free coordinates),
    ``horizon`` the last time and ``rate`` a rate scale of the model (the
    row-sum norm of the reduced Jacobian at the start, at least 1).  mpmath's
    Taylor solver takes about ``10 + 2 rate horizon`` steps, each with
    ``degree = 3 + 1.5 wp`` evaluations of the right-hand side at
    ``wp (1 + degree)`` digits, for the two working precisions
    ``wp = dps + 10, dps + 20``; one evaluation costs about
    ``state (4e-4 + 7e-8 digits)`` seconds.  Calibrated on two shared cores
    (within a factor 2): SIR order 2, dps 50, t = 0..10 ~ 165 s; supermarket
    b = 3 order 1, dps 100, t = 0..2 ~ 130 s; SIR order 1, dps 20, t = 0..10 ~ 15 s.
    """
    steps = 10.0 + 2.0 * max(1.0, float(rate)) * max(0.0, float(horizon))
    total = 0.0
    for wp in (int(dps) + 10, int(dps) + 20):
        degree = 3 + int(1.5 * wp)
        digits = wp * (1 + degree)
        total += steps * degree * max(1, int(state)) * (4e-4 + 7e-8 * digits)
    return total


def order2_seconds(n: int, dps: int, solves: int = 1) -> float:
    """Estimated seconds of ``solves`` working-precision order-2 expansions
    (:func:`numeric.meanfield.stationary.second_order`) on ``n`` free coordinates
    at ``dps`` digits.

    Each computes the third moment (``n^3`` entries, refined with ``O(n^4)``
    big-integer work) at two working precisions; the cost grows like
    ``n^3 (1 + n/20)`` and like ``1 + (dps/100)^1.6`` (big-integer products and
    the number of refinement steps).  Calibrated on two shared cores (CPU
    seconds, within a factor 2): supermarket b = 6 at dps 30 / 300 / 1000 ~ 0.08 /
    0.37 / 2.3 s; b = 12 at dps 30 ~ 0.5 s; b = 18 at dps 30 ~ 3-5 s.
    """
    n = max(1, int(n))
    size = n**3 * (1.0 + n / 20.0)
    digits = 1.0 + (max(1, int(dps)) / 100.0) ** 1.6
    return max(1, int(solves)) * 2.5e-4 * size * digits


#: Largest buffer of the high-precision mean-field routes (``bound``,
#: ``refined``, ``lemmas``): ``refined --json`` prints the ``b x b`` matrix W.
NUMERIC_MAX_B = 2000
#: Largest number of choices per arrival (``d``); the rates contain ``s^d`` and
#: the per-server simulator samples ``d`` servers per arrival.
MAX_D = 1000
#: Largest arrival rate: ``lam^d`` and the Jacobian's entries must stay finite
#: in float64 (the exact solver and the simulators work in float64).
MAX_LAM = 1e6

#: ``mfstein derive``: the symbolic objects grow like ``b^2`` expressions of
#: growing size (b = 80 takes ~10 s, b = 300 over a minute).
DERIVE_MAX_B = 100
#: ... and the objects whose size grows faster than that.
DERIVE_OBJECT_MAX_B = {
    "kron": 8,  # a b^2 x b^2 symbolic matrix
    "generator": 20,  # the generator applied to a quadratic in b variables (b = 20: ~4 s)
    "stein": 30,  # P and g are dense b x b symbolic objects (b = 40: ~25 s)
    "lyapunov": 30,
    "closed-form": 2,
}

#: The exact solver: states of the largest chain it accepts.  Measured on a
#: two-core machine (benchmarks/bench_exact_scale.py, issue 34): the supermarket
#: chain with b = 3 at N = 320 (5.6 million states) peaks at about 250 bytes per
#: state (1.4 GB with the interpreter's own), N = 420 (12.5 million) is answered;
#: 20 million states fit in about 5 GB.
EXACT_MAX_STATES = 20_000_000
#: The exact solver's default tolerance on the stationary mass a truncation it chooses
#: cuts (an unbounded state space without ``truncation=``), and the allowed range of
#: ``truncation_tol`` / ``--truncation-tol`` (below 1e-15 the float64 law cannot
#: resolve the mass; above 1e-2 the cut is no longer a small error).
TRUNCATION_TOL = 1e-12
TRUNCATION_TOL_RANGE = ("1e-15", "0.01")

#: Simulators: queue lengths live in int32-indexed arrays of N servers.
SIM_MAX_N = 2**31 - 1
#: Events per replication: counters are int64 and a run of more than 10^14
#: events (about two weeks per replication at 10^8 events/s) is not a run.
SIM_MAX_STEPS = 10**14


def human_seconds(seconds: float) -> str:
    """``42 s``, ``3.5 min``, ``2.1 h``, ``4.0 days``, ``1e+12 years``."""
    if not math.isfinite(seconds) or seconds > 3.15e7 * 1e6:
        return "more than a million years"
    if seconds < 120:
        return f"{seconds:.0f} s"
    if seconds < 7200:
        return f"{seconds / 60:.1f} min"
    if seconds < 2 * 86400:
        return f"{seconds / 3600:.1f} h"
    if seconds < 3.15e7:
        return f"{seconds / 86400:.1f} days"
    return f"{seconds / 3.15e7:.3g} years"


def check_time(what: str, seconds: float, advice: str) -> None:
    """Raise :class:`ParameterError` when ``seconds`` exceeds the time budget."""
    if not seconds <= TIME_BUDGET_SECONDS:
        raise ParameterError(
            f"{what} would take about {human_seconds(seconds)} (estimated; the limit is "
            f"{human_seconds(TIME_BUDGET_SECONDS)}); {advice}"
        )


def mean_field_seconds(levels: int, dps: int) -> float:
    """Estimated seconds of one high-precision solve with ``levels`` coupled levels.

    Calibrated on two cores: 200 levels at 30 digits ~ 12 s (dominated by the
    first symbolic derivation of the model's kernels, ~ levels^2), 5 levels at
    3000 digits ~ 23 s (big-number arithmetic, ~ dps^2 per operation, levels^3
    operations in the shooting routes).
    """
    n = max(int(levels), 1)
    p = max(int(dps), 30) + 20
    symbolic = 3e-4 * n**2
    arithmetic = 2.0e-9 * (n**2 + 40 * n) * p**2 * max(1.0, math.log10(p))
    return 1.0 + symbolic + arithmetic


#: Largest number of replications, batches per replication and local workers.
SIM_MAX_REPS = 10_000
SIM_MAX_BATCHES = 10_000
SIM_MAX_WORKERS = 1024
#: Largest simulation seed: ``numpy.random.SeedSequence`` takes any non-negative
#: integer, and 128 bits are as many as its entropy pool mixes in.
SIM_MAX_SEED = 2**128 - 1
#: Largest buffer of the supermarket simulators (their per-server arrays hold
#: ``b`` arrival times per server; beyond, use a model with ``--model``).
SIM_MAX_B = 200
#: Largest number of servers of the Persistent-Idle model (``mfstein pi``): its
#: per-slot work is linear in ``n`` and it keeps ``n`` pmfs; 10^6 servers and the
#: default 10^6 slots is already about 10^12 server-slots.
PI_MAX_SERVERS = 10**6

#: Smallest rate (``--lam``, ``--mu``) of the float64 routes (``exact``,
#: ``simulate``): rates and their ratios must stay well inside float64.
FLOAT_MIN_RATE = 1e-6
#: Largest magnitude of an entry of the observable ``M = diag:...``: ``c = tr(M W)``
#: and the Lyapunov solution ``P`` scale with ``M``, and the float64 starting
#: points of the refinement must stay finite.
MAX_OBSERVABLE_ENTRY = 1e100

#: The one memory policy: a computation may plan to use at most this fraction
#: of the memory available when it starts (exact chains, simulations).
MEMORY_FRACTION = 0.5


def available_memory() -> int:
    """Bytes of memory available now (``MemAvailable`` on Linux, else physical pages)."""
    import os

    try:
        with open("/proc/meminfo") as fh:
            for line in fh:
                if line.startswith("MemAvailable:"):
                    return int(line.split()[1]) * 1024
    except (OSError, ValueError, IndexError):
        pass
    try:
        return os.sysconf("SC_AVPHYS_PAGES") * os.sysconf("SC_PAGE_SIZE")
    except (OSError, ValueError, AttributeError):  # pragma: no cover - no sysconf
        return 2**40


def memory_cap() -> int:
    """Bytes a computation may plan to use: :data:`MEMORY_FRACTION` of the available memory."""
    return int(MEMORY_FRACTION * available_memory())


def human_bytes(n: float) -> str:
    """``512 bytes``, ``3.2 GB``, ..., ``10^24 bytes`` (exact integers of any size)."""
    if n >= 10**21:  # beyond exabytes (and beyond float64 for huge state counts)
        return f"10^{len(str(int(n))) - 1} bytes"
    n = float(n)
    for unit in ("bytes", "kB", "MB", "GB", "TB", "PB", "EB"):
        if n < 1000 or unit == "EB":
            return f"{n:.0f} {unit}" if unit == "bytes" else f"{n:.3g} {unit}"
        n /= 1000
    raise AssertionError  # pragma: no cover


def simulation_bytes(N: int, b: int, per_server: bool, reps: int, workers: int) -> int:
    """Planned peak memory of a simulation of ``N`` servers (generous).

    Each replication's state is held by the parent (per-server: queue
    lengths, rank order, head pointers and ``b`` arrival times per server,
    ``(32 + 8 b) N`` bytes; aggregated: ``b + 2`` counts); each worker holds a
    copy of the state it advances and the ``N + 1`` holding times and
    departure thresholds (``24 (N + 1)`` bytes, with a temporary).
    """
    state = (32 + 8 * b) * N if per_server else 8 * (b + 2)
    unit = state + 24 * (N + 1) + (16 * N if per_server else 0)
    return reps * state + max(1, workers) * unit


def check_memory(what: str, need: int) -> None:
    """Raise :class:`ParameterError` if ``need`` bytes exceed :func:`memory_cap`."""
    cap = memory_cap()
    if need > cap:
        raise ParameterError(
            f"{what} needs about {human_bytes(need)} of memory; {human_bytes(cap)} is "
            "available: lower N (or reps and workers)."
        )


def second_order_seconds(b: int, dps: int) -> float:
    """Estimated seconds of the 1/N^2 terms (``refined --order 2``) at buffer ``b``.

    Calibrated on two cores at 30 digits: b = 30 ~ 6 s, b = 60 ~ 23 s,
    b = 100 ~ 47 s (the general route solves every level; no truncation).
    """
    return 1.0 + 5e-3 * b**2 * max(1.0, max(int(dps), 30) / 30) ** 1.5


#: Seconds a user's model file may take to import and its factory to build the
#: model (:func:`derive.models.load_model`); the environment variable
#: ``MFSTEIN_MODEL_TIMEOUT`` (seconds, > 0) overrides it.
MODEL_TIMEOUT_SECONDS = 60.0


def model_timeout() -> float:
    """The model-file time limit: ``MFSTEIN_MODEL_TIMEOUT`` if set, else
    :data:`MODEL_TIMEOUT_SECONDS`; a bad value is one sentence."""
    import os

    text = os.environ.get("MFSTEIN_MODEL_TIMEOUT", "").strip()
    if not text:
        return MODEL_TIMEOUT_SECONDS
    try:
        value = float(text)
    except ValueError:
        value = math.nan
    if not 0 < value <= 86400:
        raise ParameterError(
            f"MFSTEIN_MODEL_TIMEOUT must be a number of seconds in (0, 86400], got {text!r}."
        )
    return value
