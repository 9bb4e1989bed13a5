"""The model library: one module per model family, and user models from files.

Built-in families (each a factory returning a :class:`derive.model.Model`, or a
:class:`derive.spec.Truncated` family for infinite buffers):

``supermarket``  power-of-d choices with buffer ``b`` (:mod:`derive.models.supermarket`);
``jsq_L``        JSQ(L), arrival rate ``alpha``, service rate ``beta`` (:mod:`derive.models.jsq`);
``sir``          the SIRS epidemic, a model with a conservation law (:mod:`derive.models.sir`);
``cache_random`` a cache under RANDOM replacement, Zipf requests (:mod:`derive.models.cache`);
``bike_sharing`` stations of finite capacity (:mod:`derive.models.bike_sharing`);
``power_of_d_two_speeds`` power-of-d with two server speeds (:mod:`derive.models.heterogeneous`).
``sis``          the SIS ("malware") epidemic, expansion in closed form (:mod:`derive.models.sis`).
``jiq``          Join-Idle-Queue, idle servers report to dispatchers (:mod:`derive.models.jiq`).
``power_of_two_heterogeneous`` K servers of K distinct speeds, object by object: a
                 heterogeneous population (:mod:`derive.models.heterogeneous_servers`).
``power_of_d_heterogeneous`` JSQ(d) for any d with K servers of their own speeds, object
                 by object (:mod:`derive.models.power_of_d_servers`).

Beside them, :mod:`derive.models.persistent_idle` describes the discrete-time
Persistent-Idle model (two pmfs and ``n`` servers; not a population process).

Your own model
--------------
Write a Python file with a factory -- a function taking no arguments, or only
keyword arguments with defaults -- that returns a ``derive.Model``::

    # mymodel.py
    import sympy as sp
    from derive import Model, Transition
    from derive.spec import ModelInfo, Parameter, StateSpace

    def birth_death(cap=1):
        x, lam = sp.symbols("x lam")
        return Model(
            "birth-death", (x,), (lam,),
            [Transition((1,), lam * (cap - x), "birth"), Transition((-1,), x, "death")],
            info=ModelInfo(parameters=(Parameter("lam", low=0),),
                           state_space=StateSpace("box")),
        )

(``derive/models/examples/birth_death.py``, shipped with the package and
reachable as ``derive.models.examples.birth_death:birth_death``, is this file)
and use it as ``load_model("mymodel.py:birth_death", cap=2)`` from Python, or
``mfstein solve --model mymodel.py:birth_death --param cap=2 --param lam=0.5``
from the command line (``--param`` names that are factory keywords go to the
factory, the others are the model's parameters).

Model files run under a time limit: importing the file and calling its
factory may each take at most ``MFSTEIN_MODEL_TIMEOUT`` seconds (default
:data:`mfstein.ground.limits.MODEL_TIMEOUT_SECONDS`; see :mod:`mfstein.ground.time_limit`
for how a loop in Python and one stuck in C code are stopped, POSIX only).
Any exception a file or factory raises -- ``SystemExit`` (``sys.exit()``) and
other ``BaseException`` included, only ``KeyboardInterrupt`` (Ctrl-C) passes
through -- becomes one sentence naming the file
(:class:`mfstein.ground.errors.ParameterError`).  What a file or factory prints goes to
standard error (:func:`mfstein.ground.streams.user_output_to_stderr`): standard output
carries the command's answer only.
"""

from __future__ import annotations

import functools
import hashlib
import importlib
import importlib.util
import inspect
import re
import sys
import threading
from collections import OrderedDict
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import Any

from mfstein.ground.arguments import check_params
from mfstein.ground.errors import ParameterError

