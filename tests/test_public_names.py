"""Every name a package lists in ``__all__`` resolves (its lazy table points at a module
that defines it): ``mfstein.bound`` pointed at a module without ``bound`` for two stops."""

from __future__ import annotations

import importlib

import pytest

PACKAGES = (
    "mfstein",
    "derive",
    "numeric",
    "sim",
    "numeric.certified",
    "numeric.exact",
    "numeric.expansion",
    "numeric.heterogeneous",
    "numeric.lemmas",
    "numeric.linalg",
    "numeric.meanfield",
    "numeric.pi",
    "mfstein.families.supermarket",
    "numeric.tails",
)


@pytest.mark.parametrize("package", PACKAGES)
def test_every_listed_name_resolves(package: str) -> None:
    module = importlib.import_module(package)
    missing = []
    for name in getattr(module, "__all__", ()):
        try:
            getattr(module, name)
        except AttributeError as error:
            missing.append(f"{name}: {error}")
    assert not missing, f"{package}.__all__ lists names that do not resolve: {missing}"


def test_the_short_bound_is_the_supermarkets() -> None:
    import mfstein
    import numeric

    assert mfstein.bound is numeric.bound
