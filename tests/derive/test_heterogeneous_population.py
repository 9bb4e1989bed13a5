"""derive.heterogeneous: rmftool's HetPP tensors, refusals, and the library model."""

from __future__ import annotations

import numpy as np
import pytest
import sympy as sp

import numeric
import numeric.exact
from derive import heterogeneous
from derive.models import load_model
from mfstein.ground.errors import ParameterError


@pytest.mark.parametrize(
    "A,B,word",
    [
        (np.zeros((2, 2)), None, "K x S x S"),
        (np.zeros((2, 1, 1)), None, "S >= 2"),
        (-np.ones((2, 2, 2)), None, "A[0, 0, 0] must be a rate >= 0"),
        (np.full((2, 2, 2), np.inf), None, "finite"),
        (np.zeros((2, 2, 2)), np.zeros((2, 2, 2)), "K x K x S x S x S x S"),
        (np.zeros((2, 2, 2)), np.ones((2, 2, 2, 2, 2, 2)), "B[0, 0, ...] must be 0"),
    ],
)
def test_bad_tensors_are_refused_in_one_sentence(A, B, word):
    with pytest.raises(ParameterError) as info:
        heterogeneous(A, B)
    assert word in str(info.value) and "\n" not in str(info.value)


def test_parameters_and_symbols():
    lam = sp.Symbol("lam")
    A = np.array([[[0, lam], [1, 0]], [[0, 2 * lam], [1, 0]]], dtype=object)
    m = heterogeneous(A)
    assert m.params == ("lam",) and m.K == 2 and len(m.unilateral) == 4
    with pytest.raises(ParameterError, match="not among the parameters"):
        heterogeneous(A, parameters=["mu"])
    with pytest.raises(ParameterError, match="lam must be"):
        numeric.solve(load_model("power_of_two_heterogeneous", K=3), {"lam": "-1"})


@pytest.mark.slow  # the supermarket's exact chain without replacement compiles for a minute
def test_equal_speeds_give_the_supermarket_without_replacement():
    """K servers of one speed, JSQ(2) among two distinct servers: the supermarket's
    chain without replacement at N = K (fraction of queues with >= j jobs)."""
    K, b = 4, 2
    het = load_model("power_of_two_heterogeneous", K=K, b=b, speeds=[1] * K)
    ours = numeric.exact.solve(het, {"lam": "0.8"}, N=K).by_object()
    sm = numeric.exact.solve(
        load_model("supermarket", b=b, replacement=False), {"lam": "0.8", "N": K}, N=K
    )
    at_least = [ours[:, j:].sum(axis=1).mean() for j in range(1, b + 1)]
    assert np.allclose(at_least, sm.mean, rtol=1e-10)


def test_the_library_model_refined_beats_the_mean_field_on_distinct_speeds():
    K = 5
    model = load_model("power_of_two_heterogeneous", K=K, speeds="1/2, 3/4, 1, 5/4, 3/2")
    sol = numeric.solve(model, {"lam": "0.7"}, precision="float64")
    exact = numeric.exact.solve(model, {"lam": "0.7"}, N=K)
    mf = np.abs(np.array(sol.s_star, float) - exact.mean).max()
    ref = np.abs(np.array(sol.refined(), float) - exact.mean).max()
    assert ref < mf / 3
    util = sol.utilisation()
    assert np.all(np.diff(util) < 0)  # faster servers are busy less of the time
    assert np.allclose(util, 1 - exact.by_object()[:, 0], atol=2 * ref)


def test_classes_with_multiplicities_are_the_objects_written_out():
    from hetpop_models import SIS, sis

    from derive import heterogeneous_classes

    K = 4
    beta, eps, gamma = sp.symbols("beta eps gamma")
    A = np.zeros((2, 2, 2), dtype=object)
    A[:, 0, 1] = eps
    A[0, 1, 0], A[1, 1, 0] = gamma, gamma * sp.Rational(3, 2)
    B = np.zeros((2, 2, 2, 2, 2, 2), dtype=object)
    B[:, :, 0, 1, 1, 1] = beta / K
    by_class = heterogeneous_classes(A, B, counts=[2, 2])
    assert by_class.object_names == ("0.0", "0.1", "1.0", "1.1")
    one = numeric.solve(by_class, SIS, precision="float64")
    # sis(4) alternates the classes: objects 0, 2 are class 0 and 1, 3 class 1
    other = numeric.solve(sis(K), SIS, precision="float64")
    order = [0, 2, 1, 3]
    a = np.array(one.refined(), float).reshape(K, 2)
    b = np.array(other.refined(), float).reshape(K, 2)[order]
    assert np.allclose(a, b, atol=1e-12)
    with pytest.raises(ParameterError, match="counts"):
        heterogeneous_classes(A, B, counts=[2])
