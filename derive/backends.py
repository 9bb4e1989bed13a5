"""Code-generation back ends: one interface, a registry, two implementations.

A back end turns a kernel -- a name, an output shape and its non-zero
``(index, SymPy expression)`` entries, after common-subexpression elimination
-- into Python source.  Every back end produces the same functions with the
same arguments ``(s, p)`` (state values, parameter values in ``model.params``
order); only the number type differs:

``numba``   float64 NumPy arrays, each function ``numba.njit(cache=True)``
            compiled, plus ``NAME_into(s, p, out)`` variants that fill a
            preallocated array (callable from other compiled code);
``mpmath``  lists of ``mpf`` and ``mpmath.matrix``, in the working precision
            of ``mpmath.mp`` (rationals printed as exact ``mpf`` quotients).

Add a back end by subclassing :class:`Backend` and calling
:func:`register_backend`; :func:`derive.kernels.kernels` then accepts its name.
"""

from __future__ import annotations

import functools
from abc import ABC, abstractmethod
from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING, Any, ClassVar

import sympy as sp
from sympy.printing.numpy import SciPyPrinter
from sympy.printing.pycode import MpmathPrinter, PythonCodePrinter

from derive.rate_functions import RATE_FUNCTIONS
from mfstein.ground.errors import ParameterError

if TYPE_CHECKING:
    from derive.model_protocol import ModelLike

Entries = list[tuple[tuple[int, ...], sp.Expr]]


def unprintable(expr: sp.Basic, backend: str) -> str:
    """The sentence for an expression that the ``backend`` printer cannot print.

    A derivative SymPy leaves unevaluated (of ``floor``, say) is named by its
    function: that is what the user wrote.
    """
    inner = expr
    while isinstance(inner, sp.Derivative | sp.Subs):
        inner = inner.args[0]
    what = type(inner).__name__
    if inner is not expr:
        what = f"the derivative of {what}, which SymPy leaves unevaluated"
    return (
        f"the {backend} back end cannot print {what} (in {sp.sstr(expr)[:80]}); "
        f"write the model's rates with {RATE_FUNCTIONS}."
    )


class OneSentencePrinter:
    """Printer mixin: what SymPy's code printer cannot print is a
    :class:`~mfstein.ground.errors.ParameterError` in one sentence (:func:`unprintable`),
    not its ``PrintMethodNotImplementedError`` (an internal error)."""

    backend: ClassVar[str] = ""

    def _print_not_supported(self, expr: sp.Basic) -> str:
        raise ParameterError(unprintable(expr, self.backend))


class _NumbaPrinter(OneSentencePrinter, PythonCodePrinter):
    backend = "numba"


class _MpmathPrinter(OneSentencePrinter, MpmathPrinter):
    backend = "mpmath"


class _UnknownRefused:
    """Printer mixin for :func:`lambdify`: SymPy's lambdify prints a function its
    module lacks by name (``besselj(...)`` in NumPy), a ``NameError`` at the first
    call; here it is :func:`unprintable`'s sentence when the code is made."""

    def __init__(self, settings: dict[str, Any] | None = None) -> None:
        super().__init__({**(settings or {}), "allow_unknown_functions": False})


class _NumPyLambdaPrinter(_UnknownRefused, OneSentencePrinter, SciPyPrinter):
    """NumPy code, with SciPy's special functions for what NumPy lacks (``erf``,
    ``gamma``, ...): NumPy's own printer falls back to ``math.erf``, a name the
    lambdified function's NumPy namespace does not hold."""

    backend = "NumPy"


class _MpmathLambdaPrinter(_UnknownRefused, _MpmathPrinter):
    pass


