"""How results present themselves: a short ``repr``, an HTML table, JSON text.

Every result type of mfstein (:class:`numeric.MeanFieldSolution`,
:class:`numeric.exact.ExactResult`, :class:`sim.SimulationResult`,
:class:`numeric.expansion.transient.TransientResult`, :class:`numeric.CertifiedSolution`,
the claim reports, the tail, Persistent-Idle and table results; the list is
``tests/test_api.py``'s) derives from :class:`Presentable`: it declares only what is its own -- its
``to_dict()`` and its ``_rows()``, a list of ``(label, text)`` pairs of its
headline numbers already formatted with the digits the result claims -- and the
base writes from them the JSON text, the short ``repr`` and the notebook's HTML
table, so that the three agree.  Standard library only.

Every printed number carries only the digits its result claims for it
(docs/design.md, "Printed digits"): :func:`claimed` is the one rounding every
result type's ``to_dict`` and ``_rows`` go through, and :func:`error_figure`
writes an error estimate with :data:`ERROR_DIGITS` significant digits.
"""

from __future__ import annotations

import dataclasses
import html
import json
import math
import numbers
import warnings
from abc import ABC, abstractmethod
from collections.abc import Callable, Collection, Mapping, Sequence
from typing import TYPE_CHECKING, Any, ClassVar

if TYPE_CHECKING:  # imported where a decimal string is rounded: a solve prints nothing
    from decimal import Decimal

#: Most lines a result's ``repr`` prints (its headline numbers; the rest is in
#: ``to_dict()``).
MAX_REPR_LINES = 12


#: Significant digits an error estimate (an absolute error, a confidence interval's
#: half-width) is printed with, rounded away from zero so that it still bounds.
ERROR_DIGITS = 3


