"""Numeric kernels generated from a model's symbolic expressions.

``kernels(model, backend)`` prints the drift ``f``, the Jacobian ``J`` (dense and
as values on its sparsity pattern), the Hessian (values on its pattern), the
diffusion matrix ``Q``, ``f~ = diag(Q)/2`` and the transition intensities
``beta_l`` into Python source with SymPy's own code printers (after common
subexpression elimination), and loads it.  The back ends are classes
registered in :mod:`derive.backends` (``"numba"``: float64, compiled, callable
from ``sim``'s compiled code, with ``*_into(s, p, out)`` variants;
``"mpmath"``: arbitrary precision in the working precision of :data:`mpmath.mp`).

Every function takes ``s`` (the ``b`` state values) and ``p`` (parameter values
in the order of ``model.params``).  The generated module is written once to a
cache directory (:func:`mfstein.ground.cache.cache_dir`: ``$MFSTEIN_CACHE_DIR``,
default the platform's user cache directory) under a digest of the model and
the generator version, so a model with ``b = 100`` is derived and compiled
once, not on every call or in every worker process; numba's compiled code of
the module goes to the same directory (:mod:`mfstein.ground.jit`).  The module is
written, checked and loaded by the one loader of generated code,
:func:`mfstein.ground.generated.generated_module` (digest, key, compiles and defines
its functions before it is trusted; a damaged file is regenerated with one
warning per process), and an unwritable cache directory falls back to one
private temporary directory per process.
Read the generated code with ``print(model.kernels("mpmath").source)``.
"""

from __future__ import annotations

import hashlib
import threading
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from types import ModuleType
from typing import TYPE_CHECKING, Any

import numpy as np
import sympy as sp

from derive.backends import (
    BACKENDS,
    Backend,
    get_backend,
    input_sources,
    positional_symbols,
    unpack_inputs,
)
from mfstein.ground.arguments import renamed_attribute, renamed_keywords
from mfstein.ground.cache import cache_dir
from mfstein.ground.errors import ParameterError
from mfstein.ground.generated import generated_module, load_generated, module_name

if TYPE_CHECKING:
    from derive.model_protocol import ModelLike

__all__ = [
    "BACKENDS",
    "CODEGEN_VERSION",
    "Kernels",
    "cache_dir",
    "generate_source",
    "kernel_objects",
    "kernels",
    "load_module",
    "order2_kernel_objects",
]

#: Bump when the generated code changes shape, to invalidate disk caches.
CODEGEN_VERSION = "5"

_memory_cache: dict[tuple, Kernels] = {}
_lock = threading.Lock()


@dataclass
class Kernels:
    """Generated kernels of one model in one back end."""

    #: ``"numba"`` or ``"mpmath"``.
    backend: str
    #: State dimension.
    n: int
    #: Parameter names, in the order every kernel expects ``p``.
    params: tuple[str, ...]
    #: ``(n_transitions, b)`` integer array of jump vectors ``l``.
    jumps: np.ndarray
    #: ``(nnz, 2)`` array of the structurally non-zero ``(i, j)`` of ``J``.
    jac_index: np.ndarray
    #: ``(nnz, 3)`` array of the structurally non-zero ``(i, j, k)`` of the Hessian.
    hess_index: np.ndarray
    #: The generated Python source (readable; print it).
    source: str
    #: Where the source is cached on disk.
    path: Path
    module: ModuleType = field(repr=False)
    index: dict[str, np.ndarray] = field(default_factory=dict)
    #: For a subset group (``"mean_field"``): builds the full ``"base"`` kernels,
    #: which serve any function the subset did not generate.
    complete: Callable[[], Kernels] | None = field(default=None, repr=False)

    b = renamed_attribute("Kernels", "b", "n")

    def __getattr__(self, name: str) -> Any:
        # f, jac, jac_values, hess_values, Q, ftilde, rates (and *_into for numba);
        # kept on the instance once found, so that the next look-up (the ODE of
        # the fixed point calls ``f`` thousands of times) is a plain attribute
        module = self.__dict__.get("module")
        if module is not None and not name.startswith("_") and hasattr(module, name):
            value = self.__dict__[name] = getattr(module, name)
            return value
        complete = self.__dict__.get("complete")
        if complete is not None and not name.startswith("_"):
            value = self.__dict__[name] = getattr(complete(), name)
            return value
        raise AttributeError(name)

    def hess(self, s: Any, p: Any) -> Any:
        """Dense Hessian ``H[i, j, k]`` (convenience; prefer ``hess_values``)."""
        vals = self.module.hess_values(s, p)
        if self.backend == "numba":
            H = np.zeros((self.n, self.n, self.n))
            for (i, j, k), v in zip(self.hess_index, vals, strict=True):
                H[i, j, k] = v
            return H
        import mpmath

        H = [[[mpmath.mpf(0)] * self.n for _ in range(self.n)] for _ in range(self.n)]
        for (i, j, k), v in zip(self.hess_index.tolist(), vals, strict=True):
            H[i][j][k] = v
        return H