#: Built-in model families: name -> "module:factory".
MODELS: dict[str, str] = {
    "supermarket": "derive.models.supermarket:supermarket",
    "jsq_L": "derive.models.jsq:jsq_L",
    "sir": "derive.models.sir:sir",
    "cache_random": "derive.models.cache:cache_random",
    "bike_sharing": "derive.models.bike_sharing:bike_sharing",
    "power_of_d_two_speeds": "derive.models.heterogeneous:power_of_d_two_speeds",
    "sis": "derive.models.sis:sis",
    "jiq": "derive.models.jiq:jiq",
    "power_of_two_heterogeneous": "derive.models.heterogeneous_servers:power_of_two_heterogeneous",
    "power_of_d_heterogeneous": "derive.models.power_of_d_servers:power_of_d_heterogeneous",
}


#: What each option of a library factory may be: the sentence refusing a missing or
#: unknown option names the options with these (a test keeps them in step with the
#: factories' signatures).
OPTION_VALUES: dict[str, dict[str, str]] = {
    "supermarket": {
        "b": "an integer >= 1, auto or inf",
        "d": "an integer >= 1",
        "mu": "a positive number, or mu to keep it a parameter",
        "replacement": "true or false",
    },
    "jsq_L": {
        "L": "an integer >= 1",
        "b": "an integer >= 1, auto or inf",
        "distinct": "true or false",
    },
    "sir": {},
    "cache_random": {"n": "an integer >= 2", "m": "an integer from 1 to n - 1", "alpha": ">= 0"},
    "bike_sharing": {"K": "an integer >= 1"},
    "power_of_d_two_speeds": {"b": "an integer >= 1", "d": "an integer >= 1"},
    "sis": {},
    "jiq": {"b": "an integer >= 1", "r": "an integer >= 1", "L": "an integer > r"},
    "power_of_two_heterogeneous": {
        "K": "an integer >= 2",
        "b": "an integer from 1 to 50",
        "speeds": "K numbers > 0, comma-separated",
    },
    "power_of_d_heterogeneous": {
        "K": "an integer >= 2",
        "b": "an integer from 1 to 50",
        "d": "an integer from 2 to 20 (at most K with sampling distinct)",
        "speeds": "K numbers > 0, comma-separated",
        "sampling": "distinct or replacement",
        "speed_classes": "C numbers > 0, comma-separated, C dividing K",
    },
}


def available() -> list[str]:
    """Names of the built-in model families."""
    return sorted(MODELS)


def factory(spec: str) -> Callable[..., Any]:
    """The factory named by ``spec``: a built-in name, ``path/to/file.py:function``
    or ``package.module:function`` (an importable module, e.g. the shipped
    examples ``derive.models.examples.birth_death:birth_death``)."""
    if not isinstance(spec, str) or not spec.strip():
        raise ParameterError(
            f"model must be one of {', '.join(available())} or FILE.py:FACTORY, got {spec!r}."
        )
    spec = spec.strip()
    if spec in MODELS:
        module, name = MODELS[spec].split(":")
        return getattr(importlib.import_module(module), name)
    path_text, sep, name = spec.rpartition(":")
    if sep and path_text.endswith(".py"):
        module = _import_file(Path(path_text))
    elif sep and _MODULE_NAME.fullmatch(path_text):
        module = _import_module(path_text)
    else:
        raise ParameterError(
            f"model must be one of {', '.join(available())}, FILE.py:FACTORY or "
            f"MODULE:FACTORY, got {spec!r}."
        )
    fn = getattr(module, name, None)
    if fn is None:
        raise ParameterError(f"model file {path_text} does not define a factory named {name!r}.")
    if not callable(fn):
        raise ParameterError(f"{name!r} in model file {path_text} is not a function.")
    required = [
        p.name
        for p in inspect.signature(fn).parameters.values()
        if p.default is inspect.Parameter.empty
        and p.kind not in (inspect.Parameter.VAR_POSITIONAL, inspect.Parameter.VAR_KEYWORD)
    ]
    if required:
        raise ParameterError(
            f"factory {name!r} in {path_text} must take no arguments or only keyword "
            f"arguments with defaults; {', '.join(required)} has no default."
        )
    return fn


