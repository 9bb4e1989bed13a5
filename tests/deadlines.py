"""Deadlines for tests that wait on another process: a guard against a hang, never a
speed test.

A wait in the suite is on an event (a line, a file, a process state); the deadline
only ends a wait that would otherwise last for ever.  It is the seconds the step
needs on a quiet 2-core machine, stretched by the machine's present slowdown: the
run queue per core (the 1-minute load average plus this process, over the cores),
at least 1, or ``MFSTEIN_TEST_SLOWDOWN`` when set (e.g. 4 under an artificial load
whose average has not caught up yet).  Measured at each call, so a suite that starts
quiet and meets a busy machine later still waits long enough.
"""

from __future__ import annotations

import os


def slowdown() -> float:
    """How many times slower than a quiet machine this one runs now (>= 1)."""
    forced = os.environ.get("MFSTEIN_TEST_SLOWDOWN")
    if forced:
        return max(1.0, float(forced))
    cores = os.cpu_count() or 1
    try:
        load = os.getloadavg()[0]
    except OSError:  # not available on this platform
        return 1.0
    return max(1.0, (load + 1.0) / cores)


def deadline(seconds: float) -> float:
    """``seconds`` of a quiet machine, in seconds of this machine now."""
    return seconds * slowdown()
