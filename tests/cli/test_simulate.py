"""``mfstein simulate`` and ``mfstein table`` end to end."""

from __future__ import annotations

import json

import pytest

from mfstein.cli import main


@pytest.mark.parametrize(
    ("argv", "word"),
    [
        (["--N", "10", "--lam", "0.9", "--b", "0", "--steps", "1000"], "b must"),
        (["--N", "10", "--lam", "-1", "--b", "3", "--steps", "1000"], "lam must"),
        (["--N", "0", "--lam", "0.9", "--b", "3", "--steps", "1000"], "N must"),
        (["--N", "10", "--gamma", "0.1", "--b", "3", "--steps", "1000"], "--alpha"),
        (["--N", "10", "--gamma", "2", "--alpha", "0.05", "--b", "3", "--steps", "9"], "gamma"),
        (
            ["--N", "1", "--lam", "0.9", "--b", "3", "--steps", "1000", "--without-replacement"],
            "N must be >= d",
        ),
        (["--N", "10", "--lam", "0.9", "--b", "3", "--steps", "5"], "steps must"),
        (["--N", "10", "--lam", "0.9", "--b", "3", "--steps", "100", "--reps", "0"], "reps must"),
    ],
)
def test_bad_input_exits_2_with_one_sentence(argv, word, capsys):
    assert main(["simulate", *argv]) == 2
    err = capsys.readouterr().err.strip()
    assert word in err
    assert len(err.splitlines()) == 1 and "Traceback" not in err


def test_simulate_json_fields(capsys):
    argv = ["simulate", "--N", "20", "--lam", "0.9", "--b", "5", "--steps", "2e5"]
    assert main([*argv, "--reps", "2", "--seed", "3", "--workers", "1", "--json"]) == 0
    out = json.loads(capsys.readouterr().out)
    for key in ("N", "lam", "b", "d", "steps", "reps", "seed", "blocking", "events_per_second"):
        assert key in out
    assert set(out["n_mse"]) == {"mean", "ci95"}
    assert len(out["mean"]) == len(out["n_bias"]) == 5
    assert out["N"] == 20 and out["seed"] == 3 and out["steps"] == 200_000
    assert out["n_mse"]["ci95"] > 0


def test_simulate_text_per_server(capsys):
    argv = ["simulate", "--N", "8", "--lam", "0.8", "--b", "4", "--steps", "1e5", "--reps", "2"]
    assert main([*argv, "--policy", "jsq", "--workers", "1"]) == 0
    out = capsys.readouterr().out
    assert "response time" in out and "N E||S - s*||^2" in out and "seed = 0" in out


def test_table_layout_and_plot(tmp_path, capsys):
    png = tmp_path / "table.png"
    argv = ["table", "--gamma", "0.1", "--alpha", "0.05", "--N", "4,6", "--sim-steps", "2e5"]
    assert main([*argv, "--reps", "2", "--workers", "1", "--exact", "--plot", str(png)]) == 0
    out = capsys.readouterr().out
    for row in ("lambda", "b (simulated)", "Simulation", "Asymptotic tight bound", "Exact"):
        assert row in out
    assert "seed = 0" in out
    assert png.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    assert not list(tmp_path.glob("*.tmp*"))
    # N = 4, 6 at b = auto: C(N + b, b) states is small, so the exact row is filled
    exact_line = next(line for line in out.splitlines() if line.startswith("Exact"))
    assert "—" not in exact_line
    argv = ["table", "--gamma", "0.1", "--alpha", "0.05", "--N", "4", "--sim-steps", "2e5"]
    assert main([*argv, "--reps", "2", "--workers", "1", "--json"]) == 0
    rows = json.loads(capsys.readouterr().out)["rows"]
    assert [r["N"] for r in rows] == [4]
    assert rows[0]["exact"] is None and "--exact" in rows[0]["exact_note"]
    assert rows[0]["bound"].startswith("3.")  # c(lam(4)) ~ 3.1, cf. Table 1's 3.1872 at N = 10
