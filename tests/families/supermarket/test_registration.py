"""The supermarket is one package with one registration (issue 31).

Every public name the supermarket gave the packages before it moved into
``mfstein.families.supermarket`` still resolves, through the packages' lazy tables
and the family's one entry :data:`mfstein.ground.fast_paths.FAST_PATHS`, to the very
object the family's module defines; and every route and short form of that entry
points into the family's own package.
"""

from __future__ import annotations

import importlib

import pytest

from mfstein.ground.fast_paths import FAST_PATHS, TASKS, load, route, short_forms

FAMILY = "mfstein.families.supermarket"

#: The old public names (package, name) and the family module that defines each.
OLD_NAMES = (
    ("numeric", "bound", "short_form"),
    ("numeric", "equilibrium", "equilibrium"),
    ("numeric", "reference_point", "equilibrium"),
    ("numeric", "auto_buffer", "solver"),
    ("numeric", "constant_float64", "sweep"),
    ("numeric.exact", "solve_exact", "exact"),
    ("sim", "simulate_supermarket", "simulate_short_form"),
    ("mfstein", "bound", "short_form"),
)


@pytest.mark.parametrize(("package", "name", "home"), OLD_NAMES)
def test_each_old_public_name_resolves_to_the_familys_object(
    package: str, name: str, home: str
) -> None:
    pkg = importlib.import_module(package)
    assert name in pkg.__all__
    assert getattr(pkg, name) is getattr(importlib.import_module(f"{FAMILY}.{home}"), name)


def test_the_one_entry_is_the_whole_registration() -> None:
    entry = FAST_PATHS["supermarket"]
    targets = [route("supermarket", task) for task in TASKS]
    targets += [where for _, where in entry.short_forms]
    assert all(t is not None for t in targets)
    in_family = [t for t in targets if t.startswith(FAMILY + ".")]
    # every route but the restriction (the model's definition in derive) is the family's
    assert sorted(set(targets) - set(in_family)) == [route("supermarket", "restriction")]
    assert route("supermarket", "restriction").startswith("derive.models.supermarket:")
    # the short forms reach the three packages that exported them, and only those
    assert {package for package, _ in entry.short_forms} == {"numeric", "numeric.exact", "sim"}
    assert short_forms("sim") == {f"{FAMILY}.simulate_short_form": ("simulate_supermarket",)}
    assert short_forms("derive") == {}


def test_the_routes_load_the_moved_objects() -> None:
    from mfstein.families.supermarket.exact import supermarket_fast
    from mfstein.families.supermarket.fast_path import SupermarketFastPath
    from mfstein.families.supermarket.solver import shooting_point64, solve_model

    assert load("supermarket", "exact") is supermarket_fast
    assert load("supermarket", "simulation") is SupermarketFastPath
    assert load("supermarket", "mean_field") is solve_model
    assert load("supermarket", "fixed_point") is shooting_point64
