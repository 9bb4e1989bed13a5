"""Numeric layer of mfstein (mpmath, NumPy, SciPy)."""