Kernels.__init__ = renamed_keywords(b="n")(Kernels.__init__)  # type: ignore[method-assign]


def _generator_digest() -> str:
    """Digest of the modules that shape generated code, so edits invalidate caches.

    Only the code generator and the derivation of the objects count: a model's
    identity is its own key (a digest of its transitions), so adding a model to
    the library does not invalidate anyone's cache.
    """
    here = Path(__file__).resolve().parent
    h = hashlib.sha256()
    for name in ("objects.py", "kernels.py", "backends.py"):
        h.update((here / name).read_bytes())
    return h.hexdigest()[:16]


def kernels(model: ModelLike, backend: str = "numba", group: str = "base") -> Kernels:
    """Generate (or load from cache) the numeric kernels of ``model``.

    Parameters
    ----------
    model:
        A :class:`derive.model.Model`.
    backend:
        A registered back end: ``"numba"`` (float64, compiled) or ``"mpmath"``
        (arbitrary precision); see :mod:`derive.backends`.
    group:
        ``"base"`` (what first-order results need), ``"order2"`` (the objects
        of the 1/N^2 expansion, :mod:`derive.expansion`), generated and cached
        separately so that a route builds only what it uses, or
        ``"mean_field"``: the subset ``jac``, ``Q``, ``ftilde``, ``hess_values``
        of ``base`` that the high-precision mean-field route evaluates (the
        ``base`` kernels are returned instead when they are already generated;
        any other function is looked up in ``base``, generating it then).

    Returns
    -------
    Kernels
        ``base``: functions ``f(s, p)``, ``jac(s, p)``, ``jac_values(s, p)``,
        ``hess_values(s, p)``, ``hess(s, p)``, ``Q(s, p)``, ``ftilde(s, p)`` and
        ``rates(s, p)``; with numba also ``*_into(s, p, out)``.  ``order2``:
        ``d3f_values``, ``d4f_values``, ``dQ_values``, ``d2Q_values``,
        ``R_values`` on the index lists in ``Kernels.index``.
    """
    be = get_backend(backend)
    if group not in _GROUPS:
        raise ParameterError(f"group must be one of {', '.join(_GROUPS)}, got {group!r}.")
    key = (model.key, backend) if group == "base" else (model.key, backend, group)
    if group in _SUBSETS:
        with _lock:
            full = _memory_cache.get((model.key, backend))
        if full is not None or (cache_dir() / f"{module_name_of(model, backend)}.py").is_file():
            return kernels(model, backend, "base")
    with _lock:
        hit = _memory_cache.get(key)
        if hit is not None:
            return hit
        gen = generated_module(
            f"kernels_{backend}",
            _module_key(model, backend, group),
            lambda: generate_source(model, be.name, group),
            required=_required(group),
        )
        module, source, path = gen.module, gen.text, gen.path
        k = Kernels(
            backend=backend,
            n=model.n,
            params=tuple(map(str, model.params)),
            jumps=_dense_jumps(module, model.n),
            jac_index=np.asarray(getattr(module, "JAC_INDEX", []), dtype=np.int64).reshape(-1, 2),
            hess_index=np.asarray(getattr(module, "HESS_INDEX", []), dtype=np.int64).reshape(-1, 3),
            source=source,
            path=path,
            module=module,
            index={
                n: np.asarray(v, dtype=np.int64).reshape(len(v), _RANK[n])
                for n, v in getattr(module, "INDEX", {}).items()
            },
            complete=(lambda: kernels(model, backend, "base")) if group in _SUBSETS else None,
        )
        _memory_cache[key] = k
        return k


