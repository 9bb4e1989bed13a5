"""Numeric kernels generated from a model's symbolic expressions.

``kernels(model, backend)`` prints the drift ``f``, the Jacobian ``J`` (dense and
as values on its sparsity pattern), the Hessian (values on its pattern), the
diffusion matrix ``Q``, ``f~ = diag(Q)/2`` and the transition intensities
``beta_l`` into Python source with SymPy's own code printers (after common
subexpression elimination), and loads it.  Two back ends:

``"numba"``
    float64, every function ``numba.njit(cache=True)``-compiled, so ``sim`` can
    call them from compiled code;  ``*_into(s, p, out)`` variants fill a
    preallocated array.
``"mpmath"``
    arbitrary precision: rationals are printed as ``mpf`` quotients, so results
    carry the working precision of :data:`mpmath.mp`.

Every function takes ``s`` (the ``b`` state values) and ``p`` (parameter values
in the order of ``model.params``).  The generated module is written once to a
cache directory (``$MFSTEIN_CACHE_DIR``, default ``~/.cache/mfstein``) under a
digest of the model and the generator version, so a model with ``b = 100`` is
derived and compiled once, not on every call or in every worker process.
Read the generated code with ``print(model.kernels("mpmath").source)``.
"""

from __future__ import annotations

import hashlib
import importlib.util
import os
import sys
import tempfile
import threading
from dataclasses import dataclass, field
from pathlib import Path
from types import ModuleType
from typing import TYPE_CHECKING, Any

import numpy as np
import sympy as sp
from sympy.printing.pycode import MpmathPrinter, PythonCodePrinter

from mfstein.errors import ParameterError

if TYPE_CHECKING:
    from derive.model import Model

#: Back ends :func:`kernels` can generate.
BACKENDS: tuple[str, ...] = ("numba", "mpmath")

#: Bump when the generated code changes shape, to invalidate disk caches.
CODEGEN_VERSION = "1"

_memory_cache: dict[tuple, Kernels] = {}
_lock = threading.Lock()


@dataclass
class Kernels:
    """Generated kernels of one model in one back end.

    Attributes
    ----------
    backend:
        ``"numba"`` or ``"mpmath"``.
    b:
        State dimension.
    params:
        Parameter names, in the order every kernel expects ``p``.
    jumps:
        ``(n_transitions, b)`` integer array of jump vectors ``l``.
    jac_index:
        ``(nnz, 2)`` array of the structurally non-zero ``(i, j)`` of ``J``.
    hess_index:
        ``(nnz, 3)`` array of the structurally non-zero ``(i, j, k)`` of the Hessian.
    source:
        The generated Python source (readable; print it).
    path:
        Where the source is cached on disk.
    """

    backend: str
    b: int
    params: tuple[str, ...]
    jumps: np.ndarray
    jac_index: np.ndarray
    hess_index: np.ndarray
    source: str
    path: Path
    module: ModuleType = field(repr=False)

    def __getattr__(self, name: str) -> Any:
        # f, jac, jac_values, hess_values, Q, ftilde, rates (and *_into for numba)
        module = self.__dict__.get("module")
        if module is not None and not name.startswith("_") and hasattr(module, name):
            return getattr(module, name)
        raise AttributeError(name)

    def hess(self, s, p):
        """Dense Hessian ``H[i, j, k]`` (convenience; prefer ``hess_values``)."""
        vals = self.module.hess_values(s, p)
        if self.backend == "numba":
            H = np.zeros((self.b, self.b, self.b))
            for (i, j, k), v in zip(self.hess_index, vals, strict=True):
                H[i, j, k] = v
            return H
        import mpmath

        H = [[[mpmath.mpf(0)] * self.b for _ in range(self.b)] for _ in range(self.b)]
        for (i, j, k), v in zip(self.hess_index.tolist(), vals, strict=True):
            H[i][j][k] = v
        return H


def _generator_digest() -> str:
    """Digest of the modules that shape generated code, so edits invalidate caches."""
    here = Path(__file__).resolve().parent
    h = hashlib.sha256()
    for name in ("model.py", "objects.py", "kernels.py"):
        h.update((here / name).read_bytes())
    return h.hexdigest()[:16]


def cache_dir() -> Path:
    """The directory holding generated kernel modules."""
    root = os.environ.get("MFSTEIN_CACHE_DIR")
    return Path(root) if root else Path.home() / ".cache" / "mfstein"


