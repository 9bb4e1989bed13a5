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
# # Exploring heavy traffic
#
# *This notebook is stored as a jupytext percent-format script (no outputs in the
# repository). Open it with the Jupyter jupytext extension ("Open With → Notebook"),
# or convert it with `jupytext --to ipynb notebooks/04_heavy_traffic.py`.*
#
# The core paper (F. Hairi, X. Liu and L. Ying, "Beyond Scaling: Calculable Error Bound
# of the Power-of-Two-Choices Mean-Field Model in Heavy-Traffic", arXiv:2012.06613,
# 2020) lets the arrival rate approach one with the system size,
# `λ = 1 − γ/N^α`, and shows `E‖S − s*‖² ≈ c/N` with `c = tr(P Q(s*))`,
# `P J + Jᵀ P = −I` (Theorem 1 with its sign corrected). This notebook explores
# that constant:
#
# 1. `c` against `γ` and `α` along the heavy-traffic path (float64 sweep,
#    `numeric.constant_float64`);
# 2. `c` against the buffer `b` and the number of sampled servers `d`;
# 3. convergence in `b` (high precision, `numeric.solve`);
# 4. the refined mean field: bias `V` (`E[S] ≈ s* + V/N`) and covariance `W`
#    (`N Cov(S) → W`, `J W + W Jᵀ + Q = 0`) against the exact finite-`N` solver;
# 5. sampling `d` servers with replacement (the paper's chain) against `d` distinct
#    servers (the real system).
#
# Everything is deterministic (no random numbers); high-precision numbers carry the
# digits `numeric` certifies.

# %% tags=["remove-cell"]
import os

SIZE = os.environ.get("MFSTEIN_NOTEBOOK_SIZE", "full")
if SIZE not in ("ci", "full"):
    raise ValueError(f"MFSTEIN_NOTEBOOK_SIZE must be 'ci' or 'full', got {SIZE!r}.")
# Set only by the test suite: a file that receives the numbers computed below as JSON.
RESULT_FILE = os.environ.get("MFSTEIN_NOTEBOOK_RESULT", "")

# %% tags=["parameters"]
D = 2
ALPHA0, GAMMA0 = "0.05", "0.1"  # Table 1 of the core paper
if SIZE == "ci":
    N_GRID = [10, 100, 1_000, 10_000]
    GAMMAS = ["0.01", "0.1", "0.5"]
    ALPHAS = ["0", "0.05", "0.2"]
    B_SWEEP = [1, 3]  # buffers for the float64 curves against lam
    D_SWEEP = [2, 3]
    LAM_POINTS = 12
    CONV_DPS = 20
    EXACT_B, EXACT_LAM = 3, "0.9"
    EXACT_N = [4, 8, 16]
    REPL_N = [3, 10, 100]
else:
    N_GRID = [round(10 ** (k / 4)) for k in range(4, 33)]  # 10 .. 10^8
    GAMMAS = ["0.001", "0.01", "0.05", "0.1", "0.2", "0.5", "1"]
    ALPHAS = ["0", "0.02", "0.05", "0.1", "0.2", "0.3"]
    B_SWEEP = [1, 2, 3, 4, 6, 8]
    D_SWEEP = [2, 3, 4, 5]
    LAM_POINTS = 200
    CONV_DPS = 40
    EXACT_B, EXACT_LAM = 3, "0.9"
    EXACT_N = [4, 6, 8, 12, 16, 24, 32, 48, 64]
    REPL_N = [3, 5, 10, 20, 50, 100, 1_000, 10_000]

# %%
import json
import warnings

import matplotlib.pyplot as plt
import mpmath
import numpy as np

import numeric
from numeric import IllConditionedWarning

print(f"size = {SIZE}")


def lam_path(gamma: str, alpha: str, N: int) -> float:
    """``lam = 1 - gamma / N^alpha`` as a float (numeric's heavy_traffic_lambda)."""
    return float(numeric.heavy_traffic_lambda(gamma, alpha, N, dps=20))


# %% [markdown]
# ## 1. The constant against γ and α
#
# One buffer serves the whole sweep: the one `numeric.auto_buffer` picks for the
# heaviest rate in it (beyond that buffer the constant no longer changes at 15
# digits, and a lighter load needs an even smaller one). `constant_float64`
# solves `J W + W Jᵀ + Q = 0` in float64 for all rates at once; rates within `1e-6`
# of one would be handed back to the mpmath path with a warning.

# %%
sweep = [(g, ALPHA0) for g in GAMMAS] + [(GAMMA0, a) for a in ALPHAS]
lam_max = max(lam_path(g, a, max(N_GRID)) for g, a in sweep)
B_F64 = numeric.auto_buffer(repr(lam_max), D, dps=15)
print(f"heaviest rate in the sweep: lam = {lam_max:.10f}; buffer b = {B_F64}")

