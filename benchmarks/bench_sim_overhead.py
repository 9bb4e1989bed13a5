"""What a ``simulate`` call costs around its event loop (issue 34), side by side.

Three tables, every figure the best of ``--repeat`` runs (the machine is shared):

1. **Warm process, small runs** (``--small`` events, default 2e5; wall and CPU
   seconds of this process): a hand-written numba loop of the same chain
   (compiled before timing; one uniform for the transition, the holding time
   weighted exactly by ``1 / total rate``, time averages of the counts) against
   ``sim.simulate`` called again in the same process (``reps=1, workers=1``), on
   SIR and on the supermarket ``b = 10``.
2. **End to end, large runs** (``--events``, default 1e7), each a new process,
   wall time from its start to its result: the hand-written loop (numba import,
   compile from numba's cache, loop), mfstein with a warm cache, mfstein with an
   empty cache (``XDG_CACHE_HOME`` a new temporary directory, ``MFSTEIN_CACHE_DIR``
   unset; :data:`COLD_ROUTES`): ``engine="auto"`` the first time ever, on the table's
   events and on ``--small`` events (each row names the loop it took: whichever of the
   interpreted loop of :mod:`sim.table_loop`, compiled then too, and the model's own
   costs less, :mod:`sim.loop_prices`), the interpreted loop once another model
   compiled it (a new model: no compilation), the same with ``engine="auto"``, and the
   model's own compiled loop (``engine="generic"``: generated and compiled; on both
   sizes of run), and
   GillesPy2's C++ SSA
   (``SSACSolver``, its g++ build of the model included; it runs from a Python
   with GillesPy2 installed, ``--gillespy2-python``), on SIR and a tandem line.
   GillesPy2 runs to a time at which the chain has made about ``--events`` jumps
   (the stationary event rate times the time) and records 101 points.

3. **First calls**: the first ``mf.solve("sir", ...)`` and the first ``simulate``
   in a new process with a warm cache (wall and CPU seconds of the whole process,
   interpreter start included).

4. ``--break-even``: CPU nanoseconds per event of the interpreted and the compiled
   loop in this process, with the interpreted loop's work per event and the
   estimated compile time of the model's loop (what ``engine="auto"`` weighs,
   :func:`sim.interpreted.pick_loop`).

Usage::

    python3 -m venv /tmp/gspvenv && /tmp/gspvenv/bin/pip install gillespy2
    .venv/bin/python benchmarks/bench_sim_overhead.py [--repeat 3] [--events 1e7]
        [--small 2e5] [--gillespy2-python /tmp/gspvenv/bin/python] [--no-cold]
        [--only warm|first|end|cold] [--break-even] [--before /work/wt/first34_before]
        [--route "loop compiled"]

Every mfstein child writes and reads its tree's Python bytecode, as an installed
package does (``PYTHONDONTWRITEBYTECODE`` is removed from its environment; kept, it
compiled some 85 modules from source in every process, 0.1 s of each run).

``--before DIR`` runs the first calls and the empty-cache routes of a second checkout
(``git worktree add --detach DIR main``) too, alternating with this one's, each row
marked ``[before]`` or ``[after]``.
"""

# ruff: noqa: NPY002 (numba supports only the legacy np.random API in njit)
from __future__ import annotations

import argparse
import os
import resource
import shutil
import subprocess
import sys
import tempfile
import textwrap
import time
from functools import partial

import numba
import numpy as np

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, ROOT)

#: SIR (``derive/models/sir.py``): beta, gamma, rho, a; population.
SIR = {"beta": 3.0, "gamma": 1.0, "rho": 0.5, "a": 0.1}
SIR_N = 1000
#: The supermarket of the core paper: N, lam, b, d.
SUPERMARKET = (1000, 0.9, 10, 2)
#: The tandem line (``examples/tandem.py``): stations, lam, mu, N.
TANDEM = (4, 1.0, 1.0, 100)


