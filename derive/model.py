"""Density-dependent population processes: the plain model description.

A model of dimension ``b`` is a list of transitions ``l`` with jump vectors
``l in Z^b`` and intensities ``beta_l(s)``: from state ``s`` the finite-N chain
jumps to ``s + l/N`` at rate ``N beta_l(s)`` (Section 3 of "Beyond Scaling:
Calculable Error Bound of the Power-of-Two-Choices Mean-Field Model in
Heavy-Traffic").  A :class:`Model` is only that description plus its metadata
(:class:`derive.spec.ModelInfo`); everything else -- drift, Jacobian, Hessian,
diffusion matrix, Stein's equation, generated kernels -- is derived from it by
:mod:`derive.objects` and :mod:`derive.kernels`, which read the model.  The
model families of the library (supermarket, JSQ(L), SIR, ...) live in
:mod:`derive.models`.

Symbols are plain SymPy symbols without assumptions (``s1 .. sb``, ``lam``,
``mu``, ``N``) so that every expression printed by mfstein parses back with
:func:`sympy.sympify` to the identical object.

References
----------
"Beyond Scaling: Calculable Error Bound of the Power-of-Two-Choices Mean-Field
Model in Heavy-Traffic" (the core paper; cited by section, lemma and equation).
"""

from __future__ import annotations

import hashlib
import operator
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, replace
from fractions import Fraction
from functools import cached_property, lru_cache
from typing import TYPE_CHECKING, Any

import sympy as sp

from derive import objects
from derive.rate_functions import RATE_FUNCTIONS
from derive.spec import ModelInfo
from mfstein.ground.arguments import warn_renamed
from mfstein.ground.errors import ParameterError

if TYPE_CHECKING:
    from derive.kernels import Kernels

#: The arrival-rate symbol (lambda in the paper).
LAM = sp.Symbol("lam")
#: The service-rate symbol (1 in the core paper; beta in Graham's JSQ(L)).
MU = sp.Symbol("mu")
#: The number of servers, a parameter only of N-dependent models.
N = sp.Symbol("N")


def state_symbols(b: int) -> tuple[sp.Symbol, ...]:
    """The state symbols ``s1 .. sb`` (fractions of servers with at least k jobs)."""
    return tuple(sp.Symbol(f"s{k}") for k in range(1, b + 1))


@dataclass(frozen=True)
class Transition:
    """One transition of a density-dependent population process.

    Parameters
    ----------
    jump:
        The integer jump vector ``l``; the state moves from ``s`` to ``s + l/N``.
    rate:
        The intensity ``beta_l(s)``; the finite-N chain makes the jump at rate
        ``N * beta_l(s)``.
    label:
        A short human-readable name (used in LaTeX and in error messages).
    """

    #: The integer jump vector ``l``; the state moves from ``s`` to ``s + l/N``.
    jump: tuple[int, ...]
    #: The intensity ``beta_l(s)``, a SymPy expression (the finite-N chain makes the jump at rate
    #: ``N * beta_l(s)``).
    rate: sp.Expr
    #: A short human-readable name (used in LaTeX and in error messages); ``""`` for none.
    label: str = ""

    def __post_init__(self) -> None:
        # one sentence for every malformed transition, before anything derives from it
        if not isinstance(self.label, str):
            raise ParameterError(f"a transition's label must be a string, got {self.label!r}.")
        what = f"transition {self.label!r}" if self.label else "a transition"
        object.__setattr__(self, "jump", _integer_jump(what, self.jump))
        what = f"transition {self.label or self.jump}"
        object.__setattr__(self, "rate", _rate_expression(what, self.rate))