Ns = np.array(N_GRID, dtype=float)
with warnings.catch_warnings(record=True) as caught:
    warnings.simplefilter("always", IllConditionedWarning)
    c_gamma = {
        g: numeric.constant_float64(np.array([lam_path(g, ALPHA0, n) for n in N_GRID]), B_F64, D)
        for g in GAMMAS
    }
    c_alpha = {
        a: numeric.constant_float64(np.array([lam_path(GAMMA0, a, n) for n in N_GRID]), B_F64, D)
        for a in ALPHAS
    }
for w in caught:
    print("warning:", w.message)

fig, axes = plt.subplots(1, 2, figsize=(13, 5))
for g, c in c_gamma.items():
    axes[0].plot(Ns, c, "o-", ms=3, label=rf"$\gamma = {g}$")
axes[0].set_title(rf"$\alpha = {ALPHA0}$, $b = {B_F64}$, $d = {D}$")
for a, c in c_alpha.items():
    axes[1].plot(Ns, c, "o-", ms=3, label=rf"$\alpha = {a}$")
axes[1].set_title(rf"$\gamma = {GAMMA0}$, $b = {B_F64}$, $d = {D}$")
for ax in axes:
    ax.set_xscale("log")
    ax.set_yscale("log")
    ax.set_xlabel(r"number of servers $N$")
    ax.set_ylabel(r"$c = \lim N\,E\|S-s^*\|^2$ at $\lambda = 1-\gamma/N^\alpha$")
    ax.legend(title="deterministic (no seed)")
fig.tight_layout()
plt.show()

# %% [markdown]
# For `α > 0` the load `1 − λ = γ/N^α` vanishes and `c` grows without bound; with
# `α = 0` the load is fixed and `c` is flat in `N`. The product `c·(1 − λ)` shows how
# the growth tracks the load:

# %%
for g, c in c_gamma.items():
    lams = np.array([lam_path(g, ALPHA0, n) for n in N_GRID])
    prod = c * (1 - lams)
    print(f"gamma = {g:>5}, alpha = {ALPHA0}: c (1 - lam) in [{prod.min():.4f}, {prod.max():.4f}]")

# %% [markdown]
# ## 2. The constant against b and d
#
# Against the arrival rate, for several buffers (a buffer `b` caps the queue, so for
# heavy load a small `b` *reduces* the fluctuations — blocked arrivals leave) and for
# several `d` (more choices, shorter queues, fewer occupied levels).

# %%
lam_grid = np.linspace(0.5, 0.99, LAM_POINTS)
c_b = {b: numeric.constant_float64(lam_grid, b, D) for b in [*B_SWEEP, B_F64]}
c_d = {}
for d in D_SWEEP:
    # any buffer at or beyond auto gives the same c; reuse the compiled one for d = D
    b_d = B_F64 if d == D else numeric.auto_buffer(repr(float(lam_grid[-1])), d, dps=15)
    c_d[d] = (b_d, numeric.constant_float64(lam_grid, b_d, d))

fig, axes = plt.subplots(1, 2, figsize=(13, 5))
for b, c in c_b.items():
    axes[0].plot(lam_grid, c, label=rf"$b = {b}$")
axes[0].set_title(rf"$d = {D}$")
for d, (b_d, c) in c_d.items():
    axes[1].plot(lam_grid, c, label=rf"$d = {d}$ ($b = {b_d}$)")
axes[1].set_title("buffer: auto at the largest rate")
for ax in axes:
    ax.set_yscale("log")
    ax.set_xlabel(r"arrival rate per server $\lambda$")
    ax.set_ylabel(r"$c = \mathrm{tr}(P\,Q(s^*))$")
    ax.legend(title="deterministic (no seed)")
fig.tight_layout()
plt.show()

# %% [markdown]
# ## 3. Convergence in b
#
# `s*_k ≈ λ^((d^k−1)/(d−1))` falls doubly exponentially in `k`, so the constant
# settles in `b` just as fast — once `s*_b` drops below the working precision, more
# buffer changes nothing. The high-precision route shows the whole approach, far below
# float64 resolution. The rate is Table 2's heaviest, `γ = 0.01`, `α = 0.05`,
# `N = 10⁴` (`λ ≈ 0.9937`).