@numba.njit(cache=True)
def sir_loop(N, beta, gamma, rho, a, S, I, R, steps, seed):
    """SIR by hand: ``steps`` jumps from counts ``(S, I, R)``; time averages of S and I."""
    np.random.seed(seed)  # numba supports only the legacy API in njit
    t = 0.0
    area_s = 0.0
    area_i = 0.0
    for _ in range(steps):
        r1 = (a + beta * I / N) * S
        r2 = gamma * I
        r3 = rho * R
        total = r1 + r2 + r3
        dt = 1.0 / total
        t += dt
        area_s += S * dt
        area_i += I * dt
        u = np.random.random() * total
        if u < r1:
            S -= 1
            I += 1
        elif u < r1 + r2:
            I -= 1
            R += 1
        else:
            R -= 1
            S += 1
    return t, area_s / t, area_i / t


@numba.njit(cache=True)
def supermarket_loop(n, lam, d, steps, seed):
    """The supermarket's counts by hand (``n[k]`` servers with at least ``k`` jobs,
    ``n[0] = N``, ``n[b + 1] = 0``): ``steps`` jumps, time average of ``sum_k n[k]``."""
    np.random.seed(seed)
    b = n.shape[0] - 2
    N = n[0]
    t = 0.0
    area = 0.0
    jobs = 0
    for k in range(1, b + 1):
        jobs += n[k]
    for _ in range(steps):
        arrive = lam * N * (1.0 - (n[b] / N) ** d)
        total = arrive + n[1]
        dt = 1.0 / total
        t += dt
        area += jobs * dt
        u = np.random.random() * total
        if u < arrive:
            u = u / (lam * N)  # arrival joins level k with probability (n[k-1]/N)^d - (n[k]/N)^d
            k = 1
            while (n[k] / N) ** d > 1.0 - u:
                k += 1
            n[k] += 1
            jobs += 1
        else:
            u -= arrive  # departure from a server with exactly k jobs: rate n[k] - n[k+1]
            k = 1
            while u >= n[k] - n[k + 1]:
                u -= n[k] - n[k + 1]
                k += 1
            n[k] -= 1
            jobs -= 1
    return t, area / t


def best(fn, repeat: int) -> tuple[float, float]:
    """The least wall and the least CPU time (this process) of ``repeat`` calls of ``fn``."""
    wall, cpu = [], []
    for _ in range(repeat):
        t0, c0 = time.perf_counter(), time.process_time()
        fn()
        wall.append(time.perf_counter() - t0)
        cpu.append(time.process_time() - c0)
    return min(wall), min(cpu)


def _hand_sir(steps: int, seed: int = 1):
    return sir_loop(
        float(SIR_N), SIR["beta"], SIR["gamma"], SIR["rho"], SIR["a"],
        SIR_N - 10, 10, 0, int(steps), seed,
    )  # fmt: skip


def _hand_supermarket(steps: int, seed: int = 1):
    N, lam, b, d = SUPERMARKET
    n = np.zeros(b + 2, dtype=np.int64)
    n[0] = N
    return supermarket_loop(n, lam, d, int(steps), seed)


def _mf_sir(steps: int, seed: int = 1, engine: str = "auto"):
    import sim

    params = {k: repr(v) for k, v in SIR.items()}
    return sim.simulate(
        "sir", params, N=SIR_N, steps=int(steps), reps=1, workers=1, seed=seed, engine=engine
    )


def _mf_supermarket(steps: int, seed: int = 1):
    import sim

    N, lam, b, d = SUPERMARKET
    return sim.simulate_supermarket(N, repr(lam), b, d, steps=int(steps), reps=1, workers=1,
                                    seed=seed)  # fmt: skip


def warm_table(small: int, repeat: int) -> list[tuple[str, float, float, float, float]]:
    """(case, hand-written wall and CPU seconds, mfstein wall and CPU seconds) for ``small``
    events in a warm process.  SIR runs three ways: ``engine="auto"`` (which loop it
    takes depends on the cache: the interpreted one until the model's own loop has been
    compiled, :func:`sim.interpreted.pick_loop`; the row names it), and each loop by
    name, so that the table does not depend on the cache's state (the model's compiled
    loop is compiled first when the cache lacks it: seconds, before any timing)."""
    rows = []
    cases = (
        ("SIR, auto", _hand_sir, _mf_sir),
        ("SIR, compiled", _hand_sir, partial(_mf_sir, engine="generic")),
        ("SIR, interpreted", _hand_sir, partial(_mf_sir, engine="interpreted")),
        ("supermarket b=10", _hand_supermarket, _mf_supermarket),
    )
    for name, hand, mf in cases:
        hand(1000)
        loop = getattr(mf(small), "loop", None)  # compiled, loaded and prepared: warm
        if name == "SIR, auto":
            name = f"SIR, auto ({loop})"
        t_hand = best(lambda h=hand: h(small), repeat)
        rows.append((name, *t_hand, *best(lambda m=mf: m(small), repeat)))
    return rows