def lambdify(args: Sequence[sp.Symbol], exprs: Any, module: str, **kwargs: Any) -> Any:
    """:func:`sympy.lambdify` for ``module`` ``"numpy"`` or ``"mpmath"``, whose printer
    refuses in one sentence what the module cannot evaluate."""
    printer = _NumPyLambdaPrinter if module == "numpy" else _MpmathLambdaPrinter
    # SymPy prints Min/Max of several arguments as ``functools.reduce(numpy.minimum, ...)``
    numpy_base: list[Any] = [{"functools": functools}, "numpy"]
    modules: Any = [*numpy_base, "scipy"] if module == "numpy" else module
    if module == "mpmath":
        import mpmath

        # the printer writes binary floats as ``mpmath.mpf(...)``: the name must exist
        modules = [{"mpmath": mpmath}, "mpmath"]
    # every argument renamed to a Dummy: a model's symbol named like the module
    # (``mpmath``, ``numpy``), a function the printer calls or a common
    # subexpression would otherwise shadow it inside the generated function
    kwargs.setdefault("dummify", True)
    if kwargs.get("cse") is True:
        kwargs["cse"] = _cse_avoiding(args)
    if module == "numpy":
        # the module ``numpy`` alone when the printed code reads no name that SymPy's
        # ``from numpy import *`` would give it: that import loads NumPy's lazy
        # submodules (f2py, ma, fft, ...: some 50 ms, once per process)
        fn = sp.lambdify(args, exprs, modules=[_numpy_alone()], printer=printer, **kwargs)
        if _reads_as_with_numpy(fn):
            return fn
        # NumPy's namespace alone when the printed code names nothing else: SciPy's
        # (``from scipy.special import *``) costs a first import of scipy.special
        fn = sp.lambdify(args, exprs, modules=numpy_base, printer=printer, **kwargs)
        if not _unresolved(fn):
            return fn
    return sp.lambdify(args, exprs, modules=modules, printer=printer, **kwargs)


@functools.cache
def _numpy_alone() -> dict[str, Any]:
    """The names SymPy's ``"numpy"`` namespace gives a lambdified function besides the
    star imports: the module, ``I`` and the translation of ``Heaviside``
    (``sympy.utilities.lambdify``'s ``NUMPY_DEFAULT`` and ``NUMPY_TRANSLATIONS``), with
    the ``functools`` of :func:`lambdify`'s Min/Max -- and the builtins the star imports
    rebind (``abs``, which SymPy prints for Abs, ``max``, ``round``, ...) bound as they
    bind them (NumPy's functions, ``numpy.linalg``'s first)."""
    import builtins

    import numpy

    names = {"functools": functools, "numpy": numpy, "I": 1j, "Heaviside": numpy.heaviside}
    for name in sorted(_numpy_star_names()):
        if hasattr(builtins, name):
            where = numpy.linalg if name in numpy.linalg.__all__ else numpy
            names[name] = getattr(where, name)
    return names


@functools.cache
def _numpy_star_names() -> frozenset[str]:
    """The names ``from numpy import *; from numpy.linalg import *`` binds (read from
    ``__all__``, without importing the submodules it lists)."""
    import numpy

    return frozenset(numpy.__all__) | frozenset(numpy.linalg.__all__)


def _reads_as_with_numpy(fn: Any) -> bool:
    """Whether every global name the code of ``fn`` (nested code included) reads means
    what it means in SymPy's full ``"numpy"`` namespace: one ``fn``'s namespace binds
    (:func:`_numpy_alone`'s names, and the model's symbols, ``builtins`` and ``range``,
    which lambdify binds after the modules in both), or a builtin that NumPy's star
    import does not rebind."""
    import builtins
    import dis
    from types import CodeType

    star = _numpy_star_names()
    codes = [fn.__code__]
    while codes:
        code = codes.pop()
        codes += [c for c in code.co_consts if isinstance(c, CodeType)]
        for ins in dis.get_instructions(code):
            if ins.opname not in ("LOAD_GLOBAL", "LOAD_NAME"):
                continue
            name = ins.argval
            if name in fn.__globals__:
                continue  # bound alike in both: numpy, I, Heaviside, symbols, range
            if name in star or not hasattr(builtins, name):
                return False
    return True


def _unresolved(fn: Any) -> set[str]:
    """The names the code of the lambdified ``fn`` (its nested code objects too) reads
    that neither its namespace nor the builtins define -- attribute names included, so
    that an empty set means every name it can look up is there."""
    import builtins
    from types import CodeType, ModuleType

    names: set[str] = set()
    codes = [fn.__code__]
    while codes:
        code = codes.pop()
        names.update(code.co_names)
        codes += [c for c in code.co_consts if isinstance(c, CodeType)]
    spaces = [v for v in fn.__globals__.values() if isinstance(v, ModuleType)]
    return {
        n
        for n in names
        if n not in fn.__globals__
        and not hasattr(builtins, n)
        and not any(hasattr(m, n) for m in spaces)  # an attribute: ``functools.reduce``
    }


