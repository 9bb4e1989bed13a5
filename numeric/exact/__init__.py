"""Exact stationary distribution of small finite-N systems."""
