"""The stamp of mfstein's code in the keys of kept records
(:func:`mfstein.ground.records.code_digest`): the digest of the sources' contents,
kept under a stamp of their sizes and times so that a new process does not hash
them again; an edit gives a new stamp and a new digest.  The records are written
without a flush to disk, so a crash may leave one empty or torn: it is read as a
miss, never misread."""

from __future__ import annotations

import os

import pytest

from mfstein.ground import records


@pytest.fixture
def tree(tmp_path, monkeypatch):
    """A source tree of the four packages, and a cache of its own."""
    root = tmp_path / "src"
    for package in records._PACKAGES:
        (root / package / "sub").mkdir(parents=True)
        (root / package / "__init__.py").write_text(f"NAME = {package!r}\n")
        (root / package / "sub" / "deep.py").write_text("X = 1\n")
    monkeypatch.setattr(records, "_ROOT", root)
    monkeypatch.setenv("MFSTEIN_CACHE_DIR", str(tmp_path / "cache"))
    records.code_digest.cache_clear()
    yield root
    records.code_digest.cache_clear()


def _fresh() -> str:
    records.code_digest.cache_clear()  # as a new process
    return records.code_digest()


def test_the_kept_digest_is_the_digest_of_the_contents(tree):
    first = _fresh()
    assert first == records.content_digest()
    kept = records._stamp_path(records.source_stamp())
    assert kept.read_text() == first
    kept.write_text("0" * 64)  # a later process reads the kept digest, not the files
    assert _fresh() == "0" * 64


def test_an_edit_gives_a_new_stamp_and_a_new_digest(tree):
    first, stamp = _fresh(), records.source_stamp()
    path = tree / "numeric" / "sub" / "deep.py"
    path.write_text("X = 2\n")  # the same size
    st = os.stat(path)
    os.utime(path, ns=(st.st_atime_ns, st.st_mtime_ns + 1))
    assert records.source_stamp() != stamp
    second = _fresh()
    assert second != first and second == records.content_digest()


def test_a_file_added_moved_or_renamed_gives_a_new_stamp(tree):
    """The stamp lists every source file of every folder, each by its path: a new file
    deep down, a file moved to another folder or renamed changes it (the files are
    sorted once, so the listings' order does not); a tree left alone keeps it."""
    stamp = records.source_stamp()
    assert records.source_stamp() == stamp
    deep = tree / "sim" / "sub" / "deeper"
    deep.mkdir()
    (deep / "new.py").write_text("")
    assert records.source_stamp() != stamp
    (deep / "new.py").unlink()
    assert records.source_stamp() == stamp  # the same files, the same sizes and times
    moved = tree / "derive" / "deep.py"
    (tree / "derive" / "sub" / "deep.py").rename(moved)
    assert records.source_stamp() != stamp
    moved.rename(tree / "derive" / "sub" / "other.py")
    assert records.source_stamp() != stamp
    stamp = records.source_stamp()  # (a rename changes the file's change time, too)
    (tree / "numeric" / "notes.txt").write_text("not a source")  # only .py files count
    assert records.source_stamp() == stamp


def test_a_damaged_kept_digest_is_computed_again(tree):
    first = _fresh()
    kept = records._stamp_path(records.source_stamp())
    kept.write_text("not a digest")
    assert _fresh() == first
    assert kept.read_text() == first


def test_arrays_kept_beside_a_record_come_back_only_with_their_digest(tree):
    import numpy as np

    arrays = {
        "states": np.arange(12, dtype=np.int64).reshape(4, 3),
        "q": np.linspace(0, 1, 4),
        "columns": np.asfortranarray(np.arange(6, dtype=np.int32).reshape(2, 3)),
        "none": np.zeros((0, 3)),
        "count": np.int64(5),
    }
    digest = records.save_arrays("k" * 64, arrays)
    back = records.load_arrays("k" * 64, digest)
    assert set(back) == set(arrays)
    for k, v in arrays.items():
        v = np.asarray(v)
        assert back[k].shape == v.shape and back[k].dtype == v.dtype, k
        assert np.array_equal(back[k], v) and back[k].flags.writeable, k
    assert records.load_arrays("k" * 64, "0" * 64) is None  # not the file the record names
    # a record of the first format held the file's SHA-256: a miss, never a misread
    import hashlib

    old = hashlib.sha256(records._arrays_path("k" * 64).read_bytes()).hexdigest()
    assert records.load_arrays("k" * 64, old) is None
    assert records.load_arrays("j" * 64, digest) is None  # none kept


def _torn(text: bytes, changed: bool = True) -> dict[str, bytes]:
    """What a crash may leave of a file whose content is ``text`` (written without a
    flush to disk): nothing, a part (cut inside the final check), blocks of zeros;
    and, with ``changed``, a changed byte (damage on the disk)."""
    torn = {
        "empty": b"",
        "half": text[: len(text) // 2],
        "cut in its check": text[:-3],
        "zeros": bytes(len(text)),
    }
    if changed:
        flipped = bytearray(text)
        flipped[len(text) // 2] ^= 0x01
        torn["one byte changed"] = bytes(flipped)
    return torn


def test_an_empty_or_torn_record_is_a_miss_and_is_written_afresh(tree):
    key, record = "r" * 64, {"name": "sir", "values": [0.1, 3.0], "note": "é"}
    records.save(key, record)
    path = records._path(key)
    whole = path.read_bytes()
    assert records.load(key) == record
    for what, text in _torn(whole).items():
        path.write_bytes(text)
        assert records.load(key) is None, what
        records.save(key, record)  # the next call that makes it writes it again
        assert path.read_bytes() == whole and records.load(key) == record, what


def test_an_empty_or_torn_arrays_file_is_a_miss(tree):
    import numpy as np

    key = "a" * 64
    arrays = {"states": np.arange(30, dtype=np.int64).reshape(10, 3), "q": np.linspace(0, 1, 10)}
    digest = records.save_arrays(key, arrays)
    path = records._arrays_path(key)
    whole = path.read_bytes()
    for what, text in _torn(whole).items():
        path.write_bytes(text)
        assert records.load_arrays(key, digest) is None, what
    path.write_bytes(whole)
    assert np.array_equal(records.load_arrays(key, digest)["states"], arrays["states"])


def test_an_empty_or_torn_kept_digest_is_computed_again(tree):
    first = _fresh()
    kept = records._stamp_path(records.source_stamp())
    # (a changed hex digit would be a digest still: new keys, never a misread record)
    for what, text in _torn(kept.read_bytes(), changed=False).items():
        kept.write_bytes(text)
        assert _fresh() == first, what
        assert kept.read_text() == first, what
