"""Named stages of a long computation, shown on standard error while it runs.

A computation whose length is known only roughly (the order-2 expansion: two
working precisions, then the truncated tail grown ring by ring) cannot give a
bar with a total; it can say which stage it is in and how long it has run.
Library code marks its stages with :func:`stage`, which costs nothing unless a
caller opened :func:`stages` around it (the CLI does when standard error is a
terminal), so no progress flag has to travel through every signature::

    with stages("solve", show=True):
        numeric.solve(model, params, order=2)   # "solve: order 2 at 50 digits [00:07]"

This module imports nothing heavy (tqdm is imported when a display opens).
"""

from __future__ import annotations

import sys
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from contextvars import ContextVar
from typing import Any, TextIO

__all__ = ["on_terminal", "stage", "stages", "with_stages"]

_DISPLAY: ContextVar[Any] = ContextVar("mfstein_progress", default=None)


@contextmanager
def stages(
    what: str, *, show: bool = True, file: TextIO | None = None, delay: float = 0.5
) -> Iterator[list[str]]:
    """Show the stages marked by :func:`stage` inside the block on one line of
    ``file`` (standard error), as ``what: <stage> [elapsed]``; the line appears only
    once ``delay`` seconds have passed (a quick run prints nothing) and is cleared
    when the block ends.  Yields the list of stage names seen, in order (kept also
    when ``show`` is false)."""
    seen: list[str] = []
    bar = None
    if show:
        from tqdm import tqdm

        bar = tqdm(
            desc=what,
            file=file if file is not None else sys.stderr,
            leave=False,
            delay=delay,
            mininterval=0,
            bar_format="{desc} [{elapsed}]",
        )
    token = _DISPLAY.set((what, seen, bar))
    try:
        yield seen
    finally:
        _DISPLAY.reset(token)
        if bar is not None:
            bar.close()


def stage(name: str) -> None:
    """Mark the start of stage ``name`` of the running computation (a no-op unless
    :func:`stages` is open)."""
    display = _DISPLAY.get()
    if display is None:
        return
    what, seen, bar = display
    seen.append(name)
    if bar is not None:
        bar.set_description_str(f"{what}: {name}", refresh=False)
        bar.update(1)


def with_stages(fn: Callable[..., Any], what: str, *, show: bool) -> Callable[..., Any]:
    """``fn`` run inside :func:`stages` ``(what, show=show)``: the display is cleared
    when ``fn`` returns, before its caller prints anything."""

    def run(*args: Any, **kwargs: Any) -> Any:
        with stages(what, show=show, delay=_delay()):
            return fn(*args, **kwargs)

    return run


def _delay() -> float:
    """Seconds before a command's stage line appears: ``MFSTEIN_PROGRESS_DELAY``
    (a number >= 0; ``0`` shows every stage at once), else 0.5."""
    import os

    try:
        return max(0.0, float(os.environ.get("MFSTEIN_PROGRESS_DELAY", "0.5")))
    except ValueError:
        return 0.5


def on_terminal(args: Any) -> bool:
    """Whether a command shows its stages: standard error is a terminal and the
    command's output is not ``--json``."""
    return sys.stderr.isatty() and not getattr(args, "json", False)
