"""The facts the supermarket family's solvers read of a member (its ``ModelInfo.structure``),
in a module of their own: reading them imports no SymPy (a simulation read back from its
prepared record checks them without the symbolic stack)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from derive.spec import Structure


@dataclass(frozen=True)
class SupermarketStructure(Structure):
    """What the family's solvers read of a member (its ``ModelInfo.structure``): the
    JSQ(d) chain of buffer ``b``, ``d`` servers sampled per arrival, at the arrival rate
    named ``arrival`` and the service rate ``mu``."""

    #: The buffer size (levels ``s_1 .. s_b``).
    b: int
    #: Servers sampled per arrival.
    d: int
    #: The service rate: a positive number (exact) or the symbol of a parameter.
    mu: Any
    #: ``True`` samples with replacement; ``False`` samples ``d`` distinct servers
    #: (rates depending on ``N``).
    replacement: bool
    #: The name of the arrival-rate parameter (``"lam"``).
    arrival: str
    #: The name of the service-rate parameter when ``mu`` is one, else ``None``.
    service: str | None = None
