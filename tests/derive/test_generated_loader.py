"""The one loader of generated modules (mfstein.ground.generated): every kind of damage to a
cached kernel or simulator module is found before the module is trusted, and the
module is generated again with the same text and the same numbers."""

from __future__ import annotations

import importlib

import numpy as np
import pytest

import mfstein.ground.cache
import mfstein.ground.generated
from derive import supermarket
from derive.models import load_model
from mfstein.ground.cache import with_check
from mfstein.ground.errors import ParameterError
from mfstein.ground.generated import KEY_PREFIX, generated_module, load_generated, module_name

kernels_module = importlib.import_module("derive.kernels")

S = [0.5, 0.2, 0.1]
P = [0.9]


@pytest.fixture
def cache(tmp_path, monkeypatch):
    monkeypatch.setenv("MFSTEIN_CACHE_DIR", str(tmp_path))
    # one warning per process
    monkeypatch.setattr(mfstein.ground.cache, "_damage_reported", [False])
    monkeypatch.setattr(mfstein.ground.generated, "_loaded", {})
    return tmp_path


def _fresh(model, backend: str = "mpmath"):
    for key in [k for k in kernels_module._memory_cache if k[0] == model.key]:
        del kernels_module._memory_cache[key]
    return kernels_module.kernels(model, backend)


def _reseal(text: str, edit) -> str:
    """``text`` edited by ``edit`` with a valid digest line again."""
    body = text.rpartition(mfstein.ground.cache.CHECK_PREFIX)[0]
    return with_check(edit(body))


