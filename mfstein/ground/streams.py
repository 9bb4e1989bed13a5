"""Standard output carries the command's answer and nothing else.

- :func:`write_json` is the one JSON writer of the command line: every ``--json``
  prints exactly one document, in one style (one line), strict JSON (no ``NaN``
  or ``Infinity`` token: :func:`mfstein.ground.display.dumps`); :func:`show` prints a
  result as a command does, its JSON or its own text.
- :func:`user_output_to_stderr` sends what a user's code (a model file when it is
  imported, its factory when it is called) prints to standard error, so that a
  ``print()`` in a model file cannot corrupt the answer on standard output.
- :func:`stdout_closed` tells whether there is a standard output to write to:
  Python drops every ``print`` silently when the process started with it closed
  (``mfstein ... >&-``), which the dispatcher turns into an error instead.

Standard library only, so it is cheap to import.
"""

from __future__ import annotations

import contextlib
import os
import sys
from collections.abc import Iterator, Mapping
from typing import Any, TextIO

__all__ = ["show", "stdout_closed", "user_output_to_stderr", "write_json"]


def write_json(result: Any, stream: TextIO | None = None) -> None:
    """Print ``result`` -- a result (:class:`mfstein.ground.display.Presentable`, through its
    own ``to_json``) or a JSON-ready mapping -- as one line of JSON on ``stream``
    (standard output by default), and flush it, so that a write error is raised here."""
    from mfstein.ground.display import Presentable, dumps

    if isinstance(result, Presentable):
        text = result.to_json(indent=None)
    elif isinstance(result, Mapping):
        text = dumps(result, indent=None)
    else:
        raise TypeError(f"write_json takes a result or a mapping, got {type(result).__name__}.")
    out = sys.stdout if stream is None else stream
    out.write(text + "\n")
    out.flush()


def show(result: Any, as_json: bool, **options: Any) -> int:
    """Print ``result`` as a command's answer -- its JSON (:func:`write_json`) when
    ``as_json``, else its own text, ``result.to_text(**options)`` -- and return the
    command's exit status, 0."""
    if as_json:
        write_json(result)
    else:
        print(result.to_text(**options))
    return 0


@contextlib.contextmanager
def user_output_to_stderr() -> Iterator[None]:
    """Within the block, ``print()`` (``sys.stdout``) writes to standard error."""
    with contextlib.redirect_stdout(sys.stderr):
        yield


def stdout_closed() -> bool:
    """Whether standard output is closed: ``sys.stdout`` is ``None`` (the process started
    with descriptor 1 closed), a closed file, or a file whose descriptor is closed.
    A stream without a descriptor (captured output, a notebook) counts as open."""
    out = sys.stdout
    if out is None or getattr(out, "closed", False):
        return True
    try:
        fd = out.fileno()
    except (AttributeError, OSError, ValueError):
        return False
    try:
        os.fstat(fd)
    except OSError:
        return True
    return False