# %%
lam_conv = numeric.heavy_traffic_lambda("0.01", "0.05", 10_000, dps=CONV_DPS)
b_auto = numeric.auto_buffer(lam_conv, D, dps=CONV_DPS)
b_first = max(1, b_auto - 5) if SIZE == "ci" else 1
conv = {b: numeric.bound(lam_conv, b, D, dps=CONV_DPS) for b in range(b_first, b_auto + 3)}
c_ref = conv[b_auto].constant
print(f"lam = {mpmath.nstr(lam_conv, CONV_DPS)}, b auto = {b_auto}")
print(f"{'b':>3} {'c_b':>{CONV_DPS + 8}} {'|c_b - c_auto|':>12} {'digits':>6}")
for b, sol in conv.items():
    print(
        f"{b:>3} {mpmath.nstr(sol.constant, sol.digits):>{CONV_DPS + 8}} "
        f"{mpmath.nstr(abs(sol.constant - c_ref), 3):>12} {sol.digits:>6}"
    )

bs = [b for b in conv if b != b_auto and abs(conv[b].constant - c_ref) > 0]
fig, ax = plt.subplots(figsize=(7, 4.5))
ax.semilogy(bs, [float(abs(conv[b].constant - c_ref)) for b in bs], "o-")
ax.axhline(float(abs(c_ref)) * 10.0 ** (-CONV_DPS), color="grey", ls=":", label="working precision")
ax.set_xlabel(r"buffer size $b$")
ax.set_ylabel(rf"$|c_b - c_{{{b_auto}}}|$")
ax.set_title(rf"$\lambda = 1 - 0.01/N^{{0.05}}$, $N = 10^4$, $d = {D}$, {CONV_DPS} digits")
ax.legend(title="deterministic (no seed)")
fig.tight_layout()
plt.show()

# %% [markdown]
# ## 4. Refined mean field against the exact solver
#
# Gast & Van Houdt's refinement: `E[S] = s* + V/N + O(1/N²)` with `V = −J⁻¹h`,
# `h_i = ½ Σ_jk ∂²f_i/∂s_j∂s_k W_jk`, and `N Cov(S) → W`. The exact stationary
# distribution of the finite-`N` chain (`numeric.exact.solve_exact`, small `b` so the
# state space `C(N+b, b)` stays small) gives `N(E[S] − s*)` and `N Cov(S)` at each `N`;
# both must approach `V` and `W`, with an error of order `1/N`.

# %%
from numeric.exact import solve_exact

mf = numeric.bound(EXACT_LAM, EXACT_B, D, dps=30)
V = np.array([float(v) for v in mf.V])
W = np.array(mf.W.tolist(), dtype=float)
exact = {}
for n in EXACT_N:
    r = solve_exact(n, EXACT_LAM, EXACT_B, D)
    exact[n] = r
    print(
        f"N = {n:>4}: {r.states:>8} states, residual {float(r.residual):.1e}, "
        f"{float(r.seconds):.2f} s"
    )
bias = np.array([np.asarray(exact[n].n_bias, dtype=float) for n in EXACT_N])
cov = np.array([np.asarray(exact[n].n_cov, dtype=float) for n in EXACT_N])
bias_err = np.abs(bias - V).max(axis=1)
cov_err = np.abs(cov - W).reshape(len(EXACT_N), -1).max(axis=1)
print("V =", np.array2string(V, precision=6))
print("W diagonal =", np.array2string(np.diag(W), precision=6))

fig, axes = plt.subplots(1, 2, figsize=(13, 5))
en = np.array(EXACT_N, dtype=float)
for k in range(EXACT_B):
    (line,) = axes[0].plot(en, bias[:, k], "o-", label=rf"$N(E[S_{k + 1}]-s^*_{k + 1})$ exact")
    axes[0].axhline(V[k], color=line.get_color(), ls="--", label=rf"$V_{k + 1}$")
axes[0].set_xscale("log")
axes[0].set_xlabel(r"number of servers $N$")
axes[0].set_ylabel(r"scaled bias $N(E[S]-s^*)$")
axes[0].legend(fontsize=8, title=rf"$\lambda={EXACT_LAM}$, $b={EXACT_B}$, $d={D}$, exact")
axes[1].loglog(en, bias_err, "o-", label=r"$\max_k |N(E[S_k]-s^*_k) - V_k|$")
axes[1].loglog(en, cov_err, "s-", label=r"$\max_{jk} |N\,\mathrm{Cov}(S)_{jk} - W_{jk}|$")
axes[1].loglog(en, bias_err[0] * en[0] / en, "k:", label=r"slope $1/N$")
axes[1].set_xlabel(r"number of servers $N$")
axes[1].set_ylabel("error of the refined mean field")
axes[1].legend(fontsize=8, title=rf"$\lambda={EXACT_LAM}$, $b={EXACT_B}$, $d={D}$, exact")
fig.tight_layout()
plt.show()

