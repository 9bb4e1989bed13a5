"""The raw-form conversions of iterative refinement give mpmath's own numbers.

:mod:`numeric.linalg.raw_mpf` replaces ``floor(log(max|v|, 2))``,
``int(nint(ldexp(v, F)))``, ``float(ldexp(v, s))`` and ``ldexp(mpf(k), -F)`` by
integer work on ``(sign, man, exp, bc)``; :mod:`numeric.linalg.mp_entries` reads and
builds matrices through their entry dict; :mod:`numeric.linalg.refinement` turns
object arrays of integers into float64 and back with NumPy.  Each must give the
same integers, floats and ``mpf`` bits as the expressions they replace -- on
powers of two and their neighbours (where the logarithm may round onto an
integer), ties of the rounding, entries with more bits than the precision, zeros
and signs -- or the 30-digit results would change in their last bits.
"""

from __future__ import annotations

import math
import random

import gmpy2
import mpmath
import numpy as np
import pytest
from mpmath import mpf

from numeric.linalg import mp_entries, raw_mpf, refinement


def _values(rng: random.Random, prec: int) -> list[mpf]:
    """Random ``mpf`` at ``prec`` bits, powers of two and values next to them."""
    out = [mpf(0), mpf(1), mpf(-1), mpf("0.5"), mpf("1.5"), mpf("-2.5"), mpf(3) / 2**70]
    for k in (-300, -64, -1, 0, 1, 7, 64, 300):
        two = mpmath.ldexp(mpf(1), k)
        ulp = mpmath.ldexp(mpf(1), k - prec)
        out += [two, -two, two - ulp, two + 2 * ulp, two - 3 * ulp / 2]
    for _ in range(150):
        man = rng.getrandbits(rng.randint(1, prec)) * rng.choice((1, -1))
        out.append(+mpmath.ldexp(mpf(man), rng.randint(-200, 200)))
    return out


@pytest.mark.parametrize("prec", [53, 166, 232])
def test_exponent_is_mpmaths_floor_of_the_logarithm(prec: int) -> None:
    rng = random.Random(prec)
    with mpmath.workprec(prec):
        vals = _values(rng, prec)
        for v in vals:
            assert raw_mpf.exponent([v]) == raw_mpf._slow_exponent([v]), v
        for _ in range(200):
            group = rng.sample(vals, rng.randint(0, 5))
            assert raw_mpf.exponent(group) == raw_mpf._slow_exponent(group), group
        # entries that carry more bits than the precision
        with mpmath.workprec(prec + 40):
            wide = [+mpmath.ldexp(mpf(rng.getrandbits(prec + 30) | 1), -prec) for _ in range(20)]
        for v in wide:
            assert raw_mpf.exponent([v]) == raw_mpf._slow_exponent([v])


@pytest.mark.parametrize("prec", [53, 166, 232])
def test_scaled_int_and_float_are_mpmaths(prec: int) -> None:
    rng = random.Random(prec + 1)
    with mpmath.workprec(prec + 40):
        wide = [+mpmath.ldexp(mpf(rng.getrandbits(prec + 30) | 1), -prec) for _ in range(20)]
    with mpmath.workprec(prec):
        vals = _values(rng, prec) + wide
        # exact ties of nint (half-integers after the shift), both signs
        vals += [+mpmath.ldexp(mpf(2 * rng.getrandbits(40) + 1), -1) * s for s in (1, -1)]
        for v in vals:
            for F in (0, 1, -1, 5, -5, 60, -60, prec, rng.randint(-300, 300)):
                assert raw_mpf.scaled_int(v, F) == int(mpmath.nint(mpmath.ldexp(v, F))), (v, F)
                assert raw_mpf.float_of_scaled(v, -F) == float(mpmath.ldexp(v, -F)), (v, F)


