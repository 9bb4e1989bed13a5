"""The layers of issue 21: every import of the library points down, never up.

From the bottom: the ground (``mfstein/ground/``: errors, limits, io, lazy exports,
signals, time limits, display, cache, jit, ...; its own folder, apart from the
command line) imports nothing of the project; ``derive`` imports the ground;
``numeric`` imports ``derive`` and the ground; ``sim`` imports ``numeric`` too; the
model families (``mfstein/families/``, one package each) import ``sim`` too; the
command line ``mfstein/cli/`` sits on top.  ``mfstein/__init__.py`` (lazy string
tables only) and ``mfstein/__main__.py`` are the two entries and are not checked.

Every ``import`` and ``from ... import`` is read with :mod:`ast`, at module level
and inside functions alike, and so is ``importlib.import_module("...")`` with a
literal name.  ``from X import _name`` across modules is refused too: a private
name is private to its module.
"""

from __future__ import annotations

import ast
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
LIBRARY = ("derive", "numeric", "sim", "mfstein")
RANKS = {"ground": 0, "derive": 1, "numeric": 2, "sim": 3, "families": 4, "cli": 5}
ENTRIES = {"mfstein", "mfstein.__main__"}
LONGEST = 120  # lines a function that numba does not compile may have (issue 21)


def module_name(path: Path) -> str:
    parts = list(path.relative_to(ROOT).with_suffix("").parts)
    if parts[-1] == "__init__":
        parts.pop()
    return ".".join(parts)


def layer(module: str) -> str | None:
    """The layer of a project module (``None``: not the project's)."""
    top, _, rest = module.partition(".")
    if top in ("derive", "numeric", "sim"):
        return top
    if top == "mfstein":
        for upper in ("cli", "families"):
            if rest == upper or rest.startswith(upper + "."):
                return upper
        return "ground"
    return None


def is_module(name: str) -> bool:
    p = ROOT.joinpath(*name.split("."))
    return p.with_suffix(".py").is_file() or (p / "__init__.py").is_file()


def imports(source: str, module: str, *, package: bool = False) -> list[tuple[int, str, str]]:
    """``(line, imported module, name)`` for every import in ``source``; ``name`` is
    the imported name of a ``from`` import ('' otherwise).  ``module`` (a package
    when ``package``) resolves relative imports."""
    out = []
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, ast.Import):
            out += [(node.lineno, a.name, "") for a in node.names]
        elif isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level:
                anchor = module.split(".")
                anchor = anchor[: len(anchor) - node.level + (1 if package else 0)]
                base = ".".join([*anchor, base] if base else anchor)
            for a in node.names:
                sub = f"{base}.{a.name}"
                out.append((node.lineno, sub if is_module(sub) else base, a.name))
        elif (
            isinstance(node, ast.Call)
            and isinstance(node.func, (ast.Attribute, ast.Name))
            and getattr(node.func, "attr", getattr(node.func, "id", "")) == "import_module"
            and node.args
            and isinstance(node.args[0], ast.Constant)
            and isinstance(node.args[0].value, str)
        ):
            out.append((node.lineno, node.args[0].value, ""))
    return out


def library_files() -> list[Path]:
    files = []
    for top in LIBRARY:
        files += sorted((ROOT / top).rglob("*.py"))
    return [f for f in files if module_name(f) not in ENTRIES and "__pycache__" not in f.parts]


def upward_imports(source: str, module: str, *, package: bool = False) -> list[str]:
    """Imports of ``source`` (module ``module``) that point to a higher layer."""
    own = layer(module)
    bad = []
    for line, target, _ in imports(source, module, package=package):
        other = layer(target)
        text = f"{module}:{line} ({own}) imports {target} ({other})"
        if own and other and RANKS[other] > RANKS[own] and text not in bad:
            bad.append(text)
    return bad