def _module_key(model: ModelLike, backend: str, group: str) -> str:
    """What a generated kernel module is generated from (its cache key,
    :mod:`mfstein.ground.generated`): the model, the back end and group, and the generator."""
    return repr(
        (
            model.key,
            backend,
            group,
            CODEGEN_VERSION,
            sp.__version__,
            _generator_digest(),
            getattr(BACKENDS.get(backend), "chunk_size", None),
        )
    )


def module_name_of(model: ModelLike, backend: str, group: str = "base") -> str:
    """File name (without ``.py``) of the generated module of ``model`` in the cache
    directory, computed from its key without generating it (``Path(kernels(model,
    backend, group).path).stem``)."""
    return module_name(f"kernels_{backend}", _module_key(model, backend, group))


def _required(group: str) -> tuple[str, ...]:
    """Names a cached module of ``group`` must define to be trusted."""
    if group == "order2":
        return ("N_TRANSITIONS", "JUMP_ENTRIES", "INDEX")
    funcs = _SUBSETS.get(group, ("f", "jac", "jac_values", "hess_values", "Q", "ftilde", "rates"))
    return ("N_TRANSITIONS", "JUMP_ENTRIES", "JAC_INDEX", "HESS_INDEX", *funcs)


def _dense_jumps(module: ModuleType, b: int) -> np.ndarray:
    """The ``(n_transitions, b)`` jump matrix from a module's sparse ``JUMP_ENTRIES``."""
    out = np.zeros((module.N_TRANSITIONS, b), dtype=np.int64)
    entries = np.asarray(module.JUMP_ENTRIES, dtype=np.int64).reshape(-1, 3)
    out[entries[:, 0], entries[:, 1]] = entries[:, 2]
    return out


def load_module(name: str, path: Path | None = None) -> ModuleType:
    """A generated module by its cache name (``kernels_numba_<digest>``, ...), for
    processes that did not generate it: :func:`mfstein.ground.generated.load_generated`
    (checked before it is trusted; missing or damaged: one sentence)."""
    return load_generated(name, path)


# --------------------------------------------------------------------------
# source generation
# --------------------------------------------------------------------------
def kernel_objects(
    model: ModelLike,
) -> dict[str, tuple[tuple[int, ...], list[tuple[tuple[int, ...], sp.Expr]]]]:
    """Each kernel's output shape and its non-zero ``(index, expression)`` entries."""
    b = model.n
    f = model.drift
    J = model.jacobian
    H = model.hessian
    Q = model.diffusion
    ft = model.ftilde
    jac_entries = sorted((ij, v) for ij, v in J.todok().items() if v != 0)
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
        "Q": ((b, b), sorted((ij, v) for ij, v in Q.todok().items() if v != 0)),
        "ftilde": ((b,), [((i,), ft[i]) for i in range(b) if ft[i] != 0]),
        "rates": (
            (len(model.transitions),),
            [((n,), t.rate) for n, t in enumerate(model.transitions) if t.rate != 0],
        ),
        "_jac_index": ((0,), [(ij, sp.Integer(0)) for ij, _ in jac_entries]),
        "_hess_index": ((0,), [(ijk, sp.Integer(0)) for ijk, _ in hess_entries]),
    }


def order2_kernel_objects(model: ModelLike) -> tuple[dict, dict[str, list]]:
    """The 1/N^2 objects as value kernels on sparse index lists."""
    from derive.expansion import order2_objects

    funcs = {}
    index = {}
    for name, entries in order2_objects(model).items():
        items = sorted(entries.items())
        funcs[f"{name}_values"] = ((len(items),), [((n,), e) for n, (_, e) in enumerate(items)])
        index[name] = [list(idx) for idx, _ in items]
    return funcs, index