#: An importable module name (``derive.models.examples.birth_death``), not a file.
_MODULE_NAME = re.compile(r"[A-Za-z_]\w*(\.[A-Za-z_]\w*)*")


def _import_module(name: str) -> Any:
    """An installed module named in a ``MODULE:FACTORY`` spec."""
    what = f"model module {name} could not be imported"
    return _run_user_code(what, importlib.import_module, name)


def _import_file(path: Path) -> Any:
    if not path.is_file():
        raise ParameterError(f"model file {path} does not exist.")
    digest = hashlib.sha256(str(path.resolve()).encode()).hexdigest()[:12]
    name = f"mfstein_user_model_{digest}"
    spec = importlib.util.spec_from_file_location(name, path)
    if spec is None or spec.loader is None:
        raise ParameterError(f"model file {path} is not a Python file.")
    module = importlib.util.module_from_spec(spec)
    sys.modules[name] = module
    try:
        _run_user_code(f"model file {path} could not be imported", spec.loader.exec_module, module)
    except BaseException:
        sys.modules.pop(name, None)
        raise
    return module


def _run_user_code(what: str, fn: Callable[..., Any], *args: Any, **kwargs: Any) -> Any:
    """``fn(*args, **kwargs)`` -- a user's file or factory -- under the model time
    limit, with what it prints sent to standard error and anything it raises but
    ``KeyboardInterrupt`` and :class:`ParameterError` turned into one sentence
    starting with ``what``."""
    from mfstein.ground.exit_guard import ExitCalled, exit_guarded
    from mfstein.ground.limits import model_timeout
    from mfstein.ground.streams import user_output_to_stderr
    from mfstein.ground.time_limit import TimeLimitExceeded, time_limited

    seconds = model_timeout()
    limit = f"{seconds:g} s (MFSTEIN_MODEL_TIMEOUT)"
    try:
        with (
            time_limited(seconds, f"mfstein: error: {what}: it ran past {limit}; stopped."),
            user_output_to_stderr(),  # a print() in it must not corrupt the answer on stdout
            exit_guarded(),
        ):
            return fn(*args, **kwargs)
    except (KeyboardInterrupt, ParameterError):
        raise
    except TimeLimitExceeded:
        raise ParameterError(f"{what}: it ran past the time limit of {limit}.") from None
    except SystemExit as exc:
        raise ParameterError(f"{what}: it called sys.exit({exc.code!r}).") from None
    except ExitCalled as exc:
        raise ParameterError(f"{what}: it called os._exit({exc.status!r}).") from None
    except BaseException as exc:  # a user's code: report, do not crash
        detail = f"{type(exc).__name__}: {exc}" if str(exc) else type(exc).__name__
        raise ParameterError(f"{what} ({detail}).") from None


def factory_keywords(fn: Callable[..., Any]) -> set[str]:
    """Keyword arguments a factory accepts (its structural options, e.g. ``b``)."""
    return set(_keywords(fn))


@functools.lru_cache(maxsize=128)
def _keywords(fn: Callable[..., Any]) -> frozenset[str]:
    """:func:`factory_keywords`, read once per factory (``inspect.signature`` costs some
    10 us, and every task given a model by name asks it)."""
    return frozenset(
        p.name
        for p in inspect.signature(fn).parameters.values()
        if p.kind in (inspect.Parameter.POSITIONAL_OR_KEYWORD, inspect.Parameter.KEYWORD_ONLY)
    )


