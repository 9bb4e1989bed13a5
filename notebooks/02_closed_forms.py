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
# # Closed forms for a paper
#
# *This notebook is stored as a jupytext percent-format script (no outputs in the
# repository). Open it with the Jupyter jupytext extension ("Open With → Notebook"),
# or convert it with `jupytext --to ipynb notebooks/02_closed_forms.py`.*
#
# `derive` holds the supermarket model symbolically (SymPy) and derives from its
# transitions every object of the core paper's analysis: the drift `f`, its Jacobian `J`
# and Hessian, the diffusion `Q`, Stein's equation for the linearised model, the
# Lyapunov system and its Kronecker (vectorised) form, Lemma 7's generator identity,
# the closed forms for buffers `b = 1` and `b = 2`, and the numeric kernels generated
# from the same expressions. Every formula below is rendered from those objects, in
# the paper's notation, as LaTeX that pastes into a paper (only `amsmath` is used).

# %% tags=["remove-cell"]
import os

SIZE = os.environ.get("MFSTEIN_NOTEBOOK_SIZE", "full")
if SIZE not in ("ci", "full"):
    raise ValueError(f"MFSTEIN_NOTEBOOK_SIZE must be 'ci' or 'full', got {SIZE!r}.")
# Set only by the test suite: a file that receives the numbers computed below as JSON.
RESULT_FILE = os.environ.get("MFSTEIN_NOTEBOOK_RESULT", "")

# %% tags=["parameters"]
D = 2
if SIZE == "ci":
    B = 2  # buffer of the displayed objects (the Kronecker system is b^2 x b^2)
    LAM_PLOT = 8  # arrival rates at which the closed forms are evaluated
else:
    B = 3
    LAM_PLOT = 60
LAM_CHECK = "0.9"  # rate at which numbers are reported

# %%
import json

import matplotlib.pyplot as plt
import mpmath
import numpy as np
import sympy as sp
from IPython.display import Math, display

from derive import (
    LAM,
    closed_form,
    jacobian_at_equilibrium,
    kronecker_system,
    latex_objects,
    lemma7_difference,
    solve_kronecker,
    solve_lyapunov,
    sstar_symbols,
    stein_lyapunov_check,
    supermarket,
)
from derive.latex import (
    dominant_latex,
    generator_latex,
    kronecker_latex,
    latex,
    lyapunov_latex,
    stein_latex,
)
from derive.models.closed_forms import closed_form_latex

model = supermarket(B, D)
print(model, "parameters:", model.params)

# %% [markdown]
# ## 1. Drift, Jacobian, Hessian, diffusion
#
# The state is `s = (s_1, …, s_b)`, `s_k` the fraction of servers with at least `k`
# jobs; each arrival samples `d` servers with replacement and joins the shortest.

# %%
for name in ("f", "J", "hessian", "Q", "ftilde"):
    display(Math(latex_objects(model, [name])[name]))

# %% [markdown]
# ## 2. Stein's equation and the Lyapunov system
#
# For the linearised model `l(s) = J(s*)(s − s*)`, Stein's equation
# `∇g(s)·J(s*)(s − s*) = (s − s*)ᵀ M (s − s*)` (here `M = I`) is solved by
# `g(s) = −(s − s*)ᵀ P (s − s*)` exactly when `P J(s*) + J(s*)ᵀ P = −M`.

# %%
display(Math(stein_latex(model)))
display(Math(dominant_latex(model)))

# %%
display(Math(lyapunov_latex(model)))

# %% [markdown]
# The Lyapunov equation is `b(b+1)/2` scalar equations; stacking the columns of `P`
# turns it into the `b² × b²` linear system of Theorem 1:

# %%
display(Math(kronecker_latex(model)))

# %% [markdown]
# SymPy proves the equivalence of Stein's equation and the Lyapunov system (the
# residual of Stein's equation is `−xᵀ R x` with `R` the Lyapunov residual), solves the
# Lyapunov system two ways — symmetric elimination and the Kronecker LU (the latter
# only up to `b = 2`: at `b = 3` the symbolic `9 × 9` LU takes minutes) — and checks
# Lemma 7 (the generator on quadratics is exactly `∇g·f + (1/2N) Σ Q_ij ∂_ij g`).

# %%
check = stein_lyapunov_check(model)
print("Stein's equation <=> Lyapunov equation:", check.holds)
P_elim = solve_lyapunov(model)
# The symbolic b^2 x b^2 LU is slow beyond b = 2 (minutes at b = 3); compare there.
small = model if B <= 2 else supermarket(2, D)
P_kron = solve_kronecker(small)
same = (solve_lyapunov(small) - P_kron).applyfunc(sp.simplify).is_zero_matrix
print(f"P by elimination == P by the Kronecker system (b = {small.n}):", same)
lemma7 = lemma7_difference(model)
print("Lemma 7: G g - grad g . f - (1/2N) sum Q_ij d_ij g =", lemma7)
display(Math(generator_latex(model)))

# %% [markdown]
# ## 3. Closed forms for b = 1 and b = 2 (d = 2)
#
# The equilibrium telescopes to `s*_k = λ((s*_{k−1})² − (s*_b)²)`, so `x = s*_b`
# solves a polynomial of degree `2^b`: a quadratic for `b = 1`, a quartic for `b = 2`
# (Ferrari's radicals), an irreducible octic for `b = 3` — where closed forms end.
#
# **b = 1**: everything simplifies.

