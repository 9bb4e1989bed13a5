"""A library model read back from disk without SymPy, for a fast first call (issue 34).

Building a library model (``load_model("sir")``) imports SymPy and derives its
objects: most of the CPU a new process spends before its first ``solve``.  What the
mean-field routes at order 1 (the working precision,
:func:`numeric.meanfield.general.solve_general`, and float64,
:mod:`numeric.meanfield.float64_route`) read of the model is small and the same every
time: its name, key, states, parameters and jumps, its declarations
(:class:`derive.spec.ModelInfo`: parameter ranges, state space, conservation laws,
reference point), its mpmath kernels (a generated module already in the cache
directory, :mod:`mfstein.ground.generated`), its float64 kernels and its sparse
float64 rates with their derivatives (lambdified NumPy functions,
:mod:`derive.lambda_values`; :class:`derive.sparse.SparseRates`).
:func:`save` writes them as one JSON record after the full route built them;
:func:`stored` reads the record back as a :class:`StoredModel` that stands in for
the model on that route.

The record's key is computed without SymPy: the factory's name, the SHA-256 of the
files it and its objects are made from (the factory's module, the generator of
kernels and objects, this module), mfstein's version and the installed releases of
SymPy, mpmath and NumPy (the path, size and modification time of each one's
``__init__.py``).  Any edit or upgrade is a new key; a missing, damaged
(:func:`mfstein.ground.cache.intact`) or unreadable record is a miss, and the
caller takes the full route.  Only models whose record says everything the route
reads are kept: a library factory without options and without a fast path, no kink
in its rates, a reference point of rational numbers, a JSON structure.  Anything else a caller
asks of a :class:`StoredModel` (a derivation, a LaTeX form, ``isinstance``
checks of other routes) is answered by the full model, built on first need
(:meth:`StoredModel.full_model`).

Standard library, NumPy and mpmath's generated kernels; SymPy only in :func:`save`.
"""

from __future__ import annotations

import functools
import hashlib
import json
import threading
from fractions import Fraction
from pathlib import Path
from typing import Any

import numpy as np

from mfstein.ground import cache, records
from mfstein.ground.arguments import renamed_attribute

#: Format of a record (part of its key).
VERSION = 1
_DERIVE = Path(__file__).resolve().parent.parent
#: Files whose text shapes a record (besides the factory's own module).
_SOURCES = (
    "models/stored.py",
    "lambda_values.py",
    "sparse.py",
    "kernels.py",
    "objects.py",
    "backends.py",
    "model.py",
    "spec.py",
    "conservation.py",
    "models/__init__.py",
)
_LIBRARIES = ("sympy", "mpmath", "numpy")
#: The kernels of the float64 group a record keeps (:class:`derive.sparse.LambdaKernels`).
FLOAT64_KERNELS = ("f", "jac", "jac_values", "hess_values", "Q", "ftilde", "rates")

_lock = threading.Lock()
_models: dict[str, StoredModel] = {}
#: Keys whose model cannot be kept (a fast path, a kink, declarations without an exact
#: record) or whose record could not be written: asked once per process, so a warm
#: solve of such a model does not walk its SymPy rates again.
_refused: set[str] = set()


def _factory_file(name: str) -> Path | None:
    """The source file of the library factory ``name`` (``None`` for any other name)."""
    from derive.models import MODELS

    target = MODELS.get(name) if isinstance(name, str) else None
    if target is None or not target.startswith("derive.models."):
        return None
    module = target.split(":")[0]
    return _DERIVE.parent.joinpath(*module.split(".")).with_suffix(".py")


@functools.cache
def record_key(name: str) -> str | None:
    """The key of model ``name``'s record (module docstring), ``None`` for a name that
    is not a library factory (once per process)."""
    from mfstein import __version__

    source = _factory_file(name)
    if source is None:
        return None
    h = hashlib.sha256(f"{VERSION}\0{name}\0{__version__}\0".encode())
    try:
        for path in (source, *(_DERIVE / s for s in _SOURCES)):
            h.update(path.read_bytes())
    except OSError:
        return None
    for lib in _LIBRARIES:
        h.update(records.library_stamp(lib).encode() + b"\0")
    return h.hexdigest()


def _path(name: str, key: str) -> Path:
    return cache.cache_dir() / "models" / f"{name}-{key[:24]}.json"