def options_text(spec: str, fn: Callable[..., Any], names: Any = None) -> str:
    """The options ``names`` (default all) of the factory ``fn`` of model ``spec`` with
    what each may be (:data:`OPTION_VALUES`) and its default: ``"b (an integer >= 1,
    auto or inf), d (an integer >= 1; default 2)"``; a user's factory shows defaults."""
    values = OPTION_VALUES.get(spec.strip(), {})
    parts = []
    for p in inspect.signature(fn).parameters.values():
        if p.kind not in (inspect.Parameter.POSITIONAL_OR_KEYWORD, inspect.Parameter.KEYWORD_ONLY):
            continue
        if names is not None and p.name not in names:
            continue
        what = [values[p.name]] if p.name in values else []
        if p.default is not inspect.Parameter.empty:
            what.append(f"default {p.default!r}")
        parts.append(f"{p.name} ({'; '.join(what)})" if what else p.name)
    return ", ".join(parts) or "none"


def parse_option(text: str) -> Any:
    """A factory option given as text: ``true``/``false``, an integer, ``inf``, an
    exact rational (decimal or ``p/q``), or the text itself.

    Numbers are read by the one number parser (:mod:`mfstein.ground.numbers`): ``3.0``,
    ``1e3`` and ``10**3`` are integers, ``9/10`` and ``0.9`` the rational 9/10.
    """
    from mfstein.ground.numbers import parse_real, read_integer

    t = text.strip()
    if t.lower() in ("true", "false"):
        return t.lower() == "true"
    if t.lower() == "inf":
        return "inf"
    number = read_integer(t)
    if number is not None:
        return number
    try:
        exact = parse_real("option", t)
    except ParameterError:
        return t
    import sympy as sp

    return sp.Rational(exact.numerator, exact.denominator)


#: Most models :func:`load_model` keeps by name in this process (least recently used
#: dropped first), under :func:`_by_name`'s key.
MODELS_KEPT = 64
_KEPT: OrderedDict[tuple[str, tuple, Any], Any] = OrderedDict()
_KEPT_LOCK = threading.Lock()


def load_model(spec: str, **options: Any) -> Any:
    """Build a model: ``load_model("supermarket", b=5, d=2)``, ``load_model("file.py:f")``.

    Returns a :class:`derive.model.Model` (or a :class:`derive.spec.Truncated`
    family); anything else returned by a factory is refused.

    The same name and factory options give the same object in one process (the last
    :data:`MODELS_KEPT` kept; a file's factory anew once the file changed), so every
    task called by name reaches the caches its first call filled -- the prepared
    problem (:mod:`numeric.prepared.cache`), the derived objects, an exact chain's
    record -- instead of building and preparing the model again.  A model is not
    changed once built (:class:`derive.model.Model` refuses a new name, states,
    parameters, transitions or key), so sharing it is safe; :func:`clear_models`
    forgets them (a benchmark's fresh object).  Options that do not hash (a list)
    build a new model each call.
    """
    key = _by_name(spec, options)
    if key is None:
        return _build(spec, options)
    model = _kept_at(key)
    if model is None:
        model = _build(key[0], {name: value for name, _, value in key[1]})
        with _KEPT_LOCK:
            model = _KEPT.setdefault(key, model)  # (another thread's, when it was first)
            while len(_KEPT) > MODELS_KEPT:
                _KEPT.popitem(last=False)
    return model


def kept_model(spec: Any, **options: Any) -> Any:
    """The model :func:`load_model` keeps for ``spec`` and ``options``, ``None`` when it
    has built none (nothing is built here)."""
    key = _by_name(spec, options)
    return None if key is None else _kept_at(key)


def clear_models() -> None:
    """Forget the models :func:`load_model` kept by name: the next call builds anew."""
    with _KEPT_LOCK:
        _KEPT.clear()


def _kept_at(key: tuple[str, tuple, Any]) -> Any:
    with _KEPT_LOCK:
        model = _KEPT.get(key)
        if model is not None:
            _KEPT.move_to_end(key)
        return model