@pytest.mark.parametrize("prec", [53, 232])
def test_mpf_of_int_rounds_as_mpf_does(prec: int) -> None:
    rng = random.Random(prec + 2)
    with mpmath.workprec(prec):
        for _ in range(300):
            k = rng.getrandbits(rng.randint(1, prec + 60)) * rng.choice((1, -1))
            F = rng.randint(-300, 300)
            for kk in (k, gmpy2.mpz(k)):
                assert raw_mpf.mpf_of_int(kk, F)._mpf_ == mpmath.ldexp(mpf(k), -F)._mpf_


def test_matrix_entries_through_the_dict_are_the_indexed_ones(monkeypatch) -> None:
    with mpmath.workdps(40):
        A = mpmath.matrix([[1, 0, mpf(1) / 3], [0, 0, 0], [-2, mpf("1e-30"), 0]])
        A[0, 0] = 0  # an entry set back to zero is not kept
        indexed = [[A[i, j] for j in range(A.cols)] for i in range(A.rows)]
        nonzero = {(i, j): A[i, j] for i in range(3) for j in range(3) if A[i, j]}
        for dict_layout in (True, False):
            if not dict_layout:  # another mpmath's layout: indexing
                monkeypatch.setattr(mp_entries, "_store", lambda A: None)
            assert mp_entries.rows_of(A) == indexed
            assert mp_entries.nonzero_entries(A) == nonzero
            T = mp_entries.transposed(A)
            assert (T.rows, T.cols) == (3, 3) and T == A.T
            # mpf values as they are (zeros dropped); others converted as A[i, j] = v does
            built = mp_entries.matrix_of(2, 3, {(0, 1): mpf(2), (1, 2): mpf(0), (1, 0): "0.25"})
            assert (built.rows, built.cols) == (2, 3)
            assert mp_entries.rows_of(built) == [[0, 2, 0], [mpf("0.25"), 0, 0]]
            assert mp_entries.nonzero_entries(built) == {(0, 1): 2, (1, 0): mpf("0.25")}


def test_fixed_point_arrays_round_as_the_loops_they_replace() -> None:
    rng = np.random.default_rng(3)
    for shape in [(7,), (4, 5)]:
        ints = rng.integers(-(2**62), 2**62, size=shape)
        for top_bits in (0, 3, 90, 200):
            a = np.empty(shape, dtype=object)
            a.flat[:] = [gmpy2.mpz(int(v)) << top_bits for v in ints.flat]
            m, top = refinement.scaled_float64(a)
            want_top = max(max(abs(int(v)) for v in a.flat).bit_length() - 60, 0)
            want = [float(int(v) >> want_top) for v in a.flat]
            assert top == want_top and m.ravel().tolist() == want and m.shape == shape
        x = rng.standard_normal(shape) * 10.0 ** rng.integers(-20, 20, size=shape)
        x.flat[0] = 0.0
        for shift in (-80, 0, 53, 200):
            got = refinement.scaled_ints(x, shift)
            want = []
            for v in x.flat:
                mant, e = math.frexp(float(v))
                k, e = int(mant * 2**53), e - 53 + shift
                want.append(k << e if e >= 0 else k >> -e)
            assert got.shape == shape and [int(v) for v in got.flat] == want
    assert refinement._max_abs_int(np.array([gmpy2.mpz(-9), 4], dtype=object)) == 9
    assert refinement._max_abs_int(np.empty(0, dtype=object)) == 0


def test_fixed_from_a_matrix_is_the_entrywise_rounding() -> None:
    with mpmath.workdps(30):
        A = mpmath.matrix([[mpf(1) / 3, 0, -7], [0, mpf("1e-40"), mpf(2) ** 60], [0, 0, 0]])
        bits = mpmath.mp.prec + 24
        f = refinement.Fixed.from_mp(A, bits)
        vals = [A[i, j] for i in range(3) for j in range(3)]
        F = bits - raw_mpf._slow_exponent(vals)
        assert f.F == F
        assert [int(v) for v in f.ints.flat] == [
            int(mpmath.nint(mpmath.ldexp(v, F))) if v else 0 for v in vals
        ]
        assert refinement.to_float64(A).tolist() == [
            [float(A[i, j]) for j in range(3)] for i in range(3)
        ]