def private_imports(source: str, module: str, *, package: bool = False) -> list[str]:
    bad = []
    for line, target, name in imports(source, module, package=package):
        private = name.startswith("_") and not (name.startswith("__") and name.endswith("__"))
        if private and layer(target) and target != module:
            bad.append(f"{module}:{line} imports {target}.{name}")
    return bad


def scan(check) -> list[str]:
    bad = []
    for f in library_files():
        bad += check(f.read_text(), module_name(f), package=f.name == "__init__.py")
    return bad


# -------------------------------------------------------------- the checker itself
def test_the_walker_sees_imports_inside_functions_and_relative_ones() -> None:
    source = (
        "import numpy\n"
        "from derive.models import load_model\n"
        "def f():\n"
        "    from sim.pi import simulate_pi\n"
        "    import mfstein.cli\n"
        "    from . import precision\n"
        "    from .solution import _private\n"
        "    importlib.import_module('sim.table')\n"
    )
    up = upward_imports(source, "numeric.precision")
    assert [u.split(" imports ")[1] for u in up] == [
        "sim.pi (sim)",
        "mfstein.cli (cli)",
        "sim.table (sim)",
    ]
    assert private_imports(source, "numeric.precision") == [
        "numeric.precision:7 imports numeric.solution._private"
    ]
    # the same source one layer up is clean apart from the command line
    assert [u.split(" imports ")[1] for u in upward_imports(source, "sim.table")] == [
        "mfstein.cli (cli)"
    ]
    # a family may import sim, not the command line, which may import anything
    assert [
        u.split(" imports ")[1]
        for u in upward_imports(source, "mfstein.families.supermarket.table")
    ] == ["mfstein.cli (cli)"]
    assert upward_imports("import mfstein.families.supermarket\n", "sim.api") == [
        "sim.api:1 (sim) imports mfstein.families.supermarket (families)"
    ]
    # the command line may import anything; dunder names are not private
    assert upward_imports(source, "mfstein.cli.bound") == []
    assert private_imports("from mfstein import __version__\n", "numeric") == []
    assert layer("mfstein.ground.errors") == "ground" and layer("mfstein.cli.tail") == "cli"
    assert layer("mfstein.families") == layer("mfstein.families.supermarket.solver") == "families"
    assert layer("numpy") is None


def test_the_library_is_read_whole() -> None:
    names = {module_name(f) for f in library_files()}
    assert {"derive", "numeric", "sim", "mfstein.ground.errors", "mfstein.cli"} <= names
    assert {"mfstein.families", "mfstein.families.supermarket.solver"} <= names
    assert not names & ENTRIES


# ------------------------------------------------------------- the layout's checks
def test_no_import_from_a_lower_layer_to_a_higher_one() -> None:
    bad = scan(upward_imports)
    assert not bad, "\n".join(bad)


def test_the_ground_imports_nothing_of_the_project() -> None:
    bad = []
    for f in library_files():
        module = module_name(f)
        if layer(module) != "ground":
            continue
        for line, target, _ in imports(f.read_text(), module, package=f.name == "__init__.py"):
            if layer(target) not in (None, "ground"):
                bad.append(f"{module}:{line} imports {target}")
    assert not bad, "\n".join(bad)


def test_no_private_name_is_imported_across_modules() -> None:
    bad = scan(private_imports)
    assert not bad, "\n".join(bad)


def numeric_top_level() -> list[str]:
    return sorted(p.name for p in (ROOT / "numeric").glob("*.py"))


def numeric_subpackages() -> list[str]:
    return sorted(p.parent.name for p in (ROOT / "numeric").glob("*/__init__.py"))


