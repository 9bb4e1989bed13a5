"""Symbolic links as output paths: written through, or refused in one sentence (issue 23)."""

from __future__ import annotations

import json
import os

import pytest

from mfstein.ground.errors import ParameterError
from mfstein.ground.io import atomic_write
from sim.runner import check_writable


def test_dangling_link_is_written_through_and_stays_a_link(tmp_path) -> None:
    link = tmp_path / "ck.json"
    link.symlink_to(tmp_path / "store" / "real.json")  # neither the file nor its directory exist
    check_writable(link, "checkpoint")
    atomic_write(link, '{"a": 1}')
    assert link.is_symlink()
    assert json.loads((tmp_path / "store" / "real.json").read_text()) == {"a": 1}
    atomic_write(link, '{"a": 2}')  # now an existing target: replaced, link kept
    assert link.is_symlink() and json.loads(link.read_text()) == {"a": 2}
    assert sorted(p.name for p in tmp_path.iterdir()) == ["ck.json", "store"]
    assert os.listdir(tmp_path / "store") == ["real.json"]


def test_chain_of_links_reaches_the_last_target(tmp_path) -> None:
    (tmp_path / "a").symlink_to(tmp_path / "b")
    (tmp_path / "b").symlink_to(tmp_path / "c.txt")
    atomic_write(tmp_path / "a", "x")
    assert (tmp_path / "a").is_symlink() and (tmp_path / "b").is_symlink()
    assert (tmp_path / "c.txt").read_text() == "x"


def test_looping_link_is_refused_in_one_sentence(tmp_path) -> None:
    (tmp_path / "l1").symlink_to(tmp_path / "l2")
    (tmp_path / "l2").symlink_to(tmp_path / "l1")
    for fn in (
        lambda: atomic_write(tmp_path / "l1", "x"),
        lambda: check_writable(tmp_path / "l1", "checkpoint"),
    ):
        with pytest.raises(ParameterError, match="symbolic link that loops"):
            fn()
    assert sorted(p.name for p in tmp_path.iterdir()) == ["l1", "l2"]


def test_link_to_a_directory_is_not_a_file_path(tmp_path) -> None:
    (tmp_path / "d").mkdir()
    (tmp_path / "ck.json").symlink_to(tmp_path / "d")
    with pytest.raises(ParameterError, match="must be a file path"):
        check_writable(tmp_path / "ck.json", "checkpoint")


def test_simulation_checkpoint_through_a_dangling_link(tmp_path) -> None:
    from mfstein.families.supermarket.simulate_short_form import simulate_supermarket as simulate

    link = tmp_path / "ck.json"
    link.symlink_to(tmp_path / "real.json")
    r = simulate(
        10, "0.5", 3, 2, steps=4000, reps=2, batches=4, seed=1, workers=1, checkpoint=str(link)
    )
    assert link.is_symlink() and (tmp_path / "real.json").is_file()
    saved = json.loads((tmp_path / "real.json").read_text())
    assert len(saved["reps"]) == 2 and all(len(x["batches"]) == 4 for x in saved["reps"])
    again = simulate(
        10, "0.5", 3, 2, steps=4000, reps=2, batches=4, seed=1, workers=1, checkpoint=str(link)
    )  # resumes from the link's target: same numbers
    first, second = r.to_dict(), again.to_dict()
    first.pop("wall_seconds"), second.pop("wall_seconds")
    assert second == first
