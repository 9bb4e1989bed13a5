"""Example models shipped with mfstein, to read, copy and run.

Each module is a plain model file of the kind you write yourself (see
:mod:`derive.models`).  They are installed with the package, so they can be
used from any directory by module name::

    load_model("derive.models.examples.birth_death:birth_death", cap=2)
    mfstein solve --model derive.models.examples.birth_death:birth_death --param lam=0.5

and :func:`path` gives the file itself (to read it, or to copy it as a start
for your own model).  In a clone of the repository ``examples/birth_death.py``
is the same file.
"""

from __future__ import annotations

from pathlib import Path

__all__ = ["EXAMPLES", "path"]

#: Example name -> its factory, as a ``load_model`` spec.
EXAMPLES: dict[str, str] = {
    "birth_death": "derive.models.examples.birth_death:birth_death",
}


def path(name: str) -> Path:
    """The installed file of example ``name`` (one of :data:`EXAMPLES`)."""
    from mfstein.ground.errors import ParameterError

    if name not in EXAMPLES:
        raise ParameterError(f"example must be one of {', '.join(EXAMPLES)}, got {name!r}.")
    return Path(__file__).with_name(f"{name}.py")