def _cse_avoiding(args: Any) -> Callable[[Any], Any]:
    """SymPy's common-subexpression elimination whose temporaries are named unlike
    every argument of the lambdified function.

    SymPy's own ``cse=True`` names them ``x0, x1, ...`` and avoids only the symbols
    that occur in the expressions; dummifying then renames every argument in the
    reduced expressions as well, so a temporary equal to an argument absent from
    them (a state ``x0`` of a Hessian that is constant in the states) was read as
    that argument: wrong values, no error.
    """
    from itertools import count

    from sympy.utilities.iterables import flatten

    taken = {str(a) for a in flatten([args])}

    def run(expr: Any) -> Any:
        names = taken | {str(q) for q in _free_symbols(expr)}
        temps = (sp.Symbol(f"_cse{k}") for k in count() if f"_cse{k}" not in names)
        return sp.cse(expr, symbols=temps, list=False)

    return run


def _free_symbols(expr: Any) -> set[Any]:
    """The free symbols of an expression, a matrix or nested lists of them."""
    if isinstance(expr, (list, tuple)):
        return set().union(set(), *(_free_symbols(e) for e in expr))
    return set(getattr(expr, "free_symbols", ()))


class Backend(ABC):
    """Interface of a code-generation back end (subclass and register)."""

    #: Registry name, e.g. ``"numba"``.
    name: ClassVar[str] = ""
    #: Import lines at the top of the generated module.
    imports: ClassVar[tuple[str, ...]] = ()

    @abstractmethod
    def print_expr(self, expr: sp.Expr) -> str:
        """Python source of one scalar expression."""

    def wrap_input(self, text: str) -> str:
        """How a state or parameter value is read from ``s[i]`` / ``p[i]``."""
        return text

    @abstractmethod
    def function(
        self,
        name: str,
        shape: tuple[int, ...],
        entries: Entries,
        body: list[str],
        values: Sequence[sp.Expr],
        doc: str,
    ) -> list[str]:
        """Source lines of kernel ``name``.

        ``body`` holds the unpacking of inputs and the CSE temporaries, already
        indented; ``values`` the reduced expression of each entry.
        """

    def list_function(
        self, kernel: tuple, *, zero: str, matrix: str, wrap: Callable[[str], str] = str
    ) -> list[str]:
        """Source lines of a pure-Python kernel: a list of ``zero`` (vectors) or a
        ``matrix(rows, cols)`` filled entry by entry, each value ``wrap``-ped;
        ``kernel`` is ``(name, shape, entries, body, values, doc)`` as
        :meth:`function` takes them."""
        name, shape, entries, body, values, doc = kernel
        out = [f"def {name}(s, p):", f'    """{doc}"""', *body]
        if len(shape) == 1:
            out.append(f"    out = [{zero}] * {shape[0]}")
        else:
            out.append(f"    out = {matrix}({shape[0]}, {shape[1]})")
        for (idx, _), e in zip(entries, values, strict=True):
            target = f"out[{idx[0]}]" if len(idx) == 1 else f"out[{idx[0]}, {idx[1]}]"
            out.append(f"    {target} = {wrap(self.print_expr(e))}")
        out += ["    return out", "", ""]
        return out


