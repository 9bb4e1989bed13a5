"""Thirty sites on a ring, each occupied or not: a site fills at rate lam while
empty and empties faster when its left neighbour is full."""

import sympy as sp

from derive import Model, Transition

SITES = 30


def thirty(sites: int = SITES):
    x = sp.symbols(f"x0:{sites}")
    lam = sp.Symbol("lam")
    transitions = []
    for k in range(sites):
        up = tuple(1 if j == k else 0 for j in range(sites))
        down = tuple(-1 if j == k else 0 for j in range(sites))
        transitions.append(Transition(up, lam * (1 - x[k])))
        transitions.append(Transition(down, x[k] * (1 + x[k - 1])))
    return Model("thirty" if sites == SITES else f"ring{sites}", x, (lam,), transitions)
