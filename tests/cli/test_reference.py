"""The collected CLI reference page matches the live parsers."""

from __future__ import annotations

import importlib.util
from pathlib import Path

import pytest

from mfstein.cli import COMMAND_MODULES, build_parser, main

ROOT = Path(__file__).resolve().parents[2]


def _load_generator():
    spec = importlib.util.spec_from_file_location(
        "make_cli_reference", ROOT / "docs/make_cli_reference.py"
    )
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


def test_reference_page_is_current() -> None:
    gen = _load_generator()
    assert (ROOT / "docs/cli.md").read_text() == gen.render(), (
        "docs/cli.md is stale: run python docs/make_cli_reference.py"
    )


def test_every_command_module_registers_a_command() -> None:
    parser = build_parser()
    sub = next(a for a in parser._actions if a.__class__.__name__ == "_SubParsersAction")
    assert len(sub.choices) >= len(COMMAND_MODULES)
    for name, sp in sub.choices.items():
        assert sp.description or sp.format_help(), name


def test_no_command_is_usage_error(capsys: pytest.CaptureFixture[str]) -> None:
    assert main([]) == 2
