"""Generated numba and mpmath kernels against SymPy evaluation and each other."""

from __future__ import annotations

import importlib

import mpmath
import numpy as np
import pytest
import sympy as sp

from derive import supermarket

kernels_module = importlib.import_module("derive.kernels")

SEED = 20261129
DIGITS = 30

MODELS = {
    "b4-d3-mu": lambda: supermarket(4, 3, mu="mu"),
    "b3-d2-without-replacement": lambda: supermarket(3, 2, replacement=False),
}


def _point(model, rng):
    """Random state in (0, 1) and parameters: lam in (0, 1), mu in (0.5, 2), N in 5..50."""
    s = [sp.Rational(int(rng.integers(1, 10**6)), 10**6) for _ in range(model.n)]
    values = {"lam": sp.Rational(int(rng.integers(1, 10**6)), 10**6)}
    values["mu"] = sp.Rational(int(rng.integers(5 * 10**5, 2 * 10**6)), 10**6)
    values["N"] = sp.Integer(int(rng.integers(5, 51)))
    p = [values[str(q)] for q in model.params]
    return s, p


def _reference(model, s, p):
    """Exact SymPy values (rationals in, 30-digit evalf out) of every kernel output."""
    sub = dict(zip(model.states, s, strict=True)) | dict(zip(model.params, p, strict=True))

    def ev(e):
        return sp.sympify(e).xreplace(sub).evalf(DIGITS)

    k = model.kernels("mpmath")
    b = model.n
    H = model.hessian
    return {
        "f": [ev(e) for e in model.drift],
        "jac": [[ev(model.jacobian[i, j]) for j in range(b)] for i in range(b)],
        "jac_values": [ev(model.jacobian[i, j]) for i, j in k.jac_index.tolist()],
        "hess_values": [ev(H[i, j, l]) for i, j, l in k.hess_index.tolist()],
        "Q": [[ev(model.diffusion[i, j]) for j in range(b)] for i in range(b)],
        "ftilde": [ev(e) for e in model.ftilde],
        "rates": [ev(t.rate) for t in model.transitions],
    }


def _flat(x):
    if isinstance(x, mpmath.matrix):
        return [x[i, j] for i in range(x.rows) for j in range(x.cols)]
    if isinstance(x, np.ndarray):
        return list(x.ravel())
    if x and isinstance(x[0], list):
        return [v for row in x for v in row]
    return list(x)


@pytest.mark.parametrize("name", list(MODELS))
def test_kernels_agree_with_sympy_and_each_other(name: str) -> None:
    model = MODELS[name]()
    rng = np.random.default_rng(SEED)
    kn = model.kernels("numba")
    km = model.kernels("mpmath")
    funcs = ["f", "jac", "jac_values", "hess_values", "Q", "ftilde", "rates"]
    with mpmath.workdps(DIGITS):
        for _ in range(3):
            s, p = _point(model, rng)
            ref = _reference(model, s, p)
            s_mp = [mpmath.mpf(sp.Rational(v).p) / v.q for v in s]
            p_mp = [mpmath.mpf(v.p) / v.q for v in p]
            s_np = np.array([float(v) for v in s])
            p_np = np.array([float(v) for v in p])
            for fn in funcs:
                want = [mpmath.mpf(str(v)) for v in _flat(ref[fn])]
                got_mp = _flat(getattr(km, fn)(s_mp, p_mp))
                got_nb = _flat(getattr(kn, fn)(s_np, p_np))
                assert len(got_mp) == len(got_nb) == len(want), fn
                scale = max([abs(w) for w in want] + [mpmath.mpf(1)])
                for w, gm, gn in zip(want, got_mp, got_nb, strict=True):
                    # mpmath: all 30 digits up to a few units of rounding
                    assert abs(gm - w) <= mpmath.mpf(10) ** (-DIGITS + 2) * scale, (fn, gm, w)
                    # float64: about 16 digits; both back ends agree to that precision
                    assert abs(mpmath.mpf(float(gn)) - w) <= 1e-13 * float(scale), (fn, gn, w)
                    assert abs(float(gn) - float(gm)) <= 1e-13 * float(scale), (fn, gn, gm)
            # dense Hessian helpers agree with hess_values placed on HESS_INDEX
            Hn = kn.hess(s_np, p_np)
            Hm = km.hess(s_mp, p_mp)
            for n, (i, j, l) in enumerate(kn.hess_index.tolist()):
                assert abs(Hn[i, j, l] - float(ref["hess_values"][n])) <= 1e-13
                assert abs(Hm[i][j][l] - mpmath.mpf(str(ref["hess_values"][n]))) < 1e-27


