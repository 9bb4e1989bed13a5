"""A model's symbolic objects by name, as a result (``mfstein derive``).

:func:`derive_objects` computes the objects ``mfstein derive --show`` names -- the
drift ``f``, the Jacobian ``J``, the Hessian, the diffusion ``Q``, ``f~``
(core paper, Sections 3 and 6), Stein's equation and the Lyapunov system (Section 4,
plain and vectorised), the generator identity of Lemma 7 and the closed forms of the
supermarket with ``b <= 2`` -- and returns a :class:`DerivedObjects`, which writes them
as JSON (expression strings that :func:`sympy.sympify` parses back to the identical
expression: a symbol whose name SymPy's parser would read as something else, ``N``
being SymPy's numeric-evaluation function, is written ``Symbol('N')``), as text
(SymPy's 2-D layout), as LaTeX in the paper's notation (:mod:`derive.latex`) or as
Python source that rebuilds them.  Which objects stand behind a name is
:mod:`derive.named_objects`'s.
"""

from __future__ import annotations

import functools
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from mfstein.ground.display import Presentable, shape_text

#: The objects that are vectors (a list in JSON); every other matrix is a list of
#: rows, also when it is 1 x 1 (the Jacobian of a one-coordinate model).
VECTORS = frozenset({"f", "ftilde", "linearised_drift", "vecP", "equilibrium", "s_star"})

#: Expressions longer than this (as plain strings) are printed flat, not 2-D.
PRETTY_LIMIT = 2000


@functools.cache
def _round_trip_printer():
    """A StrPrinter that writes ``Symbol('N')`` for names sympify would misread."""
    import sympy as sp
    from sympy.printing.str import StrPrinter

    @functools.cache
    def safe(name: str) -> bool:
        try:
            return sp.sympify(name) == sp.Symbol(name)
        except (sp.SympifyError, TypeError, SyntaxError, ValueError):
            return False

    class _RoundTrip(StrPrinter):
        def _print_Symbol(self, s: sp.Symbol) -> str:
            return s.name if safe(s.name) else f"Symbol({s.name!r})"

    return _RoundTrip()


def to_string(expr: Any) -> str:
    """A string that :func:`sympy.sympify` parses back to exactly ``expr``."""
    import sympy as sp

    if expr == 0:
        return "0"
    return _round_trip_printer().doprint(sp.sympify(expr))


def nested(obj: Any, key: str = "") -> Any:
    """``obj`` as JSON-ready nested lists of expression strings; ``key`` is its name
    (a column under a name of :data:`VECTORS` is a flat list)."""
    import sympy as sp

    if isinstance(obj, sp.MatrixBase):
        if obj.shape[1] == 1 and (key in VECTORS or obj.shape[0] > 1):
            return [to_string(e) for e in obj]
        return [[to_string(e) for e in obj.row(i)] for i in range(obj.shape[0])]
    if isinstance(obj, sp.NDimArray):
        return _nested_array(obj.tolist())
    if isinstance(obj, dict):
        return {k: nested(v, k) for k, v in obj.items()}
    if isinstance(obj, list | tuple):
        return [nested(v) for v in obj]
    return to_string(obj)


def _nested_array(x: Any) -> Any:
    return [_nested_array(v) for v in x] if isinstance(x, list) else to_string(x)


def _text(obj: Any, indent: str = "  ") -> list[str]:
    """``obj`` in SymPy's 2-D layout (a dict: each key over its value), indented."""
    import sympy as sp

    if isinstance(obj, dict):
        lines = []
        for k, v in obj.items():
            lines.append(f"{indent}{k}:")
            lines += _text(v, indent + "  ")
        return lines
    flat = str(obj)
    if len(flat) > PRETTY_LIMIT:  # 2-D layout of huge radicals is unreadable and slow
        return [indent + flat]
    return [indent + line for line in sp.pretty(obj, use_unicode=False).splitlines()]


def _python_value(obj: Any) -> str:
    """Python source (SymPy names) that rebuilds ``obj``."""
    import sympy as sp

    if isinstance(obj, sp.MatrixBase):
        return f"Matrix({_python_list(nested(obj))})"
    if isinstance(obj, sp.NDimArray):
        return f"Array({_python_list(nested(obj))})"
    if isinstance(obj, dict):
        inner = ", ".join(f"{k!r}: {_python_value(v)}" for k, v in obj.items())
        return "{" + inner + "}"
    if isinstance(obj, list | tuple):
        return "[" + ", ".join(_python_value(v) for v in obj) + "]"
    return to_string(obj)


