"""Typed records between modules, not wide tuples or dicts read by key (issue 31).

The scan reads the library with :mod:`ast`: a module-level function whose return
annotation is a tuple of four or more items (``tuple[a, b, c, d]``; numba-compiled
functions excepted) must not be read by another module -- imported by name
(``from sim.runner import check_run``) or called through its module
(``runner.check_run(...)``).  Such data crosses modules as a frozen dataclass.
The records that replaced them are checked below: frozen, with the fields their
readers read.
"""

from __future__ import annotations

import ast
import dataclasses

import numpy as np
import pytest
from test_layers import imports, library_files, module_name

#: Functions still returning a wide tuple read across modules, with the reason (a
#: ratchet: a new one fails, and so does a listed one that is gone).
KNOWN: dict[str, str] = {}
#: The fewest items of a tuple that must cross modules as a record.
WIDE = 4


def wide_tuple_functions(source: str) -> dict[str, int]:
    """Module-level functions of ``source`` annotated to return a tuple of at least
    :data:`WIDE` items (not ``tuple[x, ...]``), not numba-compiled: name -> items."""
    out = {}
    for node in ast.parse(source).body:
        if not isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef) or node.returns is None:
            continue
        r = node.returns
        if not (isinstance(r, ast.Subscript) and ast.unparse(r.value) in ("tuple", "Tuple")):
            continue
        items = r.slice.elts if isinstance(r.slice, ast.Tuple) else [r.slice]
        if any(ast.unparse(e) == "..." for e in items):
            continue
        if any("jit" in ast.unparse(d) for d in node.decorator_list):
            continue
        if len(items) >= WIDE:
            out[node.name] = len(items)
    return out


def crossings(sources: dict[str, str]) -> list[str]:
    """``"reader -> module.function (k-tuple)"`` for every module of ``sources`` (module
    name -> source) that reads another module's wide-tuple function."""
    wide = {m: wide_tuple_functions(s) for m, s in sources.items()}
    found = set()
    for reader, source in sources.items():
        tree = ast.parse(source)
        attrs = {n.attr for n in ast.walk(tree) if isinstance(n, ast.Attribute)}
        for _, target, name in imports(source, reader):
            if target == reader:
                continue
            for fn, k in wide.get(target, {}).items():
                # by name, or through the module (imported whole or from its package)
                if name == fn or (name in ("", target.rpartition(".")[2]) and fn in attrs):
                    found.add(f"{reader} -> {target}.{fn} ({k}-tuple)")
    return sorted(found)


def library_sources() -> dict[str, str]:
    return {module_name(f): f.read_text() for f in library_files()}


# -------------------------------------------------------------- the checker itself
def test_the_scan_sees_imports_by_name_and_through_the_module(monkeypatch) -> None:
    import test_layers

    monkeypatch.setattr(test_layers, "is_module", lambda name: name in ("pkg.a", "pkg.b"))
    sources = {
        "pkg.a": (
            "def four() -> tuple[int, int, int, float]: ...\n"
            "def three() -> tuple[int, int, int]: ...\n"
            "def many() -> tuple[int, ...]: ...\n"
            "@njit\ndef compiled() -> tuple[int, int, int, int]: ...\n"
            "x = four()\n"
        ),
        "pkg.b": "from pkg.a import four, three, many, compiled\n",
        "pkg.c": "def f():\n    from pkg import a\n    return a.four(), a.three()\n",
        "pkg.d": "import pkg.a\n",  # imported, never read
    }
    assert crossings(sources) == [
        "pkg.b -> pkg.a.four (4-tuple)",
        "pkg.c -> pkg.a.four (4-tuple)",
    ]


# ------------------------------------------------------------- the layout's check
def test_no_wide_tuple_is_read_across_modules_but_the_listed_ones() -> None:
    found = crossings(library_sources())
    bad = [f"new: {f}" for f in found if f not in KNOWN]
    bad += [f"listed but gone (remove it from KNOWN): {k}" for k in KNOWN if k not in found]
    assert not bad, "\n".join(bad)


# ------------------------------------------------------------- the records
def _frozen(record: object) -> None:
    name = dataclasses.fields(record)[0].name
    with pytest.raises(dataclasses.FrozenInstanceError):
        setattr(record, name, None)