class ModuleKernels:
    """The mpmath kernels of a stored model: the generated module's functions and the
    index lists of :class:`derive.kernels.Kernels`."""

    b = renamed_attribute("ModuleKernels", "b", "n")

    def __init__(self, module: Any, b: int, params: tuple[str, ...]) -> None:
        self.backend, self.n, self.params, self.module = "mpmath", b, params, module
        self.jac_index = np.asarray(module.JAC_INDEX, dtype=np.int64).reshape(-1, 2)
        self.hess_index = np.asarray(module.HESS_INDEX, dtype=np.int64).reshape(-1, 3)

    def __getattr__(self, name: str) -> Any:
        module = self.__dict__.get("module")
        if module is None or name.startswith("_"):
            raise AttributeError(name)
        value = self.__dict__[name] = getattr(module, name)
        return value


class Float64Kernels:
    """The float64 kernels of a stored model: the functions of
    :class:`derive.sparse.LambdaKernels`, compiled from their recorded text."""

    b = renamed_attribute("Float64Kernels", "b", "n")

    def __init__(self, rec: dict[str, Any]) -> None:
        from derive.lambda_values import placed, revived

        self.n = rec["b"]
        self.jac_index = np.array(rec["jac_index"], dtype=np.int64).reshape(-1, 2)
        self.hess_index = np.array(rec["hess_index"], dtype=np.int64).reshape(-1, 3)
        for name, fn in rec["functions"].items():
            idx = [tuple(ix) for ix in fn["idx"]]
            setattr(self, name, placed(revived(fn["code"]), idx, tuple(fn["shape"])))


class StoredSparseRates:
    """The float64 rates of a stored model and their derivatives on sparse indices:
    :class:`derive.sparse.SparseRates` with its functions compiled from their recorded
    text (the mpmath evaluators are the full model's)."""

    def __init__(self, rec: dict[str, Any], owner: StoredModel) -> None:
        from derive.lambda_values import flat, revived

        self.b, self.n_transitions, self._owner = rec["b"], rec["n_transitions"], owner
        rows, cols, vals = rec["jumps"]
        self.jumps = (
            np.array(rows, dtype=np.int64),
            np.array(cols, dtype=np.int64),
            np.array(vals, dtype=float),
        )
        self.grad_index = np.array(rec["grad_index"], dtype=np.int64).reshape(-1, 2)
        self.hess_index = np.array(rec["hess_index"], dtype=np.int64).reshape(-1, 3)
        self._funcs = {w: flat(revived(f["code"]), f["n"]) for w, f in rec["functions"].items()}

    def evaluator(self, what: str, module: str = "numpy") -> Any:
        """As :meth:`derive.sparse.SparseRates.evaluator`."""
        if module == "numpy":
            return self._funcs[what]
        from derive.sparse import sparse_rates

        return sparse_rates(self._owner.full_model()).evaluator(what, module)

    def rates(self, s: Any, p: Any) -> np.ndarray:
        return self._funcs["rates"](s, p)

    def grad(self, s: Any, p: Any) -> np.ndarray:
        return self._funcs["grad"](s, p)

    def hess(self, s: Any, p: Any) -> np.ndarray:
        return self._funcs["hess"](s, p)


class StoredTransition:
    """A transition's jump (and label); anything else from the full model's."""

    def __init__(self, owner: StoredModel, index: int, jump: tuple[int, ...], label: str) -> None:
        self._owner, self._index, self.jump, self.label = owner, index, jump, label

    def __getattr__(self, attr: str) -> Any:
        if attr.startswith("_"):
            raise AttributeError(attr)
        return getattr(self._owner.full_model().transitions[self._index], attr)


class StoredRational(Fraction):
    """A SymPy ``Rational`` of a declaration, read back from disk: converted to mpf as
    that ``Rational`` is (:func:`numeric.prepared.start.start_point`)."""


def _tupled(value: Any) -> Any:
    return tuple(_tupled(v) for v in value) if isinstance(value, list) else value


