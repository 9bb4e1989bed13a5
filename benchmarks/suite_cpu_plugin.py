"""A pytest plugin that records each test's CPU time, for benchmarks/suite_profile.py.

Loaded with ``-p suite_cpu_plugin`` (``benchmarks/`` on ``PYTHONPATH``).  For every
test it appends one JSON line to ``$MFSTEIN_SUITE_CPU_FILE``:

* ``wall``: wall time of setup + call + teardown;
* ``cpu``: CPU time (user + system) of this process over the same span;
* ``children``: CPU time of the child processes it waited for (subprocess CLI starts,
  notebook kernels, the docs build, pip);
* ``numba``: the part of ``cpu`` spent inside numba's outermost ``numba:compile``
  events in this process (typing and lowering a kernel, or loading it from the cache).

On a shared machine wall time says how busy the machine was; CPU time says what the
test costs.
"""

from __future__ import annotations

import json
import os
import time

import pytest

#: where the records go (one JSON object a line, appended)
ENV_VAR = "MFSTEIN_SUITE_CPU_FILE"


def _own() -> float:
    t = os.times()
    return t.user + t.system


def _children() -> float:
    t = os.times()
    return t.children_user + t.children_system


class _CompileClock:
    """Process CPU time inside numba's outermost compile events."""

    def __init__(self) -> None:
        self.total = 0.0
        #: (function, argument types) -> CPU seconds of its outermost compiles
        self.functions: dict[str, float] = {}
        self._depth = 0
        self._t0 = 0.0
        self._key = ""

    def install(self) -> None:
        from numba.core import event

        clock = self

        class _Listener(event.Listener):
            def on_start(self, ev: event.Event) -> None:
                if clock._depth == 0:
                    clock._t0 = time.process_time()
                    clock._key = _function_key(ev.data)
                clock._depth += 1

            def on_end(self, ev: event.Event) -> None:
                clock._depth -= 1
                if clock._depth == 0:
                    spent = time.process_time() - clock._t0
                    clock.total += spent
                    clock.functions[clock._key] = clock.functions.get(clock._key, 0.0) + spent

        event.register("numba:compile", _Listener())


def _function_key(data: object) -> str:
    """``module.function(argument types)`` of a compile event's data (a generated
    module's name holds its model's digest, so equal keys are the same code)."""
    try:
        func = data["dispatcher"].py_func  # type: ignore[index]
        return f"{func.__module__}.{func.__qualname__}{tuple(str(a) for a in data['args'])}"  # type: ignore[index]
    except Exception:  # an event of another shape: still counted, under one name
        return "?"


_clock = _CompileClock()
#: node id -> the worst outcome of its phases ("passed", "skipped", "failed")
_outcomes: dict[str, str] = {}


def pytest_runtest_logreport(report: pytest.TestReport) -> None:
    """Remember each test's outcome (a failure in any phase makes it failed)."""
    if _outcomes.get(report.nodeid) != "failed" and (
        report.when == "call" or report.outcome != "passed"
    ):
        _outcomes[report.nodeid] = report.outcome


def pytest_configure(config: pytest.Config) -> None:
    """Listen to numba's compile events (imports numba in the test process)."""
    if os.environ.get(ENV_VAR):
        _clock.install()


def pytest_collection_finish(session: pytest.Session) -> None:
    """One record for the process's start: Python, pytest, its plugins, and collecting
    (importing) the test files, before the first test (``nodeid`` ``<collection>``)."""
    path = os.environ.get(ENV_VAR)
    if not path:
        return
    files = sorted({item.nodeid.split("::")[0] for item in session.items})
    record = {
        "nodeid": "<collection>",
        "files": files,
        "wall": None,
        "cpu": round(_own(), 3),
        "children": round(_children(), 3),
        "numba": round(_clock.total, 3),
        "skipped": False,
        "outcome": "passed",
    }
    with open(path, "a", encoding="utf-8") as fh:
        fh.write(json.dumps(record) + "\n")


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_protocol(item: pytest.Item, nextitem: pytest.Item | None):
    """Time one test's whole protocol (setup, call, teardown) by wall and CPU clocks."""
    wall0, own0, kids0, nb0 = time.perf_counter(), _own(), _children(), _clock.total
    _clock.functions.clear()
    yield
    path = os.environ.get(ENV_VAR)
    if not path:
        return
    record = {
        "nodeid": item.nodeid,
        "wall": round(time.perf_counter() - wall0, 3),
        "cpu": round(_own() - own0, 3),
        "children": round(_children() - kids0, 3),
        "numba": round(_clock.total - nb0, 3),
        "skipped": any(m.name == "skip" for m in item.iter_markers()),
        "outcome": _outcomes.pop(item.nodeid, "unknown"),
        "compiled": {k: round(v, 3) for k, v in _clock.functions.items() if v >= 0.05},
    }
    with open(path, "a", encoding="utf-8") as fh:
        fh.write(json.dumps(record) + "\n")