def test_check_run_returns_a_frozen_record_of_the_checked_options() -> None:
    from sim.runner import CheckedRun, check_run

    run = check_run("100", 3, 7, None, "0.25", batches=4)
    assert isinstance(run, CheckedRun)
    assert (run.steps, run.reps, run.seed, run.batches) == (100, 3, 7, 4)
    assert 1 <= run.workers <= 3 and run.warmup_fraction == 0.25
    assert check_run(5, 2, 0, 1, 0.0).batches is None
    _frozen(run)


def test_loop_buffers_copy_the_state_and_zero_the_sums() -> None:
    from types import SimpleNamespace

    from sim.generic import LoopBuffers, loop_buffers, loop_sums

    spec = SimpleNamespace(n=2, hist_len=5, n_obs=3)
    state = {"n": np.array([4, 1]), "rng": np.arange(4, dtype=np.uint64)}
    buf = loop_buffers(spec, state)
    assert isinstance(buf, LoopBuffers)
    assert buf.state["n"] is not state["n"] and np.array_equal(buf.state["n"], state["n"])
    shapes = [buf.corr.shape, buf.cov.shape, buf.hist.shape, buf.obs.shape]
    assert shapes == [(2,), (2, 2), (2, 5), (3,)]
    buf.corr[:] = [1.0, 2.0]  # the loop writes into the arrays
    sums = loop_sums(buf, np.array([3.0]), 0.5, np.full(2, -1.0))
    assert np.array_equal(sums["mean"], [11.0, 1.0]) and sums["cov"] is buf.cov
    _frozen(buf)


def test_jumps_are_rows_and_signs_of_each_move() -> None:
    from numeric.heterogeneous.algebra import Jumps, jumps
    from numeric.heterogeneous.rates import Rates

    uni, pair = np.array([[0, 1]]), np.array([[0, 2, 1, 3]])
    R = Rates(2, 2, uni, np.array([1.0]), pair, np.array([2.0]))
    jp = jumps(R)
    assert isinstance(jp, Jumps) and jp.uni is uni and jp.pair is pair
    # every jump moves mass and keeps the total: its signs sum to zero
    assert jp.uni_signs.sum() == 0 and jp.pair_signs.sum() == 0
    assert list(jp.pair_signs) == [-1, -1, 1, 1]
    with pytest.raises(ValueError):
        jp.uni_signs[0] = 5  # shared by every call: read-only
    _frozen(jp)


def test_the_supermarket_declares_a_typed_structure_read_by_name_too() -> None:
    from derive.models import load_model
    from derive.models.supermarket import with_buffer
    from derive.models.supermarket_structure import SupermarketStructure
    from mfstein.ground.errors import ParameterError

    m = load_model("supermarket", b=4, d=3)
    st = m.info.structure
    assert isinstance(st, SupermarketStructure)
    assert (st.b, st.d, st.replacement, st.arrival, st.service) == (4, 3, True, "lam", None)
    # general code reads a fact by name; a plain dict of the same facts reads the same
    assert m.structure("d") == st["d"] == st.get("d") == 3 and m.structure("nothing") is None
    assert SupermarketStructure.read(dict(st)) == st
    assert SupermarketStructure.read({**dict(st), "extra": 1}) == st
    assert not SupermarketStructure.declared({"d": 3})
    with pytest.raises(ParameterError, match="missing b, mu, replacement, arrival"):
        SupermarketStructure.read({"d": 3})
    with pytest.raises(KeyError):
        st["nothing"]
    assert with_buffer(m, 6).info.structure == dataclasses.replace(st, b=6)
    _frozen(st)


def test_the_float64_order_2_record_is_frozen_and_its_dict_the_public_form() -> None:
    from numeric.meanfield.stationary import Order2Float64

    names = [f.name for f in dataclasses.fields(Order2Float64)]
    # what float64_route reads (A, B, c2) and the public dict's keys, in order
    assert names == ["s_star", "V", "A", "W", "B", "c", "c2", "n", "b", "third_moment"]
    z = np.zeros(2)
    rec = Order2Float64(z, z, z, np.eye(2), np.eye(2), 2.0, 2.0, 2, 2, "schur")
    d = rec.to_dict()
    assert list(d) == names and d["A"] is z and d["third_moment"] == "schur"
    _frozen(rec)