class NumbaBackend(Backend):
    """float64 kernels compiled with ``numba.njit(cache=True)``.

    Numba's type inference takes time superlinear in the length of one
    function, so a kernel with more than ``chunk_size`` statements (CSE
    temporaries plus output entries) is split by :meth:`chunked_function`
    into compiled helpers of at most ``chunk_size`` statements each, called
    in order by the kernel; compile time then grows linearly in the length.
    ``chunk_size = None`` switches the splitting off (one function per kernel).
    """

    name = "numba"
    imports = (
        "import math",
        "",
        "import numpy as np",
        "",
        "from mfstein.ground.jit import numba, reads_inputs",
    )
    #: Most statements in one compiled function (None: never split).
    chunk_size: int | None = 150

    def __init__(self) -> None:
        self._p = _NumbaPrinter({"fully_qualified_modules": True})

    def chunked_function(
        self,
        name: str,
        shape: tuple[int, ...],
        entries: Entries,
        inputs: Sequence[tuple[str, sp.Symbol]],
        reps: Sequence[tuple[sp.Symbol, sp.Expr]],
        values: Sequence[sp.Expr],
        doc: str,
    ) -> list[str]:
        """Source lines of kernel ``name`` split into helpers of ``chunk_size`` statements.

        The statements -- the CSE assignments ``x_k = reps[k]`` and the output
        entries ``out[idx] = values[n]`` -- keep their expressions (so the
        results are bit-identical to the unsplit kernel); the outputs keep their
        order and each temporary moves to just before its first use
        (:func:`_schedule`), so that few of them cross a helper.  Consecutive
        runs of ``chunk_size`` statements become helpers
        ``_NAME_into_c(s, p, out, t)``; a temporary computed in one helper and
        used in a later one is stored in slot ``t[m]`` of a scratch array
        allocated by ``NAME_into``, and read back from it where needed.
        ``inputs`` pairs each state/parameter symbol with its source
        (``"s[3]"``); every helper unpacks only the inputs it uses.
        """
        size = self.chunk_size or len(reps) + len(values)
        stmts = _schedule(reps, values)
        targets = [", ".join(map(str, idx)) for idx, _ in entries]
        chunks = [stmts[i : i + size] for i in range(0, len(stmts), size)]
        chunk_of = {sym: c for c, chunk in enumerate(chunks) for sym, _ in chunk if sym}
        used = [{str(x) for _, e in chunk for x in e.free_symbols} for chunk in chunks]
        # temporaries read in a later chunk than the one that computes them
        crossing = sorted(
            {x for c, u in enumerate(used) for x in u if chunk_of.get(x, c) < c},
            key=lambda x: int(x.rpartition("_")[2]),
        )
        slot = {x: m for m, x in enumerate(crossing)}
        dims = ", ".join(map(str, shape))
        out: list[str] = []
        n_out = 0
        for c, chunk in enumerate(chunks):
            out += [
                "@numba.njit(cache=True)",
                f"def _{name}_into_{c}(s, p, out, t):",
                f'    """Statements {c * size} to {c * size + len(chunk) - 1} of {name}_into."""',
            ]
            out += [f"    {q} = {self.wrap_input(src)}" for src, q in inputs if str(q) in used[c]]
            out += [f"    {x} = t[{slot[x]}]" for x in crossing if x in used[c] and chunk_of[x] < c]
            for sym, e in chunk:
                if sym is None:
                    out.append(f"    out[{targets[n_out]}] = {self.print_expr(e)}")
                    n_out += 1
                else:
                    out.append(f"    {sym} = {self.print_expr(e)}")
            out += [f"    t[{slot[x]}] = {x}" for x in crossing if chunk_of[x] == c]
            out += ["    return None", "", ""]
        out += [
            "@numba.njit(cache=True)",
            f"def {name}_into(s, p, out):",
            f'    """{doc} Writes into ``out`` (shape ({dims},)); returns it."""',
            f"    t = np.empty({max(len(crossing), 1)})",
        ]
        out += ["    out[:] = 0.0"] if len(shape) > 1 or len(entries) < shape[0] else []
        out += [f"    _{name}_into_{c}(s, p, out, t)" for c in range(len(chunks))]
        out += ["    return out", "", ""]
        out += self._wrapper(name, dims, doc)
        return out

    def _wrapper(self, name: str, dims: str, doc: str) -> list[str]:
        """``NAME(s, p)``: ``NAME_into`` on a fresh array."""
        return [
            "@reads_inputs",
            "@numba.njit(cache=True)",
            f"def {name}(s, p):",
            f'    """{doc}"""',
            f"    return {name}_into(s, p, np.empty(({dims},)))",
            "",
            "",
        ]

    def print_expr(self, expr: sp.Expr) -> str:
        if isinstance(expr, sp.Rational) and not expr.is_Integer:
            return repr(float(expr))
        return self._p.doprint(expr)

    def function(self, name, shape, entries, body, values, doc) -> list[str]:
        dims = ", ".join(map(str, shape))
        out = [
            "@numba.njit(cache=True)",
            f"def {name}_into(s, p, out):",
            f'    """{doc} Writes into ``out`` (shape ({dims},)); returns it."""',
            *body,
        ]
        out += ["    out[:] = 0.0"] if len(shape) > 1 or len(entries) < shape[0] else []
        for (idx, _), e in zip(entries, values, strict=True):
            out.append(f"    out[{', '.join(map(str, idx))}] = {self.print_expr(e)}")
        out += ["    return out", "", ""]
        out += self._wrapper(name, dims, doc)
        return out