def claimed(value: Any, digits: int | None, *, up: bool = False) -> Any:
    """``value`` as it is printed when ``digits`` significant digits are claimed for it.

    The one rule of every printed number (docs/design.md, "Printed digits"):

    - a float (a NumPy float too) becomes the float nearest its decimal rounding to
      ``digits`` significant digits, so its shortest ``repr`` -- what JSON, CSV and
      ``str`` write -- has at most ``digits`` digits (``claimed(1.1921568627450974, 13)
      == 1.192156862745``);
    - a decimal string (the high-precision routes' form) becomes that decimal rounded
      to ``digits`` significant digits, in the same notation, trailing zeros kept;
    - lists, tuples, dicts and NumPy arrays (as nested lists) are rounded entry by
      entry; ``None``, ints (NumPy's too), bools, other
      text and floats that are not finite are returned unchanged, and so is everything
      when ``digits`` is ``None`` (no claim).

    Rounding is to nearest (of the exact binary value, ties to even), or away from
    zero with ``up=True``, so that an error bound stays a bound (the float returned is
    never below ``|value|``).  ``digits < 1`` prints ``0`` (no digit is correct).
    The value itself is never changed: only what is printed.
    """
    if digits is None:
        return value
    numpy = type(value).__module__ == "numpy"
    if isinstance(value, numbers.Integral | bool) or value is None:
        return value  # an integer (a NumPy one too) or a bool: exact
    if numpy and "bool" in type(value).__name__:
        return value
    if isinstance(value, float) or (numpy and getattr(value, "ndim", None) == 0):
        return _claimed_float(float(value), digits, up)
    if isinstance(value, str):
        return _claimed_text(value, digits, up)
    if isinstance(value, Mapping):
        return {k: claimed(v, digits, up=up) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return [claimed(v, digits, up=up) for v in value]
    if numpy and hasattr(value, "tolist"):  # an array: as nested lists
        return claimed(value.tolist(), digits, up=up)
    return value


def claimed_to_place(values: Any, place: int) -> Any:
    """``values`` (a float or nested lists of floats) each printed down to the decimal
    place ``10**place`` and no further (:func:`claimed` with the digits each entry has
    above that place; an entry below it prints ``0.0``): the form of an absolute
    error shared by every entry."""
    if isinstance(values, list | tuple):
        return [claimed_to_place(v, place) for v in values]
    x = float(values)
    if not math.isfinite(x) or x == 0:
        return x
    return claimed(x, math.floor(math.log10(abs(x))) - place + 1)


#: Significant digits of a float64 result of a solve printed without an error estimate
#: (an exact chain too large for one: the solver's relative tolerance ``1e-10``, not a
#: bound; :mod:`numeric.exact.law_error`).
UNBOUNDED_DIGITS = 10


#: At most this many digits of agreement are reported by :func:`agreement_digits`
#: (float64 numbers carry about 16).
AGREEMENT_MAX = 15


def agreement_digits(a: float, b: float) -> int:
    """The decimal digits on which ``a`` and ``b`` agree, relative to ``a``:
    ``floor(-log10(|a - b| / |a|))``, at most :data:`AGREEMENT_MAX` (equal numbers)
    and at least 0 (``a = 0 != b``, or a difference beyond ``|a|``).  What a note prints
    instead of the difference itself, whose leading digits are round-off."""
    diff, size = abs(a - b), abs(a)
    if diff == 0:
        return AGREEMENT_MAX
    if not size > 0 or not math.isfinite(diff):
        return 0
    return int(min(AGREEMENT_MAX, max(0, math.floor(-math.log10(diff / size)))))


def place(error: float) -> int:
    """The decimal place ``p``, ``10^p >= 2 error``, a number with the absolute error
    ``error`` is printed down to (:func:`printed_to_error`)."""
    return math.ceil(math.log10(2.0 * error)) if error > 0 else -300


def printed_to_error(value: Any, error: float | None) -> Any:
    """``value`` (a float, a NumPy array or nested lists) as printed when ``error``
    bounds the absolute error of each entry: down to the place ``10^p >= 2 error``
    (:func:`claimed_to_place`), so that the print is within ``error + 10^p / 2 <= 10^p``
    of the exact value; with ``error`` ``None`` (or not finite), :data:`UNBOUNDED_DIGITS`
    significant digits."""
    if value is None:
        return None
    if hasattr(value, "tolist"):
        value = value.tolist()
    if error is None or not math.isfinite(error):
        return claimed(value, UNBOUNDED_DIGITS)
    return claimed_to_place(value, place(error))


#: Significant digits of a measurement that states no precision of its own: a wall
#: time, a rate of events, a diagnostic statistic without an interval.
MEASURED_DIGITS = 3


#: Significant digits of a number computed from a result's inputs by a few float64
#: operations (sums of a pmf's products, a quotient): a relative error of a few
#: ``1e-16`` per operation (a load prints ``0.44``, not ``0.43999999999999995``).
INPUT_DIGITS = 14


def measured(value: Any) -> Any:
    """A wall time, a speed or a diagnostic as printed: :data:`MEASURED_DIGITS` digits."""
    return claimed(value, MEASURED_DIGITS)


#: Significant digits of a confidence interval's half-width as printed (rounded up).
CI_DIGITS = 2


def estimate_figures(mean: Any, half_width: Any) -> tuple[Any, Any]:
    """A statistical estimate and the half-width of its confidence interval as printed.

    The half-width keeps :data:`CI_DIGITS` significant digits, rounded upwards; the
    estimate keeps its digits down to the place of the half-width's last printed digit
    (``0.898998163650087 +/- 0.04880607826441891`` prints ``0.899 +/- 0.049``), at least
    one.  A half-width of zero or not finite states no precision: both are returned as
    they are (``None`` and NaN too).
    """
    if mean is None or half_width is None:
        return mean, half_width
    m, h = float(mean), float(half_width)
    if not (math.isfinite(m) and math.isfinite(h)) or h <= 0 or m == 0:
        return mean, half_width
    shown = claimed(h, CI_DIGITS, up=True)
    digits = max(1, math.floor(math.log10(abs(m))) - _last_place(shown) + 1)
    return claimed(m, digits), shown


def _last_place(half_width: float) -> int:
    """The decimal place of a printed half-width's last digit (:data:`CI_DIGITS` digits)."""
    return math.floor(math.log10(half_width)) - CI_DIGITS + 1


def estimate_text(mean: Any, half_width: Any) -> str:
    """``"m ± h"`` as a text table prints an estimate (:func:`estimate_figures`), the
    estimate written down to the place of the half-width's last digit, trailing zeros
    kept (``3.70996 +/- 0.0784`` prints ``3.710 ± 0.079``, where the float ``3.71`` would
    hide the third decimal).  A half-width of zero or not finite prints both as they
    are (``repr`` of the floats, ``-`` for ``None``)."""
    m, h = estimate_figures(mean, half_width)
    if m is None or h is None:
        return f"{'-' if m is None else m} ± {'-' if h is None else h}"
    fm, fh = float(m), float(h)
    if not (math.isfinite(fm) and math.isfinite(fh)) or fh <= 0 or fm == 0:
        return f"{fm!r} ± {fh!r}"
    decimals = max(0, -_last_place(fh))
    return f"{fm:.{decimals}f} ± {fh:.{decimals}f}"


def error_figure(value: Any) -> Any:
    """An error estimate as printed: :func:`claimed` with :data:`ERROR_DIGITS` digits,
    rounded away from zero."""
    return claimed(value, ERROR_DIGITS, up=True)


def _claimed_float(x: float, digits: int, up: bool) -> float:
    """A finite float rounded to ``digits`` significant digits (module :func:`claimed`):
    Python's correctly rounded ``e`` format read back, about a microsecond."""
    if not math.isfinite(x) or x == 0:
        return x
    if digits < 1:
        return 0.0
    text = f"{x:.{digits - 1}e}"
    y = float(text)
    if up and abs(y) < abs(x):  # one unit of the last digit further from zero
        mantissa, _, exponent = text.partition("e")
        units = int(mantissa.lstrip("-").replace(".", "")) + 1  # "4.8" -> 49
        sign = "-" if x < 0 else ""
        y = float(f"{sign}{units}e{int(exponent) - digits + 1}")
    return y


def _rounded(x: Decimal, digits: int, up: bool) -> Decimal:
    """``x`` rounded to ``digits`` significant digits (0 when ``digits < 1``)."""
    from decimal import ROUND_HALF_EVEN, ROUND_UP, Context, Decimal

    if digits < 1:
        return Decimal(0)
    rounding = ROUND_UP if up else ROUND_HALF_EVEN
    return Context(prec=digits, rounding=rounding, Emax=10**6, Emin=-(10**6)).plus(x)


def _claimed_text(text: str, digits: int, up: bool) -> str:
    """A decimal string rounded to ``digits`` significant digits (other text unchanged)."""
    from decimal import Decimal

    try:
        x = Decimal(text)
    except ArithmeticError:
        return text
    if not x.is_finite() or x.is_zero():
        return text
    have = len(x.as_tuple().digits)
    if have <= digits:
        return text
    out = _rounded(x, digits, up)
    if "e" in text.lower():
        return f"{out:.{max(digits - 1, 0)}e}"
    return f"{out:f}"


def text_block(title: str, rows: Sequence[tuple[str, str]], more: str = "") -> str:
    """``title`` and ``label: text`` rows, at most :data:`MAX_REPR_LINES` lines."""
    body = list(rows)[: MAX_REPR_LINES - 1 - bool(more)]
    width = max((len(label) for label, _ in body), default=0)
    lines = [title] + [f"  {label.ljust(width)}  {text}" for label, text in body]
    if more:
        lines.append(f"  ({more})")
    return "\n".join(lines)


def html_table(title: str, rows: Sequence[tuple[str, str]], more: str = "") -> str:
    """The same rows as a small HTML table (for Jupyter's ``_repr_html_``)."""
    esc = html.escape
    cells = "".join(
        f'<tr><th style="text-align:left">{esc(label)}</th><td>{esc(text)}</td></tr>'
        for label, text in rows
    )
    foot = f'<tr><td colspan="2"><i>{esc(more)}</i></td></tr>' if more else ""
    return (
        f'<table><caption style="text-align:left"><b>{esc(title)}</b></caption>'
        f"<tbody>{cells}{foot}</tbody></table>"
    )


def shape_text(value: Any) -> str:
    """``"3 x 3"`` for a matrix-like value, ``"4"`` for a vector, ``"-"`` for none."""
    if value is None:
        return "-"
    shape = getattr(value, "shape", None)
    if shape is None and hasattr(value, "rows") and hasattr(value, "cols"):
        shape = (value.rows, value.cols)
    if shape is None and hasattr(value, "nrows"):
        shape = (value.nrows(), value.ncols())
    if shape is None:
        shape = (len(value),)
    return " x ".join(str(int(n)) for n in shape)


def dumps(data: Mapping[str, Any], *, indent: int | None = 1) -> str:
    """JSON text of a result's ``to_dict()`` (``indent=None``: one line).

    Always strict JSON: a float that is not finite (NaN, an infinity), which JSON
    cannot represent, is written as ``null`` and named in a note appended to the
    document's ``notes`` (:func:`finite_data`); the encoder then refuses any other
    (``allow_nan=False``), so no ``NaN`` or ``Infinity`` token is ever written.
    """
    return json.dumps(finite_data(data), indent=indent, allow_nan=False)


#: Most places a note on non-finite values names (the rest are counted).
MAX_NOTED_PLACES = 8


def finite_data(data: Any) -> Any:
    """``data`` (nested dicts, lists and tuples) with every float that is not finite
    replaced by ``None``; when there was one and ``data`` is a dict, a copy whose
    ``notes`` list (created if absent) ends with one sentence naming where, e.g.
    ``"not finite, written as null: s_star (1 NaN), constant (NaN)."``."""
    places: dict[str, list[str]] = {}
    clean = _finite(data, "", places)
    if not places or not isinstance(clean, dict):
        return clean
    where = [
        f"{path} ({len(kinds)} {_kinds(kinds)})" if "[]" in path else f"{path} ({kinds[0]})"
        for path, kinds in places.items()
    ]
    more = len(where) - MAX_NOTED_PLACES
    text = ", ".join(where[:MAX_NOTED_PLACES]) + (f" and {more} more" if more > 0 else "")
    note = f"not finite, written as null (JSON has no NaN or Infinity): {text}."
    notes = clean.get("notes", [])
    if isinstance(notes, list):
        clean["notes"] = [*notes, note]
    else:  # a result whose "notes" is not a list keeps it; the note goes beside it
        clean["json_notes"] = [note]
    return clean


def _kinds(kinds: list[str]) -> str:
    """The kinds found at one place, e.g. ``"NaN"`` or ``"-Infinity or NaN"``."""
    found = sorted(set(kinds))
    return found[0] if len(found) == 1 else " or ".join(found)


def _finite(value: Any, path: str, places: dict[str, list[str]]) -> Any:
    """A copy of ``value`` with non-finite floats as ``None``, recording each one's
    ``path`` (dict keys joined by ``.``, ``[]`` for a list) and kind in ``places``."""
    if isinstance(value, float):
        if math.isfinite(value):
            return value
        kind = "NaN" if value != value else ("Infinity" if value > 0 else "-Infinity")
        places.setdefault(path, []).append(kind)
        return None
    if isinstance(value, Mapping):
        return {k: _finite(v, f"{path}.{k}" if path else str(k), places) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return [_finite(v, f"{path}[]", places) for v in value]
    return value


def fields_dict(
    result: Any, *, skip: Collection[str] = (), measurements: Collection[str] = ()
) -> dict[str, Any]:
    """A dataclass result's ``to_dict()`` written from its fields, in their order.

    Each field but those in ``skip`` becomes the key of its name: a value with a
    ``to_dict()`` of its own (an estimate) as that dict, a field named in
    ``measurements`` (a wall time, a speed) through :func:`measured`, any other value
    as it is.
    """
    out: dict[str, Any] = {}
    for f in dataclasses.fields(result):
        if f.name in skip:
            continue
        value = getattr(result, f.name)
        if f.name in measurements:
            value = measured(value)
        elif hasattr(value, "to_dict"):
            value = value.to_dict()
        out[f.name] = value
    return out


def family_fields(**values: Any) -> dict[str, Any]:
    """A result's ``family_fields`` record of the given values (what only the model's
    family defines, e.g. the supermarket's ``lam`` and ``d``), those that are ``None``
    (the model has no such quantity) left out; the result reads them through
    properties of the same names."""
    return {k: v for k, v in values.items() if v is not None}


class FamilyField:
    """A read-only attribute of a result read from its ``family_fields`` record (``None``
    when the model's family has no such quantity): ``lam = FamilyField("The arrival
    rate.")`` in the class body makes ``result.lam`` ``result.family_fields.get("lam")``."""

    def __init__(self, doc: str) -> None:
        self.__doc__ = doc
        self.name = ""

    def __set_name__(self, owner: type, name: str) -> None:
        self.name = name

    def __get__(self, obj: Any, owner: type | None = None) -> Any:
        if obj is None:
            return self
        return obj.family_fields.get(self.name)

    def __set__(self, obj: Any, value: Any) -> None:
        raise AttributeError(f"{self.name} is read from family_fields and cannot be assigned.")


def params_text(params: Mapping[str, Any]) -> str:
    """A result's parameters as ``"k = v, ..."`` (``"none"`` for no parameters)."""
    return ", ".join(f"{k} = {v}" for k, v in params.items()) or "none"


def start_json(start: Any) -> str | list[str] | None:
    """A task's ``start`` as given, JSON-ready: ``None`` (the model's own start), the
    string given (``"reference"``), or each fraction of the initial state as text
    (``[0.9, "1/10"]`` -> ``["0.9", "1/10"]``: written, never re-rounded).

    >>> start_json([0.9, "1/10"]), start_json("reference"), start_json(None)
    (['0.9', '1/10'], 'reference', None)
    """
    if start is None or isinstance(start, str):
        return start
    return [str(x) for x in start]


def heading_rows(model: str, params: Mapping[str, Any]) -> list[tuple[str, str]]:
    """The first rows of a result about one model: ``("model", model)`` and its
    parameters (:func:`params_text`)."""
    return [("model", model), ("params", params_text(params))]


def count_row(name: str, items: Sequence[Any] | Mapping[str, Any]) -> tuple[str, str]:
    """The row ``(name, "<how many> (see .name)")`` for a list a result holds in full."""
    return (name, f"{len(items)} (see .{name})")


class Presentable(ABC):
    """The presentation every result type shares, written once.

    A subclass declares what is its own:

    - ``to_dict()``: the JSON-ready dict (the keys of its ``--json`` command);
    - ``_rows()``: its headline numbers as ``(label, text)`` rows, formatted;
    - ``_MORE``: the footer line saying where the rest is;
    - ``_title()``, optionally: the heading (by default the class name).

    and inherits ``to_json`` (:func:`dumps` of ``to_dict()``), ``to_text`` and
    ``repr`` (the heading over the rows, :func:`text_block`) and ``_repr_html_``
    (:func:`html_table`).  ``to_text()`` is the result's text, the one name of it
    across every result (what a command prints without ``--json``,
    :func:`mfstein.ground.streams.show`): a result with a longer text of its own
    overrides it, and ``repr`` stays the short block.  A ``@dataclass`` subclass is
    declared with ``repr=False``, else the dataclass writes its own ``__repr__`` over
    this one.
    """

    #: The footer of ``repr`` and of the HTML table.
    _MORE: ClassVar[str] = ""

    @abstractmethod
    def to_dict(self) -> dict[str, Any]:
        """JSON-ready dict of the result (each result type writes its own)."""

    @abstractmethod
    def _rows(self) -> list[tuple[str, str]]:
        """The headline rows ``(label, text)`` of ``repr`` and the HTML table."""

    def _title(self) -> str:
        """The heading of ``repr`` and the HTML table: the class name."""
        return type(self).__name__

    def to_json(self, *, indent: int | None = 1) -> str:
        """:meth:`to_dict` as JSON text (``indent=None``: one line)."""
        return dumps(self.to_dict(), indent=indent)

    def to_text(self) -> str:
        """The result's text: by default its ``repr``, the heading over the rows."""
        return text_block(self._title(), self._rows(), self._MORE)

    def __repr__(self) -> str:
        return Presentable.to_text(self)  # the short block, also where to_text is longer

    def _repr_html_(self) -> str:
        return html_table(self._title(), self._rows(), self._MORE)


def columns(rows: Sequence[Sequence[str]], header: Sequence[str]) -> str:
    """A plain-text table: ``header`` and ``rows`` right-aligned in columns two spaces apart."""
    widths = [max(len(h), *(len(r[i]) for r in rows)) for i, h in enumerate(header)]
    lines = ["  ".join(h.rjust(w) for h, w in zip(header, widths, strict=True))]
    lines += ["  ".join(c.rjust(w) for c, w in zip(r, widths, strict=True)) for r in rows]
    return "\n".join(lines)


def renamed_to_text(old: str) -> Callable[..., str]:
    """A result's method ``old`` kept as a deprecated alias of its ``to_text`` (the one
    name of a result's text, :class:`Presentable`): ``render = renamed_to_text("render")``
    in the class body; calling it warns with a :class:`DeprecationWarning`."""

    def alias(self: Presentable, *args: Any, **kwargs: Any) -> str:
        warnings.warn(
            f"{type(self).__name__}.{old}() is deprecated; use .to_text(), which returns "
            "the same text.",
            DeprecationWarning,
            stacklevel=2,
        )
        return self.to_text(*args, **kwargs)

    alias.__name__ = alias.__qualname__ = old
    alias.__doc__ = "Deprecated name of ``to_text()`` (the same text); warns."
    return alias
