"""Laws of a non-negative integer queue length with a geometric-mixture tail.

Every exact law in :mod:`numeric.tails` -- the number of jobs in an M/M/n queue,
in the discrete-time single-server queue (SSQ) of "Exponential Tail Bounds on
Queues: A Confluence of Non-Asymptotic Heavy Traffic and Large Deviations"
(Jhunjhunwala, Hurtado-Lange, Maguluri), or the total queue length ``qbar`` of
a phase-truncated JSQ system -- has the same shape: an explicit head
``p_0, ..., p_K`` followed by a finite mixture of geometric sequences,

.. math::

    p_{K+i} = \\operatorname{Re} \\sum_j a_j r_j^{\\,i}, \\qquad i \\ge 1,
    \\quad |r_j| < 1 .

:class:`TotalQueueLaw` stores that representation and evaluates from it, in
closed form and without truncating any sum:

* the tail of the scaled queue, ``P(eps X > x)``;
* the mean ``E[X]`` (hence ``E[eps X]``);
* the Kolmogorov distance ``sup_x |P(eps X > x) - exp(-x / m)|`` to the
  exponential heavy-traffic limit of mean ``m`` (the paper's Theorem 1 and
  Theorem 2 compare ``eps_n qbar`` with Exp(1)).

Accuracy: the head and the mixture are float64; sums of the tail use the
closed forms ``sum_{i>=s} r^i = r^s / (1 - r)``, so each number carries the
relative error of the law itself (a few ulps times the condition of the solve
that produced it; the producers report that).
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

__all__ = ["TotalQueueLaw", "geometric_law"]

#: Evaluate the distance at every integer up to this many points, else on a grid.
_DENSE_LIMIT = 2_000_000


@dataclass(frozen=True)
class TotalQueueLaw:
    """A pmf on ``{0, 1, 2, ...}``: explicit head, geometric-mixture tail.

    Parameters
    ----------
    head:
        ``p_0, ..., p_K`` (``K = len(head) - 1 >= 0``).
    coef, ratios:
        Complex arrays ``a_j``, ``r_j`` with ``|r_j| < 1``: for ``i >= 1``,
        ``p_{K+i} = Re sum_j a_j r_j^i``.  Empty arrays mean no tail.
    """

    #: ``p_0, ..., p_K``, the explicit head of the pmf (float64, ``K = len(head) - 1 >= 0``).
    head: np.ndarray
    #: The tail's complex coefficients ``a_j``, ``p_{K+i} = Re sum_j a_j r_j^i`` for ``i >= 1``;
    #: empty for no tail.
    coef: np.ndarray = field(default_factory=lambda: np.zeros(0, complex))
    #: The tail's complex ratios ``r_j`` (``|r_j| < 1``), one per entry of ``coef``.
    ratios: np.ndarray = field(default_factory=lambda: np.zeros(0, complex))

    def __post_init__(self) -> None:
        object.__setattr__(self, "head", np.asarray(self.head, dtype=float))
        object.__setattr__(self, "coef", np.asarray(self.coef, dtype=complex).ravel())
        object.__setattr__(self, "ratios", np.asarray(self.ratios, dtype=complex).ravel())
        if self.head.ndim != 1 or self.head.size == 0:
            raise ValueError("head must be a non-empty 1-d array")
        if self.coef.shape != self.ratios.shape:
            raise ValueError("coef and ratios must have the same length")
        if np.any(np.abs(self.ratios) >= 1.0):
            raise ValueError("every tail ratio must satisfy |r| < 1")
        # P(X > k) for k = -1, 0, ..., K - 1 from the far end (no cancellation)
        rev = np.cumsum(self.head[::-1])[::-1]  # sum_{j >= k} head_j, k = 0..K
        tail = self._tail_sum(1)
        object.__setattr__(self, "_above", np.concatenate([rev + tail, [tail]]))

    # -- basic quantities ------------------------------------------------------
    @property
    def K(self) -> int:
        """Index of the last explicit head entry."""
        return self.head.size - 1

    @property
    def decay(self) -> float:
        """Largest ``|r_j|``: ``p_k`` decays like ``decay^k`` (0 without a tail)."""
        return float(np.abs(self.ratios).max()) if self.ratios.size else 0.0

    def _tail_sum(self, start: int) -> float:
        """``sum_{i >= start} p_{K+i}`` for ``start >= 1``."""
        if not self.coef.size:
            return 0.0
        r = self.ratios
        return float(np.real(np.sum(self.coef * r**start / (1.0 - r))))

    def total_mass(self) -> float:
        """``sum_k p_k`` (1 up to rounding for a normalised law)."""
        return float(self._above[0])

    def pmf(self, k: np.ndarray | int) -> np.ndarray:
        """``P(X = k)`` for integer ``k >= 0`` (array in, array out)."""
        k = np.asarray(k, dtype=np.int64)
        out = np.zeros(k.shape)
        inside = k <= self.K
        out[inside] = self.head[k[inside]]
        far = ~inside
        if far.any() and self.coef.size:
            i = (k[far] - self.K).astype(float)
            out[far] = np.real(self.coef[None, :] * self.ratios[None, :] ** i[:, None]).sum(axis=1)
        return out

    def survival(self, k: np.ndarray | int) -> np.ndarray:
        """``P(X > k)`` for integer ``k >= -1``, evaluated from the tail side."""
        k = np.asarray(k, dtype=np.int64)
        out = np.empty(k.shape)
        inside = k < self.K
        out[inside] = self._above[k[inside] + 1]
        far = ~inside
        if far.any():
            if self.coef.size:
                s = (k[far] - self.K + 1).astype(float)
                r = self.ratios[None, :]
                out[far] = np.real(self.coef[None, :] * r ** s[:, None] / (1.0 - r)).sum(axis=1)
            else:
                out[far] = 0.0
        return out

    def mean(self) -> float:
        """``E[X] = sum_k k p_k`` (tail part in closed form)."""
        m = float(np.arange(self.head.size) @ self.head)
        if self.coef.size:
            r, a = self.ratios, self.coef
            m += float(np.real(np.sum(a * (self.K * r / (1 - r) + r / (1 - r) ** 2))))
        return m

    def second_moment(self) -> float:
        """``E[X^2]`` (tail part in closed form)."""
        k = np.arange(self.head.size, dtype=float)
        m = float((k * k) @ self.head)
        if self.coef.size:
            r, a, K = self.ratios, self.coef, float(self.K)
            s0 = r / (1 - r)
            s1 = r / (1 - r) ** 2
            s2 = r * (1 + r) / (1 - r) ** 3
            m += float(np.real(np.sum(a * (K * K * s0 + 2 * K * s1 + s2))))
        return m

    # -- scaled quantities -----------------------------------------------------
    def tail(self, x: np.ndarray | float, eps: float) -> np.ndarray:
        """``P(eps X > x)`` for ``x >= 0``: ``P(X > floor(x / eps))``.

        ``x / eps`` is formed in float64, so at the jump points themselves the
        result may be the value on either side of the jump.
        """
        x = np.asarray(x, dtype=float)
        return self.survival(np.floor(x / eps).astype(np.int64))

    def scaled_mean(self, eps: float) -> float:
        """``E[eps X]``."""
        return eps * self.mean()

    def sup_distance(self, eps: float, limit_mean: float = 1.0) -> tuple[float, float]:
        """``sup_{x >= 0} |P(eps X > x) - exp(-x / m)|`` and a point where it is attained.

        ``P(eps X > x)`` equals ``S_k = P(X > k)`` on ``[eps k, eps (k + 1))``,
        where ``exp(-x/m)`` runs from ``exp(-eps k/m)`` down to (not reaching)
        ``exp(-eps (k+1)/m)``; the supremum over that interval is the larger of
        the two end-point gaps.  Every ``k`` up to the point where both tails
        are below ``1e-300`` is examined -- at every integer when there are at
        most two million of them, otherwise on a grid of that many points
        refined to every integer around the best grid point (the gap is a
        difference of a few exponentials in ``k`` beyond the head, so it has
        few local extrema and the refinement finds the maximum).

        Returns
        -------
        ``(distance, x)``:
            ``x`` is the left end ``eps k`` (or ``eps (k + 1)``) of the gap.
        """
        k_exp = int(np.ceil(limit_mean * 700.0 / eps))  # exp(-eps k / m) < 1e-300
        d = self.decay
        k_law = self.K + (int(np.ceil(-700.0 / np.log(d))) + 1 if d > 0 else 1)
        k_max = max(k_exp, k_law, self.K + 1)

        def gaps(k: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
            s = self.survival(k)
            lo = np.abs(s - np.exp(-eps * k / limit_mean))
            hi = np.abs(s - np.exp(-eps * (k + 1) / limit_mean))
            return lo, hi

        if k_max <= _DENSE_LIMIT:
            ks = np.arange(0, k_max + 1, dtype=np.int64)
        else:
            grid = np.unique(np.linspace(0, k_max, _DENSE_LIMIT).astype(np.int64))
            lo, hi = gaps(grid)
            best = int(np.argmax(np.maximum(lo, hi)))
            step = int(grid[1] - grid[0]) + 1
            a = max(int(grid[best]) - step, 0)
            ks = np.concatenate([grid, np.arange(a, int(grid[best]) + step + 1)])
            ks = np.concatenate([ks, np.arange(0, min(self.K + 2, k_max) + 1)])
        lo, hi = gaps(ks)
        i_lo, i_hi = int(np.argmax(lo)), int(np.argmax(hi))
        if lo[i_lo] >= hi[i_hi]:
            return float(lo[i_lo]), float(eps * ks[i_lo])
        return float(hi[i_hi]), float(eps * (ks[i_hi] + 1))

    def scaled_decay_rate(self, eps: float) -> float:
        """``-log(decay) / eps``: ``P(eps X > x)`` decays like ``exp(-rate x)``."""
        d = self.decay
        return float("inf") if d == 0 else float(-np.log(d) / eps)


def geometric_law(rho: float, start: int = 0, mass: float = 1.0) -> TotalQueueLaw:
    """``p_k = mass (1 - rho) rho^(k - start)`` for ``k >= start`` (zero below).

    ``start = 0``, ``mass = 1``: the M/M/1 queue with load ``rho``.
    """
    head = np.zeros(start + 1)
    head[start] = mass * (1.0 - rho)
    return TotalQueueLaw(head, np.array([mass * (1.0 - rho)]), np.array([rho]))
