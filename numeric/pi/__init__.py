"""Persistent-Idle dispatching with batch arrivals: the exact truncated chain (the model
description is derive.models.persistent_idle).
"""
