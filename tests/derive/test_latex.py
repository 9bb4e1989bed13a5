"""LaTeX output uses the paper's notation."""

from __future__ import annotations

import re

import pytest

from derive import supermarket
from derive.latex import latex, latex_objects, symbol_latex
from derive.models.closed_forms import closed_form_latex
from mfstein.cli.derive import SHOW_NAMES


def test_symbol_names() -> None:
    assert symbol_latex("s3") == "s_{3}"
    assert symbol_latex("sstar2") == "s^*_{2}"
    assert symbol_latex("lam") == r"\lambda"
    assert symbol_latex("P_1_2") == "P_{12}"
    assert symbol_latex("P_3_11") == "P_{3,11}"


@pytest.mark.parametrize("b", [1, 2])
def test_every_object_renders_in_paper_notation(b: int) -> None:
    # b = 2 closed forms print long radicals; their LaTeX goes through the same
    # code path as b = 1 and is left to the CLI tests' b = 1 run.
    general = [n for n in SHOW_NAMES if n != "closed-form"]
    names = SHOW_NAMES if b == 1 else general
    texts = latex_objects(supermarket(b), general)
    if b == 1:
        texts["closed-form"] = closed_form_latex(1)
    assert set(texts) == set(names)
    for name, text in texts.items():
        assert re.search(r"(?<!\\)lam", text) is None and "sstar" not in text, name
        assert text.count("{") == text.count("}"), name
    assert r"\tilde f_{1}(s)" in texts["ftilde"]
    assert r"s^*_{1}" in texts["stein"] and "P_{11}" in texts["lyapunov"]
    assert r"\otimes" in texts["kron"]
    assert texts["generator"].endswith("&= 0\n\\end{aligned}")


def test_matrix_latex() -> None:
    m = supermarket(2)
    assert latex(m.jacobian).startswith(r"\left(\begin{matrix}- 2 \lambda s_{1} - 1")


def test_a_results_latex_is_each_objects_latex_under_its_name() -> None:
    """``DerivedObjects.to_latex`` writes from the objects it holds what
    :func:`latex_objects` writes from the model, each under ``% name``."""
    from derive.models.derived_objects import derive_objects

    model = supermarket(2, 3, mu="mu")
    names = ["stein", "f", "hessian", "kron", "generator", "lyapunov"]
    expected = latex_objects(model, names)
    assert derive_objects(model, names).to_latex() == "\n".join(
        f"% {name}\n{expected[name]}" for name in names
    )
    closed = derive_objects(supermarket(1), ["closed-form"]).to_latex()
    assert closed == "% closed-form\n" + closed_form_latex(1)


def test_stein_latex_needs_the_deviation() -> None:
    from derive.latex import object_latex
    from derive.named_objects import model_object

    with pytest.raises(ValueError, match="needs x = s - s"):
        object_latex("stein", model_object(supermarket(1), "stein"))
