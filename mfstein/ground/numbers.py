"""Numbers as users write them, parsed exactly and checked against their limits first.

The one home of the integer and real parsers of every command and of the Python
entries that take sizes (issue 23, "numbers of any size"):

* :func:`parse_integer` reads ``12``, `` 12``, ``1_000``, ``5.0``, ``1e6``,
  ``1E+16`` and ``10**6`` as exact integers.  The magnitude is read from the text
  (the decimal exponent, or ``E log10 B`` for ``B**E``) and compared with the
  allowed range *before* any integer is built, so ``1e400`` or ``10**5000`` is
  refused in one sentence without float overflow or giant-integer arithmetic.
* :func:`parse_real` reads decimal numbers (``0.9``, ``1e-3``, ``-0``) and
  fractions (``1/2``) as exact :class:`fractions.Fraction` values, refuses
  ``nan``, ``inf`` and exponents beyond :data:`MAX_EXPONENT`, and compares the
  value with its bounds exactly.
* :func:`decimal_text` turns such a text into a decimal string (a fraction
  divided to ``digits`` significant digits), for the routes that read decimals.
* :func:`parse_diagonal` reads the observable ``M = diag:a,b,...`` (its entries
  bounded by :data:`mfstein.ground.limits.MAX_OBSERVABLE_ENTRY`).

The same rules hold for every caller, command line and Python alike (issue 36):
text is read in ASCII only (``"٣"`` or a full-width ``"３"`` is refused, never
read as 3 by one route and refused by another); NumPy integer scalars
(``np.int64(3)``) are integers, NumPy float scalars real numbers at their
exact binary value (``np.float32(0.9)`` is ``15099494/16777216 = 0.89999997615...``,
not 0.9: write ``"0.9"`` for the decimal); bools are neither.

Every refusal is a :class:`mfstein.ground.errors.ParameterError` whose one sentence
names the parameter and the allowed range.  Standard library only.
"""

from __future__ import annotations

import math
import operator
import re
from decimal import Decimal, InvalidOperation, localcontext
from fractions import Fraction
from typing import Any

from mfstein.ground.exceptions import ParameterError

__all__ = [
    "MAX_EXPONENT",
    "decimal_text",
    "exact_text",
    "parse_diagonal",
    "parse_integer",
    "parse_integer_list",
    "parse_integer_or_word",
    "parse_real",
    "read_integer",
]

#: Largest decimal exponent a real number may be written with (``1e1000``):
#: every limit of the project is far inside, and beyond it exact arithmetic on
#: the value would mean integers of thousands of digits.
MAX_EXPONENT = 1000

_POWER = re.compile(r"^\+?(\d+)\s*\*\*\s*\+?(\d+)$")


def _shown(value: Any) -> str:
    """The value as the user wrote it, shortened for a one-line sentence."""
    if not isinstance(value, str):
        text = repr(value)
        return text if len(text) <= 40 else text[:37] + "..."
    text = " ".join(value.split())
    return repr(text if len(text) <= 40 else text[:37] + "...")


def _int_text(n: int) -> str:
    """An integer limit as a sentence shows it: ``1e100`` for a large power of ten."""
    text = str(n)
    if len(text) > 16 and text.strip("0") == "1":
        return f"1e{len(text) - 1}"
    return text


def _integer_refusal(name: str, value: Any, minimum: int, maximum: int | None) -> ParameterError:
    upper = "" if maximum is None else f" and <= {_int_text(maximum)}"
    return ParameterError(f"{name} must be an integer >= {minimum}{upper}, got {_shown(value)}.")


def _digits_bound(maximum: int | None) -> int:
    """Decimal digits beyond which a value certainly exceeds ``maximum``."""
    return 4000 if maximum is None else len(str(abs(maximum))) + 1


def _text_to_int(text: str, maximum: int | None) -> int | None:
    """The exact integer written in ``text``, or ``None`` if it is not one.

    A value certainly beyond ``maximum`` (or beyond 4000 digits) is returned as a
    sentinel ``maximum + 1`` (or ``None`` when there is no maximum), without
    building it.
    """
    t = text.strip().replace("_", "")
    if not t or not t.isascii():
        return None
    bound = _digits_bound(maximum)
    too_big = None if maximum is None else maximum + 1
    power = _POWER.match(t)
    if power:
        base, exp = (p.lstrip("0") or "0" for p in power.groups())
        if exp == "0":
            return 1
        if base in ("0", "1"):
            return int(base)
        if len(base) > bound or len(exp) > 12:
            return too_big
        b, e = int(base), int(exp)
        if b <= 1:
            return 1 if e == 0 else b
        if e * math.log10(b) > bound:
            return too_big
        return b**e
    if "**" in t:
        return None
    try:
        value = Decimal(t)
    except (InvalidOperation, ValueError):
        return None
    if not value.is_finite():
        return None
    if value.is_zero():
        return 0
    if value.adjusted() < 0:  # |value| < 1 and not zero
        return None
    if value.adjusted() > bound:
        return too_big if value > 0 else None
    integral = value.to_integral_value()
    if integral != value:
        return None
    return int(integral)