def kernels(model: Model, backend: str = "numba") -> Kernels:
    """Generate (or load from cache) the numeric kernels of ``model``.

    Parameters
    ----------
    model:
        A :class:`derive.model.Model`.
    backend:
        ``"numba"`` (float64, compiled) or ``"mpmath"`` (arbitrary precision).

    Returns
    -------
    Kernels
        Functions ``f(s, p)``, ``jac(s, p)``, ``jac_values(s, p)``,
        ``hess_values(s, p)``, ``hess(s, p)``, ``Q(s, p)``, ``ftilde(s, p)`` and
        ``rates(s, p)``; with numba also ``*_into(s, p, out)``.
    """
    if backend not in BACKENDS:
        raise ParameterError(f"backend must be one of {', '.join(BACKENDS)}, got {backend!r}.")
    key = (model.key, backend)
    with _lock:
        hit = _memory_cache.get(key)
        if hit is not None:
            return hit
        digest = hashlib.sha256(
            repr(
                (model.key, backend, CODEGEN_VERSION, sp.__version__, _generator_digest())
            ).encode()
        ).hexdigest()[:20]
        path = cache_dir() / f"kernels_{backend}_{digest}.py"
        if path.exists():
            source = path.read_text()
        else:
            source = generate_source(model, backend)
            _atomic_write(path, source)
        module = _load(path, f"mfstein_kernels_{backend}_{digest}")
        k = Kernels(
            backend=backend,
            b=model.b,
            params=tuple(map(str, model.params)),
            jumps=np.asarray(module.JUMPS, dtype=np.int64).reshape(-1, model.b),
            jac_index=np.asarray(module.JAC_INDEX, dtype=np.int64).reshape(-1, 2),
            hess_index=np.asarray(module.HESS_INDEX, dtype=np.int64).reshape(-1, 3),
            source=source,
            path=path,
            module=module,
        )
        _memory_cache[key] = k
        return k


def _atomic_write(path: Path, text: str) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=path.name, suffix=".tmp")
    try:
        with os.fdopen(fd, "w") as fh:
            fh.write(text)
        os.replace(tmp, path)
    except BaseException:
        if os.path.exists(tmp):
            os.unlink(tmp)
        raise


def _load(path: Path, name: str) -> ModuleType:
    spec = importlib.util.spec_from_file_location(name, path)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules[name] = module
    spec.loader.exec_module(module)
    return module


# --------------------------------------------------------------------------
# source generation
# --------------------------------------------------------------------------
class _Printer:
    """Wraps a SymPy printer; ``numba`` prints floats, ``mpmath`` exact mpf quotients."""

    def __init__(self, backend: str) -> None:
        self.backend = backend
        if backend == "numba":
            self._p = PythonCodePrinter({"fully_qualified_modules": True})
        else:
            self._p = MpmathPrinter({"fully_qualified_modules": True})

    def __call__(self, expr: sp.Expr) -> str:
        if self.backend == "numba" and isinstance(expr, sp.Rational) and not expr.is_Integer:
            return repr(float(expr))
        text = self._p.doprint(expr)
        if self.backend == "mpmath" and isinstance(expr, sp.Integer):
            return f"mpmath.mpf({text})"
        return text


def _objects(
    model: Model,
) -> dict[str, tuple[tuple[int, ...], list[tuple[tuple[int, ...], sp.Expr]]]]:
    """Each kernel's output shape and its non-zero ``(index, expression)`` entries."""
    b = model.b
    f = model.drift
    J = model.jacobian
    H = model.hessian
    Q = model.diffusion
    ft = model.ftilde
    jac_entries = [((i, j), J[i, j]) for i in range(b) for j in range(b) if J[i, j] != 0]
    hess_entries = sorted(
        (
            (tuple(int(x) for x in np.unravel_index(flat, (b, b, b))), v)
            for flat, v in H._sparse_array.items()
            if v != 0
        ),
        key=lambda e: e[0],
    )
    return {
        "f": ((b,), [((i,), f[i]) for i in range(b) if f[i] != 0]),
        "jac": ((b, b), jac_entries),
        "jac_values": ((len(jac_entries),), [((n,), e) for n, (_, e) in enumerate(jac_entries)]),
        "hess_values": ((len(hess_entries),), [((n,), e) for n, (_, e) in enumerate(hess_entries)]),
        "Q": ((b, b), [((i, j), Q[i, j]) for i in range(b) for j in range(b) if Q[i, j] != 0]),
        "ftilde": ((b,), [((i,), ft[i]) for i in range(b) if ft[i] != 0]),
        "rates": (
            (len(model.transitions),),
            [((n,), t.rate) for n, t in enumerate(model.transitions) if t.rate != 0],
        ),
        "_jac_index": ((0,), [(ij, sp.Integer(0)) for ij, _ in jac_entries]),
        "_hess_index": ((0,), [(ijk, sp.Integer(0)) for ijk, _ in hess_entries]),
    }


