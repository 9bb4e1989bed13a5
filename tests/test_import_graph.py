"""No circles (issue 31): the library's import graph is a ladder, file by file and
package by package.

The graph is read with :mod:`ast` by the walker of ``tests/test_layers.py``: every
``import`` and ``from ... import`` of ``derive``, ``numeric``, ``sim`` and
``mfstein`` -- at module level, inside functions and under ``if TYPE_CHECKING``
alike (a type-only import is still a dependency of the design) -- with relative
imports resolved and ``importlib.import_module("...")`` of a literal name.  An
edge goes from the importing file to the file it names (``from pkg import mod``
names ``pkg/mod.py``; ``from pkg import name`` names ``pkg/__init__.py``).  The
two entries (``mfstein/__init__.py``, lazy string tables only, and
``mfstein/__main__.py``) are left out as in the layer test.

A *package* is the folder of a file (``numeric/solution.py`` belongs to
``numeric``, ``numeric/meanfield/general.py`` to ``numeric.meanfield``); two
packages are in a circle when each imports the other through some chain.

No circle remains, between files or between packages; the two lists below stay as a
ratchet (a circle that had to be allowed would be listed there with its reason, and
the test fails when a listed one is gone or has changed, so a list only shrinks).
"""

from __future__ import annotations

import functools
from collections.abc import Iterable, Mapping

from test_layers import ROOT, imports, library_files, module_name

LIBRARY = ("derive", "numeric", "sim", "mfstein")

#: File circles that remain, each with its reason (none: the test fails on any).
KNOWN_FILE_CIRCLES: dict[frozenset[str], str] = {}

#: Package circles that remain, each with its reason (none: the test fails on any).
KNOWN_PACKAGE_CIRCLES: dict[frozenset[str], str] = {}


def is_library(module: str) -> bool:
    return module.partition(".")[0] in LIBRARY


@functools.cache
def file_graph() -> dict[str, set[str]]:
    """``module -> the library modules it imports`` over the whole library (read
    once per session: the tests below do not change it)."""
    graph: dict[str, set[str]] = {}
    known = {module_name(f) for f in library_files()}
    for f in library_files():
        module = module_name(f)
        package = f.name == "__init__.py"
        targets = graph.setdefault(module, set())
        for _, target, _ in imports(f.read_text(), module, package=package):
            if target != module and is_library(target) and target in known:
                targets.add(target)
    return graph


def package_of(module: str) -> str:
    """The folder a module's file lies in, as a dotted name."""
    if (ROOT.joinpath(*module.split(".")) / "__init__.py").is_file():
        return module
    return module.rpartition(".")[0]


def package_graph(graph: Mapping[str, Iterable[str]]) -> dict[str, set[str]]:
    out: dict[str, set[str]] = {}
    for a, targets in graph.items():
        pa = package_of(a)
        out.setdefault(pa, set())
        out[pa] |= {package_of(b) for b in targets if package_of(b) != pa}
    return out


