"""Sparse evaluators of a model's rates and their derivatives, without numba.

A density-dependent population process is fully described by its jumps
``l`` and intensities ``beta_l(s)``; everything else follows by sparse
linear algebra (Section 3 of "Beyond Scaling: Calculable Error Bound of the
Power-of-Two-Choices Mean-Field Model in Heavy-Traffic"):

* ``f(s) = L^T beta(s)`` (``L`` the jump matrix, one row per transition);
* ``J(s) = L^T (d beta / ds)``, sparse when each rate depends on few coordinates;
* ``Q(s) = L^T diag(beta(s)) L``;
* ``d^2 f_i / ds_j ds_k = sum_l L_li d^2 beta_l / ds_j ds_k``.

Only the derivatives of each rate with respect to the coordinates it actually
contains are formed (``O(transitions x symbols per rate)`` SymPy work, linear
in the model's size), and each list is turned into one Python function by
:func:`sympy.lambdify` (NumPy or mpmath module).  Compiling a lambdified
function is Python's own byte-compilation, linear in the length of the code,
so this is the route chosen for large models, where numba's compile time
(super-linear in the length of one function) costs more than it saves; see
docs/design.md, "Compiling".
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

import numpy as np
import sympy as sp

from derive.backends import lambdify
from derive.lambda_values import flat, placed
from mfstein.ground.arguments import renamed_attribute

__all__ = ["SparseRates", "sparse_rates"]

_cache: dict[tuple, SparseRates] = {}
#: Lists longer than this are lambdified without common-subexpression elimination.
CSE_MAX = 400
#: Lists of at least FORMS_MIN entries with at most one form per REPEAT entries
#: are evaluated form by form (:meth:`SparseRates.evaluator`).
FORMS_MIN = 64
REPEAT = 8


@dataclass
class _Group:
    """Entries of one list that share a form: ``expr`` in the symbols ``args``
    (states renamed ``z0, z1, ...``), written at ``out`` from the states at
    ``pos`` (one row per entry, one column per ``z``)."""

    expr: sp.Expr
    args: tuple[sp.Symbol, ...]
    out: np.ndarray
    pos: np.ndarray


class _Exprs(dict):
    """The expression lists of a :class:`SparseRates`, built on first use from
    ``(expression, renaming)`` pairs (a template's derivative and the map back to
    the rate's own states): the float64 route evaluates by forms and never needs
    them, and renaming every derivative back costs more than the rest of the setup."""

    def __init__(self, pending: dict[str, list[tuple[sp.Expr, dict | None]]]) -> None:
        super().__init__()
        self._pending = pending
        self.sizes = {k: len(v) for k, v in pending.items()}

    def __missing__(self, what: str) -> list[sp.Expr]:
        out = [e if back is None else e.xreplace(back) for e, back in self._pending[what]]
        self[what] = out
        return out


def _groups(forms: dict[Any, list[tuple[int, list[int]]]], states: tuple) -> list[_Group]:
    out = []
    for key, inst in forms.items():
        expr = key[-1]
        m = len(inst[0][1])
        own = isinstance(key[0], tuple) and key[0][:1] == ("own",)
        args = tuple(states[j] for j in inst[0][1]) if own else _Z[:m]
        out.append(
            _Group(
                expr,
                args,
                np.array([o for o, _ in inst], dtype=np.int64),
                np.array([p for _, p in inst], dtype=np.int64).reshape(len(inst), m),
            )
        )
    return out


def _repeats(groups: list[_Group]) -> bool:
    n = sum(len(g.out) for g in groups)
    return n >= FORMS_MIN and REPEAT * len(groups) <= n


def _by_forms(
    groups: list[_Group], n: int, params: tuple[sp.Symbol, ...]
) -> Callable[[Any, Any], np.ndarray]:
    """The float64 evaluator of a list grouped by forms: one lambdified NumPy
    function per form, applied to the arrays of its instances' states."""
    funcs = [lambdify((*g.args, *params), g.expr, "numpy") for g in groups]

    def fn(s: Any, p: Any) -> np.ndarray:
        s = np.asarray(s, dtype=float)
        out = np.empty(n)
        for g, f in zip(groups, funcs, strict=True):
            out[g.out] = f(*(s[g.pos[:, a]] for a in range(g.pos.shape[1])), *p)
        return out

    return fn


@dataclass
class SparseRates:
    """Rates and their first and second derivatives as flat lists on sparse indices.

    ``jumps``: ``(rows, cols, vals)`` of the jump matrix ``L`` (transition,
    coordinate, change).  ``grad_index[m] = (l, j)`` with value
    ``d beta_l / ds_j``; ``hess_index[m] = (l, j, k)``, ``j <= k``, with value
    ``d^2 beta_l / ds_j ds_k``.  Each evaluator takes ``(s, p)`` (state and
    parameter vectors in the model's order) and returns a flat sequence.
    """

    b: int
    n_transitions: int
    jumps: tuple[np.ndarray, np.ndarray, np.ndarray]
    grad_index: np.ndarray
    hess_index: np.ndarray
    _exprs: _Exprs
    _symbols: tuple[sp.Symbol, ...]
    _funcs: dict[tuple[str, str], Callable[..., Any]]
    #: per object, the entries grouped by rate template (:func:`_groups`)
    _forms: dict[str, list[_Group]] = field(default_factory=dict)
    _params: tuple[sp.Symbol, ...] = ()
    #: the lambdified functions of :meth:`evaluator` by ``(what, module)`` when one
    #: function serves the list (:mod:`derive.models.stored` keeps them)
    raw: dict[tuple[str, str], Callable[..., Any]] = field(default_factory=dict)

    def evaluator(self, what: str, module: str = "numpy") -> Callable[[Any, Any], Any]:
        """``what`` in ``rates``, ``grad``, ``hess``; ``module`` ``numpy`` or ``mpmath``.

        float64 lists whose entries repeat few forms (at least :data:`FORMS_MIN`
        entries and at most one distinct template per :data:`REPEAT` of them:
        the supermarket written as a model file has 4 forms for its 2b rates)
        are evaluated form by form, each form lambdified once and applied to all
        its instances as NumPy arrays (:func:`_by_forms`): setup and evaluation
        linear in the model's size with small constants.  Other lists are one
        lambdified function.
        """
        key = (what, module)
        fn = self._funcs.get(key)
        groups = self._forms.get(what)
        if fn is None and module == "numpy" and groups is not None and _repeats(groups):
            fn = self._funcs[key] = _by_forms(groups, self._exprs.sizes[what], self._params)
        if fn is None:
            exprs = self._exprs[what]
            # common subexpressions pay off within short lists; for long ones SymPy's
            # cse costs more than the evaluation it saves
            raw = lambdify(self._symbols, exprs, module, cse=len(exprs) <= CSE_MAX)
            self.raw[key] = raw
            fn = self._funcs[key] = flat(raw, len(exprs), module)
        return fn

    def rates(self, s: Any, p: Any) -> np.ndarray:
        """``beta_l(s)`` in float64."""
        return self.evaluator("rates")(s, p)

    def grad(self, s: Any, p: Any) -> np.ndarray:
        """``d beta_l / ds_j`` on :attr:`grad_index`, float64."""
        return self.evaluator("grad")(s, p)

    def hess(self, s: Any, p: Any) -> np.ndarray:
        """``d^2 beta_l / ds_j ds_k`` on :attr:`hess_index`, float64."""
        return self.evaluator("hess")(s, p)


#: Derivatives of rate templates (the rate with its states renamed ``z0, z1, ...``).
_templates: dict[sp.Expr, dict[tuple[int, int | None], sp.Expr]] = {}
#: Dummies, so that no model's own symbol (a parameter ``z0``) is ever taken for one.
_Z = tuple(sp.Dummy(f"z{k}", real=True) for k in range(64))


def _template(rate: sp.Expr, xs: list[sp.Symbol]) -> tuple[sp.Expr | None, dict]:
    """``rate`` with its states ``xs`` renamed ``z0, z1, ...`` (``None`` past
    :data:`_Z`) and the template's non-zero first (``(a, None)``) and second
    (``(a, c)``, ``a <= c``) derivatives with respect to the ``z``.

    Rates of large models repeat a few forms (``lam (x_(k-1)^2 - x_k^2)`` for
    every ``k``): each form is differentiated once -- SymPy's ``diff`` costs
    about a millisecond per call, ``xreplace`` a few microseconds.  Past
    :data:`_Z` states the rate's own derivatives are returned.
    """
    if len(xs) > len(_Z):
        return None, _differentiate(rate, xs)
    zs = _Z[: len(xs)]
    template = rate.xreplace(dict(zip(xs, zs, strict=True)))
    hit = _templates.get(template)
    if hit is None:
        hit = _templates[template] = _differentiate(template, list(zs))
    return template, hit


def _differentiate(rate: sp.Expr, xs: list[sp.Symbol]) -> dict[tuple[int, int | None], sp.Expr]:
    out: dict[tuple[int, int | None], sp.Expr] = {}
    for a, x in enumerate(xs):
        d1 = sp.diff(rate, x)
        if d1 == 0:
            continue
        out[(a, None)] = d1
        for c in range(a, len(xs)):
            d2 = sp.diff(d1, xs[c])
            if d2 != 0:
                out[(a, c)] = d2
    return out


def sparse_rates(model: Any) -> SparseRates:
    """The :class:`SparseRates` of ``model`` (cached per model key in this process)."""
    key = model.key
    hit = _cache.get(key)
    if hit is not None:
        return hit
    states = tuple(model.states)
    pos = {x: i for i, x in enumerate(states)}
    rows, cols, vals = [], [], []
    rates, grads, gidx, hesss, hidx = [], [], [], [], []
    # template -> instances (out position, the states' positions), one list per object
    forms: dict[str, dict[Any, list[tuple[int, list[int]]]]] = {
        "rates": {},
        "grad": {},
        "hess": {},
    }
    for n, t in enumerate(model.transitions):
        for i, v in enumerate(t.jump):
            if v:
                rows.append(n)
                cols.append(i)
                vals.append(int(v))
        rate = sp.sympify(t.rate)
        present = sorted(pos[x] for x in rate.free_symbols if x in pos)
        xs = [states[j] for j in present]
        template, derivs = _template(rate, xs)
        back = None if template is None else dict(zip(_Z[: len(xs)], xs, strict=True))
        tkey = template if template is not None else ("own", n)
        forms["rates"].setdefault((tkey, rate if template is None else template), []).append(
            (len(rates), present)
        )
        rates.append((rate, None))
        for (a, b_), d in derivs.items():
            what, target = ("grad", grads) if b_ is None else ("hess", hesss)
            forms[what].setdefault((tkey, (a, b_), d), []).append((len(target), present))
            target.append((d, back))  # renamed back only when asked for (_Exprs)
            if b_ is None:
                gidx.append((n, present[a]))
            else:
                hidx.append((n, present[a], present[b_]))
    out = SparseRates(
        b=len(states),
        n_transitions=len(model.transitions),
        jumps=(
            np.array(rows, dtype=np.int64),
            np.array(cols, dtype=np.int64),
            np.array(vals, dtype=float),
        ),
        grad_index=np.array(gidx, dtype=np.int64).reshape(-1, 2),
        hess_index=np.array(hidx, dtype=np.int64).reshape(-1, 3),
        _exprs=_Exprs({"rates": rates, "grad": grads, "hess": hesss}),
        _symbols=(*states, *model.params),
        _funcs={},
        _forms={what: _groups(f, states) for what, f in forms.items()},
        _params=tuple(model.params),
    )
    _cache[key] = out
    return out


class LambdaKernels:
    """The functions of one kernel group (:func:`derive.kernels.kernels`) evaluated by
    lambdified NumPy code instead of numba: same names, same index lists, no
    compile beyond Python's byte-compilation.

    ``jac`` and ``Q`` return dense ``b x b`` arrays, ``f``, ``ftilde``, ``rates``
    and every ``*_values`` a flat array; ``jac_index``, ``hess_index`` and (order
    2) ``index[name]`` are as in the generated modules.
    """

    b = renamed_attribute("LambdaKernels", "b", "n")

    def __init__(self, model: Any, group: str = "base") -> None:
        from derive.kernels import kernel_objects, order2_kernel_objects

        self.n = model.n
        self._symbols = (*model.states, *model.params)
        if group == "order2":
            objs, index = order2_kernel_objects(model)
            self.index = {k: np.array(v, dtype=np.int64) for k, v in index.items()}
        else:
            objs = kernel_objects(model)
            self.jac_index = np.array([ij for ij, _ in objs.pop("_jac_index")[1]], dtype=np.int64)
            self.hess_index = np.array(
                [ijk for ijk, _ in objs.pop("_hess_index")[1]], dtype=np.int64
            ).reshape(-1, 3)
        self._objs = objs
        self._funcs: dict[str, Callable[..., Any]] = {}
        #: the lambdified functions by kernel name (:mod:`derive.models.stored` keeps them)
        self.raw: dict[str, Callable[..., Any]] = {}

    def __getattr__(self, name: str) -> Any:
        objs = self.__dict__.get("_objs", {})
        if name not in objs:
            raise AttributeError(name)
        fn = self._funcs.get(name)
        if fn is None:
            shape, entries = objs[name]
            idx = [ix for ix, _ in entries]
            raw = lambdify(self._symbols, [e for _, e in entries], "numpy", cse=True)
            self.raw[name] = raw
            fn = self._funcs[name] = placed(raw, idx, shape)
        return fn


_lambda_cache: dict[tuple, LambdaKernels] = {}


def lambda_kernels(model: Any, group: str = "base") -> LambdaKernels:
    """:class:`LambdaKernels` of ``model`` (cached per model key and group)."""
    key = (model.key, group)
    hit = _lambda_cache.get(key)
    if hit is None:
        hit = _lambda_cache[key] = LambdaKernels(model, group)
    return hit