def test_the_ground_has_its_own_folder() -> None:
    """Beside the two entries, ``mfstein/`` holds three folders: the ground, the model
    families and the command line on top (issue 31)."""
    loose = sorted(p.name for p in (ROOT / "mfstein").glob("*.py"))
    assert loose == ["__init__.py", "__main__.py"], loose
    ground = {module_name(p) for p in (ROOT / "mfstein" / "ground").glob("*.py")}
    assert {"mfstein.ground.errors", "mfstein.ground.limits", "mfstein.ground.jit"} <= ground
    assert all(layer(m) == "ground" for m in ground)
    assert all(layer(module_name(p)) == "cli" for p in (ROOT / "mfstein" / "cli").glob("*.py"))
    families = (ROOT / "mfstein" / "families").rglob("*.py")
    assert all(layer(module_name(p)) == "families" for p in families)


def test_numeric_top_level_is_its_public_face() -> None:
    top = numeric_top_level()
    assert "__init__.py" in top
    assert len(top) <= 6, f"{len(top)} modules beside the subpackages: {', '.join(top)}"


def test_design_names_every_numeric_subpackage() -> None:
    design = (ROOT / "docs" / "design.md").read_text()
    subpackages = numeric_subpackages()
    assert {"exact", "lemmas", "tails"} <= set(subpackages)
    missing = [
        s for s in subpackages if f"numeric/{s}/" not in design and f"numeric.{s}" not in design
    ]
    assert not missing, f"docs/design.md does not name numeric/{missing[0]}/"


def long_defs(source: str) -> list[tuple[int, str, int]]:
    """``(line, name, length)`` of each function in ``source`` over :data:`LONGEST`
    lines (docstring included) that no numba decorator compiles (``jit``, ``njit``,
    ``vectorize``, ``guvectorize``, ``cfunc``, with or without arguments): the compiled
    inner loops may stay long, where splitting them would cost speed.  Source that the
    library generates and compiles (a string, such as :data:`sim.generic_kernels._LOOP`)
    holds no function for :mod:`ast`, so it is not counted."""
    out = []
    for node in ast.walk(ast.parse(source)):
        if not isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef):
            continue
        length = node.end_lineno - node.lineno + 1
        compiled = any(
            word in ast.unparse(d)
            for d in node.decorator_list
            for word in ("jit", "vectorize", "cfunc")
        )
        if length > LONGEST and not compiled:
            out.append((node.lineno, node.name, length))
    return out


def long_functions() -> list[str]:
    """Functions of the library over :data:`LONGEST` lines that numba does not
    compile (:func:`long_defs`), as ``path:line name (length lines)``."""
    return [
        f"{path.relative_to(ROOT)}:{line} {name} ({length} lines)"
        for path in sorted(p for top in LIBRARY for p in (ROOT / top).rglob("*.py"))
        for line, name, length in long_defs(path.read_text())
    ]


def _function(decorator: str, body_lines: int, name: str = "f") -> str:
    body = "".join(f"    x{i} = {i}\n" for i in range(body_lines))
    return f"{decorator}\ndef {name}():\n{body}"


def test_the_length_check_counts_every_line_and_spares_only_compiled_functions() -> None:
    at_limit = _function("", LONGEST - 1)  # the def line and LONGEST - 1 body lines
    assert long_defs(at_limit) == []
    assert long_defs(_function("", LONGEST)) == [(2, "f", LONGEST + 1)]
    nested = "class C:\n" + "\n".join(
        "    " + line for line in _function("@property", LONGEST, "g").splitlines()
    )
    assert long_defs(nested) == [(3, "g", LONGEST + 1)]
    for compiled in (
        "@numba.njit(cache=True)",
        "@njit",
        "@numba.jit(nopython=True)",
        '@numba.vectorize(["float64(float64)"])',
        "@guvectorize('(n)->()')",
        "@cfunc('float64(float64)')",
    ):
        assert long_defs(_function(compiled, LONGEST)) == [], compiled
    assert long_defs(_function("@functools.cache", LONGEST)) == [(2, "f", LONGEST + 1)]


def test_no_function_that_numba_does_not_compile_is_over_120_lines() -> None:
    long = long_functions()
    assert not long, "\n".join(long)