class StoredModel:
    """A library model read from its record (module docstring): what the
    working-precision mean-field route reads, without SymPy."""

    #: rates without ``Piecewise`` kinks (:func:`numeric.meanfield.acceptance.check_no_kink`)
    kink_free = True

    def __init__(self, rec: dict[str, Any]) -> None:
        from derive.spec import ModelInfo, Parameter, StateSpace

        info = rec["info"]
        self.name: str = rec["name"]
        self.key = _tupled(rec["key"])
        self.states: tuple[str, ...] = tuple(rec["states"])
        self.params: tuple[str, ...] = tuple(rec["params"])
        self.options: tuple[str, ...] = tuple(rec["options"])
        self.transitions = tuple(
            StoredTransition(self, i, tuple(j), label)
            for i, (j, label) in enumerate(zip(rec["jumps"], rec["transition_names"], strict=True))
        )
        ref = info["reference"]
        self.info = ModelInfo(
            parameters=tuple(Parameter(**p) for p in info["parameters"]),
            state_space=StateSpace(**info["state_space"]),
            conservation=_tupled(info["conservation"]),
            reference=None if ref is None else tuple(StoredRational(v) for v in ref),
            fast_path=info["fast_path"],
            structure=info["structure"],
            citation=info["citation"],
            unique_fixed_point=info["unique_fixed_point"],
        )
        from derive.conservation import remember_laws

        laws = tuple(tuple(Fraction(v) for v in row) for row in rec["laws"])
        remember_laws(rec["jumps"], self.n, laws)
        self._rec = rec
        self._kernels: dict[str, Any] = {}
        self._full: Any = None

    @property
    def n(self) -> int:
        return len(self.states)

    def check_state_space(self, start: Any = None) -> None:
        """Nothing to check: the library's factories are not re-checked
        (:meth:`derive.model.Model.check_state_space`)."""

    def structure(self, name: str, default: Any = None) -> Any:
        """A structural fact declared by the factory (``info.structure``)."""
        return self.info.structure.get(name, default)

    def kernels(self, backend: str = "numba") -> Any:
        """The mpmath kernels from the cache directory (the full model's, generated
        afresh, when that module is missing or damaged); any other back end the full
        model's."""
        if backend != "mpmath":
            return self.full_model().kernels(backend)
        hit = self._kernels.get(backend)
        if hit is None:
            from mfstein.ground.errors import ParameterError
            from mfstein.ground.generated import load_generated

            try:
                module = load_generated(self._rec["mpmath_module"])
            except ParameterError:
                return self.full_model().kernels(backend)
            hit = self._kernels[backend] = ModuleKernels(module, self.n, self.params)
        return hit

    def float64_kernels(self) -> Float64Kernels:
        """The float64 kernels (:func:`numeric.meanfield.fixed_point.float64_kernels`)."""
        hit = self._kernels.get("float64")
        if hit is None:
            hit = self._kernels["float64"] = Float64Kernels(self._rec["float64"])
        return hit

    def sparse_rates(self) -> Any:
        """The sparse float64 rates (:func:`numeric.meanfield.structure.prepared_system`),
        the full model's when the record has none."""
        hit = self._kernels.get("sparse")
        if hit is None:
            rec = self._rec["sparse"]
            if rec is None:
                from derive.sparse import sparse_rates

                return sparse_rates(self.full_model())
            hit = self._kernels["sparse"] = StoredSparseRates(rec, self)
        return hit

    def full_model(self) -> Any:
        """The model built by its factory (SymPy), once."""
        if self._full is None:
            from derive.models import load_model

            self._full = load_model(self.name)
        return self._full

    def __getattr__(self, attr: str) -> Any:
        if attr.startswith("_"):
            raise AttributeError(attr)
        return getattr(self.full_model(), attr)

    def __repr__(self) -> str:
        return f"StoredModel({self.name!r})"

    def __reduce__(self) -> tuple[Any, tuple[str]]:
        # another process reads its own record (its kernels are functions and modules)
        return _revived, (self.name,)


def _revived(name: str) -> Any:
    """The stored model ``name`` in this process, else the model its factory builds."""
    hit = stored(name)
    if hit is not None:
        return hit
    from derive.models import load_model

    return load_model(name)


def stored(name: Any, params: Any = None) -> StoredModel | None:
    """The stored model of the library factory ``name`` when its record is on disk and
    ``params`` (names) are all model parameters (no factory option); else ``None``."""
    if not isinstance(name, str):
        return None
    key = record_key(name.strip())
    if key is None:
        return None
    with _lock:
        hit = _models.get(key)
        if hit is None:
            rec = records.read(_path(name.strip(), key))
            try:
                hit = None if rec is None else StoredModel(rec)
            except (ValueError, KeyError, TypeError):
                hit = None
            if hit is None:
                return None
            _models[key] = hit
    if params is not None and not set(map(str, params)) <= set(hit.params):
        return None
    return hit


