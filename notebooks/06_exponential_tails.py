# ---
# jupyter:
#   jupytext:
#     formats: py:percent
#     text_representation:
#       extension: .py
#       format_name: percent
#       format_version: '1.3'
#   kernelspec:
#     display_name: Python 3
#     language: python
#     name: python3
# ---

# %% [markdown]
# # Exponential tails of JSQ in many-server heavy traffic
#
# *Stored as a jupytext percent-format script (no outputs in the repository).
# Open it with the Jupyter jupytext extension, or convert it with
# `jupytext --to ipynb notebooks/06_exponential_tails.py`.*
#
# P. R. Jhunjhunwala, D. Hurtado-Lange and S. T. Maguluri, "Exponential Tail Bounds on
# Queues: A Confluence of Non-Asymptotic Heavy Traffic and Large Deviations",
# arXiv:2306.10187 (2023; extended abstract in ACM SIGMETRICS Performance Evaluation
# Review 51(4), 2024), shows (Theorem 1)
# that for JSQ with `n` servers and arrival rate `n(1 - eps_n)`,
# `eps_n = n^-alpha`, the scaled total queue `eps_n qbar` converges to Exp(1) for
# every `alpha > 1`, and (Theorem 2) bounds `P(eps_n qbar > x)` for finite `n`.
# Here we look at `sup_x |P(eps qbar > x) - exp(-x)|` as `n` grows for
# `alpha = 0.5, 1, 1.5, 2`:
#
# * exactly, for small `n`, by the level-phase QBD of `numeric.tails`;
# * by simulation (`sim.tails`, 95% CIs over independent replications) for
#   larger `n`.  The relaxation time of `qbar` is about `1/eps^2` events, so the
#   simulated `n` are kept where `n^(2 alpha)` events are affordable.
#
# For `alpha <= 1` the `~n` jobs in service alone give `eps qbar >= eps n ~
# n^(1 - alpha)`, which does not vanish: no exponential limit.

# %% tags=["remove-cell"]
import os

SIZE = os.environ.get("MFSTEIN_NOTEBOOK_SIZE", "full")
if SIZE not in ("ci", "full"):
    raise ValueError(f"MFSTEIN_NOTEBOOK_SIZE must be 'ci' or 'full', got {SIZE!r}.")
# Set only by the test suite: a file that receives the numbers computed below as JSON.
RESULT_FILE = os.environ.get("MFSTEIN_NOTEBOOK_RESULT", "")

# %% tags=["parameters"]
ALPHAS = [0.5, 1.0, 1.5, 2.0]
SEED = 2024
X = [0.5, 1.0, 2.0]
if SIZE == "ci":
    EXACT_N = [2, 3]
    SIM_N = [3, 10]
    SIM_REPS = 4
    MAX_EVENTS = 2 * 10**6
else:
    EXACT_N = [2, 3, 4, 5]
    SIM_N = [3, 10, 30, 100]
    SIM_REPS = 8
    MAX_EVENTS = 10**8

# %%
import json

import matplotlib.pyplot as plt
import numpy as np

from numeric.tails import exact_tails
from sim.tails import simulate_jsq_tails

# %% [markdown]
# ## Exact laws for small n

# %%
exact = {}
for alpha in ALPHAS:
    for n in EXACT_N:
        eps = n ** (-alpha)
        r = exact_tails("jsq", n, eps, X)
        exact[(alpha, n)] = r
        print(
            f"alpha={alpha:<4} n={n:<3} eps={eps:.4f}  E[eps qbar]={r.scaled_mean:.4f}  "
            f"sup|.|={r.sup_distance:.4f}  D={r.accuracy['D']}  "
            f"neglected mass={r.accuracy['boundary_mass']:.1e}"
        )

# %% [markdown]
# ## Simulation for larger n

