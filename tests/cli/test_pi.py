"""``mfstein pi`` end to end: refusals through a subprocess (the first) or through
``main`` in this process (the others: tests/in_process.py), output through ``main``."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
from deadlines import deadline
from in_process import run_main

from mfstein.cli import main

BASE = ["pi", "--arrivals", "0:.4,2:.2,4:.3,6:.1", "--service", "1:1"]
ROOT = Path(__file__).resolve().parents[2]


def _run(argv: list[str], env: dict | None = None) -> subprocess.CompletedProcess:
    code = "import sys; from mfstein.cli import main; sys.exit(main(sys.argv[1:]))"
    return subprocess.run(
        [sys.executable, "-c", code, *argv],
        capture_output=True,
        text=True,
        cwd=ROOT,
        env={**os.environ, **(env or {})},
        timeout=deadline(120),
    )


BAD = [
    (["pi", "--arrivals", "0:.4,2:.2,4:.3", "--service", "1:1"], "sum to 1"),
    (["pi", "--arrivals", "0:.6,2:-.1,4:.5", "--service", "1:1"], ">= 0"),
    (["pi", "--arrivals", "1:.5,2:.5", "--service", "1:1", "--n", "3"], "P(a = 0) > 0"),
    (["pi", "--arrivals", "0:.5,2:.5", "--service", "0:.2,2:.8", "--n", "2"], "support >= 1"),
    ([*BASE, "--service", "1:.5,2:.3,3:.2", "--n", "3"], "n must equal"),
    ([*BASE, "--n", "2"], "load E[a] / sum E[s_i] must be < 1"),
    ([*BASE, "--service", "1:1", "--exact", "--n", "2"], "load"),
    (["pi", "--arrivals", "0:.5,3:.5", "--service", "1:.5,2:.5", "--n", "7"], "slots"),
]


@pytest.mark.parametrize(("argv", "word"), BAD)
def test_bad_input_exits_2_with_one_sentence(argv, word, capsys) -> None:
    if word == "slots":
        argv = [*argv, "--slots", "5"]
    p = _run(argv) if (argv, word) == BAD[0] else run_main(argv, ROOT, capsys, timeout=60)
    assert p.returncode == 2, p.stderr
    err = p.stderr.strip()
    assert len(err.splitlines()) == 1 and "Traceback" not in err, err
    assert err.startswith("mfstein pi: error: ") and word in err, err


RULE = """
def halves(q, a, b, out):
    out[0] = a // 2
    out[1] = a - a // 2
"""


def test_bad_split_rule_and_too_many_states_exit_2(tmp_path) -> None:
    (tmp_path / "myrules.py").write_text(RULE)
    argv = ["pi", "--arrivals", "0:.5,3:.5", "--service", "1:.5,2:.5", "--n", "2"]
    p = _run(
        [*argv, "--policy", "pi-split", "--split-rule", "myrules:halves", "--slots", "1000"],
        env={"PYTHONPATH": str(tmp_path)},
    )
    assert p.returncode == 2 and "Traceback" not in p.stderr
    assert len(p.stderr.strip().splitlines()) == 1 and "eq. (8)" in p.stderr
    heavy = ["pi", "--arrivals", "0:.1,5:.9", "--service", "1:.5,2:.3,3:.2", "--n", "3"]
    p = _run([*heavy, "--exact"])
    assert p.returncode == 2 and "Traceback" not in p.stderr
    assert len(p.stderr.strip().splitlines()) == 1 and "max_states" in p.stderr


def test_help_imports_no_heavy_modules() -> None:
    code = (
        "import sys\nfrom mfstein.cli import main\n"
        "for argv in (['--help'], ['pi', '--help']):\n"
        "    try:\n        main(argv)\n    except SystemExit:\n        pass\n"
        "print([m for m in ('numba', 'scipy', 'sympy') if m in sys.modules])"
    )
    p = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, cwd=ROOT)
    assert p.returncode == 0
    assert p.stdout.strip().splitlines()[-1] == "[]"
    assert "mfstein pi" in p.stdout or "--arrivals" in p.stdout


def test_json_and_text_output(capsys) -> None:
    argv = [*BASE, "--service", "1:.5,2:.3,3:.2", "--slots", "2e5", "--reps", "2"]
    assert main([*argv, "--workers", "1", "--json", "--seed", "3"]) == 0
    out = json.loads(capsys.readouterr().out)
    assert out["n"] == 2 and out["seed"] == 3 and out["policy"] == "pi"
    assert len(out["mean_queue"]["mean"]) == 2 and out["path_bound"]["violations"] == 0
    assert out["messages_per_job"]["ci95"] > 0
    assert main([*argv, "--workers", "1", "--policy", "jiq"]) == 0
    text = capsys.readouterr().out
    assert "policy = jiq" in text and "messages / job" in text and "seed = 0" in text
    exact = ["pi", "--arrivals", "0:.5,1:.2,3:.3", "--service", "1:1", "--service", "1:.5,2:.5"]
    assert main([*exact, "--exact", "--json"]) == 0
    ex = json.loads(capsys.readouterr().out)
    assert ex["method"] == "exact" and ex["truncated_mass"] <= 1e-12 and ex["cap"] >= 1
