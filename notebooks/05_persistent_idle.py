# ---
# jupyter:
#   jupytext:
#     formats: py:percent
#     text_representation:
#       extension: .py
#       format_name: percent
#   kernelspec:
#     display_name: Python 3
#     language: python
#     name: python3
# ---

# %% [markdown]
# # Persistent-Idle dispatch under batch arrivals
#
# *This notebook is stored as a jupytext percent-format script (no outputs in the
# repository). Open it with the Jupyter jupytext extension ("Open With → Notebook"),
# or convert it with `jupytext --to ipynb notebooks/05_persistent_idle.py`.*
#
# *How long: about 8 minutes on 2 cores at full size; under a minute with
# `MFSTEIN_NOTEBOOK_SIZE=ci` (shorter runs, wider intervals).*
#
# R. Atar, I. Keslassy, G. Mendelson, A. Orda and S. Vargaftik, "On the Persistent-Idle
# Load Distribution Policy Under Batch Arrivals and Random Service Capacity",
# arXiv:2103.12140 (2021), studies a dispatcher that sends every batch to the *Last-Idle*
# server `LI(t)`: uniform among the servers idle at the end of slot `t − 1`, kept
# unchanged while no server is idle (eq. (4)).  Its main theorem: the system is
# stable exactly when `E[a] < Σᵢ E[sᵢ]`, while the dispatcher only learns of a server
# when it turns idle (one token), so PI costs at most one message per batch.
# PI-Split (eq. (9)) may split a batch over several idle servers.
#
# Here: PI, PI-Split and JIQ as the load grows, from `sim.simulate_pi` (95% batch-means
# confidence intervals over independent replications), and the exact truncated chain
# (`numeric.pi.exact`) for two servers as a check.

# %% tags=["remove-cell"]
import os

SIZE = os.environ.get("MFSTEIN_NOTEBOOK_SIZE", "full")
if SIZE not in ("ci", "full"):
    raise ValueError(f"MFSTEIN_NOTEBOOK_SIZE must be 'ci' or 'full', got {SIZE!r}.")
# Set only by the test suite: a file that receives the numbers computed below as JSON.
RESULT_FILE = os.environ.get("MFSTEIN_NOTEBOOK_RESULT", "")

# %% tags=["parameters"]
N_SERVERS = 10
SERVICE = "1:.5,2:.3,3:.2"  # capacity pmf of every server, E[s] = 1.7
BATCH = 20  # batches are 0 or BATCH jobs; P(a = BATCH) sets the load (< 1 up to load 1)
POLICIES = ["pi", "pi-split", "jiq"]
SEED = 2024
EXACT_SERVICES = ["1:1", "1:.5,2:.3,3:.2"]  # two heterogeneous servers for the exact check
EXACT_ARRIVALS = "0:.5,1:.2,3:.3"
if SIZE == "ci":
    LOADS = [0.3, 0.6, 0.85]
    SLOTS, REPS = 200_000, 2
else:
    LOADS = [0.1, 0.2, 0.3, 0.4, 0.5, 0.6, 0.7, 0.8, 0.85, 0.9, 0.95]
    SLOTS, REPS = 5_000_000, 4

# %%
import json

import matplotlib.pyplot as plt
import numpy as np

from derive.models.persistent_idle import parse_pmf
from numeric.pi.exact import solve_pi_exact
from sim.pi import simulate_pi

mean_s = parse_pmf(SERVICE, "service").mean


def arrivals_at(load: float) -> str:
    """Batches of BATCH jobs with probability p, so that E[a] / (n E[s]) = load."""
    p = load * N_SERVERS * mean_s / BATCH
    return f"0:{1 - p!r},{BATCH}:{p!r}"