def _calls_code(calls: int, small: int) -> str:
    """A new process making ``calls`` warm ``engine="auto"`` calls of SIR with ``small``
    events each (seeds ``1..calls``, after an untimed call with seed 0 that prepares the
    run): prints the CPU seconds of the process over the calls (numba's compilations
    included) and how many calls ran on each loop."""
    call = _mf_code("sir", small).splitlines()[1].replace("seed=1", "seed=k")
    return textwrap.dedent(f"""
        import collections, json, time
        import sim
        loops = collections.Counter()
        k = 0
        {call.strip()}
        c0 = time.process_time()
        for k in range(1, {calls} + 1):
            {call.strip()}
            assert r.complete
            loops[r.loop] += 1
        print(json.dumps({{"cpu": time.process_time() - c0, "loops": dict(loops)}}))
        """)


def calls_table(
    calls: int, small: int, repeat: int, trees: list[tuple[str, str]]
) -> list[tuple[str, float, float, dict]]:
    """(tree, hand-written CPU seconds, mfstein CPU seconds, calls per loop) of ``calls``
    warm ``engine="auto"`` calls of SIR with ``small`` events each, as a researcher's
    notebook or shell loop makes them: in each of ``trees`` (alternating, best of
    ``repeat``) a new process from a copy of a cache in which another model's run
    compiled the interpreted loop (:func:`_loop_caches`; SIR's own loop is not
    compiled), against ``calls`` calls of the hand-written loop in this process."""
    import json

    hand = min(
        _cpu_of(lambda: [_hand_sir(small, seed) for seed in range(1, calls + 1)])
        for _ in range(repeat)
    )
    bases = _loop_caches(trees)
    runs: dict[str, list] = {tree: [] for _, tree in trees}
    try:
        for _ in range(repeat):
            for _, tree in trees:
                tmp = tempfile.mkdtemp(prefix="mfstein-calls-")
                try:
                    shutil.copytree(bases[tree], tmp, dirs_exist_ok=True)
                    env = _env(tmp, tree)
                    done = subprocess.run(
                        [sys.executable, "-c", _calls_code(calls, small)], env=env, cwd=tree,
                        capture_output=True, text=True,
                    )  # fmt: skip
                    if done.returncode != 0:
                        raise SystemExit(f"a benchmark process failed:\n{done.stderr[-2000:]}")
                    runs[tree].append(json.loads(done.stdout.strip().splitlines()[-1]))
                finally:
                    shutil.rmtree(tmp, ignore_errors=True)
    finally:
        for tmp in bases.values():
            shutil.rmtree(tmp, ignore_errors=True)
    rows = []
    for name, tree in trees:
        cpus = sorted(r["cpu"] for r in runs[tree])
        rows.append((name, hand, cpus[0], cpus[len(cpus) // 2], runs[tree][0]["loops"]))
    return rows


def _cpu_of(fn) -> float:
    """CPU seconds of this process over one call of ``fn``."""
    c0 = time.process_time()
    fn()
    return time.process_time() - c0


def _child(code: str, env: dict | None = None, python: str = sys.executable) -> tuple[float, float]:
    """Wall and CPU seconds of a new process running ``code`` (fails loudly), in the tree
    its ``PYTHONPATH`` names (:func:`_env`)."""
    return _child_out(code, env, python)[:2]


def _child_out(
    code: str, env: dict | None = None, python: str = sys.executable
) -> tuple[float, float, str]:
    """:func:`_child`, with the last line the process printed."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    t0 = time.perf_counter()
    cwd = (env or {}).get(TREE_VAR, ROOT)
    done = subprocess.run([python, "-c", code], env=env, cwd=cwd, capture_output=True, text=True)
    wall = time.perf_counter() - t0
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    if done.returncode != 0:
        raise SystemExit(f"a benchmark process failed:\n{done.stderr[-2000:]}")
    cpu = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
    lines = done.stdout.strip().splitlines()
    return wall, cpu, lines[-1] if lines else ""


def _best_child(code: str, repeat: int, env: dict | None = None, **kw) -> tuple[float, float]:
    runs = [_child(code, env, **kw) for _ in range(repeat)]
    return min(r[0] for r in runs), min(r[1] for r in runs)


#: The environment variable that names the tree a child runs in (its working directory).
TREE_VAR = "MFSTEIN_BENCH_TREE"


def _env(cache: str | None = None, tree: str = ROOT) -> dict:
    """The environment of a child in ``tree``: Python's bytecode of the tree is written
    and read as an installation's is (``PYTHONDONTWRITEBYTECODE`` removed; else every
    module is compiled from source in every process, as GillesPy2's installed modules
    are not); with ``cache``, an empty mfstein cache."""
    env = {**os.environ, "PYTHONPATH": tree, TREE_VAR: tree}
    env.pop("PYTHONDONTWRITEBYTECODE", None)
    if cache is not None:  # an empty user cache: nothing generated, nothing compiled
        env.pop("MFSTEIN_CACHE_DIR", None)
        env.pop("NUMBA_CACHE_DIR", None)
        env["XDG_CACHE_HOME"] = cache
    return env


def _gsp_env(python: str) -> dict:
    """GillesPy2's build runs ``scons`` from ``PATH`` (else ``python -m SCons`` with the
    *resolved* interpreter, outside its virtual environment): its ``bin`` goes first."""
    return {**os.environ, "PATH": os.path.dirname(python) + os.pathsep + os.environ["PATH"]}


def _mf_code(model: str, events: int, engine: str = "auto", loop: str | None = None) -> str:
    """A ``sim.simulate`` of ``model`` (``"sir"``, ``"tandem"`` or ``"sis"``) on ``engine``,
    checking that the run completed (and ran on ``loop`` when given)."""
    if model == "sir":
        call = (f"sim.simulate('sir', {{k: repr(v) for k, v in {SIR!r}.items()}}, N={SIR_N}, "
                f"steps={events}, reps=1, workers=1, seed=1, engine={engine!r})")  # fmt: skip
    elif model == "sis":
        call = (f"sim.simulate('sis', {{'a': '0.1', 'beta': '2', 'gamma': '1'}}, N=100, "
                f"steps={events}, reps=1, workers=1, seed=1, engine={engine!r})")  # fmt: skip
    else:
        k, lam, mu, N = TANDEM
        call = (f"sim.simulate('examples/tandem.py:tandem', {{'stations': {k}, 'lam': '{lam}', "
                f"'mu': '{mu}'}}, N={N}, steps={events}, reps=1, workers=1, seed=1, "
                f"engine={engine!r})")  # fmt: skip
    check = "" if loop is None else f"assert r.loop == {loop!r}, r.loop\n"
    return f"import sim\nr = {call}\nassert r.complete\n{check}print(r.loop)\n"


def _hand_code(model: str, events: int) -> str:
    if model == "sir":
        call = f"bench._hand_sir({events})"
    else:
        k, lam, mu, N = TANDEM
        call = f"bench.tandem_loop({N}, {k}, {lam}, {mu}, {events}, 1)"
    return f"import benchmarks.bench_sim_overhead as bench\n{call}\n"


@numba.njit(cache=True)
def tandem_loop(N, k, lam, mu, steps, seed):
    """The tandem line by hand: arrivals at ``lam N``, station ``i`` serves at ``mu n_i``."""
    np.random.seed(seed)
    n = np.zeros(k, dtype=np.int64)
    busy = 0
    t = 0.0
    area = 0.0
    for _ in range(steps):
        total = lam * N + mu * busy
        dt = 1.0 / total
        t += dt
        area += busy * dt
        u = np.random.random() * total
        if u < lam * N:
            n[0] += 1
            busy += 1
            continue
        u = (u - lam * N) / mu
        i = 0
        while u >= n[i] and i < k - 1:
            u -= n[i]
            i += 1
        n[i] -= 1
        if i + 1 < k:
            n[i + 1] += 1
        else:
            busy -= 1
    return t, area / t


def _gillespy2_code(model: str, events: int) -> str:
    """A GillesPy2 script: the model, its C++ SSA built and run to about ``events`` jumps."""
    if model == "sir":
        p = SIR
        # stationary flows are equal: events per unit time = 3 N gamma I*; I* from the
        # fixed point (a + beta i) s = gamma i = rho r with s + i + r = 1
        i_star = _sir_infected_fraction()
        t_end = events / (3 * SIR_N * p["gamma"] * i_star)
        body = f"""
        m = gillespy2.Model(name="sir")
        m.add_parameter([gillespy2.Parameter(name=k, expression=str(v)) for k, v in {p!r}.items()]
                        + [gillespy2.Parameter(name="N", expression="{SIR_N}")])
        S = gillespy2.Species(name="S", initial_value={SIR_N - 10})
        I = gillespy2.Species(name="I", initial_value=10)
        R = gillespy2.Species(name="R", initial_value=0)
        m.add_species([S, I, R])
        m.add_reaction([
            gillespy2.Reaction(name="inf", reactants={{S: 1}}, products={{I: 1}},
                               propensity_function="(a + beta * I / N) * S"),
            gillespy2.Reaction(name="rec", reactants={{I: 1}}, products={{R: 1}},
                               propensity_function="gamma * I"),
            gillespy2.Reaction(name="loss", reactants={{R: 1}}, products={{S: 1}},
                               propensity_function="rho * R"),
        ])
        """
    else:
        k, lam, mu, N = TANDEM
        t_end = events / ((k + 1) * lam * N)
        body = f"""
        m = gillespy2.Model(name="tandem")
        m.add_parameter([gillespy2.Parameter(name="lamN", expression="{lam * N}"),
                         gillespy2.Parameter(name="mu", expression="{mu}")])
        x = [gillespy2.Species(name=f"x{{i}}", initial_value=0) for i in range({k})]
        m.add_species(x)
        rs = [gillespy2.Reaction(name="arrival", reactants={{}}, products={{x[0]: 1}},
                                 propensity_function="lamN")]
        for i in range({k}):
            out = {{x[i + 1]: 1}} if i + 1 < {k} else {{}}
            rs.append(gillespy2.Reaction(name=f"s{{i}}", reactants={{x[i]: 1}}, products=out,
                                         propensity_function=f"mu * x{{i}}"))
        m.add_reaction(rs)
        """
    return textwrap.dedent(f"""
        import numpy, gillespy2
        {textwrap.indent(textwrap.dedent(body), "        ").strip()}
        m.timespan(numpy.linspace(0, {t_end!r}, 101))
        solver = gillespy2.SSACSolver(model=m)
        r = m.run(solver=solver, seed=1)
        assert len(r[0]["time"]) == 101
        """)


def _sir_infected_fraction() -> float:
    """I* of SIR's mean field (bisection on the one equation left by the flows)."""
    beta, gamma, rho, a = SIR["beta"], SIR["gamma"], SIR["rho"], SIR["a"]

    def excess(i: float) -> float:
        r = gamma * i / rho
        s = 1.0 - i - r
        return (a + beta * i) * s - gamma * i

    lo, hi = 0.0, 1.0 / (1.0 + gamma / rho)
    for _ in range(100):
        mid = 0.5 * (lo + hi)
        lo, hi = (mid, hi) if excess(mid) > 0 else (lo, mid)
    return 0.5 * (lo + hi)


def end_to_end(
    events: int,
    repeat: int,
    gsp: str | None,
    cold: bool,
    warm_routes: bool = True,
    trees: list[tuple[str, str]] | None = None,
) -> list[tuple]:
    """(model, route, wall, cpu) for every route of table 2 (without the hand-written loop
    and the warm cache unless ``warm_routes``); the empty-cache routes in each of ``trees``
    (``(name, checkout)``; default this one)."""
    trees = trees or [("after", ROOT)]
    rows = []
    warm = _env()
    bases = _loop_caches(trees) if cold else {}
    try:
        for model in ("sir", "tandem"):
            if warm_routes:
                rows += _warm_rows(model, events, repeat, warm)
            if cold:
                rows += _cold_rows(model, events, repeat, trees, bases)
            if gsp:
                code = _gillespy2_code(model, events)
                rows.append((model, "GillesPy2 C++ SSA, build included",
                             *_best_child(code, repeat, _gsp_env(gsp), python=gsp)))  # fmt: skip
    finally:
        for tmp in bases.values():
            shutil.rmtree(tmp, ignore_errors=True)
    return rows


def _warm_rows(model: str, events: int, repeat: int, warm: dict) -> list[tuple]:
    """The hand-written loop and mfstein in a new process with a warm cache."""
    _child(_mf_code(model, 1000), warm)  # the warm cache holds this model
    _child(_hand_code(model, 1000), warm)
    hand = _best_child(_hand_code(model, events), repeat, warm)
    return [
        (model, "hand-written numba loop", *hand),
        (model, "mfstein, new process, warm cache",
         *_best_child(_mf_code(model, events), repeat, warm)),
    ]  # fmt: skip


#: The empty-cache routes of table 2: (label, engine, loop it must run on -- ``None``:
#: the one ``auto`` picks, named in the row --, whether the interpreted loop is compiled
#: in the cache beforehand by a run of another model, and whether the run has the
#: table's events or ``--small``: an installation's first short run).
COLD_ROUTES = (
    ("mfstein auto, empty cache (first ever)", "auto", None, False, False),
    ("mfstein auto, empty cache, short run (first ever)", "auto", None, False, True),
    ("mfstein interpreted, loop compiled", "interpreted", "interpreted", True, False),
    ("mfstein auto, new model, loop compiled", "auto", None, True, False),
    ("mfstein compiled loop, empty cache", "generic", "compiled", False, False),
    ("mfstein compiled loop, empty cache, short run", "generic", "compiled", False, True),
)
#: The events of the short runs of :data:`COLD_ROUTES` (``--small``).
SHORT_EVENTS: list[int] = [200_000]


#: Only the empty-cache routes whose label contains one of these (``--route``; all
#: when empty).
ROUTES: list[str] = []


def _loop_caches(trees: list[tuple[str, str]]) -> dict[str, str]:
    """Per tree, a cache directory in which another model's run compiled the interpreted
    loop (and nothing of SIR or the tandem line): copied afresh for each run that starts
    from it, so that the loop is compiled once per tree, not once per run."""
    caches = {}
    for _, tree in trees:
        tmp = tempfile.mkdtemp(prefix="mfstein-cold-base-")
        _child(_mf_code("sis", 1000, "interpreted"), _env(tmp, tree))
        caches[tree] = tmp
    return caches


def _cold_rows(
    model: str, events: int, repeat: int, trees: list[tuple[str, str]], bases: dict[str, str]
) -> list[tuple]:
    """(model, route, wall, cpu) of each :data:`COLD_ROUTES` route in each tree, best of
    ``repeat`` (the trees alternating), each run in a new cache (``XDG_CACHE_HOME``):
    empty, or a copy of the tree's ``bases`` cache (:func:`_loop_caches`)."""
    rows = []
    for label, engine, loop, warm_loop, short in COLD_ROUTES:
        if ROUTES and not any(text in label for text in ROUTES):
            continue
        runs: dict[str, list] = {tree: [] for _, tree in trees}
        for _ in range(repeat):
            for _, tree in trees:
                tmp = tempfile.mkdtemp(prefix="mfstein-cold-")
                try:
                    if warm_loop:  # the loop (and the library) compiled by another model's run
                        shutil.copytree(bases[tree], tmp, dirs_exist_ok=True)
                    code = _mf_code(model, SHORT_EVENTS[0] if short else events, engine, loop)
                    runs[tree].append(_child_out(code, _env(tmp, tree)))
                finally:
                    shutil.rmtree(tmp, ignore_errors=True)
        for name, tree in trees:
            best = (min(r[0] for r in runs[tree]), min(r[1] for r in runs[tree]))
            taken = "/".join(sorted({r[2] for r in runs[tree]}))  # the loop each run named
            text = f"{label} [{SHORT_EVENTS[0]:.0e}]" if short else label
            rows.append((model, _labelled(f"{text} -> {taken}", name, trees), *best))
    return rows


def _labelled(label: str, name: str, trees: list[tuple[str, str]]) -> str:
    """``label``, with the tree's name when more than one tree runs."""
    return label if len(trees) == 1 else f"{label} [{name}]"


def break_even(events: int, repeat: int) -> list[tuple[str, float, float, float, float]]:
    """(case, interpreted ns/event, compiled ns/event, work units per event of the
    interpreted loop, compile seconds of the model's loop by
    :func:`sim.generic_kernels.compile_seconds`): CPU time of ``events`` events in this
    process, best of ``repeat`` (the loops compiled before)."""
    from derive.models import as_model
    from sim.generic import GenericSimulator, fresh_state
    from sim.generic import advance as compiled_advance
    from sim.generic_kernels import chain_module, compile_seconds
    from sim.interpreted import InterpretedSimulator, interpreted_ops, model_tables
    from sim.interpreted import advance as interpreted_advance

    k, lam, mu, N = TANDEM
    cases = (
        ("SIR N=1000", "sir", {key: repr(v) for key, v in SIR.items()}, SIR_N),
        ("tandem 4 stations", "examples/tandem.py:tandem",
         {"stations": k, "lam": str(lam), "mu": str(mu)}, N),
        ("supermarket b=10", "supermarket", {"b": 10, "lam": "0.9"}, 1000),
    )  # fmt: skip
    rows = []
    for name, spec, params, size in cases:
        model, values = as_model(spec, params)
        estimate = compile_seconds(chain_module(model)[1])
        per_event = []
        for cls, adv in ((InterpretedSimulator, interpreted_advance),
                         (GenericSimulator, compiled_advance)):  # fmt: skip
            run = cls(model, size, values)
            state = fresh_state(run.spec, np.array([1, 2, 3, 4], dtype=np.uint64))
            adv(run.spec, state, 10)
            cpu = []
            for _ in range(repeat):
                c0 = time.process_time()
                adv(run.spec, state, events)
                cpu.append(time.process_time() - c0)
            per_event.append(min(cpu) / events * 1e9)
        ops = interpreted_ops(model_tables(model))
        rows.append((name, per_event[0], per_event[1], ops, estimate or float("nan")))
    return rows


def first_calls(repeat: int, trees: list[tuple[str, str]]) -> list[tuple[str, float, float]]:
    """Wall and CPU seconds of a new process making one first call (warm cache), in each
    of ``trees`` (alternating, best of ``repeat``)."""
    params = {"beta": 3, "gamma": 1, "rho": "0.5", "a": "0.1"}
    solve = f"import mfstein as mf\nmf.solve('sir', {params!r})\n"
    code = {
        "python -c pass (the interpreter alone)": "pass\n",
        "first mf.solve('sir', ...)": solve,
        "first simulate SIR, 2e5 events": _mf_code("sir", 200_000),
    }
    rows = []
    for name, c in code.items():
        runs: dict[str, list] = {tree: [] for _, tree in trees}
        for _, tree in trees:
            _child(c, _env(tree=tree))  # the warm cache (each tree's own prepared runs)
        for _ in range(repeat):
            for _, tree in trees:
                runs[tree].append(_child(c, _env(tree=tree)))
        for label, tree in trees:
            best = (min(r[0] for r in runs[tree]), min(r[1] for r in runs[tree]))
            rows.append((_labelled(name, label, trees), *best))
    return rows


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--repeat", type=int, default=3)
    ap.add_argument("--small", type=float, default=2e5)
    ap.add_argument("--events", type=float, default=1e7)
    ap.add_argument(
        "--calls",
        type=int,
        default=1000,
        help="warm table: also this many auto calls of SIR in one new process per tree (0: skip)",
    )
    ap.add_argument("--gillespy2-python", default="/tmp/gspvenv/bin/python")
    ap.add_argument("--no-cold", action="store_true", help="skip the empty-cache runs")
    ap.add_argument(
        "--route",
        action="append",
        default=[],
        help="only the empty-cache routes whose label contains this text (repeatable)",
    )
    ap.add_argument(
        "--before",
        help="another checkout (git worktree add --detach DIR main) whose first calls and "
        "empty-cache routes run side by side with this one's",
    )
    ap.add_argument(
        "--only",
        choices=("warm", "first", "end", "cold"),
        help="one table only (cold: table 2's empty-cache and GillesPy2 rows)",
    )
    ap.add_argument(
        "--break-even",
        action="store_true",
        help="only the interpreted and compiled loops' CPU ns per event",
    )
    args = ap.parse_args()
    gsp = args.gillespy2_python if os.path.exists(args.gillespy2_python) else None
    ROUTES[:] = args.route
    SHORT_EVENTS[:] = [int(args.small)]
    trees = [("after", ROOT)]
    if args.before:
        trees.insert(0, ("before", os.path.abspath(args.before)))
    print(f"best of {args.repeat} runs, {os.cpu_count()} cores, load {os.getloadavg()[0]:.1f}")
    if args.break_even:
        print("\n## event loops, 1e6 events in this process, CPU ns per event")
        print(f"{'case':<18} {'interpreted':>11} {'compiled':>8} {'ops':>5} {'compile s':>9}")
        for name, ti, tc, ops, comp in break_even(10**6, args.repeat):
            text = "cached" if comp != comp else f"{comp:.1f}"  # NaN: compiled already
            print(f"{name:<18} {ti:11.1f} {tc:8.1f} {ops:5.1f} {text:>9}")
        return
    if args.only in (None, "warm"):
        print(f"\n## warm process, {args.small:.0e} events, seconds per call (wall | CPU)")
        head = f"{'hand numba':>10} {'mfstein':>8} {'ratio':>5}"
        print(f"{'case':<26} {head} | {head}")
        for name, hw, hc, mw, mc in warm_table(int(args.small), args.repeat):
            print(
                f"{name:<26} {hw:10.4f} {mw:8.4f} {mw / hw:5.2f} | {hc:10.4f} {mc:8.4f} "
                f"{mc / hc:5.2f}"
            )
    if args.only in (None, "warm") and args.calls:
        print(f"\n## {args.calls} auto calls of SIR, {args.small:.0e} events each, one new "
              "process (SIR's loop not compiled), CPU seconds of the calls")  # fmt: skip
        print(
            f"{'tree':<8} {'hand numba':>10} {'mfstein min':>11} {'median':>8} {'ratio':>5}  loops"
        )
        for name, hand, low, mid, loops in calls_table(
            args.calls, int(args.small), args.repeat, trees
        ):
            print(f"{name:<8} {hand:10.2f} {low:11.2f} {mid:8.2f} {low / hand:5.2f}  {loops}")
    if args.only in (None, "first"):
        print("\n## a new process, warm cache: whole process, seconds")
        print(f"{'first call':<49} {'wall':>7} {'CPU':>7}")
        for name, wall, cpu in first_calls(args.repeat, trees):
            print(f"{name:<49} {wall:7.2f} {cpu:7.2f}")
    if args.only in (None, "end", "cold"):
        print(f"\n## end to end, {args.events:.0e} events, a new process each, seconds")
        if gsp is None:
            print(f"(GillesPy2 skipped: no {args.gillespy2_python})")
        rows = end_to_end(
            int(args.events), args.repeat, gsp, not args.no_cold, args.only != "cold", trees
        )
        print(f"{'model':<7} {'route -> loop':<76} {'wall':>7} {'CPU':>7} "
              f"{'vs GillesPy2 wall | CPU':>24}")  # fmt: skip
        for model, route, wall, cpu in rows:
            ref = [(w, c) for m, r, w, c in rows if m == model and r.startswith("GillesPy2")]
            ratio = f"{ref[0][0] / wall:10.2f}x | {ref[0][1] / cpu:.2f}x" if ref else ""
            print(f"{model:<7} {route:<76} {wall:7.2f} {cpu:7.2f} {ratio:>24}")


if __name__ == "__main__":
    main()
