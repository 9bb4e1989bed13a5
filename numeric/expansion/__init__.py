"""The system-size expansion beyond 1/N: the stationary 1/N^2 terms, transients of any
model, and observables E[g(S_N)] expanded in 1/N.
"""
