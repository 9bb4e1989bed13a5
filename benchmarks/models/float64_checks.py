"""Plain model files (transitions only, no ``ModelInfo``) that the float64 route must
check as the default route does (issue 36): a drift that jumps, a fixed point on a
kink, an unstable root, only an unstable fixed point, scaled rates, large rates.
Read by ``tests/numeric/meanfield/test_float64_checks.py`` and the probe sweep."""

import sympy as sp

from derive import Model, Transition

x, lam, beta, gamma, c = sp.symbols("x lam beta gamma c")


def jump():
    # birth lam below 1/2, lam (1 - x) above: at lam = 1/2 the drift jumps from
    # 1/2 - x > 0 to (1 - 3 x)/2 < 0 at x = 1/2 and never vanishes
    birth = sp.Piecewise((lam, x < sp.Rational(1, 2)), (lam * (1 - x), True))
    return Model("jump", (x,), (lam,), [Transition((1,), birth), Transition((-1,), x)])


def kink():
    # birth min(lam, 1 - x): at lam = 1/2 the fixed point x = 1/2 is on the kink
    return Model("kink", (x,), (lam,), [Transition((1,), sp.Min(lam, 1 - x)), Transition((-1,), x)])


def sis():
    return Model("sis", (x,), (beta, gamma),
                 [Transition((1,), beta * x * (1 - x)), Transition((-1,), gamma * x)])


def grow():
    # the only fixed point, 0, is unstable (J = c)
    return Model("grow", (x,), (c,), [Transition((1,), 2 * c * x), Transition((-1,), c * x)])


def scaled():
    # every rate times c: the same fixed point 1/2 and constant 1/4 for any c > 0
    return Model("scaled", (x,), (c,), [Transition((1,), c * (1 - x)), Transition((-1,), c * x)])


def birth_death():
    # x* = lam/(1 + lam): at lam = 1000 the drift is a difference of terms of size 1000
    return Model("bd", (x,), (lam,), [Transition((1,), lam * (1 - x)), Transition((-1,), x)])
