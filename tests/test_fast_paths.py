"""One fast-path table, and general code that names no model family (issue 31).

A model family solved its own way by some task is found through the one table
:data:`mfstein.ground.fast_paths.FAST_PATHS` (``ModelInfo.fast_path`` name -> where the
mean field, the exact chain and the simulation find the family's route); the
general modules of each task look a family up there and never name one.  "Naming"
is read with :mod:`ast`: a string constant in code (docstrings do not count,
comments are not in the tree) holding a family's name as a word, or an import of
a module whose dotted path has a family's name as a part (``sim.supermarket``).
"""

from __future__ import annotations

import ast
import functools
import re
from pathlib import Path

import pytest
from test_layers import ROOT, imports, layer, module_name

from mfstein.ground.fast_paths import FAST_PATHS, TASKS, families, load, route

#: The general modules: every file of these folders and these files.
GENERAL_FOLDERS = ("numeric/meanfield", "numeric/expansion", "numeric/certified", "numeric/exact")
GENERAL_FILES = (
    "sim/api.py",
    "sim/runner.py",
    "sim/base.py",
    "mfstein/cli/__init__.py",
    "mfstein/cli/__main__.py",
    "mfstein/cli/constant_options.py",
    "mfstein/cli/model_args.py",
    "mfstein/cli/option_scope.py",
    "mfstein/cli/option_types.py",
    "mfstein/cli/output_files.py",
    "mfstein/cli/short_options.py",
)
#: A family's own files inside a general folder (none: a family's files are its
#: package under ``mfstein/families/``).
FAMILY_FILES: tuple[str, ...] = ()

#: Where a general module still names a family, with the reason (a ratchet: a
#: new one fails, and so does a listed one that is gone).
KNOWN: dict[str, str] = {}

#: Where a general module still holds a table (tuple, list, set, dict keys) of two or
#: more of a family's own command-line options (``FastPath.short_options.dests``), with
#: the reason (a ratchet, as :data:`KNOWN`).
KNOWN_OPTION_TABLES: dict[str, str] = {
    "sim/base.py: ('lam', 'd', 'replacement', 'policy')": (
        "the supermarket's keys of SimulationResult.to_dict, in the documented --json "
        "order; the family's family_fields could carry them"
    ),
    "mfstein/cli/model_args.py: ('d', 'without_replacement', 'alpha')": (
        "the options refused, in one sentence, for a model of another family; the "
        "registration could say how each short option is refused"
    ),
    "mfstein/cli/model_args.py: ('lam', 'gamma')": (
        "the arrival rate, refused for another family and turned into --param lam; the "
        "registration could name the family's CLI hook that maps its options"
    ),
}


@functools.cache
def family_names() -> frozenset[str]:
    """The names of the library's model families and fast paths."""
    from derive.models import MODELS

    return frozenset(MODELS) | frozenset(FAST_PATHS)


def general_files() -> list[Path]:
    files = [p for folder in GENERAL_FOLDERS for p in sorted((ROOT / folder).rglob("*.py"))]
    files += [ROOT / f for f in GENERAL_FILES]
    return [f for f in files if str(f.relative_to(ROOT)) not in FAMILY_FILES]


def docstrings(tree: ast.AST) -> set[int]:
    """The ``id`` of every docstring node of a module, class or function."""
    out = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Module | ast.ClassDef | ast.FunctionDef | ast.AsyncFunctionDef):
            body = node.body
            if body and isinstance(body[0], ast.Expr) and isinstance(body[0].value, ast.Constant):
                out.add(id(body[0].value))
    return out


def named_families(source: str, module: str, names: frozenset[str]) -> list[str]:
    """How ``source`` (module ``module``) names a family of ``names``."""
    tree = ast.parse(source)
    skip = docstrings(tree)
    words = re.compile(r"\b(" + "|".join(map(re.escape, sorted(names))) + r")\b")
    found = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Constant) and isinstance(node.value, str) and id(node) not in skip:
            found += [f"{w!r}" for w in words.findall(node.value)]
    for _, target, _ in imports(source, module):
        if layer(target) and set(target.split(".")) & names:
            found.append(f"import {target}")
    return sorted(set(found))


def scan() -> list[str]:
    out = []
    for f in general_files():
        rel = str(f.relative_to(ROOT))
        found = named_families(f.read_text(), module_name(f), family_names())
        out += [f"{rel}: {what}" for what in found]
    return out


# -------------------------------------------------------------- the checker itself
def test_the_scan_sees_strings_in_code_and_imports_but_not_docstrings() -> None:
    source = (
        '"""The supermarket is named in a docstring only."""\n'
        "import sim.supermarket\n"
        "from numeric.meanfield import general\n"
        "def f(model):\n"
        '    """Nor here: sir."""\n'
        "    # nor in a comment: supermarket\n"
        '    return model.info.fast_path != "supermarket" or f"a sir-like {model}"\n'
    )
    names = frozenset({"supermarket", "sir"})
    assert named_families(source, "numeric.x", names) == [
        "'sir'",
        "'supermarket'",
        "import sim.supermarket",
    ]
    # a word inside another word is not a family's name
    assert named_families('x = "supermarkets_sirocco"\n', "numeric.x", names) == []