def test_mpmath_kernel_keeps_precision_with_integer_parameters() -> None:
    # N given as a Python int must not drop to float inside 1/(N - 1)
    model = supermarket(2, 2, replacement=False)
    km = model.kernels("mpmath")
    with mpmath.workdps(40):
        s = [mpmath.mpf(1) / 3, mpmath.mpf(1) / 7]
        got = km.f(s, [mpmath.mpf(9) / 10, 7])
        sub = {model.states[0]: sp.Rational(1, 3), model.states[1]: sp.Rational(1, 7)}
        sub |= {model.params[0]: sp.Rational(9, 10), model.params[1]: 7}
        for g, e in zip(got, model.drift, strict=True):
            want = mpmath.mpf(str(e.xreplace(sub).evalf(45)))
            assert abs(g - want) < mpmath.mpf(10) ** -38


def test_numba_into_variants_fill_preallocated_output() -> None:
    model = supermarket(3)
    kn = model.kernels("numba")
    s = np.array([0.6, 0.3, 0.1])
    p = np.array([0.9])
    out = np.full(3, np.nan)
    kn.f_into(s, p, out)
    assert np.array_equal(out, kn.f(s, p))
    assert kn.jumps.shape == (6, 3)


def test_kernel_cache_memory_and_disk(tmp_path, monkeypatch) -> None:
    monkeypatch.setenv("MFSTEIN_CACHE_DIR", str(tmp_path))
    model = supermarket(5, 2)
    kernels_module._memory_cache.pop((model.key, "mpmath"), None)
    k1 = model.kernels("mpmath")
    assert k1.path.parent == tmp_path
    assert model.kernels("mpmath") is k1  # memory cache
    assert supermarket(5, 2).kernels("mpmath") is k1  # same key, new Model object
    assert k1.path.exists() and k1.path.read_text() == k1.source
    # a fresh load (memory cache dropped) reads the disk copy without regenerating
    kernels_module._memory_cache.pop((model.key, "mpmath"))
    original = kernels_module.generate_source

    def refuse(*args, **kwargs):
        raise AssertionError("source was regenerated instead of loaded from disk")

    kernels_module.generate_source = refuse
    try:
        k2 = model.kernels("mpmath")
    finally:
        kernels_module.generate_source = original
    assert k2 is not k1
    assert k2.source == k1.source and k2.path == k1.path
    kernels_module._memory_cache.pop((model.key, "mpmath"))
    s = [mpmath.mpf("0.5"), mpmath.mpf("0.3"), mpmath.mpf("0.2"), mpmath.mpf("0.1"), 0]
    assert k2.f(s, [mpmath.mpf("0.9")]) == k1.f(s, [mpmath.mpf("0.9")])


def test_bad_backend_is_rejected() -> None:
    from derive import ParameterError

    with pytest.raises(ParameterError, match="backend"):
        supermarket(2).kernels("cython")


def test_jump_matrix_is_the_models_transitions() -> None:
    """The sparse JUMP_ENTRIES of the generated module rebuild every jump vector."""
    from derive.models import load_model

    for model in (supermarket(4, 3), load_model("sir")):
        jumps = model.kernels("mpmath").jumps
        assert jumps.tolist() == [list(t.jump) for t in model.transitions]


def test_mean_field_group_generates_only_its_functions(tmp_path, monkeypatch) -> None:
    """The ``mean_field`` subset: the same values as ``base``, nothing else generated
    until asked, and a complete ``base`` is reused when it already exists."""
    monkeypatch.setenv("MFSTEIN_CACHE_DIR", str(tmp_path))
    model = supermarket(6, 2, mu="mu")
    for key in ((model.key, "mpmath"), (model.key, "mpmath", "mean_field")):
        kernels_module._memory_cache.pop(key, None)
    sub = kernels_module.kernels(model, "mpmath", "mean_field")
    assert "def jac(" in sub.source and "def f(" not in sub.source
    assert "def rates(" not in sub.source and len(list(tmp_path.glob("*.py"))) == 1
    s = [mpmath.mpf(x) / 10 for x in (9, 7, 5, 3, 2, 1)]
    p = [mpmath.mpf("0.85"), mpmath.mpf("1.5")]
    full = model.kernels("mpmath")  # generated now: a second file
    assert len(list(tmp_path.glob("*.py"))) == 2
    assert sub.jac(s, p) == full.jac(s, p) and sub.Q(s, p) == full.Q(s, p)
    assert sub.ftilde(s, p) == full.ftilde(s, p)
    assert sub.hess_values(s, p) == full.hess_values(s, p)
    assert sub.hess_index.tolist() == full.hess_index.tolist()
    assert sub.f(s, p) == full.f(s, p)  # looked up in base
    # with base generated, asking for the subset returns base itself
    kernels_module._memory_cache.pop((model.key, "mpmath", "mean_field"), None)
    assert kernels_module.kernels(model, "mpmath", "mean_field") is full