def _schedule(
    reps: Sequence[tuple[sp.Symbol, sp.Expr]], values: Sequence[sp.Expr]
) -> list[tuple[str | None, sp.Expr]]:
    """Statements ``(temporary name or None for an output, expression)`` in an
    order where each CSE temporary comes just before the first statement that
    needs it (after the temporaries it needs itself); outputs keep their order."""
    subs = dict(reps)
    order = {sym: k for k, (sym, _) in enumerate(reps)}
    done: set[sp.Symbol] = set()
    out: list[tuple[str | None, sp.Expr]] = []

    def pending(expr: sp.Expr) -> list[sp.Symbol]:
        # last first: popped from the stack in the order of ``reps``
        todo = [x for x in expr.free_symbols if x in subs and x not in done]
        return sorted(todo, key=order.__getitem__, reverse=True)

    def need(expr: sp.Expr) -> None:
        # depth-first, with an explicit stack (nesting can be deep): a
        # temporary is emitted once every temporary it reads is
        stack = [(x, False) for x in pending(expr)]
        while stack:
            x, ready = stack.pop()
            if x in done:
                continue
            if ready:
                done.add(x)
                out.append((str(x), subs[x]))
            else:
                stack.append((x, True))
                stack += [(y, False) for y in pending(subs[x])]

    for e in values:
        need(e)
        out.append((None, e))
    for sym, sub in reps:  # temporaries no output uses (none, after CSE)
        if sym not in done:
            done.add(sym)
            out.append((str(sym), sub))
    return out


class MpmathBackend(Backend):
    """Arbitrary-precision kernels on ``mpmath.mpf`` (working precision of ``mp``)."""

    name = "mpmath"
    imports = ("import mpmath",)

    def __init__(self) -> None:
        self._p = _MpmathPrinter({"fully_qualified_modules": True})

    def print_expr(self, expr: sp.Expr) -> str:
        text = self._p.doprint(expr)
        if isinstance(expr, sp.Integer):
            return f"mpmath.mpf({text})"
        return text

    def wrap_input(self, text: str) -> str:
        # integer arguments (e.g. N = 10) must never meet Python's float division
        # inside a generated expression such as 1/(N - 1)
        return f"mpmath.mpf({text})"

    def function(self, name, shape, entries, body, values, doc) -> list[str]:
        kernel = (name, shape, entries, body, values, doc)
        return self.list_function(kernel, zero="mpmath.mpf(0)", matrix="mpmath.matrix")


#: Registered back ends by name.
BACKENDS: dict[str, Backend] = {}


def register_backend(backend: Backend) -> None:
    """Make ``backend`` available to :func:`derive.kernels.kernels` under its name."""
    if not backend.name:
        raise ParameterError("a back end needs a non-empty name.")
    BACKENDS[backend.name] = backend


def get_backend(name: str) -> Backend:
    """The registered back end called ``name`` (ParameterError if unknown)."""
    try:
        return BACKENDS[name]
    except KeyError:
        raise ParameterError(
            f"backend must be one of {', '.join(BACKENDS)}, got {name!r}."
        ) from None


def positional_symbols(model: ModelLike) -> dict[sp.Symbol, sp.Symbol]:
    """Each state and parameter symbol of ``model`` -> its internal name in generated
    code: ``_s<i>`` for the ``i``-th state, ``_p<j>`` for the ``j``-th parameter (same
    assumptions, so that no expression re-evaluates differently).

    Generated code never binds a user's name: a state called ``s``, ``p`` or ``out``
    (the kernels' own arguments), ``mpmath``, ``math``, ``np`` or ``arb`` (the
    modules they call), or ``x_0`` (a common subexpression) would shadow what the
    code needs.  Every expression is renamed with this map before it is printed;
    after the renaming only these names, the generator's own temporaries and the
    modules remain, none of which starts with ``_s`` or ``_p`` followed by a digit.
    """
    out = {x: sp.Symbol(f"_s{i}", **x.assumptions0) for i, x in enumerate(model.states)}
    out.update({q: sp.Symbol(f"_p{j}", **q.assumptions0) for j, q in enumerate(model.params)})
    return out


def input_sources(model: ModelLike) -> list[tuple[str, sp.Symbol]]:
    """Each state's and parameter's internal symbol (:func:`positional_symbols`) with
    where a kernel reads it (``"s[3]"``)."""
    names = positional_symbols(model)
    return [(f"s[{i}]", names[x]) for i, x in enumerate(model.states)] + [
        (f"p[{j}]", names[q]) for j, q in enumerate(model.params)
    ]


def unpack_inputs(model: ModelLike, exprs: Sequence[sp.Expr], backend: Backend) -> list[str]:
    """Lines binding the internal state and parameter symbols that ``exprs`` (already
    renamed by :func:`positional_symbols`) use."""
    used = set().union(*(e.free_symbols for e in exprs)) if exprs else set()
    return [f"    {q} = {backend.wrap_input(src)}" for src, q in input_sources(model) if q in used]


register_backend(NumbaBackend())
register_backend(MpmathBackend())


