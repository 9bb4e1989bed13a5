"""The API reference pages, generated from the packages' export lists.

Every public name is what a package exports: its ``__all__`` (for the lazy
packages, the keys of the export table, see :mod:`mfstein.ground.lazy`).  Each package
gets a page listing its names with the first sentence of each docstring, and
each function or class a page of its own (autodoc, from the docstring);
constants are listed with their value.  A name added to or removed from
``__all__`` appears in or leaves the reference without any edit here.
"""

from __future__ import annotations

import importlib
import inspect
from pathlib import Path
from typing import Any

#: Packages whose ``__all__`` forms the public API, in reading order.
PACKAGES = ("derive", "numeric", "numeric.exact", "numeric.tails", "numeric.lemmas", "sim")


def public_names(package: str) -> list[str]:
    """The exported names of ``package`` (sorted)."""
    module = importlib.import_module(package)
    return sorted(getattr(module, "__all__", ()))


#: Words that end with a full stop inside a sentence.
_ABBREVIATIONS = (" eq", "(eq", " eqs", " e.g", " i.e", " cf", " Fig", " Sec", " vs", " approx")


def summary(obj: Any) -> str:
    """The first sentence of ``obj``'s docstring, or '' where it cannot be cut
    cleanly (a sentence end inside an inline literal)."""
    doc = inspect.getdoc(obj) or ""
    para = " ".join(doc.split("\n\n")[0].split())
    inside = False
    i = 0
    while i < len(para):
        if para.startswith("``", i):
            inside = not inside
            i += 2
            continue
        if not inside and para.startswith(". ", i) and not para[:i].endswith(_ABBREVIATIONS):
            return para[: i + 1]
        i += 1
    return "" if inside else para


def _kind(obj: Any) -> str | None:
    if inspect.isclass(obj):
        return "class"
    if callable(obj):
        return "function"
    return None


def write(dest: Path) -> list[str]:
    """Write ``dest/index.rst``, one page per package and one per function or
    class (``dest/generated``); return the package pages."""
    gen = dest / "generated"
    gen.mkdir(parents=True, exist_ok=True)
    wanted: set[Path] = set()
    pages = []
    for package in PACKAGES:
        module = importlib.import_module(package)
        names = public_names(package)
        if not names:
            continue
        title = f"``{package}``"
        lines = [title, "=" * len(title), "", f".. automodule:: {package}", "   :no-members:", ""]
        entries, constants = [], []
        for name in names:
            obj = getattr(module, name)
            kind = _kind(obj)
            full = f"{package}.{name}"
            if kind is None:
                constants.append(f"``{name}``\n   {type(obj).__name__}: ``{_short(obj)}``")
                continue
            page = gen / f"{full}.rst"
            head = f"``{full}``"
            directive = f".. auto{kind}:: {full}"
            options = ["   :members:"] if kind == "class" else []
            _write_if_changed(page, "\n".join([head, "=" * len(head), "", directive, *options, ""]))
            wanted.add(page)
            line = f"* :doc:`{name} <generated/{full}>`"
            text = summary(obj)
            entries.append(f"{line} -- {text}" if text else line)
        lines += ["Functions and classes", "---------------------", "", *entries, ""]
        if constants:
            lines += ["Constants", "---------", "", *constants, ""]
        lines += [
            ".. toctree::",
            "   :hidden:",
            "",
            *(
                f"   generated/{package}.{n}"
                for n in names
                if (gen / f"{package}.{n}.rst") in wanted
            ),
            "",
        ]
        _write_if_changed(dest / f"{package}.rst", "\n".join(lines))
        pages.append(package)
    for stale in set(gen.glob("*.rst")) - wanted:
        stale.unlink()
    index = [
        "API reference",
        "=============",
        "",
        "Every name the packages export (their ``__all__``), documented from its",
        "docstring.  Dependencies point one way: ``sim -> numeric -> derive``.",
        "",
        ".. toctree::",
        "   :maxdepth: 1",
        "",
        *(f"   {p}" for p in pages),
        "",
    ]
    _write_if_changed(dest / "index.rst", "\n".join(index))
    return pages


def _short(obj: Any) -> str:
    text = " ".join(repr(obj).split())
    text = text if len(text) <= 60 else text[:57] + "..."
    return text.replace("``", "` `")


def _write_if_changed(path: Path, text: str) -> None:
    if not path.is_file() or path.read_text() != text:
        path.write_text(text)