def _integer_jump(what: str, jump: Any) -> tuple[int, ...]:
    """The jump vector as a tuple of Python ints, or one sentence why not."""
    if isinstance(jump, str | bytes) or not isinstance(jump, Iterable):
        raise ParameterError(
            f"{what}: the jump must be a sequence of integers such as (1, 0, -1), got {jump!r}."
        )
    out = []
    for v in jump:
        if isinstance(v, bool):
            raise ParameterError(f"{what}: jump entries must be integers, got {v!r}.")
        try:
            out.append(operator.index(v))
        except TypeError:
            raise ParameterError(
                f"{what}: jump entries must be integers (a population process moves by whole "
                f"individuals: s -> s + l/N), got {v!r} in {tuple(jump)!r}."
            ) from None
    if not out:
        raise ParameterError(f"{what}: the jump vector is empty.")
    return tuple(out)


def _rate_expression(what: str, rate: Any) -> sp.Expr:
    """The rate as a real SymPy expression (``int``, ``float`` and ``Fraction``
    constants are taken exactly), or one sentence why it cannot be one."""
    from fractions import Fraction

    if isinstance(rate, bool) or rate is None or isinstance(rate, str | bytes):
        raise ParameterError(
            f"{what}: the rate must be a SymPy expression or a number (e.g. lam*s1), "
            f"got {rate!r}."
        )
    if isinstance(rate, Fraction):
        rate = sp.Rational(rate.numerator, rate.denominator)
    elif isinstance(rate, int | float) and not isinstance(rate, bool):
        rate = sp.Integer(rate) if isinstance(rate, int) else sp.Float(rate)
    if not isinstance(rate, sp.Basic):
        kind = "a function" if callable(rate) else type(rate).__name__
        raise ParameterError(
            f"{what}: the rate must be a SymPy expression in the states and parameters "
            f"(e.g. lam*s1), got {kind}."
        )
    if not isinstance(rate, sp.Expr) or isinstance(rate, sp.MatrixBase):
        raise ParameterError(f"{what}: the rate must be a scalar expression, got {rate}.")
    if rate.has(sp.I) or rate.has(sp.zoo, sp.oo, -sp.oo, sp.nan):
        raise ParameterError(f"{what}: the rate must be real and finite, got {rate}.")
    if rate.is_number and rate.is_extended_negative:
        raise ParameterError(f"{what}: the rate must be >= 0, got the constant {rate}.")
    for number in rate.atoms(sp.Rational, sp.Float):
        if isinstance(number, sp.Integer):
            big = abs(number.p) >= _MAX_CONSTANT
        else:  # a float, or a fraction (printed as p/q, which Python folds to a float)
            big = abs(number) > _MAX_FLOAT
        if big:
            raise ParameterError(
                f"{what}: the rate's constant {sp.N(number, 3)} is beyond what the compiled "
                "float64 kernels and simulators hold (integers below 2^63, other numbers "
                "below 1e300 in magnitude); rescale the model's rates or time."
            )
    rate = piecewise_form(rate)
    _check_defined_everywhere(what, rate)
    _check_differentiable(what, rate)
    return rate




def _check_defined_everywhere(what: str, rate: sp.Expr) -> None:
    """A ``Piecewise`` in a rate must end in a ``(value, True)`` branch (SymPy folds
    complementary conditions into one): elsewhere it is undefined (NaN), and the exact
    chain or a simulation would meet that state."""
    for pw in rate.atoms(sp.Piecewise):
        if pw.args[-1].cond != sp.true:
            conds = " or ".join(str(c) for _, c in pw.args)
            raise ParameterError(
                f"{what}: the rate {rate} is undefined where none of {conds} holds; give "
                "the Piecewise a last branch (value, True)."
            )


def _check_differentiable(what: str, rate: sp.Expr) -> None:
    """Every function in a rate must have a derivative SymPy evaluates (J, the
    Hessian and the 1/N^2 objects are derivatives of the rates): ``floor`` or
    ``ceiling`` would leave an unevaluated ``Derivative`` that no back end prints.
    Polynomial rates (no function at all) pass at no cost."""
    for f in rate.atoms(sp.Function):
        if isinstance(f, sp.Piecewise):
            continue  # differentiated branch by branch; its branches' functions are atoms too
        for symbol in f.free_symbols:
            if sp.diff(f, symbol).has(sp.Derivative, sp.Subs, sp.DiracDelta):
                raise ParameterError(
                    f"{what}: the rate {rate} uses {type(f).__name__}, whose derivative "
                    f"SymPy cannot evaluate (the expansion needs the drift's derivatives); "
                    f"write it with {RATE_FUNCTIONS}."
                )


