"""Factory options of the library: every one described, a missing or unknown one
refused in one sentence, and the supermarket's ``b = "auto" | "inf"``."""

from __future__ import annotations

import inspect

import mpmath
import pytest

from derive.models import MODELS, OPTION_VALUES, factory, load_model
from derive.spec import Truncated
from mfstein.ground.errors import ParameterError


def test_every_library_option_is_described():
    for name in MODELS:
        keywords = set(inspect.signature(factory(name)).parameters)
        assert set(OPTION_VALUES[name]) == keywords, name


def test_missing_and_unknown_options_are_one_sentence():
    with pytest.raises(
        ParameterError, match=r"needs the option b \(an integer >= 1, auto or inf\)"
    ):
        load_model("supermarket")
    with pytest.raises(
        ParameterError, match=r"q is not an option .* d \(an integer >= 1; default 2\)"
    ):
        load_model("supermarket", b=3, q=1)
    with pytest.raises(ParameterError, match="an integer >= 1, auto or inf, got 'autox'"):
        load_model("supermarket", b="autox")


@pytest.mark.parametrize("b", ["auto", "inf"])
def test_open_buffers_give_the_constant_of_a_long_buffer(b):
    """``b = auto | inf`` resolve to a buffer whose constant is that of a much longer
    one (b = 20) to all 20 digits; a load >= 1 is one sentence."""
    import numeric

    family = load_model("supermarket", b=b)
    assert isinstance(family, Truncated)
    sol = numeric.solve("supermarket", {"b": b, "lam": "0.9"}, dps=20)
    long = numeric.solve("supermarket", {"b": 20, "lam": "0.9"}, dps=20)
    assert sol.n < 20 and sol.digits == long.digits == 20
    with mpmath.workdps(30):
        assert abs(sol.constant - long.constant) < mpmath.mpf(10) ** -19 * long.constant
    with pytest.raises(ParameterError, match=f"must be < the service rate 1 for b = {b}"):
        numeric.solve("supermarket", {"b": b, "lam": "1.1"}, dps=20)