def _info_record(info: Any) -> dict[str, Any] | None:
    """The declarations of a model as JSON, ``None`` when one cannot be kept exactly."""
    import sympy as sp

    ref = info.reference
    if callable(ref):
        return None
    if ref is not None:
        if not all(isinstance(v, int | sp.Rational) for v in ref):
            return None
        ref = [str(Fraction(int(sp.Rational(v).p), int(sp.Rational(v).q))) for v in ref]
    rec = {
        "parameters": [
            {
                k: getattr(p, k)
                for k in (
                    "name",
                    "low",
                    "high",
                    "low_inclusive",
                    "high_inclusive",
                    "integer",
                    "doc",
                )
            }
            for p in info.parameters
        ],
        "state_space": {
            "kind": info.state_space.kind,
            "total": info.state_space.total,
            "declared": info.state_space.declared,
        },
        "conservation": [list(map(int, c)) for c in info.conservation],
        "reference": ref,
        "fast_path": info.fast_path,
        "structure": dict(info.structure),
        "citation": info.citation,
        "unique_fixed_point": bool(info.unique_fixed_point),
    }
    try:
        if json.loads(json.dumps(rec)) != rec:
            return None
    except (TypeError, ValueError):
        return None
    return rec


def _float64_record(model: Any) -> dict[str, Any] | None:
    """The float64 kernels of ``model`` as recorded functions, ``None`` when one cannot
    be recorded."""
    from derive.lambda_values import portable
    from derive.sparse import lambda_kernels

    lk = lambda_kernels(model, "base")
    functions = {}
    for name in FLOAT64_KERNELS:
        getattr(lk, name)  # lambdified now when it was not before
        code = portable(lk.raw[name])
        if code is None:
            return None
        shape, entries = lk._objs[name]
        functions[name] = {"code": code, "shape": list(shape),
                           "idx": [list(ix) for ix, _ in entries]}  # fmt: skip
    return {"b": model.n, "jac_index": lk.jac_index.tolist(),
            "hess_index": lk.hess_index.tolist(), "functions": functions}  # fmt: skip


def _sparse_record(model: Any) -> dict[str, Any] | None:
    """The sparse float64 rates of ``model`` as recorded functions, ``None`` when a list
    is evaluated form by form or a function cannot be recorded."""
    from derive.lambda_values import portable
    from derive.sparse import sparse_rates

    sr = sparse_rates(model)
    functions = {}
    for what in ("rates", "grad", "hess"):
        sr.evaluator(what)
        raw = sr.raw.get((what, "numpy"))
        code = None if raw is None else portable(raw)
        if code is None:
            return None
        functions[what] = {"code": code, "n": sr._exprs.sizes[what]}
    return {
        "b": sr.b,
        "n_transitions": sr.n_transitions,
        "jumps": [v.tolist() for v in sr.jumps],
        "grad_index": sr.grad_index.tolist(),
        "hess_index": sr.hess_index.tolist(),
        "functions": functions,
    }


def save(name: str, model: Any) -> bool:
    """Write the record of the library model ``name`` (built by its factory without
    options as ``model``); ``True`` when written, ``False`` when it cannot be kept
    (remembered for the process: :data:`_refused`)."""
    key = record_key(name)
    if key is None or key in _refused:
        return False
    written = _write(name, key, model)
    if not written:
        _refused.add(key)
    return written


def _write(name: str, key: str, model: Any) -> bool:
    """:func:`save`'s work: ``False`` when the model cannot be kept or the file cannot
    be written (a record is only an acceleration: the solve goes on without it)."""
    from derive.conservation import conservation_laws
    from derive.kernels import kernels
    from derive.model import Model, kinks
    from derive.models import factory, factory_keywords

    if not isinstance(model, Model) or model.key[0] == "custom":
        return False
    if model.info.fast_path or any(kinks(t.rate) for t in model.transitions):
        return False  # a family's own solver, or the float64 kink check: the full model
    info = _info_record(model.info)
    f64 = _float64_record(model) if info is not None else None
    if f64 is None:
        return False
    rec_jumps = [list(map(int, t.jump)) for t in model.transitions]
    rec = {
        "name": name,
        "key": json.loads(json.dumps(model.key)),
        "states": [str(s) for s in model.states],
        "params": [str(p) for p in model.params],
        "options": sorted(factory_keywords(factory(name))),
        "jumps": rec_jumps,
        "laws": [[str(c) for c in row] for row in conservation_laws(rec_jumps, model.n)],
        "transition_names": [t.label for t in model.transitions],
        "info": info,
        "mpmath_module": Path(kernels(model, "mpmath").path).stem,
        "float64": f64,
        "sparse": _sparse_record(model),
    }
    if _tupled(rec["key"]) != model.key:
        return False
    try:
        records.write(_path(name, key), rec, sort_keys=False)
    except OSError:
        return False
    return True