#: Bound on the magnitude of an integer in a rate (numba types integer literals as
#: int64) and of any other constant (float64's range).
_MAX_CONSTANT = 2**63
_MAX_FLOAT = 1e300


def piecewise_form(rate: sp.Expr) -> sp.Expr:
    """``Min``, ``Max``, ``Abs``, ``sign`` and ``Heaviside`` written as ``Piecewise``.

    Rates such as a multi-server departure ``Min(x, c)`` or a capped arrival
    ``lam*Min(1, 2 - x)`` are smooth except on a few surfaces.  SymPy
    differentiates ``Min`` into ``Heaviside`` and then ``DiracDelta``, which no
    back end prints and which is zero away from the kink anyway; a ``Piecewise``
    is differentiated branch by branch, so every derivative is the one of the
    branch active at the point, and every back end prints it.  (A kink exactly
    at the fixed point is refused by the numeric layers: the expansion needs a
    differentiable drift there.)
    """
    if rate.has(sp.Abs):
        rate = rate.replace(
            lambda e: isinstance(e, sp.Abs),
            lambda e: sp.Piecewise((e.args[0], e.args[0] >= 0), (-e.args[0], True)),
        )
    if rate.has(sp.sign):  # SymPy has no Piecewise rewrite of sign
        rate = rate.replace(
            lambda e: isinstance(e, sp.sign),
            lambda e: sp.Piecewise((1, e.args[0] > 0), (-1, e.args[0] < 0), (0, True)),
        )
    if rate.has(sp.Min, sp.Max, sp.Heaviside):
        rate = rate.rewrite(sp.Piecewise)
    return rate


def kinks(rate: sp.Expr) -> list[sp.Expr]:
    """The expressions ``g`` whose zero set ``g = 0`` bounds a branch of the
    ``Piecewise`` parts of ``rate`` (``lhs - rhs`` of every relational condition)."""
    out = []
    for pw in rate.atoms(sp.Piecewise):
        for _, cond in pw.args:
            for rel in cond.atoms(sp.core.relational.Relational):
                out.append(rel.lhs - rel.rhs)
    return out


def _space_point(space: Any, b: int, conserved: bool, rng: Any) -> list[sp.Rational]:
    """A random rational point of the declared state space (on ``sum = total``
    when the sum is conserved)."""
    s = [sp.Rational(rng.randint(1, 999), 1000) for _ in range(b)]
    if space.kind == "monotone":
        s.sort(reverse=True)
    if space.kind == "simplex":
        total = sp.nsimplify(space.total)
        scale = total / sum(s)
        if not conserved:
            scale *= sp.Rational(rng.randint(1, 999), 1000)
        s = [v * scale for v in s]
    return s


def _param_point(model: Model, rng: Any) -> dict[sp.Symbol, Any]:
    """Random parameter values inside their declared ranges (``[0, 2]`` if undeclared)."""
    out = {}
    for q in model.params:
        declared = model.info.parameter(q.name)
        lo = declared.low if declared is not None and declared.low is not None else 0
        hi = declared.high if declared is not None and declared.high is not None else lo + 2
        lo, hi = sp.nsimplify(lo), sp.nsimplify(hi)
        value = lo + (hi - lo) * sp.Rational(rng.randint(1, 999), 1000)
        if declared is not None and declared.integer:
            value = sp.ceiling(value)
        out[q] = value
    return out


@lru_cache(maxsize=64)
def _exact_total(total: float) -> sp.Expr:
    """The declared total of a simplex as an exact number (once per value)."""
    return sp.nsimplify(total)