def _python_list(x: Any) -> str:
    if isinstance(x, list):
        return "[" + ", ".join(_python_list(v) for v in x) + "]"
    return str(x)


def _free_symbols(obj: Any) -> set[Any]:
    import sympy as sp

    if isinstance(obj, dict):
        return set().union(*(_free_symbols(v) for v in obj.values()))
    if isinstance(obj, list | tuple):
        return set().union(*(_free_symbols(v) for v in obj)) if obj else set()
    if isinstance(obj, sp.NDimArray):
        return set().union(*(sp.sympify(e).free_symbols for e in obj))
    if isinstance(obj, sp.Basic | sp.MatrixBase):
        return set(obj.free_symbols)
    return set()


def _summary(obj: Any) -> str:
    """A row of ``repr``: a matrix's shape, a composite object's parts."""
    if isinstance(obj, dict):
        return ", ".join(obj)
    if hasattr(obj, "shape") or isinstance(obj, list | tuple):
        return shape_text(obj)
    return to_string(obj)[:60]


@dataclass(frozen=True, repr=False)
class DerivedObjects(Presentable):
    """A model's symbolic objects by their ``--show`` name (:func:`derive_objects`)."""

    #: The model's name.
    model: str
    #: ``--show`` name -> SymPy object (a matrix, an array, an expression), or a dict of
    #: them for a composite object (``stein``, ``lyapunov``, ``kron``, ``generator``,
    #: ``closed-form``).
    objects: dict[str, Any]
    #: ``x = s - s^*`` of the model's state symbols (:func:`derive.stein.deviation`), which
    #: the LaTeX of Stein's equation prints; ``None`` when ``stein`` is not derived.
    deviation: Any = None

    _MORE = "the objects: .objects; .to_text(), .to_latex(), .to_python(); .to_dict() for JSON"

    def to_dict(self) -> dict[str, Any]:
        """JSON-ready dict: each object as nested lists of expression strings that
        :func:`sympy.sympify` parses back (a vector of :data:`VECTORS` a flat list)."""
        return {k: nested(v, k) for k, v in self.objects.items()}

    def _rows(self) -> list[tuple[str, str]]:
        return [("model", self.model)] + [(k, _summary(v)) for k, v in self.objects.items()]

    def to_text(self) -> str:
        """Each object under its name, in SymPy's 2-D layout (flat beyond
        :data:`PRETTY_LIMIT` characters)."""
        return "\n".join(f"{name}:\n" + "\n".join(_text(obj)) for name, obj in self.objects.items())

    def to_latex(self) -> str:
        """Each object's LaTeX (:func:`derive.latex_print.object_latex`, the core paper's
        notation, ``amsmath`` only) under a comment line ``% name``."""
        from derive.latex_print import object_latex

        return "\n".join(
            f"% {name}\n{object_latex(name, obj, self.deviation)}"
            for name, obj in self.objects.items()
        )

    def to_python(self) -> str:
        """A Python program defining each object as a SymPy object under its ``--show``
        name (``closed-form`` and the other names with a dash become identifiers): the
        symbols first, then one assignment per object."""
        symbols: set[Any] = set()
        for obj in self.objects.values():
            symbols |= _free_symbols(obj)
        printed = {s.name for s in symbols if to_string(s) == s.name}
        lines = ["from sympy import *  # noqa: F403"]
        for name in sorted(printed):
            lines.append(f"{name} = Symbol({name!r})")
        for name, obj in self.objects.items():
            lines.append(f"{name.replace('-', '_')} = {_python_value(obj)}")
        return "\n".join(lines)


def _object(model: Any, name: str) -> Any:
    """The object ``name`` (one of :func:`derive_objects`'s names) of ``model``."""
    if name == "closed-form":
        from derive.models.closed_forms import closed_form_parts

        return closed_form_parts(model.n)
    from derive.named_objects import model_object

    return model_object(model, name)


def derive_objects(model: Any, names: Sequence[str]) -> DerivedObjects:
    """The symbolic objects ``names`` of ``model`` (``f``, ``J``, ``hessian``, ``Q``,
    ``ftilde``, ``stein``, ``lyapunov``, ``kron``, ``generator``, ``closed-form``;
    the composite ones as dicts, see :class:`DerivedObjects`), in the order given."""
    objects = {name: _object(model, name) for name in names}
    from derive.stein import deviation

    x = deviation(model) if "stein" in objects else None
    return DerivedObjects(model.name, objects, x)
