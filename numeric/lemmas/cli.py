"""Command-line subcommands of this package (registered by ``mfstein.cli``)."""

from __future__ import annotations

import argparse


def register(subparsers: argparse._SubParsersAction) -> None:
    """Add this package's subcommands to the ``mfstein`` dispatcher."""
