"""The list of registered claims (``mfstein lemmas --list``), as a result."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from mfstein.ground.display import Presentable, count_row


@dataclass(frozen=True, repr=False)
class ClaimList(Presentable):
    """The registered claims, in registration order (:func:`registered_claims`)."""

    #: The claims (:class:`numeric.lemmas.registry.Claim`), in registration order.
    claims: tuple[Any, ...]

    _MORE = "all claims: .claims; .to_text() for the list; .to_dict() for JSON"

    def to_dict(self) -> dict[str, Any]:
        """JSON-ready dict: ``{"claims": [each claim's to_dict()]}``."""
        return {"claims": [c.to_dict() for c in self.claims]}

    def _rows(self) -> list[tuple[str, str]]:
        families = dict.fromkeys(c.id.split(".")[0] for c in self.claims)
        return [count_row("claims", self.claims), ("families", ", ".join(families) or "none")]

    def to_text(self) -> str:
        """One line per claim: its id, ``[equation]`` and statement."""
        return "\n".join(f"{c.id:28s} [{c.equation}] {c.statement}" for c in self.claims)


def registered_claims(ids: list[str] | None = None) -> ClaimList:
    """The claims registered with the given ids or families (all if ``None``;
    :func:`numeric.lemmas.registry.get_claims`), as a :class:`ClaimList`."""
    import numeric.lemmas  # noqa: F401  (registers the core paper's claims)
    from numeric.lemmas.registry import get_claims

    return ClaimList(tuple(get_claims(ids)))