def read_integer(text: str) -> int | None:
    """The exact integer written in ``text`` by the rules of :func:`parse_integer`
    (``"3"``, ``"3.0"``, ``"1e6"``, ``"10**6"``), or ``None`` if it is not one
    (or has more than 4000 digits)."""
    return _text_to_int(text, None)


def parse_integer(name: str, value: Any, minimum: int, maximum: int | None = None) -> int:
    """``value`` as an exact ``int`` in ``minimum .. maximum``, or :class:`ParameterError`.

    Accepts Python and NumPy integers, and strings written as integers
    (``"12"``, ``" 12"``, ``"1_000"``, ``"5.0"``, ``"1e6"``, ``"10**6"``); refuses
    bools, floats, fractions, ``nan``/``inf`` and anything out of range, with
    the sentence ``NAME must be an integer >= MIN and <= MAX, got 'TEXT'.``  The
    size of a string is judged from its digits and exponent before an integer
    is built, so no input costs more than a few microseconds.
    """
    number: int | None
    if isinstance(value, str):
        number = _text_to_int(value, maximum)
    elif isinstance(value, bool):
        number = None
    else:
        try:
            number = operator.index(value)
        except TypeError:
            number = None
    if number is None or number < minimum or (maximum is not None and number > maximum):
        raise _integer_refusal(name, value, minimum, maximum)
    return int(number)


def parse_integer_or_word(
    name: str, value: Any, minimum: int, maximum: int | None, words: tuple[str, ...]
) -> int | str:
    """One of ``words`` (any case, e.g. ``"auto"``, ``"inf"``; returned lower-case) or
    an integer ``minimum .. maximum`` by :func:`parse_integer`; the refusal names both:
    ``b must be an integer from 1 to 2000 or 'auto' or 'inf', got 'x'.``"""
    if isinstance(value, str) and value.strip().lower() in words:
        return value.strip().lower()
    if isinstance(value, float) and math.isinf(value) and value > 0 and "inf" in words:
        return "inf"
    try:
        return parse_integer(name, value, minimum, maximum)
    except ParameterError:
        upper = "" if maximum is None else f" to {_int_text(maximum)}"
        alternatives = "".join(f" or {w!r}" for w in words)
        raise ParameterError(
            f"{name} must be an integer from {minimum}{upper}{alternatives}, got {_shown(value)}."
        ) from None


def parse_integer_list(name: str, text: Any, minimum: int, maximum: int | None = None) -> list[int]:
    """A comma-separated list of integers (each by :func:`parse_integer`), at least one;
    an empty item (``10,,100``, a trailing comma) is refused, not skipped."""
    items = str(text).split(",")
    if not any(t.strip() for t in items) or not all(t.strip() for t in items):
        upper = "" if maximum is None else f" and <= {_int_text(maximum)}"
        raise ParameterError(
            f"{name} must be a comma-separated list of integers >= {minimum}{upper} "
            f"with no empty item, got {_shown(text)}."
        )
    return [parse_integer(name, t, minimum, maximum) for t in items]


def _decimal(name: str, text: str, shown: str) -> Decimal:
    try:
        if not text.isascii():
            raise ValueError(text)  # Decimal would read other scripts' digits
        value = Decimal(text.strip().replace("_", ""))
    except (InvalidOperation, ValueError):
        raise ParameterError(f"{name} must be a real number, got {shown}.") from None
    if not value.is_finite():
        raise ParameterError(f"{name} must be a finite real number, got {shown}.")
    if not value.is_zero() and abs(value.adjusted()) > MAX_EXPONENT:
        raise ParameterError(
            f"{name} must be a real number of magnitude between 1e-{MAX_EXPONENT} and "
            f"1e{MAX_EXPONENT} (or 0), got {shown}."
        )
    return value


def _as_fraction(name: str, value: Any) -> Fraction:
    shown = _shown(value)
    if isinstance(value, bool) or value is None:
        raise ParameterError(f"{name} must be a real number, got {shown}.")
    if isinstance(value, Fraction):
        return value
    if isinstance(value, int):
        return Fraction(value)
    if isinstance(value, float):
        if not math.isfinite(value):
            raise ParameterError(f"{name} must be a finite real number, got {shown}.")
        return Fraction(value)
    if isinstance(value, Decimal):
        return Fraction(_decimal(name, str(value), shown))
    if not isinstance(value, str):
        number = _numpy_scalar(value)
        if number is not None:
            return number
    text = str(value).strip()
    if "/" in text:
        num, _, den = text.partition("/")
        p, q = _decimal(name, num, shown), _decimal(name, den, shown)
        if q.is_zero():
            raise ParameterError(f"{name} must be a real number (division by zero), got {shown}.")
        return Fraction(p) / Fraction(q)
    return Fraction(_decimal(name, text, shown))


