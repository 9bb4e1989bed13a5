"""Loading mfstein's compiled caches without numba's context refresh (issue 34).

:func:`mfstein.ground.jit._light_load` rebuilds cached object code without the
``target_context.refresh()`` that numba's ``Cache.load_overload`` starts with (some 60
modules of typing and lowering registries, 0.2 s of CPU in a first ``simulate``), when
every symbol the object code refers to is already defined; otherwise numba's own load
runs.  Each test runs two fresh processes on one cache: the first compiles, the second
loads.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

from deadlines import deadline

#: A module of two cached functions (one allocating an array: the NRT's symbols).
TINY = (
    "import math\nimport numpy as np\nfrom mfstein.ground.jit import numba\n\n"
    "@numba.njit(cache=True)\ndef f(x):\n    return math.exp(x) + 2 * x\n\n"
    "@numba.njit(cache=True)\ndef g(n):\n    a = np.arange(n) * 0.5\n    return a.sum()\n"
)

LOAD = r"""
import importlib.util, json, sys, warnings
import numpy as np
from mfstein.ground import cache

src = cache.cache_dir() / "tiny_light.py"
if not src.exists():
    src.write_text(sys.argv[1])
spec = importlib.util.spec_from_file_location("tiny_light", src)
mod = sys.modules[spec.name] = importlib.util.module_from_spec(spec)
spec.loader.exec_module(mod)
with warnings.catch_warnings():
    warnings.simplefilter("error")
    values = [mod.f(0.25), mod.g(7)]
hits = sum(mod.f.stats.cache_hits.values()) + sum(mod.g.stats.cache_hits.values())
REGISTRIES = ("numba.core.typing.arraydecl", "numba.typed.typeddict",
              "numba.np.random.generator_methods", "numba.np.polynomial.polynomial_functions")
refreshed = [m for m in REGISTRIES if m in sys.modules]
from mfstein.ground.jit import numba
from numba.core.typing.typeof import typeof_impl

typed = set(typeof_impl.registry)  # what a call's arguments can be typed as, before ...
h = numba.njit(lambda a: np.exp(a).sum())  # a compilation after the light loads
later = float(h(np.arange(3.0))) == float(np.exp(np.arange(3.0)).sum())
typed_after = set(typeof_impl.registry)  # ... and after the compilation's refresh
print(json.dumps({"values": [v.hex() for v in values], "hits": hits, "refreshed": refreshed,
                  "later": later, "after": [m for m in REGISTRIES if m in sys.modules],
                  "typeof_missing": sorted(str(t) for t in typed_after - typed)}))
"""


def _run(code: str, cache: Path, *args: str) -> subprocess.CompletedProcess:
    env = {**os.environ, "MFSTEIN_CACHE_DIR": str(cache)}
    env.pop("PYTHONWARNINGS", None)
    return subprocess.run(
        [sys.executable, "-c", code, *args],
        env=env,
        capture_output=True,
        text=True,
        timeout=deadline(120),
    )


def test_cached_code_loads_without_the_context_refresh_and_later_compiles_work(
    tmp_path,
) -> None:
    """A fresh process loads both cached functions without numba's registries being
    installed (four of the modules numba's refresh imports stay unimported), gets
    the same bits as the compiling process, types every kind of argument the refresh
    would teach numba (a ``cfunc`` was typed ``pyobject``), and still compiles a new
    function (numba's compiler refreshes the contexts itself, importing them)."""
    first = _run(LOAD, tmp_path, TINY)
    assert first.returncode == 0, first.stderr[-2000:]
    compiled = json.loads(first.stdout.splitlines()[-1])
    assert compiled["hits"] == 0, compiled
    loaded_run = _run(LOAD, tmp_path, TINY)
    assert loaded_run.returncode == 0, loaded_run.stderr[-2000:]
    loaded = json.loads(loaded_run.stdout.splitlines()[-1])
    assert loaded["hits"] == 2, loaded  # both from the cache
    assert loaded["refreshed"] == [], loaded  # no registries installed to load them
    assert loaded["typeof_missing"] == [], loaded  # but every argument type is known
    assert loaded["values"] == compiled["values"], (loaded, compiled)
    assert loaded["later"] is True and compiled["later"] is True
    assert len(loaded["after"]) == 4 and len(compiled["refreshed"]) == 4


#: A cached function calling a C function through a symbol that the process defines
#: only when numba's context refreshes (as an extension's registry could).
EXTERNAL = r"""
import ctypes, importlib.util, json, sys, warnings
import llvmlite.binding as ll
from mfstein.ground import cache

proto = ctypes.CFUNCTYPE(ctypes.c_double, ctypes.c_double)
triple = proto(lambda x: 3.0 * x)
address = ctypes.cast(triple, ctypes.c_void_p).value
src = cache.cache_dir() / "tiny_external.py"
if sys.argv[1] == "compile":
    ll.add_symbol("mfstein_test_triple", address)
    src.write_text(
        "from mfstein.ground.jit import numba\n"
        "triple = numba.types.ExternalFunction('mfstein_test_triple', "
        "numba.float64(numba.float64))\n\n"
        "@numba.njit(cache=True)\ndef f(x):\n    return triple(x) + 1.0\n"
    )
else:
    from numba.core import cpu
    real = cpu.CPUContext.refresh
    calls = []

    def refresh(self):
        calls.append(1)
        ll.add_symbol("mfstein_test_triple", address)
        return real(self)

    cpu.CPUContext.refresh = refresh
spec = importlib.util.spec_from_file_location("tiny_external", src)
mod = sys.modules[spec.name] = importlib.util.module_from_spec(spec)
spec.loader.exec_module(mod)
with warnings.catch_warnings():
    warnings.simplefilter("error")
    value = mod.f(2.0)
print(json.dumps({"value": value, "hits": sum(mod.f.stats.cache_hits.values()),
                  "refreshed": sys.argv[1] == "load" and bool(calls)}))
"""


def test_a_symbol_not_defined_yet_falls_back_to_numbas_refreshing_load(tmp_path) -> None:
    """Object code naming a symbol that only numba's refresh defines is not linked by
    the light load (LLVM would abort the process on the unresolved symbol): numba's
    own load refreshes, defines it and loads the cached code -- a cache hit, with no
    warning of damage."""
    first = _run(EXTERNAL, tmp_path, "compile")
    assert first.returncode == 0, first.stderr[-2000:]
    assert json.loads(first.stdout) == {"value": 7.0, "hits": 0, "refreshed": False}
    second = _run(EXTERNAL, tmp_path, "load")
    assert second.returncode == 0, second.stderr[-2000:]
    assert json.loads(second.stdout) == {"value": 7.0, "hits": 1, "refreshed": True}