# %%
cf1 = closed_form(1)
display(Math(closed_form_latex(1)))

# %% [markdown]
# **b = 2**: `P` and `c = 2 tr(P F̃)` are compact in the symbols `s*_1, s*_2`; the
# equilibrium itself is the physical root of the quartic below. Substituting the
# radicals gives an explicit `c(λ)` — explicit but long, so it is shown only by its
# size and evaluated numerically.

# %%
cf2 = closed_form(2)
display(Math(r"0 = " + latex(cf2.polynomial) + r"\quad (x = s^*_2)"))
display(Math(r"s^*_1 = \lambda\left(1 - (s^*_2)^2\right), \qquad s^*_2 = " + latex(cf2.s_star[1])))
display(Math(r"P = " + latex(cf2.P_in_sstar)))
display(Math(r"c = 2\operatorname{tr}(P\tilde F) = " + latex(cf2.c_in_sstar)))
print(f"c(lam) for b = 2 written out: {len(str(cf2.c))} characters of SymPy text")

# %% [markdown]
# The radicals of the quartic pass through complex numbers (casus irreducibilis)
# although `s*_2` is real, so they are evaluated in complex mpmath arithmetic and the
# imaginary part — rounding only — is checked to vanish. Against `numeric.solve` (a
# different route: shooting for `s*`, column shooting for `P`):

# %%
import numeric

c1 = sp.lambdify(LAM, cf1.c, "mpmath")
c2 = sp.lambdify(LAM, cf2.c, "mpmath")


def closed(fn, lam):
    with mpmath.workdps(40):
        v = mpmath.mpc(fn(mpmath.mpf(lam)))
        if abs(v.imag) > mpmath.mpf(10) ** -30 * abs(v.real):
            raise ArithmeticError(f"closed form has imaginary part {v.imag} at lam = {lam}")
        return v.real


lams = [str(v) for v in np.round(np.linspace(0.05, 0.99, LAM_PLOT), 4)]
vals = {1: [closed(c1, v) for v in lams], 2: [closed(c2, v) for v in lams]}
num = {b: [numeric.bound(v, b, D, dps=25).constant for v in lams] for b in (1, 2)}
err = {b: max(abs(a - n) / n for a, n in zip(vals[b], num[b], strict=True)) for b in (1, 2)}
print(
    f"max relative difference closed form vs numeric.solve: b=1 {mpmath.nstr(err[1], 3)}, "
    f"b=2 {mpmath.nstr(err[2], 3)}"
)

fig, ax = plt.subplots(figsize=(7, 4.5))
lam_f = [float(v) for v in lams]
for b in (1, 2):
    ax.plot(lam_f, [float(v) for v in vals[b]], label=rf"closed form, $b={b}$")
    ax.plot(lam_f, [float(v) for v in num[b]], "k.", ms=4)
ax.plot([], [], "k.", label="numeric.solve (25 digits)")
ax.set_xlabel(r"arrival rate per server $\lambda$")
ax.set_ylabel(r"$c = 2\,\mathrm{tr}(P\tilde F)$, $E\|S-s^*\|^2\approx c/N$")
ax.set_title(rf"closed forms, $d = {D}$ (deterministic, no seed)")
ax.legend()
fig.tight_layout()
plt.show()

# %% [markdown]
# ## 4. The generated kernels
#
# `numeric` and `sim` never re-type a formula: they call kernels that `derive`
# prints from the same SymPy expressions (common subexpressions eliminated, one
# `numba.njit` function per object, plus an mpmath back end). The source is
# ordinary Python and can be read:

# %%
kern = model.kernels("numba")
print(kern.source)

# %%
s_star = numeric.equilibrium(LAM_CHECK, B, D, dps=30)
J_kernel = kern.jac(np.array([float(v) for v in s_star]), np.array([float(LAM_CHECK)]))
J_symbolic = jacobian_at_equilibrium(model).subs(
    {**dict(zip(sstar_symbols(B), s_star, strict=True)), LAM: sp.Float(LAM_CHECK, 30)}
)
print("J(s*) from the numba kernel:\n", J_kernel)
print(
    "max |kernel - symbolic| =", float(np.max(np.abs(J_kernel - np.array(J_symbolic, dtype=float))))
)

# %% [markdown]
# ## How this notebook is checked
# The test suite substitutes numbers into the printed expressions and compares them
# with an independent float64 computation (SciPy's Lyapunov solver, `numpy.kron`).

# %% tags=["remove-cell"]
ks = kronecker_system(model)
result = {
    "b": B,
    "d": D,
    "lam": LAM_CHECK,
    "s_star": [mpmath.nstr(v, 25) for v in s_star],
    "kronecker_matrix": str(ks.matrix.tolist()),
    "P_in_sstar": str(P_elim.tolist()),
    "stein_lyapunov_equivalent": bool(check.holds),
    "elimination_equals_kronecker": bool(same),
    "lemma7_difference": str(lemma7),
    "closed_form_b1_c": str(cf1.c),
    "closed_form_b1_sstar": str(cf1.s_star[0]),
    "closed_form_b2_c_at": {v: mpmath.nstr(c, 25) for v, c in zip(lams, vals[2], strict=True)},
    "kernel_jacobian": J_kernel.tolist(),
}
if RESULT_FILE:
    with open(RESULT_FILE, "w") as fh:
        json.dump(result, fh)
