"""A first compilation of the generic simulator's event loop is announced (issue 23,
"work with a known size"): one line on standard error before numba's compiler runs
for more than a few seconds, none when the loop is compiled already."""

from __future__ import annotations

import os
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest
from deadlines import deadline

ROOT = Path(__file__).resolve().parents[2]


def _tandem(stations: int):
    from derive.models import load_model

    return load_model(f"{ROOT}/examples/tandem.py:tandem", stations=stations)


def test_an_uncompiled_event_loop_is_announced_in_one_line(tmp_path, monkeypatch, capsys):
    from mfstein.ground.jit import ANNOUNCE_SECONDS
    from sim.generic import announce_compile
    from sim.generic_kernels import chain_module, compile_seconds

    monkeypatch.setenv("MFSTEIN_CACHE_DIR", str(tmp_path))  # nothing compiled here
    _name, small = chain_module(_tandem(2))
    _name, large = chain_module(_tandem(8))
    seconds = compile_seconds(large)
    assert seconds is not None and seconds >= ANNOUNCE_SECONDS
    assert compile_seconds(small) < seconds  # a longer loop takes longer to compile
    announce_compile(large)
    err = capsys.readouterr().err
    assert err.count("\n") == 1
    assert err.startswith("mfstein: compiling the simulator for this model (first run, about ")


def test_a_compiled_event_loop_is_not_announced(capsys):
    import sim
    from derive.models import load_model
    from mfstein.ground.jit import has_index
    from sim.generic import announce_compile
    from sim.generic_kernels import chain_module, chain_never_compiled, compile_seconds, event_loop

    model = load_model("sir")  # the model tests/sim/test_generic.py simulates
    params = {"beta": 3, "gamma": 1, "rho": "0.5", "a": "0.1"}
    # engine="generic": the model's own compiled loop (auto would run this short run on
    # the interpreted loop, which compiles nothing per model)
    r = sim.simulate(model, params, N=10, steps=200, reps=1, batches=2, workers=1,
                     engine="generic")
    assert r.loop == "compiled"
    _name, mod = chain_module(model)
    assert compile_seconds(mod) is None
    announce_compile(mod)
    assert capsys.readouterr().err == ""
    # found on disk without loading the module: numba's own index file of its loop
    assert os.path.isfile(event_loop(mod)._cache._cache_file._index_path)
    assert has_index(Path(mod.__file__)) and not chain_never_compiled(model)
    assert not has_index(Path(mod.__file__).with_name("simchain_0123456789abcdef0123.py"))


def test_a_function_compiled_by_an_earlier_process_counts_as_compiled(tmp_path):
    """``is_compiled`` reads numba's on-disk index: a second process sees the first's code."""
    (tmp_path / "tiny.py").write_text(
        "from mfstein.ground.jit import numba\n\n\n"
        "@numba.njit(cache=True)\ndef inc(x):\n    return x + 1\n"
    )
    script = textwrap.dedent(
        """
        import sys
        sys.path.insert(0, sys.argv[1])
        from mfstein.ground.jit import is_compiled
        import tiny
        before = is_compiled(tiny.inc)
        tiny.inc(1)
        print(before, is_compiled(tiny.inc))
        """
    )
    runs = [
        subprocess.run(
            [sys.executable, "-c", script, str(tmp_path)],
            capture_output=True,
            text=True,
            timeout=deadline(120),
            cwd=ROOT,
        )
        for _ in range(2)
    ]
    assert [r.stdout.split() for r in runs] == [["False", "True"], ["True", "True"]], [
        r.stderr for r in runs
    ]


@pytest.mark.parametrize("bad", [None, object(), len])
def test_what_is_not_a_cached_numba_function_is_not_compiled(bad):
    from mfstein.ground.jit import is_compiled

    assert is_compiled(bad) is False


def test_the_announcement_has_one_home_and_a_threshold(capsys):
    from mfstein.ground.jit import ANNOUNCE_SECONDS, announce_compile

    assert announce_compile("the thing", None) is False  # nothing to compile
    assert announce_compile("the thing", ANNOUNCE_SECONDS / 2) is False  # too short to say
    assert capsys.readouterr().err == ""
    assert announce_compile("the thing", 2 * ANNOUNCE_SECONDS) is True
    err = capsys.readouterr().err
    assert err.count("\n") == 1
    assert err.startswith("mfstein: compiling the thing (first run, about ")


def test_first_compile_seconds_is_none_once_every_kernel_is_compiled():
    from mfstein.ground.jit import first_compile_seconds, numba

    @numba.njit
    def twice(x):
        return 2 * x

    assert first_compile_seconds(4.0, twice) == 4.0
    twice(1)
    assert first_compile_seconds(4.0, twice) is None


def test_the_exact_solver_announces_a_first_compile_of_its_kernels_once(tmp_path):
    """With an empty cache the model's kernels are compiled (one line); the second
    solve in the same process, and a later process, compile nothing (no line).  The
    SIS model at N = 4 is a small chain, which takes the NumPy route and compiles
    nothing (no line, even from an empty cache); with the size threshold of the
    NumPy route set to 0 it takes the compiled route, whose first solve compiles the
    search and the model's rates (about 5 CPU s)."""
    code = textwrap.dedent(
        """
        import sys
        import numeric.exact
        import numeric.exact.small
        if sys.argv[1] == "compiled":
            numeric.exact.small.SMALL_STATES = 0
        params = {"a": "0.1", "beta": "2", "gamma": "1"}
        for _ in range(2):
            r = numeric.exact.solve("sis", params, N=4, progress=True)
        print(r.states)
        """
    )
    env = {**os.environ, "MFSTEIN_CACHE_DIR": str(tmp_path)}
    runs = [
        subprocess.run(
            [sys.executable, "-c", code, route], cwd=ROOT, env=env, capture_output=True,
            text=True,
        )
        for route in ("numpy", "compiled", "compiled")
    ]
    assert all(r.returncode == 0 for r in runs), [r.stderr[-500:] for r in runs]
    assert len({r.stdout for r in runs}) == 1  # the same chain by both routes
    lines = [r.stderr.count("mfstein: compiling the exact solver's kernels") for r in runs]
    assert lines == [0, 1, 0]