runs = {
    pol: [
        simulate_pi(
            arrivals_at(rho),
            SERVICE,
            n=N_SERVERS,
            policy=pol,
            slots=SLOTS,
            reps=REPS,
            seed=SEED,
            workers=1,
        )
        for rho in LOADS
    ]
    for pol in POLICIES
}
for pol, rs in runs.items():
    for rho, r in zip(LOADS, rs, strict=True):
        print(
            f"{pol:9s} load {rho:.2f}: delay {float(r.delay.mean):8.4f} ± "
            f"{float(r.delay.ci95):.2g}  messages/job {float(r.messages_per_job.mean):.4f}  "
            f"path-bound violations {r.bound_violations}"
        )

# %% [markdown]
# ## Delay and communication against the load
#
# Delay is `E[Q_total] / E[a]` (Little's law, queues recorded at the end of a slot).
# Messages are tokens: a server sends one when it becomes idle.

# %%
fig, axes = plt.subplots(1, 3, figsize=(13, 3.8))
for pol, rs in runs.items():
    d = np.array([float(r.delay.mean) for r in rs])
    dci = np.array([float(r.delay.ci95) for r in rs])
    m = np.array([float(r.messages_per_job.mean) for r in rs])
    mci = np.array([float(r.messages_per_job.ci95) for r in rs])
    idle = np.array([float(np.mean(r.p_idle.mean)) for r in rs])
    idle_ci = np.array([float(np.mean(r.p_idle.ci95)) for r in rs])
    axes[0].errorbar(LOADS, d, yerr=dci, marker="o", capsize=3, label=pol)
    axes[1].errorbar(LOADS, m, yerr=mci, marker="o", capsize=3, label=pol)
    axes[2].errorbar(LOADS, idle, yerr=idle_ci, marker="o", capsize=3, label=pol)
axes[0].set(xlabel="load E[a] / Σ E[s_i]", ylabel="mean delay (slots)", yscale="log")
axes[1].set(xlabel="load", ylabel="messages per job")
axes[2].set(xlabel="load", ylabel="mean P(server idle)")
for ax in axes:
    ax.grid(alpha=0.3)
    ax.legend()
fig.suptitle(f"n = {N_SERVERS}, batches of {BATCH}, capacities {SERVICE} (95% CIs)")
fig.tight_layout()
plt.show()

# %% [markdown]
# ## Exact check with two servers
#
# The truncated chain `(Q_1, Q_2, LI)` solved exactly against the simulator.

# %%
exact = solve_pi_exact(EXACT_ARRIVALS, EXACT_SERVICES, policy="pi")
sim2 = simulate_pi(
    EXACT_ARRIVALS, EXACT_SERVICES, policy="pi", slots=SLOTS * 5, reps=REPS, seed=SEED
)
print(f"cap {exact.cap}, truncated mass {exact.truncated_mass:.1e}, residual {exact.residual:.1e}")
for i in range(2):
    print(
        f"server {i + 1}: E[Q] exact {exact.mean_queue[i]:.6f}, simulated "
        f"{sim2.mean_queue.mean[i]:.6f} ± {sim2.mean_queue.ci95[i]:.2g}"
    )

# %% tags=["remove-cell"]
result = {
    "loads": LOADS,
    "n": N_SERVERS,
    "policies": {
        pol: {
            "delay": [float(r.delay.mean) for r in rs],
            "delay_ci95": [float(r.delay.ci95) for r in rs],
            "messages_per_job": [float(r.messages_per_job.mean) for r in rs],
            "messages_per_batch": [float(r.messages_per_batch.mean) for r in rs],
            "load": [r.model.load for r in rs],
            "bound_violations": [r.bound_violations for r in rs],
            "busy_while_idle": [r.busy_while_idle for r in rs],
        }
        for pol, rs in runs.items()
    },
    "exact": {
        "arrivals": EXACT_ARRIVALS,
        "services": EXACT_SERVICES,
        "mean_queue": exact.mean_queue.tolist(),
        "truncated_mass": exact.truncated_mass,
        "sim_mean_queue": sim2.mean_queue.mean.tolist(),
        "sim_ci95": sim2.mean_queue.ci95.tolist(),
    },
}
if RESULT_FILE:
    with open(RESULT_FILE, "w") as fh:
        json.dump(result, fh)
