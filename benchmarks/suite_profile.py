"""Where the default test tier's time goes, by CPU, from an empty kernel cache.

``run`` executes the default tier in slices (a few test files per pytest process,
``--jobs`` processes at a time, no xdist), each slice from an empty kernel and numba cache
(``-p no:cacheprovider`` makes tests/conftest.py use a fresh temporary
``MFSTEIN_CACHE_DIR``; ``XDG_CACHE_HOME`` is a fresh directory too), with the CPU
plugin ``benchmarks/suite_cpu_plugin.py`` recording each test's own CPU, its
children's CPU and its numba compile CPU into one JSON-lines file.

``run --whole --pytest-args "-n 2"`` runs all the files in one pytest process with its
xdist workers instead, from one empty cache shared by the workers and the commands they
start: what the README's command pays (a kernel is compiled once for the run, where each
slice compiles it again).

``report`` reads that file and prints the markdown tables of
benchmarks/suite_profile.md: CPU by category and the most expensive tests.

Run (from the repository root):
    .venv/bin/python benchmarks/suite_profile.py run --out /tmp/profile.jsonl [--jobs 2] [paths]
    .venv/bin/python benchmarks/suite_profile.py report /tmp/profile.jsonl [--top 40]
    .venv/bin/python benchmarks/suite_profile.py compare /tmp/before.jsonl /tmp/after.jsonl

Categories (per test, CPU seconds):
    numba compile: own CPU inside numba's outermost compile events (per-model kernels,
        simulators, exact-lattice explorers; a cache load is counted here too, but costs ms);
    notebooks: children CPU of tests/notebooks;
    docs build: children CPU of tests/test_docs.py;
    subprocess: children CPU of every other test (``mfstein`` started as a process:
        Python start, imports, and whatever the command computes, compiles included);
    numerics/other: own CPU outside numba compiles (SymPy, mpmath, SciPy, imports);
    start and collection: each slice's Python start, pytest and plugins, and importing its
        test files (an xdist worker collects every file of the run).
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
import time
from collections import defaultdict
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
CATEGORIES = (
    "start and collection",
    "numba compile",
    "subprocess",
    "notebooks",
    "docs build",
    "numerics/other",
)


def _slices(root: Path, paths: list[str], per_slice: int) -> list[list[str]]:
    """Test files grouped by directory, at most ``per_slice`` files a group."""
    files: list[Path] = []
    for p in paths or ["tests"]:
        path = root / p
        files.extend(sorted(path.rglob("test_*.py")) if path.is_dir() else [path])
    by_dir: dict[Path, list[Path]] = defaultdict(list)
    for f in files:
        # the docs build renders the notebooks the notebook tests executed: one slice
        key = root / "tests" / "notebooks" if f.name == "test_docs.py" else f.parent
        by_dir[key].append(f)
    out: list[list[str]] = []
    for group in by_dir.values():
        for i in range(0, len(group), per_slice):
            out.append([str(f.relative_to(root)) for f in group[i : i + per_slice]])
    return out


def _run_slice(root: Path, n: int, files: list[str], out: Path, extra: list[str]) -> int:
    """One slice in its own pytest process from empty caches: its exit status."""
    env = dict(os.environ)
    env["XDG_CACHE_HOME"] = tempfile.mkdtemp(prefix="suite-profile-")
    for name in ("MFSTEIN_CACHE_DIR", "NUMBA_CACHE_DIR"):
        env.pop(name, None)
    env["MFSTEIN_SUITE_CPU_FILE"] = str(out)
    env["PYTHONPATH"] = os.pathsep.join(
        [str(root), str(ROOT / "benchmarks"), env.get("PYTHONPATH", "")]
    )
    env["PYTHONDONTWRITEBYTECODE"] = "1"  # another checkout (--root) is only read
    cmd = [
        sys.executable,
        "-m",
        "pytest",
        "-q",
        "-p",
        "no:cacheprovider",
        "-p",
        "suite_cpu_plugin",
        *extra,
        *files,
    ]
    t0 = time.monotonic()
    proc = subprocess.run(cmd, cwd=root, env=env, capture_output=True, text=True)
    lines = proc.stdout.strip().splitlines()
    summary = lines[-1] if lines else "(no output)"
    print(f"[{n}] {time.monotonic() - t0:7.1f} s  {' '.join(files)}\n     {summary}", flush=True)
    for line in lines:
        if line.startswith(("FAILED", "ERROR")):
            print("     " + line, flush=True)
    return 0 if proc.returncode in (0, 5) else proc.returncode


def run(
    root: Path,
    out: Path,
    paths: list[str],
    per_slice: int,
    extra: list[str],
    jobs: int,
    whole: bool = False,
) -> int:
    """Run the slices of checkout ``root``, ``jobs`` at a time (``whole``: all files in one
    pytest process); append records to ``out``; the worst exit status."""
    from concurrent.futures import ThreadPoolExecutor

    slices = _slices(root, paths, per_slice)
    if whole:  # one run, as the README's command: each kernel compiled once for the run
        slices = [[f for part in slices for f in part]]
    with ThreadPoolExecutor(max_workers=jobs) as pool:
        statuses = pool.map(
            lambda a: _run_slice(root, a[0], a[1], out, extra), enumerate(slices, 1)
        )
        return max(statuses, default=0)


def category_split(rec: dict) -> dict[str, float]:
    """One test's CPU seconds by category (or a slice's start and collection)."""
    node = rec["nodeid"]
    kids = rec["children"]
    if node == "<collection>":
        return {"start and collection": rec["cpu"] + kids}
    if node.startswith("tests/notebooks/"):
        kid_cat = "notebooks"
    elif node.startswith("tests/test_docs.py"):
        kid_cat = "docs build"
    else:
        kid_cat = "subprocess"
    return {
        "numba compile": rec["numba"],
        kid_cat: kids,
        "numerics/other": max(rec["cpu"] - rec["numba"], 0.0),
    }


def _load(path: Path) -> list[dict]:
    recs = [json.loads(line) for line in path.read_text().splitlines() if line.strip()]
    return [r for r in recs if not r.get("skipped")]


def report(path: Path, top: int) -> str:
    """Markdown: CPU by category, by directory, and the ``top`` most expensive tests."""
    recs = _load(path)
    total: dict[str, float] = defaultdict(float)
    by_dir: dict[str, dict[str, float]] = defaultdict(lambda: defaultdict(float))
    for r in recs:
        first = r["files"][0] if r["nodeid"] == "<collection>" else r["nodeid"]
        d = first.split("::")[0].rsplit("/", 1)[0]
        for cat, s in category_split(r).items():
            total[cat] += s
            by_dir[d][cat] += s
    grand = sum(total.values())
    seen: set[str] = set()
    again = 0.0  # compiles of a function another slice (another cache) already compiled
    for r in recs:
        for key, spent in r.get("compiled", {}).items():
            if key in seen:
                again += spent
            seen.add(key)
    failed = [r["nodeid"] for r in recs if r.get("outcome") == "failed"]
    tests = [r for r in recs if r["nodeid"] != "<collection>"]
    out = [
        f"{len(tests)} tests run, {grand:.0f} CPU s in all "
        f"(wall {sum(r['wall'] for r in tests):.0f} s); failed: {failed or 'none'}",
        "",
        f"numba compiles of a function (same arguments) that another slice had compiled "
        f"already: {again:.0f} CPU s (each slice has its own empty cache; one run's shared "
        f"cache loads these instead)",
        "",
        "| category | CPU s | share |",
        "|---|---:|---:|",
    ]
    for cat in CATEGORIES:
        out.append(f"| {cat} | {total[cat]:.0f} | {100 * total[cat] / grand:.0f}% |")
    out += [
        "",
        "| directory | " + " | ".join(CATEGORIES) + " | total |",
        "|---|" + "---:|" * (len(CATEGORIES) + 1),
    ]
    for d in sorted(by_dir, key=lambda k: -sum(by_dir[k].values())):
        row = by_dir[d]
        cells = " | ".join(f"{row[c]:.0f}" for c in CATEGORIES)
        out.append(f"| {d} | {cells} | {sum(row.values()):.0f} |")
    out += [
        "",
        f"The {top} most expensive tests (CPU s: own, of which numba; children):",
        "",
        "| test | total | own | numba | children | wall |",
        "|---|---:|---:|---:|---:|---:|",
    ]
    tests.sort(key=lambda r: -(r["cpu"] + r["children"]))
    for r in tests[:top]:
        out.append(
            f"| `{r['nodeid']}` | {r['cpu'] + r['children']:.1f} | {r['cpu']:.1f} | "
            f"{r['numba']:.1f} | {r['children']:.1f} | {r['wall']:.1f} |"
        )
    return "\n".join(out)


def compare(before: Path, after: Path) -> str:
    """Markdown: CPU by category of the tests both runs ran, per test file."""
    old = {r["nodeid"]: r for r in _load(before)}
    new = {r["nodeid"]: r for r in _load(after)}
    files: dict[str, list[str]] = defaultdict(list)
    for node in sorted(set(old) & set(new) - {"<collection>"}):
        files[node.split("::")[0]].append(node)
    out = [
        "| file | tests | before: own / numba / children | after: own / numba / children "
        "| CPU s before -> after |",
        "|---|---:|---|---|---|",
    ]
    totals = [0.0, 0.0]
    for name, nodes in files.items():
        cells = []
        for i, runs in enumerate((old, new)):
            own = sum(runs[n]["cpu"] for n in nodes)
            nb = sum(runs[n]["numba"] for n in nodes)
            kids = sum(runs[n]["children"] for n in nodes)
            totals[i] += own + kids
            cells.append((own, nb, kids))
        (o1, n1, k1), (o2, n2, k2) = cells
        out.append(
            f"| {name} | {len(nodes)} | {o1:.1f} / {n1:.1f} / {k1:.1f} | "
            f"{o2:.1f} / {n2:.1f} / {k2:.1f} | {o1 + k1:.1f} -> {o2 + k2:.1f} |"
        )
    out.append(f"| all | | | | {totals[0]:.1f} -> {totals[1]:.1f} |")
    return "\n".join(out)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    sub = parser.add_subparsers(dest="cmd", required=True)
    r = sub.add_parser("run", help="run the tier in slices, recording per-test CPU")
    r.add_argument("--out", type=Path, required=True, help="JSON-lines file (appended)")
    r.add_argument("--files-per-slice", type=int, default=6)
    r.add_argument("--pytest-args", default="", help="extra pytest arguments")
    r.add_argument("--jobs", type=int, default=1, help="slices run at a time (default 1)")
    r.add_argument(
        "--root", type=Path, default=ROOT, help="the checkout whose tests run (default this one)"
    )
    r.add_argument(
        "--whole",
        action="store_true",
        help="all files in one pytest process, from one empty cache (with --pytest-args "
        "'-n 2': what the README's command pays, each kernel compiled once for the run)",
    )
    r.add_argument("paths", nargs="*", help="test files or directories (default tests)")
    p = sub.add_parser("report", help="markdown tables from a run's records")
    p.add_argument("records", type=Path)
    p.add_argument("--top", type=int, default=40)
    c = sub.add_parser("compare", help="per-file CPU of the tests two runs both ran")
    c.add_argument("before", type=Path)
    c.add_argument("after", type=Path)
    args = parser.parse_args()
    if args.cmd == "run":
        if args.files_per_slice < 1 or args.jobs < 1:
            parser.error("--files-per-slice and --jobs must be >= 1")
        return run(
            args.root.resolve(),
            args.out,
            args.paths,
            args.files_per_slice,
            args.pytest_args.split(),
            args.jobs,
            args.whole,
        )
    print(
        report(args.records, args.top) if args.cmd == "report" else compare(args.before, args.after)
    )
    return 0


if __name__ == "__main__":
    sys.exit(main())
