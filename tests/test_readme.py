"""The README's commands are what CI runs (its Python examples: tests/test_snippets.py)."""

from __future__ import annotations

import re
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
README = (ROOT / "README.md").read_text()


def test_ci_runs_the_readme_commands_exactly() -> None:
    bash = re.findall(r"```bash\n(.*?)```", README, flags=re.S)
    main_job, test_command = bash[0].strip(), bash[1].strip()
    assert "mfstein table" in main_job
    assert "pytest" in test_command
    lines = (ROOT / ".ci/run").read_text().splitlines()
    assert main_job in lines and test_command in lines
    # the test command runs last, so the test summary closes CI's output
    assert lines[-1] == test_command