def _damage(how: str, good: str, other: str) -> str:
    key_line = good.partition("\n")[0]
    return {
        "emptied": lambda: "",
        "garbage": lambda: "\x00\xff garbage",
        "truncated": lambda: good[: len(good) // 2],
        "one byte changed": lambda: (
            good[: len(good) // 2] + chr(ord(good[len(good) // 2]) ^ 1) + good[len(good) // 2 + 1 :]
        ),
        # valid digests, wrong code
        "another model's module": lambda: other,
        "key line of another model": lambda: _reseal(
            good, lambda b: other.partition("\n")[0] + "\n" + b.partition("\n")[2]
        ),
        "code that raises": lambda: _reseal(good, lambda b: key_line + "\nraise RuntimeError\n"),
        "a kernel missing": lambda: _reseal(good, lambda b: b.replace("def rates(", "def gone(")),
        "not Python": lambda: _reseal(good, lambda b: b + "def (:\n"),
    }[how]()


DAMAGE = [
    "emptied",
    "garbage",
    "truncated",
    "one byte changed",
    "another model's module",
    "key line of another model",
    "code that raises",
    "a kernel missing",
    "not Python",
]


@pytest.mark.parametrize("how", DAMAGE)
def test_damaged_kernel_module_is_regenerated(cache, how) -> None:
    model, other = supermarket(3, 2), supermarket(3, 3)
    k1 = _fresh(model)
    good = k1.path.read_text()
    assert good.startswith(KEY_PREFIX) and k1.source == good
    value = k1.f(S, P)
    other_text = _fresh(other).path.read_text()
    k1.path.write_text(_damage(how, good, other_text))
    with pytest.warns(RuntimeWarning, match="damaged cache files"):
        k2 = _fresh(model)
    assert k2.path.read_text() == good
    assert k2.f(S, P) == value
    assert k2.rates(S, P) == k1.rates(S, P)


def test_intact_module_is_loaded_silently_and_not_regenerated(cache, recwarn) -> None:
    calls = []

    def generate() -> str:
        calls.append(1)
        return "X = 1\n"

    first = generated_module("probe", "key one", generate, required=("X",))
    again = generated_module("probe", "key one", generate, required=("X",))
    assert calls == [1] and again.text == first.text and again.module.X == 1
    assert first.name == module_name("probe", "key one") and first.path.parent == cache
    assert not [w for w in recwarn if "damaged" in str(w.message)]
    # another key is another module
    assert generated_module("probe", "key two", lambda: "X = 2\n").module.X == 2


def test_a_worker_refuses_a_damaged_module_in_one_sentence(cache) -> None:
    made = generated_module("probe", "worker key", lambda: "X = 1\n")
    mfstein.ground.generated._loaded.clear()  # a fresh worker process
    assert load_generated(made.name).X == 1
    mfstein.ground.generated._loaded.clear()
    made.path.write_text(_reseal(made.text, lambda b: b.replace("X = 1", "X = (")))
    with pytest.warns(RuntimeWarning, match="damaged"):
        with pytest.raises(ParameterError, match=r"^the generated module .* is damaged; run"):
            load_generated(made.name)
    with pytest.raises(ParameterError, match="is missing in this process"):
        load_generated(module_name("probe", "never generated"))


def test_a_key_is_one_line(cache) -> None:
    with pytest.raises(ValueError, match="one line"):
        generated_module("probe", "two\nlines", lambda: "X = 1\n")


@pytest.fixture(scope="module")
def sim_cache(tmp_path_factory):
    """One cache directory for the simulator tests: compiled once."""
    return tmp_path_factory.mktemp("simcache")


def _simulate():
    from sim.api import simulate

    return simulate(
        load_model("sir"),
        {"beta": 3, "gamma": 1, "rho": "0.5", "a": "0.1"},
        N=20,
        steps=20000,
        reps=2,
        seed=5,
        workers=1,
        engine="generic",  # the model's own loop: its generated module is under test
    )


@pytest.mark.parametrize("how", ["emptied", "truncated", "another model's module", "not Python"])
def test_damaged_simulator_module_is_regenerated_bit_for_bit(sim_cache, monkeypatch, how) -> None:
    import sim.generic_kernels as gk

    monkeypatch.setenv("MFSTEIN_CACHE_DIR", str(sim_cache))
    monkeypatch.setattr(mfstein.ground.cache, "_damage_reported", [False])
    # this process forgets its chain modules (the kernel modules stay loaded)
    loaded = {
        k: v for k, v in mfstein.ground.generated._loaded.items() if not k.startswith("simchain")
    }
    monkeypatch.setattr(mfstein.ground.generated, "_loaded", loaded)
    monkeypatch.setattr(gk, "_CHAINS", {})
    # kernels this test generates in its own cache are forgotten with the modules above:
    # later tests generate them in theirs (a new process reads them from there)
    kernels = importlib.import_module("derive.kernels")  # (derive.kernels is the function)
    monkeypatch.setattr(kernels, "_memory_cache", dict(kernels._memory_cache))
    first = _simulate()
    (path,) = sim_cache.glob("simchain_*.py")
    good = path.read_text()
    other = mfstein.ground.generated._sealed("another model", gk.chain_source(supermarket(2, 2)))
    path.write_text(_damage(how, good, other))
    for name in [k for k in loaded if k.startswith("simchain")]:
        del loaded[name]
    monkeypatch.setattr(gk, "_CHAINS", {})
    with pytest.warns(RuntimeWarning, match="damaged cache files"):
        again = _simulate()
    assert path.read_text() == good
    np.testing.assert_array_equal(again.mean.mean, first.mean.mean)  # same seed, same numbers
    assert again.n_mse.mean == first.n_mse.mean and again.events == first.events


@pytest.mark.parametrize("damage", [b"", b"\x00\xff garbage", None])
def test_kept_bytecode_is_used_and_a_damaged_one_recompiled(cache, damage) -> None:
    import marshal

    made = generated_module("probe", "bytecode key", lambda: "X = 6 * 7\n")
    (kept,) = (cache / "__pycache__").glob(f"{made.name}.*.code")
    assert marshal.loads(kept.read_bytes()).co_filename == str(made.path)
    # another code object under the kept name (say, of another module) is not used
    other = compile("X = 0\n", "elsewhere.py", "exec")
    kept.write_bytes(marshal.dumps(other) if damage is None else damage)
    again = generated_module("probe", "bytecode key", lambda: pytest.fail("not regenerated"))
    assert again.module.X == 42
    assert marshal.loads(kept.read_bytes()).co_filename == str(made.path)  # written again


def test_a_plain_load_runs_the_checked_source_without_numba(cache, monkeypatch) -> None:
    """:func:`mfstein.ground.generated.load_plain`: the generated kernels' functions as
    written (``numba.njit`` a no-op, nothing in ``sys.modules``), the values of the
    compiled ones; a damaged file is ``None``."""
    import sys
    import types

    from mfstein.ground.generated import load_plain

    monkeypatch.setattr(mfstein.ground.generated, "_plain", {})
    model = supermarket(3, 2)
    k = _fresh(model, "numba")
    plain = load_plain(k.path.stem, k.path)
    assert isinstance(plain.rates_into, types.FunctionType)  # not a numba dispatcher
    assert not [m for m in sys.modules if m.endswith("_plain")]
    s, p = np.array(S), np.array(P)
    got, want = np.zeros(k.jumps.shape[0]), np.zeros(k.jumps.shape[0])
    plain.rates_into(s, p, got)
    k.module.rates_into(s, p, want)
    assert np.array_equal(got, want)
    other = supermarket(3, 3)
    ko = _fresh(other, "numba")
    ko.path.write_text(_damage("one byte changed", ko.path.read_text(), ""))
    with pytest.warns(RuntimeWarning, match="damaged"):
        assert load_plain(ko.path.stem, ko.path) is None
