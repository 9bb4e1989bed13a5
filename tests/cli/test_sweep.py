"""``mfstein sweep`` (issue 34): a table, JSON, a CSV file and a plot of one model over
a parameter grid; bad input is one sentence with exit status 2 and writes nothing."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from mfstein.cli import main

ROOT = Path(__file__).resolve().parents[2]
BD = ["--model", f"{ROOT / 'examples' / 'birth_death.py'}:birth_death", "--param", "cap=2"]


def test_table_csv_and_plot(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    csv, png = tmp_path / "s.csv", tmp_path / "s.png"
    argv = ["sweep", *BD, "--param", "lam=0.2:0.6:3", "--float64", "--no-progress"]
    assert main([*argv, "--csv", str(csv), "--plot", str(png)]) == 0
    out = capsys.readouterr().out.splitlines()
    assert out[1].split()[:3] == ["lam", "c", "digits"]
    assert [line.split()[0] for line in out[2:5]] == ["0.2", "0.4", "0.6"]
    assert len(csv.read_text().splitlines()) == 4 and png.stat().st_size > 0
    assert main([*argv, "--json"]) == 0
    data = json.loads(capsys.readouterr().out)
    assert [p["params"]["lam"] for p in data["points"]] == ["0.2", "0.4", "0.6"]
    # the text table prints c with the digits the JSON claims for it
    assert out[2].split()[1] == data["points"][0]["c"]


@pytest.mark.parametrize(
    "extra,words",
    [
        (["--param", "cap=2", "--param", "lam=0.2:0.6:1"], "START:STOP:COUNT"),
        (["--param", "cap=2:3:2", "--param", "lam=0.2:0.6:3"], "option of the factory"),
        (["--param", "cap=2", "--param", "lam=0.2"], "at least one swept parameter"),
        (["--param", "cap=2", "--param", "lam=0.2:0.6:3", "--plot", "{tmp}/s.txt"], "--plot"),
    ],
)
def test_bad_input_is_one_line_and_writes_nothing(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], extra: list[str], words: str
) -> None:
    args = [a.replace("{tmp}", str(tmp_path)) for a in extra]
    code = main(["sweep", *BD[:2], *args, "--float64", "--csv", str(tmp_path / "out.csv")])
    err = capsys.readouterr().err.strip().splitlines()
    assert code == 2 and len(err) == 1 and words in err[0], err
    assert not list(tmp_path.iterdir())  # nothing written, not even the CSV


def test_working_precision_on_a_dask_scheduler(capsys: pytest.CaptureFixture[str]) -> None:
    """``--scheduler`` with ``--workers 2`` at 15 digits on a worker of two threads
    prints the points one process prints."""
    distributed = pytest.importorskip("dask.distributed")
    argv = ["sweep", *BD, "--param", "lam=0.2:0.6:4", "--dps", "15", "--no-progress", "--json"]
    assert main(argv) == 0
    here = json.loads(capsys.readouterr().out)["points"]
    with distributed.LocalCluster(
        n_workers=1, threads_per_worker=2, processes=False, dashboard_address=None
    ) as cl:
        assert main([*argv, "--workers", "2", "--scheduler", cl.scheduler_address]) == 0
    assert json.loads(capsys.readouterr().out)["points"] == here
    assert len(here) == 4 and all(p["digits"] == 15 for p in here)


def test_start_is_every_point_s_and_the_json_says_it(capsys: pytest.CaptureFixture[str]) -> None:
    """``--start`` reaches every point: each row is what ``mfstein solve --start`` prints
    (a start outside SIR's simplex refuses every point in the solve's sentence), and the
    JSON's last key ``"start"`` is the start as given (``numeric.sweep(start=)``'s effect
    on the numbers: ``tests/test_frozen_results.py``)."""
    sir = ["--model", "sir", "--param", "gamma=1", "--param", "rho=0.5", "--param", "a=0.1"]
    start = ["--start", "0.7,0.2,0.1"]
    argv = ["sweep", *sir, "--param", "beta=2:3:2", "--dps", "20", "--no-progress", "--json"]
    assert main([*argv, *start]) == 0
    data = json.loads(capsys.readouterr().out)
    assert list(data)[-1] == "start" and data["start"] == "0.7,0.2,0.1"
    assert main([*argv, "--start", "0.6,0.2,0"]) == 0
    outside = json.loads(capsys.readouterr().out)
    assert all("start must lie in the state space" in p["refused"] for p in outside["points"])
    assert main(argv) == 0
    assert json.loads(capsys.readouterr().out)["start"] is None
    for point, beta in zip(data["points"], ("2", "3"), strict=True):
        one = ["solve", *sir, "--param", f"beta={beta}", "--dps", "20", "--json", *start]
        assert main(one) == 0
        assert json.loads(capsys.readouterr().out)["constant"] == point["c"]