def _numpy_scalar(value: Any) -> Fraction | None:
    """A NumPy integer or float scalar's exact value (``None`` for anything else).

    Recognised without importing NumPy: an integer by ``__index__``, a float by
    ``as_integer_ratio`` (its exact binary value, whatever its width).
    """
    if type(value).__module__ != "numpy" or isinstance(value, bool):
        return None
    if "bool" in type(value).__name__:
        return None  # np.bool_: neither an integer nor a real number
    if hasattr(value, "__index__"):
        try:
            return Fraction(operator.index(value))
        except TypeError:
            return None
    ratio = getattr(value, "as_integer_ratio", None)
    if ratio is None:
        return None
    try:
        p, q = ratio()
    except (OverflowError, ValueError):  # inf, nan
        return None
    return Fraction(p, q)


def _bound_text(x: Any) -> str:
    return f"{x:g}" if isinstance(x, float) else str(x)


def parse_real(
    name: str,
    value: Any,
    low: Any = None,
    high: Any = None,
    *,
    low_open: bool = False,
    high_open: bool = False,
) -> Fraction:
    """``value`` (a decimal string such as ``"0.9"``, ``"1e-3"``, a fraction ``"1/2"``,
    or a number) as an exact :class:`Fraction` within the given bounds.

    ``low``/``high`` (``None``: unbounded) are compared exactly, closed unless
    ``low_open``/``high_open``.  The refusal names the parameter and the range:
    ``lam must be a real number > 0 and <= 1e+06, got '1e400'.``
    """
    x = _as_fraction(name, value)
    lo = None if low is None else Fraction(low)
    hi = None if high is None else Fraction(high)
    bad = (lo is not None and (x < lo or (low_open and x == lo))) or (
        hi is not None and (x > hi or (high_open and x == hi))
    )
    if bad:
        parts = []
        if lo is not None:
            parts.append(f"{'>' if low_open else '>='} {_bound_text(low)}")
        if hi is not None:
            parts.append(f"{'<' if high_open else '<='} {_bound_text(high)}")
        raise ParameterError(
            f"{name} must be a real number {' and '.join(parts)}, got {_shown(value)}."
        )
    return x


def decimal_text(value: Fraction, digits: int = 40) -> str:
    """A decimal string of ``value``: exact when it has a short decimal form,
    else correctly rounded to ``digits`` significant digits."""
    with localcontext() as ctx:
        ctx.prec = digits
        out = Decimal(value.numerator) / Decimal(value.denominator)
    text = format(out, "f") if abs(out.adjusted()) < 30 else str(out)
    if "." in text and "e" not in text.lower() and "E" not in text:
        text = text.rstrip("0").rstrip(".")
    return text or "0"


def exact_text(value: Any, exact: Fraction) -> str:
    """The decimal text a high-precision route reads for ``value`` (whose exact
    value :func:`parse_real` found to be ``exact``): a plain decimal string as
    written; a binary float (NumPy's included) by its shortest round-trip
    ``repr``, which reads back as that double; anything else (``"9/10"``, a
    ``Fraction``, an ``int``) by :func:`decimal_text`."""
    if isinstance(value, str):
        if "/" not in value and "_" not in value:
            return value.strip()
    elif not isinstance(value, int | Fraction) and _is_double(exact):
        return repr(float(exact))
    return decimal_text(exact)


def _is_double(exact: Fraction) -> bool:
    try:
        return Fraction(float(exact)) == exact
    except OverflowError:
        return False


def parse_diagonal(name: str, text: str) -> list[Fraction] | None:
    """The entries of an observable written ``diag:a,b,...`` as exact fractions
    (each a real number of magnitude at most
    :data:`mfstein.ground.limits.MAX_OBSERVABLE_ENTRY`), or ``None`` for ``identity``.

    Anything else is one sentence naming ``name``; the length is checked
    against the model by the caller (the number of states is not known here).
    """
    from mfstein.ground.limits import MAX_OBSERVABLE_ENTRY

    t = str(text).strip()
    if t.lower() == "identity":
        return None
    if not t.lower().startswith("diag:"):
        raise ParameterError(f"{name} must be 'identity' or 'diag:a,b,...', got {_shown(text)}.")
    items = [x for x in t[5:].split(",") if x.strip()]
    if not items:
        raise ParameterError(f"{name} = diag:... needs at least one entry, e.g. diag:1,0,0.")
    cap = MAX_OBSERVABLE_ENTRY
    return [parse_real(f"{name} entry", x, -cap, cap) for x in items]
