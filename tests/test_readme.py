"""The README's Python examples run as written, and its commands are what CI runs."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
README = (ROOT / "README.md").read_text()
BLOCKS = re.findall(r"```python\n(.*?)```", README, flags=re.S)


def test_readme_has_examples() -> None:
    assert len(BLOCKS) >= 5


@pytest.mark.parametrize("index", range(len(BLOCKS)))
def test_readme_example_runs(index: int, capsys: pytest.CaptureFixture[str]) -> None:
    exec(compile(BLOCKS[index], f"README.md[python block {index}]", "exec"), {})
    assert capsys.readouterr().out.strip()


def test_ci_runs_the_readme_commands_exactly() -> None:
    bash = re.findall(r"```bash\n(.*?)```", README, flags=re.S)
    main_job, test_command = bash[0].strip(), bash[1].strip()
    assert "mfstein table" in main_job
    assert "pytest" in test_command
    lines = (ROOT / ".ci/run").read_text().splitlines()
    assert main_job in lines and test_command in lines
    # the test command runs last, so the test summary closes CI's output
    assert lines[-1] == test_command
