"""derive.population: a homogeneous population written object by object (rmftool's HomPP)."""

from __future__ import annotations

import re
from fractions import Fraction

import numpy as np
import pytest
import sympy as sp

from derive import Model, Transition, latex_objects, population
from derive.models.sir import sir
from mfstein.ground.errors import ParameterError

S, I, R = sp.symbols("S I R")
BETA, GAMMA, RHO, A_OUT = sp.symbols("beta gamma rho a")


def sirs_tensors() -> tuple[list, np.ndarray]:
    """The SIRS epidemic of derive.models.sir as rate tensors (states S, I, R)."""
    A = [[0, A_OUT, 0], [0, 0, GAMMA], [RHO, 0, 0]]
    B = np.zeros((3, 3, 3, 3), dtype=object)
    B[0, 1, 1, 1] = BETA  # a susceptible meeting an infected becomes infected
    return A, B


def test_tensors_give_the_library_sirs_drift_and_diffusion() -> None:
    A, B = sirs_tensors()
    m = population(A, B, states=(S, I, R), params=(BETA, GAMMA, RHO, A_OUT))
    ref = sir()
    assert m.states == ref.states
    assert sp.simplify(m.drift - ref.drift) == sp.zeros(3, 1)
    assert sp.simplify(m.diffusion - ref.diffusion) == sp.zeros(3, 3)
    assert m.info.state_space.kind == "simplex" and m.info.conservation == ((1, 1, 1),)
    assert m.info.reference == (sp.Rational(1, 3),) * 3


def test_transition_table_is_the_same_model_and_jumps_are_merged() -> None:
    A, B = sirs_tensors()
    pars = (BETA, GAMMA, RHO, A_OUT)
    tensors = population(A, B, states=("S", "I", "R"), params=pars)
    table = population(
        states=("S", "I", "R"),
        params=pars,
        transitions=[("S", "I", A_OUT), (1, 2, GAMMA), (R, S, RHO), (("S", "I"), ("I", "I"), BETA)],
    )
    per_object = population(
        states=(S, I, R),
        params=pars,
        transitions=[(S, I, A_OUT + BETA * I), (I, R, GAMMA), (R, S, RHO)],
    )
    assert len(tensors.transitions) == 3  # A[S, I] and B[S, I, I, I] share the jump
    for other in (table, per_object):
        for t, u in zip(tensors.transitions, other.transitions, strict=True):
            assert t.jump == u.jump and sp.expand(t.rate - u.rate) == 0
    assert tensors.transitions[0].label == "S -> I"


def test_diagonal_and_moves_of_nothing_are_ignored() -> None:
    """A generator matrix (negative diagonal) is accepted; B's identity and swap too."""
    rates = np.array([[0.0, 2.0, 1.0], [0.5, 0.0, 0.0], [0.0, 3.0, 0.0]])
    generator = rates - np.diag(rates.sum(axis=1))
    B = np.zeros((3, 3, 3, 3))
    B[0, 1, 0, 1] = B[0, 1, 1, 0] = 7.0
    a = population(rates)
    b = population(generator, B)
    assert [(t.jump, t.rate) for t in a.transitions] == [(t.jump, t.rate) for t in b.transitions]
    assert a.states == sp.symbols("x0 x1 x2")


def test_pair_convention_and_inputs_of_every_kind() -> None:
    """B[s, s1, s', s1'] has intensity B x_s x_s1 (rmftool), ordered pairs both count;
    SymPy matrices, NumPy scalars and fractions are read exactly."""
    B = np.zeros((3, 3, 3, 3), dtype=object)
    B[0, 1, 2, 2] = Fraction(1, 3)
    B[1, 0, 2, 2] = np.int64(2)
    B[1, 1, 1, 0] = 5  # one object of the pair stays: accepted
    m = population(sp.Matrix([[0, 1, 0], [0, 0, 0], [0, 0, 0]]), B)
    x0, x1, _ = m.states
    rates = {t.jump: t.rate for t in m.transitions}
    assert rates[(-1, -1, 2)] == sp.Rational(7, 3) * x0 * x1
    assert rates[(1, -1, 0)] == 5 * x1**2
    assert rates[(-1, 1, 0)] == x0


@pytest.mark.parametrize(
    ("kwargs", "words"),
    [
        ({"A": [[0, -1], [1, 0]]}, "A[0, 1]: the rate must be >= 0"),
        ({"A": [[0, 1, 2], [1, 0]]}, "A must be an S x S array"),
        ({"A": [[0, 1, 2], [1, 0, 1]]}, "got shape (2, 3)"),
        ({"A": [[0, 1], [1, 0]], "B": np.zeros((3, 3, 3, 3))}, "same number of states"),
        ({"A": [[0, 1], [1, 0]], "states": ("a", "b", "c")}, "states names 3 states"),
        ({"A": [[1]]}, "at least S = 2 states"),
        ({"A": [[0, 0], [0, 0]]}, "has no transition"),
        ({"A": [[0, sp.Symbol("k")], [1, 0]]}, "neither states nor declared params"),
        ({"A": [[0, "1"], [1, 0]]}, "A[0, 1]: the rate must be a SymPy expression or a number"),
        ({"A": [[0, float("nan")], [1, 0]]}, "A[0, 1]"),
        ({"transitions": [(0, 1, 1)]}, "give the states"),
        ({"states": "ab", "transitions": [(0, 1, 1)]}, "states must be a sequence"),
        ({"states": ("a", "b"), "transitions": [("a", "a", 1)]}, "moves no object"),
        ({"states": ("a", "b"), "transitions": [("a", "c", 1)]}, "one of a, b, got 'c'"),
        ({"states": ("a", "b"), "transitions": [("a", 1)]}, "must be (s, s', rate)"),
        ({"states": ("a", "b"), "transitions": [(("a", "b"), "a", 1)]}, "both pairs"),
        ({"states": ("a", "b"), "transitions": [(("a", "a"), ("b", "b"), 1)]}, "both objects"),
        ({"A": [[0, 1], [1, 0]], "reference": (1,)}, "one fraction per state"),
        ({"A": [[0, 1], [1, 0]], "parameters": ("beta",)}, "derive.Parameter objects"),
        ({"A": [[0, 1], [1, 0]], "name": ""}, "name must be a non-empty string"),
    ],
)
def test_bad_input_is_one_sentence_naming_it(kwargs: dict, words: str) -> None:
    with pytest.raises(ParameterError) as err:
        population(**kwargs)
    assert words in str(err.value)
    text = str(err.value).replace("e.g.", "eg")
    assert text.endswith(".") and not re.search(r"\.\s+[A-Z]", text)  # one sentence


def test_unknown_keyword_names_the_nearest() -> None:
    with pytest.raises(TypeError, match="did you mean 'states'"):
        population([[0, 1], [1, 0]], state=("a", "b"))


def test_it_is_an_ordinary_model() -> None:
    m = population([[0, 2], [1, 0]], states=("u", "v"))
    assert isinstance(m, Model) and all(isinstance(t, Transition) for t in m.transitions)
    assert m.jacobian.shape == (2, 2)
    m.check_state_space()
    assert "f_{1}(s) &= - 2 u + v" in latex_objects(m, ["f"])["f"]
