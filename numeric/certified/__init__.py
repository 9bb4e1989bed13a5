"""Certified numbers: Arb enclosures of the mean-field solution and proof-grade checks of
the registered claims.
"""
