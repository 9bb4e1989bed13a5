"""The Python examples of README.md and docs/*.md, with the output they print.

Every example is a fenced ``pycon`` block: ``>>>`` lines, then what they print,
exactly as an interactive session shows it.  ``tests/test_snippets.py`` runs each
block on its own (a fresh namespace: every block holds its own imports) with
:mod:`doctest` and fails when a printed line differs, so no example can claim an
output it does not give.

Printed float64 numbers keep their first 10 significant digits followed by ``...``
(doctest's ELLIPSIS): the trailing digits of a float64 sum can change with the BLAS
build, the digits shown cannot.  High-precision numbers (more than 17 significant
digits: mpmath results) are kept whole, since every digit of them is vouched for.

Regenerate the outputs after changing an example, then read the diff:

    python docs/snippets.py README.md docs/models.md
"""

from __future__ import annotations

import contextlib
import doctest
import io
import re
import sys
from pathlib import Path

FENCE = re.compile(r"```pycon\n(.*?)```", flags=re.S)
FLAGS = doctest.ELLIPSIS | doctest.NORMALIZE_WHITESPACE
_NUMBER = re.compile(r"(?<![\w.])(-?)(\d+\.\d+)((?:e[+-]?\d+)?)(?![\w.])")
#: float64 prints 12 to 17 significant digits; fewer are shown whole.
_FLOAT64_DIGITS = range(12, 18)
_KEEP = 10


def blocks(text: str) -> list[tuple[int, str]]:
    """The ``pycon`` blocks of a Markdown text: (line number of the fence, body)."""
    return [(text.count("\n", 0, m.start()) + 1, m.group(1)) for m in FENCE.finditer(text)]


def _shorten(match: re.Match[str]) -> str:
    sign, mantissa, exponent = match.groups()
    digits = mantissa.replace(".", "").lstrip("0")
    if len(digits) not in _FLOAT64_DIGITS:
        return match.group(0)
    kept, seen = [], 0
    for ch in mantissa:
        kept.append(ch)
        if ch.isdigit() and (seen or ch != "0"):
            seen += 1
        if seen == _KEEP and "." in kept:
            break
    return f"{sign}{''.join(kept)}...{exponent}"


def shorten_floats(out: str) -> str:
    """``out`` with every float64-length number cut to :data:`_KEEP` digits + ``...``."""
    return _NUMBER.sub(_shorten, out)


def check(body: str, name: str) -> list[str]:
    """Run one block with doctest; the failure reports (empty when it holds)."""
    test = doctest.DocTestParser().get_doctest(body, {"__name__": "__main__"}, name, name, 0)
    report = io.StringIO()
    runner = doctest.DocTestRunner(optionflags=FLAGS)
    runner.run(test, out=report.write, clear_globs=True)
    return [report.getvalue()] if runner.failures else []


def _examples(body: str) -> list[list[str]]:
    """The ``>>>`` statements of a block, each with its ``...`` continuation lines
    (comment-only statements included, which doctest itself skips); output lines
    are dropped."""
    out: list[list[str]] = []
    in_source = False
    for line in body.split("\n"):
        if line.startswith(">>>"):
            out.append([line[4:]])
            in_source = True
        elif in_source and (line == "..." or line.startswith("... ")):
            out[-1].append(line[4:])
        else:
            in_source = False
    return out


def _session(body: str, name: str) -> str:
    """The block re-run statement by statement, with the output each prints now."""
    glob: dict[str, object] = {"__name__": "__main__"}
    out: list[str] = []
    for lines in _examples(body):
        out.append(">>> " + lines[0])
        out.extend("... " + line if line else "..." for line in lines[1:])
        source = "\n".join(lines) + "\n"
        if all(not line.strip() or line.lstrip().startswith("#") for line in lines):
            continue
        buffer = io.StringIO()
        with contextlib.redirect_stdout(buffer):
            exec(compile(source, name, "single"), glob)
        printed = shorten_floats(buffer.getvalue()).rstrip("\n")
        if printed:
            out.extend(line if line.strip() else "<BLANKLINE>" for line in printed.split("\n"))
    return "\n".join(out) + "\n"


def update(path: Path) -> None:
    """Rewrite the outputs of every ``pycon`` block of ``path`` in place."""
    text = path.read_text()
    pieces, last = [], 0
    for m in FENCE.finditer(text):
        pieces.append(text[last : m.start(1)])
        pieces.append(_session(m.group(1), f"{path.name}:{text.count(chr(10), 0, m.start())}"))
        last = m.end(1)
    pieces.append(text[last:])
    path.write_text("".join(pieces))


if __name__ == "__main__":
    for arg in sys.argv[1:]:
        update(Path(arg))
        print(f"updated {arg}")