# %%
sims = {}
for alpha in ALPHAS:
    for n in SIM_N:
        eps = n ** (-alpha)
        events = int(min(max(30 / eps**2, 2 * 10**5), MAX_EVENTS))
        s = simulate_jsq_tails(n, eps, X, events=events, reps=SIM_REPS, seed=SEED)
        sims[(alpha, n)] = s
        print(
            f"alpha={alpha:<4} n={n:<4} eps={eps:.2e} events={events:.1e}  "
            f"E[eps qbar]={float(s.scaled_mean.mean):.4f}±{float(s.scaled_mean.ci95):.4f}  "
            f"sup|.|={float(s.sup_distance.mean):.4f}±{float(s.sup_distance.ci95):.4f}"
            + ("  (!) " + "; ".join(s.warnings) if s.warnings else "")
        )

# %%
fig, axes = plt.subplots(1, 2, figsize=(11, 4))
for alpha in ALPHAS:
    ne = [n for n in EXACT_N]
    axes[0].plot(ne, [exact[(alpha, n)].sup_distance for n in ne], "o-", label=f"exact α={alpha}")
    ns = [n for n in SIM_N]
    axes[0].errorbar(
        ns,
        [float(sims[(alpha, n)].sup_distance.mean) for n in ns],
        yerr=[float(sims[(alpha, n)].sup_distance.ci95) for n in ns],
        fmt="s--",
        capsize=3,
        label=f"simulated α={alpha}",
    )
axes[0].set_xscale("log")
axes[0].set_yscale("log")
axes[0].set_xlabel("n")
axes[0].set_ylabel("sup_x |P(ε qbar > x) − exp(−x)|")
axes[0].legend(fontsize=7)
xs = np.linspace(0, 4, 200)
axes[1].plot(xs, np.exp(-xs), "k-", lw=2, label="exp(−x)")
for alpha in ALPHAS:
    n = SIM_N[-1]
    s = sims[(alpha, n)]
    keep = s.grid <= 4
    axes[1].step(s.grid[keep], s.survival[keep], where="post", label=f"sim n={n}, α={alpha}")
axes[1].set_xlabel("x")
axes[1].set_ylabel("P(ε qbar > x)")
axes[1].legend(fontsize=7)
fig.tight_layout()
plt.show()

# %% [markdown]
# For `alpha = 0.5, 1` the distance grows with `n`: the scaled queue concentrates
# near `eps n rho` instead (busy servers), away from Exp(1) (at `alpha = 0.5`,
# `n = 100` the full-size run gives 0.998). For `alpha = 1.5, 2` it stays between
# about 0.12 and 0.24 (but for one flagged point), and over these small `n` it does
# not yet fall steadily: in the
# full-size run the exact distance at `alpha = 1.5` rises from 0.177 (`n = 3`) to
# 0.218 (`n = 5`), and only the simulation at `n = 100` (0.127 ± 0.013) lies below
# the small-`n` values. At `alpha = 2`, `n = 100` the run is flagged `(!)`: 10^8
# events are about one relaxation time `1/eps^2`, so that point (0.40 ± 0.14) and
# its interval are not to be trusted. The limit theorem is about larger `n` than
# these.

# %% tags=["remove-cell"]
result = {
    "alphas": ALPHAS,
    "x": X,
    "exact": [
        {
            "alpha": a,
            "n": n,
            "eps": r.eps,
            "scaled_mean": r.scaled_mean,
            "tail": r.tail,
            "sup_distance": r.sup_distance,
            "level_decay": r.level_decay,
            "boundary_mass": r.accuracy["boundary_mass"],
        }
        for (a, n), r in exact.items()
    ],
    "sim": [
        {
            "alpha": a,
            "n": n,
            "eps": s.eps,
            "tail": np.atleast_1d(s.tail.mean).tolist(),
            "tail_ci95": np.atleast_1d(s.tail.ci95).tolist(),
            "scaled_mean": float(s.scaled_mean.mean),
            "scaled_mean_ci95": float(s.scaled_mean.ci95),
            "sup_distance": float(s.sup_distance.mean),
        }
        for (a, n), s in sims.items()
    ],
}
if RESULT_FILE:
    with open(RESULT_FILE, "w") as fh:
        json.dump(result, fh)