def generate_source(model: Model, backend: str) -> str:
    """Return the Python source of the kernels of ``model`` for ``backend``."""
    printer = _Printer(backend)
    objs = _objects(model)
    b = model.b
    lines = [
        f'"""Kernels generated by mfstein.derive (codegen {CODEGEN_VERSION}) -- do not edit.',
        "",
        f"model: {model.name}, b = {b}, params = {', '.join(map(str, model.params)) or 'none'}",
        f"back end: {backend}",
        '"""',
        "",
    ]
    if backend == "numba":
        lines += ["import math", "", "import numba", "import numpy as np", ""]
    else:
        lines += ["import mpmath", ""]
    jumps = [list(t.jump) for t in model.transitions]
    lines.append(f"JUMPS = {jumps!r}")
    lines.append(f"JAC_INDEX = {[list(ij) for ij, _ in objs.pop('_jac_index')[1]]!r}")
    lines.append(f"HESS_INDEX = {[list(ijk) for ijk, _ in objs.pop('_hess_index')[1]]!r}")
    lines.append("")
    for name, (shape, entries) in objs.items():
        lines += _function(name, shape, entries, model, printer, backend)
    return "\n".join(lines) + "\n"


def _unpack(model: Model, exprs: list[sp.Expr], backend: str) -> list[str]:
    # mpmath: convert inputs to mpf so that integer arguments (e.g. N = 10) never
    # meet Python's float division inside a generated expression such as 1/(N - 1).
    wrap = "mpmath.mpf({})" if backend == "mpmath" else "{}"
    used = set().union(*(e.free_symbols for e in exprs)) if exprs else set()
    out = []
    for i, s in enumerate(model.states):
        if s in used:
            out.append(f"    {s} = {wrap.format(f's[{i}]')}")
    for i, q in enumerate(model.params):
        if q in used:
            out.append(f"    {q} = {wrap.format(f'p[{i}]')}")
    return out


def _function(name, shape, entries, model, printer, backend) -> list[str]:
    exprs = [e for _, e in entries]
    reps, reduced = sp.cse(exprs, symbols=sp.numbered_symbols("x_"), order="none")
    body = _unpack(model, exprs, backend)
    for sym, sub in reps:
        body.append(f"    {sym} = {printer(sub)}")
    doc = _DOCS.get(name, name)
    if backend == "numba":
        dims = ", ".join(map(str, shape))
        out = [
            "@numba.njit(cache=True)",
            f"def {name}_into(s, p, out):",
            f'    """{doc} Writes into ``out`` (shape ({dims},)); returns it."""',
            *body,
        ]
        out += ["    out[:] = 0.0"] if len(shape) > 1 or len(entries) < shape[0] else []
        for (idx, _), e in zip(entries, reduced, strict=True):
            out.append(f"    out[{', '.join(map(str, idx))}] = {printer(e)}")
        out += [
            "    return out",
            "",
            "",
            "@numba.njit(cache=True)",
            f"def {name}(s, p):",
            f'    """{doc}"""',
            f"    return {name}_into(s, p, np.empty(({dims},)))",
            "",
            "",
        ]
        return out
    zero = "mpmath.mpf(0)"
    out = [f"def {name}(s, p):", f'    """{doc}"""', *body]
    if len(shape) == 1:
        out.append(f"    out = [{zero}] * {shape[0]}")
    else:
        out.append(f"    out = mpmath.matrix({shape[0]}, {shape[1]})")
    for (idx, _), e in zip(entries, reduced, strict=True):
        target = f"out[{idx[0]}]" if len(idx) == 1 else f"out[{idx[0]}, {idx[1]}]"
        out.append(f"    {target} = {printer(e)}")
    out += ["    return out", "", ""]
    return out


_DOCS = {
    "f": "Drift f(s), seed 000 Section 3.",
    "jac": "Jacobian J(s) = df/ds, dense.",
    "jac_values": "Jacobian entries on JAC_INDEX.",
    "hess_values": "Hessian entries d2f_i/ds_j ds_k on HESS_INDEX.",
    "Q": "Diffusion matrix Q(s) = sum_l l l^T beta_l(s).",
    "ftilde": "f~(s) = diag(Q(s))/2, seed 000 Theorem 1.",
    "rates": "Transition intensities beta_l(s) in the order of JUMPS.",
}