def _faces(space: Any, jump: tuple[int, ...], st: tuple[sp.Symbol, ...], conserved: bool):
    """``(map point -> point on the face, description)`` for every face ``jump`` crosses."""
    b = len(st)
    total = _exact_total(space.total)

    def fix(i: int, value: Any) -> Any:
        def face(s: list) -> list:
            s[i] = value if not isinstance(value, int) or value >= 0 else s[-value - 1]
            if conserved:  # back onto sum = total, keeping s_i
                rest = sum(s[k] for k in range(b) if k != i)
                s = [v if k == i else v * (total - s[i]) / rest for k, v in enumerate(s)]
            return s

        return face

    out = []
    for i, li in enumerate(jump):
        if li < 0 and (space.kind != "monotone" or i == b - 1):
            out.append((fix(i, sp.Integer(0)), f"{st[i]} = 0"))
        if li > 0 and (space.kind == "box" or (space.kind == "monotone" and i == 0)):
            out.append((fix(i, sp.Integer(1)), f"{st[i]} = 1"))
        if space.kind == "monotone" and i < b - 1 and li < jump[i + 1]:
            out.append((fix(i, -(i + 2)), f"{st[i]} = {st[i + 1]}"))
    if space.kind == "simplex" and sum(jump) > 0:
        out.append(
            (lambda s: [v * total / sum(s) for v in s], f"{' + '.join(map(str, st))} = {total}")
        )
    return out


def _face_forms(space: Any, jump: tuple[int, ...], b: int) -> list[tuple[tuple, Fraction]]:
    """The faces of :func:`_faces`, in the same order, as linear equations
    ``a . s = rhs`` (``a`` a tuple of ints)."""
    total = Fraction(str(space.total))

    def unit(i: int, sign: int = 1) -> list[int]:
        return [sign if k == i else 0 for k in range(b)]

    out = []
    for i, li in enumerate(jump):
        if li < 0 and (space.kind != "monotone" or i == b - 1):
            out.append((tuple(unit(i)), Fraction(0)))
        if li > 0 and (space.kind == "box" or (space.kind == "monotone" and i == 0)):
            out.append((tuple(unit(i)), Fraction(1)))
        if space.kind == "monotone" and i < b - 1 and li < jump[i + 1]:
            a = unit(i)
            a[i + 1] = -1
            out.append((tuple(a), Fraction(0)))
    if space.kind == "simplex" and sum(jump) > 0:
        out.append((tuple([1] * b), total))
    return out


def _other_laws(model: Model) -> bool:
    """Whether the jumps conserve a linear quantity beyond the sum that a conserved
    simplex already fixes (computed once per model, exactly)."""
    laws = len(_laws(model.transitions, model.n))
    space = model.info.state_space
    conserved = space.kind == "simplex" and all(sum(t.jump) == 0 for t in model.transitions)
    return laws > (1 if conserved else 0)


#: Random directions tried from each base point of the slice through the start.
SLICE_DIRECTIONS = 24


def _slice_leaves(model: Model, t: Transition, form: tuple, start: Sequence[Any]) -> bool:
    """Whether ``t``'s rate is positive somewhere on the face ``form`` (``a . s =
    rhs``) inside the state space and on the slice of the conservation laws
    through ``start``: points of the face are reached from the start (and from
    midpoints between it and the face points found) along random combinations of
    the jumps, the directions in which the process moves."""
    import random

    a, rhs = form
    space = model.info.state_space
    s0 = [Fraction(str(v)) if not isinstance(v, Fraction) else v for v in start]
    rng = random.Random(1)
    jumps = [t2.jump for t2 in model.transitions]
    params = [_param_point(model, rng) for _ in range(3)]
    hits: list[list[Fraction]] = []
    bases = [s0]
    for round_ in range(2):
        for base in bases:
            for _ in range(SLICE_DIRECTIONS):
                w = [rng.randint(-3, 3) for _ in jumps]
                d = [sum(wk * j[i] for wk, j in zip(w, jumps, strict=True)) for i in range(len(s0))]
                ad = sum(ai * di for ai, di in zip(a, d, strict=True))
                if ad == 0:
                    continue
                step = (rhs - sum(ai * si for ai, si in zip(a, base, strict=True))) / ad
                q = [si + step * di for si, di in zip(base, d, strict=True)]
                if space.contains(q):
                    hits.append(q)
        if round_ == 0:
            bases = [[(x + y) / 2 for x, y in zip(s0, q, strict=True)] for q in hits[:4]]
    for q in hits[:8]:
        point = [sp.Rational(v.numerator, v.denominator) for v in q]
        for p in params:
            value = _rate_at(t.rate, model, point, p)
            if value is None or value > 1e-12:
                return True
    return False


