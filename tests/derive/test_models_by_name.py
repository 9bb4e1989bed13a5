"""One model per name and options in a process (:func:`derive.models.load_model`), so
that every task called by name reaches what its first call prepared (issue 31)."""

from __future__ import annotations

import pytest

import derive.models as models
import numeric
from derive.models import as_model, clear_models, kept_model, load_model
from numeric.prepared.cache import COUNTS

SIR = {"gamma": "1", "rho": "0.5", "a": "0.1"}


def test_a_name_and_its_options_give_one_model() -> None:
    sir = load_model("sir")
    assert load_model(" sir ") is sir and kept_model("sir") is sir
    three = load_model("supermarket", b=3)
    assert load_model("supermarket", b=3) is three and three is not load_model("supermarket", b=4)
    # the options as --param gives them (text) are read first: the same model
    assert as_model("supermarket", {"b": "3", "lam": "0.9"}) == (three, {"lam": "0.9"})
    assert load_model("supermarket", b=3, d=2) is not three  # another key, the same family
    assert kept_model("supermarket", b=7) is None  # nothing built by asking


def test_the_cache_is_bounded_and_can_be_cleared(monkeypatch) -> None:
    monkeypatch.setattr(models, "MODELS_KEPT", 2)
    clear_models()  # whatever the tests run before in this process kept
    first = load_model("sis")
    load_model("supermarket", b=2)
    load_model("supermarket", b=3)  # the least recently used, sis, is dropped
    assert len(models._KEPT) == 2 and kept_model("sis") is None
    again = load_model("sis")
    assert again is not first and again == first  # a new object, the same model
    clear_models()
    assert kept_model("sis") is None and load_model("sis") is not again


def test_a_model_file_is_read_again_once_it_changed(tmp_path) -> None:
    path = tmp_path / "bd.py"
    text = (
        "import sympy as sp\nfrom derive import Model, Transition\n"
        "def bd(cap=1):\n    x, lam = sp.symbols('x lam')\n"
        "    return Model('bd', (x,), (lam,), [Transition((1,), lam * (cap - x)),"
        " Transition((-1,), RATE)])\n"
    )
    path.write_text(text.replace("RATE", "x"))
    spec = f"{path}:bd"
    one = load_model(spec, cap=2)
    assert load_model(spec, cap=2) is one and load_model(spec, cap=3) is not one
    path.write_text(text.replace("RATE", "2 * x"))  # another size: another stamp
    changed = load_model(spec, cap=2)
    assert changed is not one and changed.key != one.key


def test_options_that_do_not_hash_build_a_new_model_each_call() -> None:
    speeds = [1, 2]
    a = load_model("power_of_two_heterogeneous", K=2, b=2, speeds=speeds)
    assert load_model("power_of_two_heterogeneous", K=2, b=2, speeds=speeds) is not a


def test_a_model_is_not_changed_once_built() -> None:
    m = load_model("sir")
    for name in ("name", "states", "params", "transitions", "key"):
        with pytest.raises(AttributeError, match=f"sir's {name} is fixed once it is built"):
            setattr(m, name, getattr(m, name))
    assert m.info.parameters  # derived on first read, kept (not a change of the model)


@pytest.mark.parametrize("options", [{}, {"order": 2}])
def test_solve_by_name_twice_prepares_once(tmp_path, monkeypatch, options) -> None:
    """No record of SIR on disk (a new cache directory): the first call builds the model
    (and writes its record), the second reaches the same model, hence its problem.  (On
    main the second call read the record just written, another object, and prepared
    again; at order 2 it built a new model.)"""
    monkeypatch.setenv("MFSTEIN_CACHE_DIR", str(tmp_path))
    params = {**SIR, "beta": "2.375" if options else "2.625"}  # a point no other test asks
    before = COUNTS["prepared:problem"]
    first = numeric.solve("sir", params, **options)
    once = COUNTS["prepared:problem"] - before
    again = numeric.solve("sir", params, **options)
    assert once == 1 and COUNTS["prepared:problem"] - before == 1
    assert again.to_json() == first.to_json()
