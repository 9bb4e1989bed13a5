"""Every field of every result a user gets is documented beside it.

Sphinx's autodoc takes a dataclass field's documentation from a ``#:`` comment right
above the field (or at the end of its line), or from a string right after it; the API
pages list the fields with it.  The results are the dataclass subclasses of
:class:`mfstein.ground.display.Presentable` in the library (found with :mod:`ast`:
a class whose base is ``Presentable`` or such a class, by name), and the records are
public dataclasses: those the results' fields hold, and more (:data:`RECORDS`).
Fields starting with ``_`` and ``ClassVar`` annotations are not fields a user reads.
"""

from __future__ import annotations

import ast
import dataclasses
import functools
import importlib
from pathlib import Path
from typing import NamedTuple

import pytest

ROOT = Path(__file__).resolve().parents[1]
LIBRARY = ("derive", "numeric", "sim", "mfstein")

#: Public records, ``module:Class``: those the results' fields hold, then others.
RECORDS = (
    "sim.stats:Estimate",
    "numeric.meanfield.sweep_result:SweepPoint",
    "numeric.heterogeneous.observables:ObservableValue",
    "numeric.expansion.transient_observables:ObservableTrajectory",
    "numeric.lemmas.runner:ClaimResult",
    "numeric.lemmas.registry:Claim",
    "numeric.lemmas.registry:Point",
    "numeric.lemmas.certified_claims:CertifiedPoint",
    "numeric.tails.statistics:TotalQueueLaw",
    "numeric.tails.errors:LawError",
    "numeric.tails.qbd:QBDSolution",
    "numeric.exact.law_error:LawSystem",
    "numeric.exact.truncation:Cut",
    # other public records: a model's parts, the runner's, the cache's
    "derive.model:Transition",
    "derive.spec:Parameter",
    "derive.spec:StateSpace",
    "derive.spec:Truncated",
    "derive.observables:Observable",
    "derive.heterogeneous_observables:Affine",
    "derive.heterogeneous_observables:HeterogeneousObservable",
    "derive.heterogeneous_population:HeterogeneousModel",
    "sim.observables:SimObservable",
    "sim.base:RunOptions",
    "sim.runner:Plan",
    "sim.runner:Replication",
    "sim.runner:RunOutput",
    "mfstein.ground.cache_contents:CachePart",
    "numeric.precision:Earned",
    "mfstein.families.supermarket.member:Member",
)


class Scanned(NamedTuple):
    """One class of the library as :mod:`ast` reads it."""

    module: str
    name: str
    path: str
    bases: tuple[str, ...]
    dataclass: bool
    #: Each public, non-ClassVar field: its line and whether it is documented.
    fields: dict[str, tuple[int, bool]]
    #: The ``#:`` comment of each public field that has one (its lines joined).
    comments: dict[str, str]


def _is_dataclass(node: ast.ClassDef) -> bool:
    for d in node.decorator_list:
        target = d.func if isinstance(d, ast.Call) else d
        name = target.attr if isinstance(target, ast.Attribute) else getattr(target, "id", "")
        if name == "dataclass":
            return True
    return False


def _documented(lines: list[str], body: list[ast.stmt], i: int) -> bool:
    """A ``#:`` comment line right above ``body[i]`` or at the end of its line, or a
    string statement right after it."""
    st = body[i]
    above = lines[st.lineno - 2].strip() if st.lineno >= 2 else ""
    if above.startswith("#:") or "#:" in lines[st.end_lineno - 1]:
        return True
    after = body[i + 1] if i + 1 < len(body) else None
    return (
        isinstance(after, ast.Expr)
        and isinstance(after.value, ast.Constant)
        and isinstance(after.value.value, str)
    )


def _public(st: ast.stmt) -> str | None:
    """The name of a public, non-ClassVar field, or ``None``."""
    if not (isinstance(st, ast.AnnAssign) and isinstance(st.target, ast.Name)):
        return None
    if st.target.id.startswith("_") or "ClassVar" in ast.unparse(st.annotation):
        return None
    return st.target.id


def _fields(lines: list[str], node: ast.ClassDef) -> dict[str, tuple[int, bool]]:
    return {
        name: (st.lineno, _documented(lines, node.body, i))
        for i, st in enumerate(node.body)
        if (name := _public(st))
    }


def _comments(lines: list[str], node: ast.ClassDef) -> dict[str, str]:
    out = {}
    for st in node.body:
        if name := _public(st):
            i, block = st.lineno - 2, []
            while i >= 0 and lines[i].strip().startswith("#:"):
                block.insert(0, lines[i].strip()[2:].strip())
                i -= 1
            if block:
                out[name] = "\n".join(block)
    return out


@functools.cache
def scan() -> tuple[Scanned, ...]:
    """Every class of the library's modules (module-level and nested)."""
    found = []
    for top in LIBRARY:
        for path in sorted((ROOT / top).rglob("*.py")):
            source = path.read_text()
            lines = source.splitlines()
            rel = path.relative_to(ROOT)
            module = ".".join(rel.with_suffix("").parts).removesuffix(".__init__")
            for node in ast.walk(ast.parse(source)):
                if isinstance(node, ast.ClassDef):
                    bases = tuple(ast.unparse(b).rpartition(".")[2] for b in node.bases)
                    found.append(
                        Scanned(module, node.name, str(rel), bases, _is_dataclass(node),
                                _fields(lines, node), _comments(lines, node))
                    )  # fmt: skip
    return tuple(found)