def _rate_at(rate: sp.Expr, model: Model, s: list, p: dict) -> float | None:
    """``rate`` at the state ``s`` and parameters ``p`` (20 digits); ``None`` when
    it cannot be evaluated to a finite real number."""
    # only the rate's own symbols: substituting all b states costs O(b) per rate
    pos = model.__dict__.get("_state_pos")
    if pos is None:
        pos = model.__dict__["_state_pos"] = {x: i for i, x in enumerate(model.states)}
    point = {}
    for x in rate.free_symbols:
        if x in pos:
            point[x] = s[pos[x]]
        elif x in p:
            point[x] = p[x]
    try:
        value = complex(rate.xreplace(point).evalf(20))
    except (TypeError, ValueError, ZeroDivisionError):
        return None
    if value.imag != 0 or not abs(value.real) < float("inf"):
        return None
    return value.real


def infer_state_space(transitions: Sequence[Transition], b: int) -> Any:
    """The state space of a model that declares none, from its jumps alone.

    * every coordinate lies in a conserved sum of fewer than ``b`` coordinates (a
      conservation law with coefficients 0 and 1 in reduced row echelon form,
      such as ``x1 + y1`` and ``x2 + y2`` of a two-class model, each class a
      population of its own): the box ``0 <= s_i <= 1``;
    * otherwise, when every jump conserves ``s_1 + ... + s_b``: the simplex
      ``s >= 0``, ``s_1 + ... + s_b = 1`` (the fractions of one population);
    * otherwise the orthant ``s >= 0``: some coordinate can grow without bound
      (the exact chains then choose a truncation, :mod:`numeric.exact.truncation`).

    The result carries ``declared=False``; its default start
    (:func:`default_start`) lies inside it.
    """
    from derive.spec import StateSpace

    sizes = _covered(transitions, b)
    if len(sizes) == b and any(size < b for size in sizes.values()):
        return StateSpace("box", declared=False)  # several populations, each summing to 1
    if all(sum(t.jump) == 0 for t in transitions):
        return StateSpace("simplex", total=1.0, declared=False)
    return StateSpace("orthant", declared=False)


def _covered(transitions: Sequence[Transition], b: int) -> dict[int, int]:
    """Coordinate -> the size of the smallest conserved 0/1 sum it lies in."""
    out: dict[int, int] = {}
    for row in _laws(transitions, b):
        if all(v in (0, 1) for v in row):
            size = sum(1 for v in row if v == 1)
            for i, v in enumerate(row):
                if v == 1:
                    out[i] = min(out.get(i, size), size)
    return out


def _laws(transitions: Sequence[Transition], b: int) -> tuple[tuple[Fraction, ...], ...]:
    """The conservation laws of the jumps (:func:`derive.conservation.conservation_laws`,
    computed once per jump matrix and shared with :mod:`numeric.invariants`)."""
    from derive.conservation import conservation_laws

    return conservation_laws([t.jump for t in transitions], b)


def default_start(model: Model) -> list[sp.Rational] | None:
    """The start of a model whose state space was inferred (``None`` otherwise, and
    for the orthant: the origin): the centre of the simplex, ``s_i = 1/b``; in a
    box, ``1/k`` on each coordinate of a conserved sum of ``k`` coordinates, so
    that every such sum is 1."""
    space = model.info.state_space
    b = model.n
    if space.declared or space.kind == "orthant":
        return None
    if space.kind == "simplex":
        return [sp.Rational(1, b)] * b
    sizes = _covered(model.transitions, b)
    return [sp.Rational(1, sizes.get(i, 2)) for i in range(b)]


