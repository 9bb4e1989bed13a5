"""Registry of the numeric claims of seed 000, checked at high precision."""