def test_the_general_modules_are_there() -> None:
    files = general_files()
    assert all(f.is_file() for f in files)
    assert ROOT / "numeric/meanfield/general.py" in files
    assert not [f for f in files if (ROOT / "mfstein" / "families") in f.parents]
    assert {"supermarket", "sir"} <= family_names()


# ------------------------------------------------------------- the layout's checks
def test_no_general_module_names_a_model_family_but_the_listed_ones() -> None:
    found = scan()
    bad = [f"new: {f}" for f in found if f not in KNOWN]
    bad += [f"listed but gone (remove it from KNOWN): {k}" for k in KNOWN if k not in found]
    assert not bad, "\n".join(bad)


@pytest.mark.parametrize("family", sorted(FAST_PATHS))
def test_every_route_of_the_table_loads_from_the_familys_own_package(family: str) -> None:
    """A route names a module of the family's package ``mfstein.families.<family>``
    (the layer above ``sim``, which no task's general code imports), or, for the
    restriction to fewer coordinates, the model's definition in ``derive``."""
    from sim.base import Simulator

    own = f"mfstein.families.{family}."
    for task in TASKS:
        where = route(family, task)
        if where is None:
            continue
        module = where.partition(":")[0]
        if task == "restriction":
            assert layer(module) == "derive", f"{family}.{task} = {where}"
        else:
            assert module.startswith(own) and layer(module) == "families", f"{family}.{task}"
        target = load(family, task)
        if task == "simulation":
            assert issubclass(target, Simulator)
        else:
            assert callable(target)


def test_each_family_of_the_table_is_declared_by_a_library_model() -> None:
    from derive.models import load_model

    declared = {load_model("supermarket", b=2).info.fast_path, load_model("jsq_L").info.fast_path}
    assert set(FAST_PATHS) <= declared
    assert families("exact") == ("supermarket",)
    assert route("sir", "exact") is None and load("sir", "simulation") is None


def test_each_task_finds_the_family_through_the_table() -> None:
    from derive.models import load_model
    from numeric.exact import fast_paths as exact_paths
    from sim.base import fast_simulator

    model, sir = load_model("supermarket", b=2), load_model("sir")
    assert exact_paths.fast_path(model) is load("supermarket", "exact")
    assert exact_paths.fast_path(sir) is None
    assert fast_simulator(model) is load("supermarket", "simulation")
    assert fast_simulator(sir) is None


def test_the_runner_imports_no_engine() -> None:
    """``sim.runner`` runs any engine's units: it reads the spec through its
    ``RunSpec`` protocol and is given ``advance``/``fresh_state``; of ``sim`` it
    imports only the seeds and the checkpoint's JSON."""
    source = (ROOT / "sim/runner.py").read_text()
    own = {t for _, t, _ in imports(source, "sim.runner") if t.startswith("sim")}
    assert own == {"sim.rng", "sim.replication_json"}


def test_a_family_declares_its_short_forms_and_short_options() -> None:
    """The general code finds the supermarket's ``numeric.exact.solve_exact`` and its
    command-line options (``--lam``, ``--d``, ``--mu``, ...) in the family's own
    registrations, not by naming it."""
    import importlib

    from derive.models import MODELS
    from mfstein.cli.short_options import FAMILIES, declares, owner

    assert set(FAMILIES) <= set(MODELS)
    assert dict(FAMILIES) == {
        f: e.short_options for f, e in FAST_PATHS.items() if e.short_options.dests
    }
    for family, entry in FAST_PATHS.items():
        if entry.short_options.check is not None:  # the family's own module, found by text
            module, _, attribute = entry.short_options.check.partition(":")
            assert module.startswith(f"mfstein.families.{family}."), entry.short_options
            assert callable(getattr(importlib.import_module(module), attribute))
        assert family in MODELS
        for package, where in entry.short_forms:
            module, _, attribute = where.partition(":")
            assert module.startswith(f"mfstein.families.{family}."), where
            pkg = importlib.import_module(package)
            assert attribute in pkg.__all__
            assert getattr(pkg, attribute) is getattr(importlib.import_module(module), attribute)
    from mfstein.families.supermarket.exact_size import check_exact_states

    with pytest.warns(DeprecationWarning, match="check_exact_states is deprecated"):
        from mfstein.cli.supermarket_grid import check_exact_states as old_path
    assert old_path is check_exact_states
    assert declares("supermarket", "mu") and declares("supermarket", "without_replacement")
    assert not declares("sir", "mu") and not declares(None, "d") and owner("lam") == "supermarket"