def _symbols(model: str, what: str, items: Any) -> tuple[sp.Symbol, ...]:
    """``states`` or ``params`` as a tuple of distinct SymPy symbols, or one sentence why not."""
    if isinstance(items, str | bytes) or not isinstance(items, Iterable):
        raise ParameterError(
            f"{what} of model {model} must be a sequence of SymPy symbols (e.g. "
            f"sympy.symbols('x y') gives a tuple), got {items!r}."
        )
    out = tuple(items)
    for v in out:
        if not isinstance(v, sp.Symbol):
            raise ParameterError(
                f"{what} of model {model} must be SymPy symbols, got {type(v).__name__} {v!r}."
            )
    names = [v.name for v in out]
    twice = sorted({n for n in names if names.count(n) > 1})
    if twice:
        raise ParameterError(f"{what} of model {model} list {', '.join(twice)} more than once.")
    return out


def _derived(name: str, doc: str) -> cached_property[Any]:
    """A cached property ``model.<name>``: ``derive.objects.<name>(model)``, computed
    once per model (the model itself holds only its description)."""

    def compute(model: Model) -> Any:
        return getattr(objects, name)(model)

    compute.__name__, compute.__qualname__, compute.__doc__ = name, f"Model.{name}", doc
    return cached_property(compute)