@functools.cache
def results() -> tuple[Scanned, ...]:
    """The dataclasses that derive from ``Presentable`` (by the names of their bases)."""
    names = {"Presentable"}
    while True:
        more = {c.name for c in scan() if set(c.bases) & names} - names
        if not more:
            break
        names |= more
    return tuple(c for c in scan() if c.dataclass and set(c.bases) & names)


def _undocumented(classes: tuple[Scanned, ...]) -> list[str]:
    return [
        f"{c.path}:{line} {c.name}.{name}"
        for c in classes
        for name, (line, documented) in c.fields.items()
        if not documented
    ]


def test_every_field_of_every_result_is_documented() -> None:
    missing = _undocumented(results())
    assert not missing, "fields without a '#:' comment:\n" + "\n".join(missing)


def test_the_scan_finds_the_results_python_finds() -> None:
    """The classes found by name are the Presentable dataclasses of their modules, every
    public field of each (inherited ones too) is one the scan read, and no Presentable
    dataclass of those modules is missed."""
    from mfstein.ground.display import Presentable

    found = results()
    assert len(found) >= 25  # SimulationResult, ExactResult, MeanFieldSolution, ...
    by_key = {(c.module, c.name): c for c in scan()}
    modules = {importlib.import_module(m) for m in {c.module for c in found}}
    for c in found:
        cls = getattr(importlib.import_module(c.module), c.name)
        assert issubclass(cls, Presentable) and dataclasses.is_dataclass(cls), c
        keys = [(k.__module__, k.__name__) for k in cls.__mro__]
        read = set().union(*(by_key[key].fields for key in keys if key in by_key))
        public = {f.name for f in dataclasses.fields(cls) if not f.name.startswith("_")}
        assert public <= read, (c.name, public - read)
    python = {
        (m.__name__, name)
        for m in modules
        for name, obj in vars(m).items()
        if isinstance(obj, type)
        and obj.__module__ == m.__name__
        and issubclass(obj, Presentable)
        and dataclasses.is_dataclass(obj)
    }
    assert python == {(c.module, c.name) for c in found}


#: Names a result's text had before ``to_text`` was its one name; each is left only as
#: the deprecated alias :func:`mfstein.ground.display.renamed_to_text` writes.  (``text()``
#: is another thing: one value's decimal string, ``Estimate.text()``,
#: ``ExactExpectation.text()``.)
OLD_TEXT_NAMES = ("render", "describe", "format", "summary", "to_markdown")


def test_every_result_has_the_presentation_protocol() -> None:
    """Every result type answers ``to_text()`` (its text: what a command prints without
    ``--json``), ``to_json()``, ``to_dict()``, ``repr`` and ``_repr_html_``, each callable
    without arguments; an old name of its text is only a deprecated alias of
    ``to_text``.  (``CertifiedReport.summary(claim, Ns, points)``, one claim's verdict
    line, takes arguments: not the result's text.)"""
    import inspect

    from mfstein.ground import display

    alias = getattr(display, "renamed_to_text", None)  # absent: no old name may be left
    alias_code = alias("x").__code__ if alias else None
    wrong = []
    for c in results():
        cls = getattr(importlib.import_module(c.module), c.name)
        for name in ("to_text", "to_json", "to_dict", "__repr__", "_repr_html_"):
            method = getattr(cls, name, None)
            required = [
                p
                for p in list(inspect.signature(method).parameters.values())[1:]
                if p.default is p.empty and p.kind not in (p.VAR_POSITIONAL, p.VAR_KEYWORD)
            ] if callable(method) else ["missing"]  # fmt: skip
            if required:
                wrong.append(f"{c.path} {c.name}.{name}: {required}")
        for old in OLD_TEXT_NAMES:
            method = getattr(cls, old, None)
            takes_none = callable(method) and len(inspect.signature(method).parameters) == 1
            if takes_none and getattr(method, "__code__", None) is not alias_code:
                wrong.append(f"{c.path} {c.name}.{old}: a text method besides to_text")
    assert not wrong, "results off the protocol:\n" + "\n".join(wrong)


@pytest.mark.parametrize("record", RECORDS)
def test_every_field_of_a_record_is_documented(record: str) -> None:
    module, _, name = record.partition(":")
    classes = tuple(c for c in scan() if (c.module, c.name) == (module, name))
    assert len(classes) == 1 and classes[0].dataclass, record
    missing = _undocumented(classes)
    assert not missing, "fields without a '#:' comment:\n" + "\n".join(missing)


def _records() -> tuple[Scanned, ...]:
    keys = {tuple(r.split(":")) for r in RECORDS}
    return tuple(c for c in scan() if (c.module, c.name) in keys)


def test_no_field_comment_reads_as_a_type() -> None:
    """Napoleon (docs/conf.py: NumPy style) reads an attribute's first line ``words: more``
    as ``type: description``: the API page would show the words as the field's type and
    the rest as its text.  No comment of a result's or a record's field starts so."""
    napoleon = pytest.importorskip("sphinx.ext.napoleon", reason="the documentation toolchain")
    from sphinx.ext.napoleon.docstring import NumpyDocstring

    config = napoleon.Config(napoleon_google_docstring=False, napoleon_numpy_docstring=True)
    typed = [
        f"{c.path} {c.name}.{name}: {text.splitlines()[0]}"
        for c in results() + _records()
        for name, text in c.comments.items()
        if ":type:" in str(NumpyDocstring(text, config, what="attribute", name=name, obj=None))
    ]
    assert not typed, "comments napoleon splits at a colon:\n" + "\n".join(typed)
