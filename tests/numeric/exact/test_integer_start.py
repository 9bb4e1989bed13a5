"""The start rounded to the lattice in integers (:func:`numeric.exact.space.round_to_lattice`,
:func:`~numeric.exact.space.ratio`): the lattice point and the laws' values that exact
rationals (:class:`fractions.Fraction`) give, without importing :mod:`fractions` -- so that
a call at a new ``N`` read from a kept record (:mod:`numeric.exact.kept`) imports neither
it nor :mod:`decimal` (some 2 ms of a new process)."""

from __future__ import annotations

import json
import random
import subprocess
import sys
from fractions import Fraction

import numpy as np
import pytest
from deadlines import deadline

import numeric.exact
from mfstein.ground.errors import ParameterError
from numeric.exact.space import Lattice, ratio, rational, round_to_lattice

SIR = {"beta": "3", "gamma": "1", "rho": "0.5", "a": "0.1"}


def _in_fractions(lattice: Lattice, s: list) -> tuple[list[int], tuple]:
    """The rounding in Fractions, as ``round_to_lattice`` wrote it until stop 49."""
    N, exact = lattice.N, [Fraction(v) for v in s]
    n = [0] * len(exact)
    for j in lattice.free:
        n[j] = round(exact[j] * N)
    for row in lattice.laws:
        d = next(j for j, c in enumerate(row) if c)
        q = sum(c * exact[j] for j, c in enumerate(row) if c) * N
        rest = sum(row[j] * n[j] for j in lattice.free if row[j])
        n[d] = round((q - rest) / row[d])
    values = tuple(
        sum((c * n[j] for j, c in enumerate(row) if c), Fraction(0)) for row in lattice.laws
    )
    return n, values


def _cases(seed: int = 5, count: int = 400):
    """Box lattices of 3-4 coordinates with one or two laws in reduced row echelon form
    (coefficients integers or fractions, of either sign) and starts ``p / q``, halves
    among them (``q`` even, so that ``N s`` falls on .5 often)."""
    rng = random.Random(seed)
    for _ in range(count):
        b, N = rng.choice([3, 4]), rng.choice([1, 2, 7, 10, 64, 101, 1000])
        pivots = [0] if rng.random() < 0.6 else [0, 1]
        laws = []
        for p in pivots:
            row = [Fraction(0)] * b
            row[p] = Fraction(rng.choice([1, 2, 3, -1]), rng.choice([1, 2]))
            for j in range(len(pivots), b):
                row[j] = Fraction(rng.randint(-3, 3), rng.choice([1, 1, 2, 3]))
            laws.append(tuple(row))
        free = tuple(range(len(pivots), b))
        s = [Fraction(rng.randint(-N, 8 * N), rng.choice([2, 4, 10, 2 * N])) for _ in range(b)]
        big = 10**9
        lattice = Lattice(N=N, kind="box", upper=big, total=big, truncated=False,
                          laws=tuple(laws), free=free)  # fmt: skip
        yield lattice, s


def test_the_integer_rounding_is_the_fraction_rounding() -> None:
    inside = halves = 0
    for lattice, s in _cases():
        want_n, want_values = _in_fractions(lattice, s)
        for given in (s, [str(v) for v in s]):  # Fractions, and texts as a record keeps them
            if min(want_n) < 0:  # off the box: refused either way
                with pytest.raises(ParameterError, match="outside the state space"):
                    round_to_lattice(lattice, given)
                continue
            assert round_to_lattice(lattice, given).tolist() == want_n, (lattice, s)
            assert lattice.values == want_values
            assert [type(v) is int for v in lattice.values] == [
                v.denominator == 1 for v in want_values
            ]
        inside += min(want_n) >= 0
        halves += min(want_n) >= 0 and any((v * lattice.N).denominator == 2 for v in s)
    assert inside > 150 and halves > 50  # the cases reach the ties


def test_other_numbers_are_read_as_fractions_as_before() -> None:
    """Decimal strings and floats (a start as a user gives it) keep their reading."""
    lattice = Lattice(N=10, kind="box", upper=10, total=10, truncated=False,
                      laws=((Fraction(1), Fraction(1)),), free=(1,))  # fmt: skip
    assert round_to_lattice(lattice, ["0.75", 0.25]).tolist() == [8, 2]  # 2.5 -> 2
    assert lattice.values == (10,)
    with pytest.raises(ParameterError, match="outside the state space"):
        round_to_lattice(lattice, ["0.5", "1.5"])


def test_ratio_reads_what_str_writes_of_a_fraction_and_nothing_else() -> None:
    for f in (Fraction(0), Fraction(7), Fraction(-3), Fraction(99, 100), Fraction(-5, 6)):
        assert ratio(str(f)) == (f.numerator, f.denominator) and ratio(f) == ratio(str(f))
        assert rational(str(f)) == f and (type(rational(str(f))) is int) == (f.denominator == 1)
    assert ratio(12) == (12, 1) and ratio(True) is None and ratio(0.5) is None
    for text in ("0.5", " 1", "+1", "1_0", "1/0", "1/-2", "--1", "", "/2", "\u0661", "1e3"):
        assert ratio(text) is None, text


CHILD = """
import json, sys
import numeric.exact
from mfstein.ground import records
from numeric.exact.kept import call_key
SIR = {"beta": "3", "gamma": "1", "rho": "0.5", "a": "0.1"}
key = call_key("sir", SIR, 43, None, None, None, route="auto")
records._path(key).unlink(missing_ok=True)  # a new N: the record at N = 41 serves
r = numeric.exact.solve("sir", SIR, N=43)
print(json.dumps({"kept": type(r.source_model).__name__ == "KeptModel",
                  "fractions": "fractions" in sys.modules, "decimal": "decimal" in sys.modules,
                  "pi": r.pi.tolist(), "start": r.start, "law_values": r.law_values}))
"""


def test_a_new_N_read_from_a_kept_record_imports_neither_fractions_nor_decimal() -> None:
    from derive.models import load_model

    numeric.exact.solve("sir", SIR, N=41)  # keeps the record of the call at any N
    out = subprocess.run(
        [sys.executable, "-c", CHILD],
        capture_output=True,
        text=True,
        timeout=deadline(300),
        check=True,
    )
    got = json.loads(out.stdout.strip().splitlines()[-1])
    assert got["kept"] and not got["fractions"] and not got["decimal"]
    want = numeric.exact.solve(load_model("sir"), SIR, N=43)  # an object: prepared afresh
    assert got["start"] == want.start and got["law_values"] == want.law_values == ["43"]
    assert np.array_equal(got["pi"], want.pi)