class ArbPrinter(OneSentencePrinter, PythonCodePrinter):
    """SymPy printer for Arb ball arithmetic (``flint.arb``): every number exact.

    Integers print as ``arb(k)``, rationals as ``(arb(p)/q)`` (one correctly
    enclosed division), binary floats as the exact ``arb((man, exp))``;
    square roots and elementary functions call the ball versions of Arb, so
    every generated value is a ball containing the exact value.
    """

    backend = "arb"
    _unary: ClassVar[dict[str, str]] = {
        "exp": "exp",
        "log": "log",
        "sin": "sin",
        "cos": "cos",
        "tan": "tan",
        "atan": "atan",
        "sinh": "sinh",
        "cosh": "cosh",
        "tanh": "tanh",
    }

    def _print_Integer(self, expr: sp.Integer) -> str:
        return f"arb({int(expr)})"

    def _print_Rational(self, expr: sp.Rational) -> str:
        return f"(arb({int(expr.p)})/{int(expr.q)})"

    def _print_Half(self, expr: sp.Rational) -> str:
        return "(arb(1)/2)"

    def _print_Float(self, expr: sp.Float) -> str:
        sign, man, exp, _ = expr._mpf_
        return f"arb(({-int(man) if sign else int(man)}, {int(exp)}))"

    def _print_Pi(self, expr: sp.Expr) -> str:
        return "arb.pi()"

    def _print_Exp1(self, expr: sp.Expr) -> str:
        return "arb.const_e()"

    def _print_Pow(self, expr: sp.Pow, rational: bool = False) -> str:
        base, e = expr.as_base_exp()
        b = self.parenthesize(base, sp.printing.precedence.PRECEDENCE["Pow"])
        if e == sp.Rational(1, 2):
            return f"arb.sqrt(arb({self._print(base)}))"
        if e == -sp.Rational(1, 2):
            return f"arb.rsqrt(arb({self._print(base)}))"
        if e.is_Integer:
            return f"{b}**{int(e)}"
        return f"{b}**({self._print(e)})"

    def _print_Function(self, expr: sp.Function) -> str:
        name = type(expr).__name__
        if name in self._unary and len(expr.args) == 1:
            return f"arb.{self._unary[name]}(arb({self._print(expr.args[0])}))"
        raise ParameterError(
            f"the model uses the function {name}, which the arb back end (certify) does not "
            f"support; supported: {', '.join(sorted(self._unary))}."
        )

    def _print_Abs(self, expr: sp.Expr) -> str:
        return f"abs({self._print(expr.args[0])})"


for _name in ArbPrinter._unary:  # SymPy's printers bind known functions by name
    setattr(ArbPrinter, f"_print_{_name}", ArbPrinter._print_Function)


# PythonCodePrinter prints its known functions (erf, gamma, log1p, ...) as ``math.*``
# through per-function methods; in Arb every function goes through _print_Function,
# which prints the supported ones as ``arb.*`` and refuses the others in one sentence.
for _name in PythonCodePrinter._kf:
    if f"_print_{_name}" not in ArbPrinter.__dict__:  # keep Arb's own (Abs, ...)
        setattr(ArbPrinter, f"_print_{_name}", ArbPrinter._print_Function)


class ArbBackend(Backend):
    """Rigorous kernels on Arb balls (``flint.arb``, ``flint.arb_mat``).

    Inputs are wrapped as ``arb`` (pass ``arb`` balls, integers, exact decimal
    strings, or ``(man, exp)`` pairs), constants are printed exactly, and every
    operation rounds outward in the working precision ``flint.ctx.prec``: each
    output is a ball containing the exact value of the symbolic expression at
    every point of the input balls.  Vectors are lists of ``arb``, matrices
    ``arb_mat``.  Used by :mod:`numeric.certified.enclosures`.
    """

    name = "arb"
    imports = ("from flint import arb, arb_mat",)

    def __init__(self) -> None:
        self._p = ArbPrinter({"fully_qualified_modules": True})

    def print_expr(self, expr: sp.Expr) -> str:
        return self._p.doprint(expr)

    def wrap_input(self, text: str) -> str:
        return f"arb({text})"

    def function(self, name, shape, entries, body, values, doc) -> list[str]:
        kernel = (name, shape, entries, body, values, f"{doc} (Arb balls)")
        return self.list_function(
            kernel, zero="arb(0)", matrix="arb_mat", wrap=lambda text: f"arb({text})"
        )


register_backend(ArbBackend())