# %% [markdown]
# ## 5. With against without replacement
#
# The core paper's chain samples `d` servers *with* replacement (`P(all d hold ≥ k jobs) =
# s_k^d`). A real dispatcher samples `d` distinct servers, `C(N s_k, d)/C(N, d)`: an
# `O(1/N)` change of the drift, so a different `s*`, `J` and constant at every finite
# `N`, converging to the paper's as `N → ∞`. `numeric.bound(..., replacement=False,
# N=N)` solves the `N`-dependent mean field.

# %%
c_with = numeric.bound(EXACT_LAM, EXACT_B, D, dps=20).constant
c_without = {
    n: numeric.bound(EXACT_LAM, EXACT_B, D, dps=20, replacement=False, N=n).constant for n in REPL_N
}
print(f"with replacement: c = {mpmath.nstr(c_with, 15)}")
for n, c in c_without.items():
    print(
        f"N = {n:>6}: without replacement c = {mpmath.nstr(c, 15)}, N (c_N - c) = "
        f"{mpmath.nstr(n * (c - c_with), 6)}"
    )

# %% [markdown]
# The exact finite-`N` chains (both samplings, same `λ` and `b`) show what the
# difference does to `N E‖S − s*‖²` itself, each measured from its own `s*`:

# %%
exact_without = {n: solve_exact(n, EXACT_LAM, EXACT_B, D, replacement=False) for n in EXACT_N}
for n in EXACT_N:
    print(
        f"N = {n:>4}: exact N E||S - s*||^2 with replacement {float(exact[n].n_mse):.6f}, "
        f"without {float(exact_without[n].n_mse):.6f}"
    )

rn = np.array(REPL_N, dtype=float)
fig, ax = plt.subplots(figsize=(7, 4.5))
ax.semilogx(rn, [float(c_without[n]) for n in REPL_N], "o-", label="mean field $c_N$, without")
ax.axhline(float(c_with), color="k", ls="--", label="mean field $c$, with (core paper)")
ax.semilogx(en, [float(exact[n].n_mse) for n in EXACT_N], "kx", ms=8, label="exact chain, with")
ax.semilogx(
    en, [float(exact_without[n].n_mse) for n in EXACT_N], "r+", ms=10, label="exact chain, without"
)
ax.set_xlabel(r"number of servers $N$")
ax.set_ylabel(r"$N\,E\|S-s^*\|^2$ and its limit $c = \mathrm{tr}(P\,Q(s^*))$")
ax.set_title(rf"$\lambda = {EXACT_LAM}$, $b = {EXACT_B}$, $d = {D}$")
ax.legend(title="sampling d servers with / without replacement; no seed", fontsize=8)
fig.tight_layout()
plt.show()

# %% [markdown]
# ## How this notebook is checked
# The test suite re-derives these numbers with SciPy (Bartels–Stewart Lyapunov
# solves on an independently computed fixed point) and checks the exact solver's
# approach to `V` and `W`.

# %% tags=["remove-cell"]
pick = [0, len(N_GRID) - 1]
result = {
    "d": D,
    "b_f64": B_F64,
    "gamma_sweep": [
        {"gamma": g, "alpha": ALPHA0, "N": N_GRID[i], "c": float(c_gamma[g][i])}
        for g in GAMMAS
        for i in pick
    ],
    "alpha_sweep": [
        {"gamma": GAMMA0, "alpha": a, "N": N_GRID[i], "c": float(c_alpha[a][i])}
        for a in ALPHAS
        for i in pick
    ],
    "b_sweep": [
        {"b": b, "lam": float(lam_grid[i]), "c": float(c_b[b][i])}
        for b in c_b
        for i in (0, LAM_POINTS - 1)
    ],
    "d_sweep": [
        {"d": d, "b": b_d, "lam": float(lam_grid[-1]), "c": float(c[-1])}
        for d, (b_d, c) in c_d.items()
    ],
    "convergence": {
        "lam": mpmath.nstr(lam_conv, CONV_DPS),
        "b_auto": b_auto,
        "c": {str(b): mpmath.nstr(sol.constant, sol.digits) for b, sol in conv.items()},
    },
    "refined": {
        "lam": EXACT_LAM,
        "b": EXACT_B,
        "V": [float(v) for v in V],
        "W": W.tolist(),
        "N": EXACT_N,
        "n_bias": bias.tolist(),
        "n_cov": cov.tolist(),
    },
    "replacement": {
        "lam": EXACT_LAM,
        "b": EXACT_B,
        "with": mpmath.nstr(c_with, 15),
        "without": {str(n): mpmath.nstr(c, 15) for n, c in c_without.items()},
        "exact_N": EXACT_N,
        "exact_with": [float(exact[n].n_mse) for n in EXACT_N],
        "exact_without": [float(exact_without[n].n_mse) for n in EXACT_N],
    },
}
if RESULT_FILE:
    with open(RESULT_FILE, "w") as fh:
        json.dump(result, fh)