def circles(graph: Mapping[str, Iterable[str]]) -> list[frozenset[str]]:
    """The strongly connected components of more than one node (Tarjan's
    algorithm, iterative so that a deep chain does not hit the recursion limit)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    found: list[frozenset[str]] = []
    for root in sorted(graph):
        if root in index:
            continue
        work = [(root, iter(sorted(graph.get(root, ()))))]
        index[root] = low[root] = len(index)
        stack.append(root)
        on_stack.add(root)
        while work:
            node, children = work[-1]
            child = next(children, None)
            if child is not None:
                if child not in index:
                    index[child] = low[child] = len(index)
                    stack.append(child)
                    on_stack.add(child)
                    work.append((child, iter(sorted(graph.get(child, ())))))
                elif child in on_stack:
                    low[node] = min(low[node], index[child])
                continue
            work.pop()
            if work:
                parent = work[-1][0]
                low[parent] = min(low[parent], low[node])
            if low[node] == index[node]:
                component = set()
                while True:
                    member = stack.pop()
                    on_stack.discard(member)
                    component.add(member)
                    if member == node:
                        break
                if len(component) > 1:
                    found.append(frozenset(component))
    return found


def ratchet(found: list[frozenset[str]], known: Mapping[frozenset[str], str]) -> list[str]:
    """What differs between the circles found and the ones listed."""
    bad = ["new circle: " + ", ".join(sorted(c)) for c in found if c not in known]
    bad += [
        "listed circle gone or changed (update the list): " + ", ".join(sorted(c))
        for c in known
        if c not in found
    ]
    return bad


# -------------------------------------------------------------- the checker itself
def test_circles_finds_every_component_and_only_those() -> None:
    graph = {
        "a": {"b"},
        "b": {"c"},
        "c": {"a", "d"},  # a -> b -> c -> a
        "d": {"e"},
        "e": {"d"},  # d <-> e, reached from the first circle
        "f": {"a"},  # leads into a circle, is in none
        "g": set(),
    }
    assert sorted(map(sorted, circles(graph))) == [["a", "b", "c"], ["d", "e"]]
    assert circles({"x": {"y"}, "y": set()}) == []
    # a chain longer than the recursion limit is walked without recursion
    chain = {f"n{i}": {f"n{i + 1}"} for i in range(5000)}
    chain["n5000"] = {"n0"}
    assert circles(chain) == [frozenset(chain)]


def test_packages_are_the_folders_of_the_files() -> None:
    assert package_of("numeric.precision") == "numeric"
    assert package_of("numeric.meanfield.solution") == "numeric.meanfield"
    assert package_of("numeric.meanfield.general") == "numeric.meanfield"
    assert package_of("numeric.meanfield") == "numeric.meanfield"
    assert package_of("mfstein.cli.solve") == "mfstein.cli"
    assert package_of("mfstein.ground.errors") == "mfstein.ground"
    graph = {"p.x": {"q.y"}, "q.y": {"p.z"}, "p.z": set()}
    assert package_graph(graph) == {"p": {"q"}, "q": {"p"}}


def test_the_ratchet_fails_both_ways() -> None:
    one, two = frozenset({"a", "b"}), frozenset({"c", "d"})
    assert ratchet([one], {one: "why"}) == []
    assert ratchet([one, two], {one: "why"}) == ["new circle: c, d"]
    assert ratchet([], {one: "why"})[0].startswith("listed circle gone")


def test_the_graph_reads_imports_inside_functions() -> None:
    # (relative imports are resolved by the walker: tests/test_layers.py checks it)
    graph = file_graph()
    # derive.model reads its symbolic objects inside its cached properties
    assert "derive.objects" in graph["derive.model"]
    # mfstein.cli.lemmas imports check_certified inside a function
    assert "numeric.lemmas.certified_claims" in graph["mfstein.cli.lemmas"]
    assert all(is_library(t) for targets in graph.values() for t in targets)
    assert {"derive.model", "numeric.precision", "sim.api", "mfstein.cli.solve"} <= set(graph)


def test_a_result_reaches_the_certifier_through_the_tasks_its_entry_attached() -> None:
    """``MeanFieldSolution.certify`` calls the ``certify`` of the tasks its entry attached
    (``numeric.meanfield.result_tasks``, which imports the certifier where the graph sees
    it): the record imports no route, and the certifier reads no mean-field route, so
    the links point one way (``tests/test_result_imports.py``)."""
    graph = file_graph()
    assert "numeric.certified.enclosures" not in graph["numeric.meanfield.solution"]
    assert "numeric.certified.enclosures" in graph["numeric.meanfield.result_tasks"]
    assert "numeric.meanfield.result_tasks" in graph["numeric.meanfield.entry"]
    assert not any(t.startswith("numeric.meanfield") for t in graph["numeric.certified.enclosures"])
    # the finite-N model reaches the mean field it is centred at by an import, too
    assert "numeric.meanfield.entry" in graph["numeric.exact.prepared"]


# ------------------------------------------------------------- the layout's checks
def test_no_circle_between_files_but_the_listed_ones() -> None:
    bad = ratchet(circles(file_graph()), KNOWN_FILE_CIRCLES)
    assert not bad, "\n".join(bad)


def test_no_circle_between_packages_but_the_listed_ones() -> None:
    bad = ratchet(circles(package_graph(file_graph())), KNOWN_PACKAGE_CIRCLES)
    assert not bad, "\n".join(bad)