class Model:
    """A density-dependent population process ``s -> s + l/N`` at rate ``N beta_l(s)``.

    Parameters
    ----------
    name:
        Identifier, e.g. ``"supermarket"``.
    states:
        The state symbols, in order; their number is the dimension ``b``.
    params:
        The free parameters (SymPy symbols) in the order numeric kernels take them.
    transitions:
        The transitions; each jump vector must have length ``b`` and each rate may
        only involve the state symbols and ``params``.
    info:
        Metadata for the numeric layers (parameter ranges, state space,
        conservation laws, reference point, fast path); see
        :class:`derive.spec.ModelInfo`.  Defaults to an empty declaration.
    key:
        A hashable identity used for caching derived objects and generated kernels.
        Defaults to a digest of the name, symbols and transitions (``srepr``), so
        two models with the same transitions share kernels and any change to a
        transition gives a new key.
    """

    def __init__(
        self,
        name: str,
        states: Sequence[sp.Symbol],
        params: Sequence[sp.Symbol],
        transitions: Iterable[Transition],
        *,
        info: ModelInfo | None = None,
        key: tuple | None = None,
    ) -> None:
        if not isinstance(name, str) or not name:
            raise ParameterError(f"a model's name must be a non-empty string, got {name!r}.")
        if info is not None and not isinstance(info, ModelInfo):
            raise ParameterError(
                f"info of model {name} must be a derive.spec.ModelInfo, got {type(info).__name__}."
            )
        self.name = name
        self._info: ModelInfo = info if info is not None else ModelInfo()
        self.states: tuple[sp.Symbol, ...] = _symbols(name, "states", states)
        self.params: tuple[sp.Symbol, ...] = _symbols(name, "params", params)
        if isinstance(transitions, str | bytes) or not isinstance(transitions, Iterable):
            raise ParameterError(
                f"transitions of model {name} must be a list of derive.Transition, "
                f"got {type(transitions).__name__}."
            )
        self.transitions: tuple[Transition, ...] = tuple(transitions)
        for t in self.transitions:
            if not isinstance(t, Transition):
                raise ParameterError(
                    f"transitions of model {name} must be derive.Transition objects "
                    f"(Transition(jump, rate, label)), got {type(t).__name__} {t!r}."
                )
        b = len(self.states)
        if b < 1:
            raise ParameterError("states must hold at least one symbol (b >= 1).")
        both = sorted(map(str, set(self.states) & set(self.params)))
        if both:
            raise ParameterError(
                f"model {name}: {', '.join(both)} cannot be both a state and a parameter."
            )
        declared = [q.name for q in self._info.parameters]
        twice = sorted({n for n in declared if declared.count(n) > 1})
        if twice:
            raise ParameterError(
                f"model {name} declares parameter {', '.join(twice)} more than once in info."
            )
        allowed = set(self.states) | set(self.params)
        for t in self.transitions:
            if len(t.jump) != b:
                raise ParameterError(
                    f"transition {t.label or t.jump} has a jump of length {len(t.jump)}; "
                    f"it must have length b = {b}."
                )
            extra = sp.sympify(t.rate).free_symbols - allowed
            if extra:
                names = ", ".join(sorted(map(str, extra)))
                raise ParameterError(
                    f"transition {t.label or t.jump} uses symbols {names} that are neither "
                    "states nor declared params."
                )
        if key is None:
            blob = repr(
                (
                    name,
                    self.states,
                    self.params,
                    [(t.jump, sp.srepr(t.rate)) for t in self.transitions],
                )
            )
            key = ("custom", hashlib.sha256(blob.encode()).hexdigest()[:16])
        self.key = key

    # -- basic facts ---------------------------------------------------------
    @property
    def info(self) -> ModelInfo:
        """The factory's :class:`derive.spec.ModelInfo`; a state space it does not
        declare is inferred from the jumps on first use (:func:`infer_state_space`:
        exact conservation laws, which cost seconds for a thousand coordinates)."""
        if not self._info.state_space.declared and "_inferred" not in self.__dict__:
            space = infer_state_space(self.transitions, self.n)
            self.__dict__["_info"] = replace(self._info, state_space=space)  # (inferred)
            self.__dict__["_inferred"] = True
        return self._info

    @property
    def n(self) -> int:
        """The dimension of the state: the number of coordinates ``s_1 .. s_n``."""
        return len(self.states)

    @property
    def b(self) -> int:
        """Deprecated name of :attr:`n` (issue 31: ``b`` is the supermarket's buffer
        size, which :class:`derive.models.supermarket.SupermarketModel` keeps)."""
        warn_renamed("Model", "b", "n", stacklevel=3)
        return self.n

    def __repr__(self) -> str:
        params = ", ".join(map(str, self.params))
        return (
            f"<Model {self.name} n={self.n} params=({params}) transitions={len(self.transitions)}>"
        )

    #: What a model is: set once, when it is built (its :attr:`key` names every cache
    #: of what is derived from it, and :func:`derive.models.load_model` shares one
    #: object between the calls that name it).
    FIXED = ("name", "states", "params", "transitions", "key", "_info")

    def __setattr__(self, name: str, value: Any) -> None:
        if name in Model.FIXED and name in self.__dict__:
            raise AttributeError(
                f"model {self.name}'s {name.lstrip('_')} is fixed once it is built; "
                "build a new derive.Model instead."
            )
        object.__setattr__(self, name, value)

    def __hash__(self) -> int:
        return hash(self.key)

    def __eq__(self, other: object) -> bool:
        return isinstance(other, Model) and other.key == self.key

    def check_state_space(self, start: Sequence[Any] | None = None) -> None:
        """Refuse (one sentence) a transition whose jump can leave the declared
        state space: where the jump would cross a face, its rate must not be
        positive on that face.

        Faces: ``s_i = 0`` for ``l_i < 0`` (every kind); ``s_i = 1`` for
        ``l_i > 0`` (box); ``s_1 + ... + s_b = total`` for ``sum(l) > 0``
        (simplex); for the monotone space ``1 >= s_1 >= ... >= s_b >= 0``
        ``s_1 = 1`` for ``l_1 > 0``, ``s_i = s_(i+1)`` for ``l_i < l_(i+1)``
        and ``s_b = 0`` for ``l_b < 0``.  On a simplex whose sum every jump
        conserves, the faces are taken inside ``s_1 + ... + s_b = total``.  A rate
        that expands to zero on the face passes; otherwise it is evaluated at
        random points of the face inside the space (parameters inside their
        declared ranges) and must not be positive there (a rate negative there
        marks states the process never reaches, as for a model declared on the
        orthant that lives on a smaller set).

        Conservation laws (``c . l = 0`` for every jump) keep the process on the
        slice ``c . s = c . s(0)`` through its start, which may not meet the face
        where the rate is positive (a cache whose occupancy ``a + b = 1`` is
        conserved, declared on the box: at ``b = 1`` it has ``a = 0``).  A face
        refused at points off that slice is therefore checked again on the slice
        through ``start`` (:func:`_slice_leaves`), and without a start it is left
        to the call that knows one (:func:`numeric.prepared.start.start_point`
        passes every start here).  The library's own factories build their rates
        to satisfy the check and are not re-checked.
        """
        if self.key[0] != "custom":
            return
        if start is None:
            if self.__dict__.get("_space_checked"):
                return
            deferred = self._face_refusals()
            self.__dict__["_space_checked"] = True
            self.__dict__["_deferred_faces"] = deferred
            if deferred and not _other_laws(self):
                raise deferred[0][-1]
            return
        if not self.__dict__.get("_space_checked"):
            self.check_state_space()
        for t, form, error in self.__dict__.get("_deferred_faces", ()):
            if _slice_leaves(self, t, form, start):
                raise error

    def _face_refusals(self) -> list[tuple[Transition, tuple, ParameterError]]:
        """``(transition, face form, refusal)`` of every face a rate is positive on at
        random points of the space (without regard to conservation laws)."""
        import random

        space = self.info.state_space
        b = len(self.states)
        conserved = space.kind == "simplex" and all(sum(t.jump) == 0 for t in self.transitions)
        rng = random.Random(0)
        points = [
            (_space_point(space, b, conserved, rng), _param_point(self, rng)) for _ in range(5)
        ]
        out = []
        for t in self.transitions:
            if t.rate == 0:
                continue
            for (face, text), form in zip(
                _faces(space, t.jump, self.states, conserved), _face_forms(space, t.jump, b),
                strict=True,
            ):
                for s, p in points:
                    value = _rate_at(t.rate, self, face(list(s)), p)
                    if value is None or value > 1e-12:
                        out.append((t, form, ParameterError(
                            f"transition {t.label or t.jump} of model {self.name} (jump "
                            f"{t.jump}) can leave the state space {space.describe(b)}: its rate "
                            f"{t.rate} is not zero on the face {text}."
                        )))  # fmt: skip
                        break
        return out

    def structure(self, name: str, default: Any = None) -> Any:
        """A structural fact declared by the model's factory (``info.structure``)."""
        return self.info.structure.get(name, default)

    # -- derived symbolic objects ---------------------------------------------
    # Convenience accessors: the objects are computed by derive.objects, which
    # reads the model (the model itself holds only its description).
    drift = _derived(
        "drift", """The mean-field drift ``f(s) = sum_l l beta_l(s)`` as a ``b x 1`` matrix."""
    )
    jacobian = _derived("jacobian", """The Jacobian ``J(s) = df/ds`` (``b x b``).""")
    hessian = _derived(
        "hessian",
        """The Hessian ``H[i, j, k] = d^2 f_i / ds_j ds_k`` as a sparse rank-3 array.""",
    )
    diffusion = _derived(
        "diffusion", """The diffusion matrix ``Q(s) = sum_l l l^T beta_l(s)`` (``b x b``)."""
    )
    ftilde = _derived(
        "ftilde",
        """``f~(s) = diag(Q(s)) / 2``; for the supermarket model the paper's ``f~``.

        The core paper (Theorem 1): ``f~_i = 1/2 [lam (s_{i-1}^2 - s_i^2) + (s_i - s_{i+1})]``,
        and ``Q = 2 diag(f~)`` because every jump moves one coordinate by one.
        """,
    )

    def kernels(self, backend: str = "numba") -> Kernels:
        """Generated numeric kernels for this model (see :func:`derive.kernels.kernels`)."""
        from derive.kernels import kernels

        return kernels(self, backend)