_GROUPS = ("base", "order2", "mean_field")
#: Groups that are a subset of ``base``: the functions they generate.
_SUBSETS = {"mean_field": ("jac", "Q", "ftilde", "hess_values")}
#: Number of indices of each order-2 object.
_RANK = {"d3f": 4, "d4f": 5, "dQ": 3, "d2Q": 4, "R": 3}


def generate_source(model: ModelLike, backend: str, group: str = "base") -> str:
    """Return the Python source of the kernels of ``model`` for ``backend``."""
    be = get_backend(backend)
    if group == "order2":
        objs, index = order2_kernel_objects(model)
    else:
        objs, index = kernel_objects(model), None
        if group in _SUBSETS:
            objs = {n: v for n, v in objs.items() if n in _SUBSETS[group] or n.startswith("_")}
    b = model.n
    lines = [
        f'"""Kernels generated by mfstein.derive (codegen {CODEGEN_VERSION}) -- do not edit.',
        "",
        f"model: {model.name}, b = {b}, params = {', '.join(map(str, model.params)) or 'none'}",
        f"back end: {backend}",
        '"""',
        "",
    ]
    lines += [*be.imports, ""]
    # the jump vectors, sparse: (transition, coordinate, change); a dense list
    # would make the module O(b^2) long (6 MB at b = 1000)
    entries = [
        [n, i, int(li)]
        for n, t in enumerate(model.transitions)
        for i, li in enumerate(t.jump)
        if li
    ]
    lines.append(f"N_TRANSITIONS = {len(model.transitions)}")
    lines.append(f"JUMP_ENTRIES = {entries!r}")
    if index is None:
        lines.append(f"JAC_INDEX = {[list(ij) for ij, _ in objs.pop('_jac_index')[1]]!r}")
        lines.append(f"HESS_INDEX = {[list(ijk) for ijk, _ in objs.pop('_hess_index')[1]]!r}")
    else:
        lines.append(f"INDEX = {index!r}")
    lines.append("")
    for name, (shape, entries) in objs.items():
        lines += _function(name, shape, entries, model, be)
    return "\n".join(lines) + "\n"


def _function(name: str, shape, entries, model: ModelLike, be: Backend) -> list[str]:
    # the code reads the model's symbols under internal names only (user names such
    # as ``s``, ``mpmath`` or ``x_0`` would shadow the kernel's own)
    names = positional_symbols(model)
    entries = [(idx, e.xreplace(names)) for idx, e in entries]
    exprs = [e for _, e in entries]
    reps, reduced = sp.cse(exprs, symbols=sp.numbered_symbols("x_"), order="none")
    chunk = getattr(be, "chunk_size", None)
    if chunk and len(reps) + len(reduced) > chunk:
        # long kernels: compiled helpers of at most `chunk` statements each
        return be.chunked_function(
            name, shape, entries, input_sources(model), reps, reduced, _DOCS.get(name, name)
        )
    body = unpack_inputs(model, exprs, be)
    for sym, sub in reps:
        body.append(f"    {sym} = {be.print_expr(sub)}")
    return be.function(name, shape, entries, body, reduced, _DOCS.get(name, name))


_DOCS = {
    "f": "Drift f(s) = sum_l l beta_l(s).",
    "jac": "Jacobian J(s) = df/ds, dense.",
    "jac_values": "Jacobian entries on JAC_INDEX.",
    "hess_values": "Hessian entries d2f_i/ds_j ds_k on HESS_INDEX.",
    "Q": "Diffusion matrix Q(s) = sum_l l l^T beta_l(s).",
    "ftilde": "f~(s) = diag(Q(s))/2 (Theorem 1 of Beyond Scaling).",
    "rates": "Transition intensities beta_l(s), one per transition (JUMP_ENTRIES).",
    "d3f_values": "Third derivatives of f on INDEX['d3f'] (i, j <= k <= l).",
    "d4f_values": "Fourth derivatives of f on INDEX['d4f'] (i, j <= k <= l <= m).",
    "dQ_values": "First derivatives of Q on INDEX['dQ'] (i <= j, k).",
    "d2Q_values": "Second derivatives of Q on INDEX['d2Q'] (i <= j, k <= l).",
    "R_values": "Third jump moment sum_l l_i l_j l_k beta_l on INDEX['R'] (i <= j <= k).",
}