def _by_name(spec: Any, options: Mapping[str, Any]) -> tuple[str, tuple, Any] | None:
    """The key :func:`load_model` keeps a model under: the name, the options with their
    types (``2`` and ``2.0`` are two keys) and, for ``file.py:factory``, the file's
    path, size and modification time; ``None`` when it cannot be kept (not a name, an
    option that does not hash, a file that is not there)."""
    if not isinstance(spec, str):
        return None
    spec = spec.strip()
    items = tuple(sorted((str(k), type(v), v) for k, v in options.items())) if options else ()
    try:
        hash(items)
    except TypeError:
        return None
    if spec in MODELS:
        return spec, items, None
    stamp = None
    path_text, sep, _ = spec.rpartition(":")
    if sep and path_text.endswith(".py"):
        try:
            st = Path(path_text).resolve().stat()
        except OSError:
            return None
        stamp = (str(Path(path_text).resolve()), st.st_size, st.st_mtime_ns)
    return spec, items, stamp


def _build(spec: str, options: Mapping[str, Any]) -> Any:
    """A new model from the factory named ``spec`` (:func:`load_model`'s work)."""
    from derive.heterogeneous_population import HeterogeneousModel
    from derive.model import Model
    from derive.spec import Truncated

    fn = factory(spec)
    accepted = factory_keywords(fn)
    unknown = sorted(set(options) - accepted)
    if unknown:
        raise ParameterError(
            f"{', '.join(unknown)} is not an option of model {spec!r}; its options are "
            f"{options_text(spec, fn)}."
        )
    missing = [
        p.name
        for p in inspect.signature(fn).parameters.values()
        if p.name in accepted and p.default is inspect.Parameter.empty and p.name not in options
    ]
    if missing:
        raise ParameterError(
            f"model {spec.strip()} needs the option {options_text(spec, fn, missing)}; give "
            f"it as --param {missing[0]}=VALUE (from Python: {missing[0]}=...)."
        )
    what = f"model factory {spec!r} failed"
    if spec.strip() in MODELS:  # the library's own factories: no time limit
        try:
            model = fn(**options)
        except ParameterError:
            raise
        except Exception as exc:
            raise ParameterError(f"{what} ({type(exc).__name__}: {exc}).") from None
    else:
        model = _run_user_code(what, fn, **options)
    if not isinstance(model, Model | Truncated | HeterogeneousModel):
        raise ParameterError(
            f"model factory {spec!r} returned {type(model).__name__}, not a derive.Model."
        )
    return model


def split_values(spec: str, values: Mapping[str, str]) -> tuple[dict[str, Any], dict[str, str]]:
    """Split ``--param name=value`` pairs into factory options and model parameters."""
    accepted = factory_keywords(factory(spec))
    options = {k: parse_option(v) for k, v in values.items() if k in accepted}
    params = {k: v for k, v in values.items() if k not in accepted}
    return options, params


def as_model(model: Any, params: Mapping[str, Any] | None) -> tuple[Any, dict[str, Any]]:
    """The model and its parameter values, as every task entry takes them.

    ``model`` is a :class:`derive.model.Model`, a :class:`derive.spec.Truncated`
    family, or a name :func:`load_model` takes (a library name or
    ``file.py:factory``); for a name, the entries of ``params`` that are
    keywords of the factory (e.g. ``b``, ``d``, ``cap``) build the model and the
    others are its parameter values.  ``params`` is a mapping (``{}`` or ``None``
    for a model without parameters).
    """
    from derive.heterogeneous_population import HeterogeneousModel
    from derive.model import Model
    from derive.spec import Truncated

    check_params(params)
    if params is None:
        params = {}
    if isinstance(model, Model | Truncated | HeterogeneousModel):
        return model, dict(params)
    if isinstance(model, str):
        accepted = factory_keywords(factory(model))
        options = {
            k: parse_option(v) if isinstance(v, str) else v
            for k, v in params.items()
            if k in accepted
        }
        rest = {k: v for k, v in params.items() if k not in accepted}
        return load_model(model, **options), rest
    raise ParameterError(
        "model must be a derive.Model, a Truncated family or a model name "
        f"(a library name or FILE.py:FACTORY), got {type(model).__name__}."
    )