def test_short_forms_and_short_options_are_not_tasks() -> None:
    """``short_forms`` and ``short_options`` are fields of the registration, not tasks a
    route serves."""
    from mfstein.ground.errors import ParameterError

    assert not {"short_forms", "short_options"} & set(TASKS) and "exact" in TASKS
    for field in ("short_forms", "short_options"):
        with pytest.raises(ParameterError, match="task must be one of"):
            route("supermarket", field)


def family_policies() -> dict[str, frozenset[str]]:
    """Each fast-path simulator's own dispatch policies (``Simulator.policies``), but
    ``"pod"``, the model's own transitions that every engine runs."""
    from sim.base import Simulator, fast_simulators

    return {
        family: frozenset(cls.policies) - set(Simulator.policies)
        for family, cls in fast_simulators().items()
    }


def named_policies(source: str, policies: frozenset[str]) -> list[str]:
    """The string constants of ``source`` (docstrings aside) that are one of
    ``policies``, with their line."""
    tree = ast.parse(source)
    skip = docstrings(tree)
    return [
        f"line {node.lineno}: {node.value!r}"
        for node in ast.walk(tree)
        if isinstance(node, ast.Constant) and node.value in policies and id(node) not in skip
    ]


def option_tables(source: str, dests: frozenset[str]) -> list[str]:
    """The literal tuples, lists, sets and dict keys of ``source`` holding two or more
    of ``dests`` (a family's own options), as their string elements."""
    found = []
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, ast.Tuple | ast.List | ast.Set):
            items = node.elts
        elif isinstance(node, ast.Dict):
            items = [k for k in node.keys if k is not None]
        else:
            continue
        words = [i.value for i in items if isinstance(i, ast.Constant) and isinstance(i.value, str)]
        if len(set(words) & dests) >= 2:
            found.append(repr(tuple(words)))
    return found


def test_the_option_scan_sees_a_table_of_a_familys_options() -> None:
    dests = frozenset({"lam", "d", "mu"})
    source = 'A = ("lam", "d")\nB = {"mu": 1, "d": 2}\nC = ["lam", "b"]\nD = {"lam"}\n'
    assert option_tables(source, dests) == ["('lam', 'd')", "('mu', 'd')"]


def test_no_general_module_holds_a_table_of_a_familys_options_but_the_listed_ones() -> None:
    """The family's command-line options are its registration's
    (``FastPath.short_options``); a general module reads them there
    (:mod:`mfstein.cli.short_options`) rather than listing them."""
    dests = frozenset().union(*(e.short_options.dests for e in FAST_PATHS.values()))
    assert {"lam", "d", "mu"} <= dests
    found = [
        f"{f.relative_to(ROOT)}: {table}"
        for f in general_files()
        for table in option_tables(f.read_text(), dests)
    ]
    bad = [f"new: {f}" for f in found if f not in KNOWN_OPTION_TABLES]
    bad += [f"listed but gone: {k}" for k in KNOWN_OPTION_TABLES if k not in found]
    assert not bad, "\n".join(bad)


def test_the_policy_scan_sees_a_general_tuple_of_a_familys_policies() -> None:
    """The layout before stop 47: ``sim/base.py`` held ``POLICIES = ("pod", "jsq",
    "random")`` and ``mfstein/cli/short_options.py`` a table keyed by the family."""
    old_base = '"""Doc: jsq."""\nPOLICIES: tuple[str, ...] = ("pod", "jsq", "random")\n'
    assert named_policies(old_base, frozenset({"jsq", "random"})) == [
        "line 2: 'jsq'",
        "line 2: 'random'",
    ]
    old_table = 'FAMILIES = {"supermarket": ShortOptions(dests=("lam", "d"))}\n'
    names = frozenset({"supermarket"})
    assert named_families(old_table, "mfstein.cli.short_options", names) == ["'supermarket'"]


def test_each_family_declares_its_policies_and_no_general_module_holds_them() -> None:
    """A fast path that runs dispatch rules of its own (``policy_engine``) declares them
    on its simulator (``Simulator.policies``), where ``sim.simulate`` reads them; no
    general module holds one of them as a string (a tuple of the supermarket's
    ``"jsq"``, ``"random"`` in ``sim``, say)."""
    from sim.base import Simulator, fast_simulators

    own = family_policies()
    for family, cls in fast_simulators().items():
        assert "pod" in cls.policies
        assert bool(own[family]) == (cls.policy_engine is not None), family
    assert Simulator.policies == ("pod",) and own["supermarket"] == {"jsq", "random"}
    found = [
        f"{f.relative_to(ROOT)}: {where}"
        for f in general_files()
        for where in named_policies(f.read_text(), frozenset().union(*own.values()))
    ]
    assert not found, "\n".join(found)
