"""One-panel figures against ``N`` on matplotlib's Agg back end (the tables' ``--plot``).

:func:`check_plot_path` refuses an unwritable path before any work; :func:`new_figure`
opens the panel; :func:`save_figure` labels it (log ``N`` axis, legend, grid) and
writes the PNG atomically.  matplotlib is imported only when a figure is drawn.
"""

from __future__ import annotations

import os
from typing import Any

__all__ = ["check_plot_path", "new_figure", "save_figure"]


def check_plot_path(path: str | os.PathLike) -> None:
    """Refuse (ParameterError) a ``--plot`` path that cannot be written, before any work."""
    from sim.runner import check_writable

    check_writable(path, "--plot")


def new_figure() -> tuple[Any, Any]:
    """``(figure, axes)`` of a one-panel plot on matplotlib's Agg back end (no display)."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    return plt.subplots(figsize=(6.4, 4.2))


def save_figure(
    fig: Any, ax: Any, path: str | os.PathLike, xlabel: str, ylabel: str, title: str
) -> None:
    """Finish a plot against ``N`` (log x, labels, legend, grid) and write it as PNG,
    atomically (:func:`mfstein.ground.io.atomic_write`); the figure is closed either way."""
    import matplotlib.pyplot as plt

    from mfstein.ground.io import atomic_write

    ax.set_xscale("log")
    ax.set_xlabel(xlabel)
    ax.set_ylabel(ylabel)
    ax.set_title(title)
    ax.legend(fontsize=8)
    ax.grid(True, which="both", alpha=0.3)
    fig.tight_layout()
    try:
        atomic_write(path, lambda fh: fig.savefig(fh, format="png", dpi=120))
    finally:
        plt.close(fig)
