"""The genuine limits of what a model may be (docs/models.md, "What a model may be"):
each ends the command line in one sentence with exit status 2.

The list of limits is read from the documentation, so that a limit documented
without a test, or tested without being documented, fails here.
"""

from __future__ import annotations

import re
import textwrap
from pathlib import Path

import pytest

from mfstein.cli import main

ROOT = Path(__file__).resolve().parents[2]
DOCS = ROOT / "docs" / "models.md"
PLAIN = ROOT / "tests" / "plain_models"
THIRTY = ",".join(["0.3"] * 30)
ORDER2 = ["--order", "2", "--dps", "1000"]

MODELS = '''
import sympy as sp
from derive import Model, Transition

x = sp.Symbol("x")


def negative():
    return Model("negative", (x,), (), [Transition((1,), 1 - 2 * x), Transition((-1,), x)])


def kink():
    return Model("kink", (x,), (), [Transition((1,), 2), Transition((-1,), sp.Min(x, 2))])


def floor_rate():
    return Model("floor", (x,), (), [Transition((1,), 1 + sp.floor(x)), Transition((-1,), 2 * x)])


def open_piecewise():
    rate = sp.Piecewise((1, x < 1))
    return Model("pw", (x,), (), [Transition((1,), rate), Transition((-1,), x)])


def blowup():
    return Model("blowup", (x,), (), [Transition((1,), 1 / x), Transition((-1,), x)])


def stranger():
    z = sp.Symbol("z")
    return Model("stranger", (x,), (), [Transition((1,), z), Transition((-1,), x)])
'''


def _limits(models: Path) -> dict[str, tuple[list[str], str]]:
    """Each documented limit: the command that meets it and words its sentence holds."""
    f = str(models)
    cache, thirty = f"{PLAIN / 'cache.py'}:cache", f"{PLAIN / 'thirty.py'}:thirty"
    return {
        "negative-rate": (
            ["transient", "--model", f"{f}:negative", "--start", "0.8", "--t", "0:1:2"],
            "negative rate -0.6 at the start",
        ),
        "simplex-above-one": (
            ["solve", "--model", cache, "--start", "0.7,0.7"],
            "start must lie in the state space",
        ),
        "exact-too-large": (
            ["exact", "--model", thirty, "--param", "lam=0.8", "--N", "10", "--start", THIRTY],
            "memory limit",
        ),
        "order2-budget": (
            ["solve", "--model", thirty, "--param", "lam=0.8", "--start", THIRTY, *ORDER2],
            "the limit is 10.0 min",
        ),
        "kink-at-fixed-point": (
            ["solve", "--model", f"{f}:kink", "--order", "2"],
            "lies on the kink",
        ),
        "no-derivative": (
            ["solve", "--model", f"{f}:floor_rate"],
            "whose derivative SymPy cannot evaluate",
        ),
        "open-piecewise": (
            ["solve", "--model", f"{f}:open_piecewise"],
            "give the Piecewise a last branch",
        ),
        "rate-not-finite": (
            ["solve", "--model", f"{f}:blowup", "--start", "0"],
            "cannot be evaluated at the start",
        ),
        "foreign-symbol": (
            ["solve", "--model", f"{f}:stranger"],
            "neither states nor declared params",
        ),
        "heterogeneous-order-2": (
            ["solve", "--model", "power_of_two_heterogeneous", "--param", "K=4", "--order", "2"],
            "order must be 1 for a heterogeneous population",
        ),
    }


#: The limits whose command spends tens of seconds before its refusal (the exact
#: chain enumerates states up to the memory limit; a 30-coordinate model is set up).
SLOW = {"exact-too-large", "order2-budget"}


def documented() -> list[str]:
    """The keys ``- **key**:`` of the list under "### Genuine limits"."""
    text = DOCS.read_text()
    body = text.split("### Genuine limits", 1)[1].split("\n## ", 1)[0]
    return re.findall(r"^- \*\*([a-z0-9-]+)\*\*:", body, flags=re.MULTILINE)


@pytest.fixture(scope="module")
def models(tmp_path_factory) -> Path:
    path = tmp_path_factory.mktemp("limits") / "limits.py"
    path.write_text(textwrap.dedent(MODELS))
    return path


def test_every_documented_limit_has_a_test_and_no_other():
    keys = documented()
    assert len(keys) == len(set(keys)) >= 8
    assert set(keys) == set(_limits(Path("m.py")))


@pytest.mark.parametrize(
    "key",
    [pytest.param(k, marks=pytest.mark.slow) if k in SLOW else k for k in documented()],
)
def test_limit_ends_in_one_sentence_with_exit_2(key, models, capsys):
    argv, words = _limits(models)[key]
    assert main(argv) == 2
    out, err = capsys.readouterr()
    line = err.strip()
    assert out == "" and "\n" not in line and "Traceback" not in line, err
    assert line.startswith(f"mfstein {argv[0]}: error: ") and line.endswith("."), line
    assert words in line, line
