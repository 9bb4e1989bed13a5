"""The documentation site: built by Sphinx with warnings as errors and without
network, every internal link resolving, and pages that render in a real browser.

The build renders the notebooks executed by the notebook tests (stored by
their runner, see docs/notebooks_build.py); this file sorts after them, so in a
full run no notebook is executed twice.  The browser is headless Chromium
(Debian's ``chromium``), installed here with apt when it is missing and the
tests run as root; it is skipped, with the reason, only where it cannot be had.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from html import unescape
from html.parser import HTMLParser
from pathlib import Path
from urllib.parse import unquote, urlsplit

import pytest
from deadlines import deadline

ROOT = Path(__file__).resolve().parents[1]
CHROMIUM_FLAGS = [
    "--headless",
    "--no-sandbox",
    "--disable-gpu",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
    "--no-first-run",
]


class _Page(HTMLParser):
    """Ids, links and resources of one HTML page."""

    def __init__(self) -> None:
        super().__init__()
        self.ids: set[str] = set()
        self.links: list[str] = []
        self.resources: list[str] = []
        self.title = ""
        self._in_title = False

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        a = dict(attrs)
        for key in ("id", "name"):
            if a.get(key):
                self.ids.add(a[key])  # type: ignore[arg-type]
        if tag == "a" and a.get("href"):
            self.links.append(a["href"])  # type: ignore[arg-type]
        if tag in ("img", "script") and a.get("src"):
            self.resources.append(a["src"])  # type: ignore[arg-type]
        if tag == "link" and a.get("href"):
            self.resources.append(a["href"])  # type: ignore[arg-type]
        self._in_title = tag == "title"

    def handle_endtag(self, tag: str) -> None:
        self._in_title = False if tag == "title" else self._in_title

    def handle_data(self, data: str) -> None:
        if self._in_title:
            self.title += data


def _parse(path: Path) -> _Page:
    page = _Page()
    page.feed(path.read_text(encoding="utf-8"))
    return page


@pytest.fixture(scope="module")
def site(tmp_path_factory: pytest.TempPathFactory) -> Path:
    for module in ("sphinx", "myst_nb"):
        pytest.importorskip(module, reason="the documentation toolchain (test extra) is missing")
    out = tmp_path_factory.mktemp("site")
    run = subprocess.run(
        [
            sys.executable,
            "-m",
            "sphinx",
            "-W",
            "--keep-going",
            "-q",
            "-b",
            "html",
            str(ROOT / "docs"),
            str(out),
        ],
        capture_output=True,
        text=True,
        timeout=deadline(900),
    )
    # -q leaves only warnings and errors on stderr: nothing at all may be printed
    # (kernels executing notebooks included, see docs/notebooks_build.run)
    assert run.returncode == 0 and not run.stderr.strip(), run.stderr[-3000:]
    return out


def test_site_has_the_guide_the_notebooks_and_every_public_name(site: Path) -> None:
    sys.path.insert(0, str(ROOT / "docs"))
    try:
        import api_pages
    finally:
        sys.path.remove(str(ROOT / "docs"))
    for page in ("index", "readme", "models", "cli", "design", "api/index", "changelog"):
        assert (site / f"{page}.html").is_file(), page
    for nb in (ROOT / "notebooks").glob("*.py"):
        html = (site / "notebooks" / f"{nb.stem}.html").read_text()
        assert "<img" in html, f"notebook {nb.stem} shows no figure"
    for package in api_pages.PACKAGES:
        module = __import__(package, fromlist=["__all__"])
        listing = (site / "api" / f"{package}.html").read_text()
        for name in module.__all__:
            own_page = f"generated/{package}.{name}.html"
            if callable(getattr(module, name)):
                assert own_page in listing and (site / "api" / own_page).is_file(), name
            else:  # constants are listed with their value
                assert f'<span class="pre">{name}</span>' in listing, name


def test_every_internal_link_and_resource_resolves_offline(site: Path) -> None:
    pages = {p: _parse(p) for p in site.rglob("*.html")}
    broken, external = [], []
    for path, page in pages.items():
        for target in page.links + page.resources:
            parts = urlsplit(target)
            if parts.scheme in ("http", "https", "mailto") or target.startswith("//"):
                if target in page.resources:
                    external.append((path.name, target))
                continue
            file = path if not parts.path else (path.parent / unquote(parts.path)).resolve()
            if not file.exists():
                broken.append((str(path.relative_to(site)), target))
            elif parts.fragment and file.suffix == ".html":
                ids = pages[file].ids if file in pages else _parse(file).ids
                if unquote(parts.fragment) not in ids:
                    broken.append((str(path.relative_to(site)), target))
    assert not broken, broken[:20]
    assert not external, f"pages load resources from the network: {external[:5]}"
    assert (site / "_static" / "mathjax" / "tex-chtml.js").is_file()


def _chromium() -> str:
    found = shutil.which("chromium") or shutil.which("chromium-browser")
    if found:
        return found
    if os.geteuid() != 0 or shutil.which("apt-get") is None:
        pytest.skip("Chromium is not installed and cannot be installed here (not root with apt)")
    env = {**os.environ, "DEBIAN_FRONTEND": "noninteractive"}
    for cmd in (["apt-get", "update", "-q"], ["apt-get", "install", "-y", "-q", "chromium"]):
        done = subprocess.run(cmd, env=env, capture_output=True, text=True, timeout=deadline(900))
        if done.returncode != 0:
            pytest.skip(f"installing Chromium failed: {done.stderr.strip()[-300:]}")
    found = shutil.which("chromium")
    if not found:
        pytest.skip("apt-get installed chromium but no chromium command appeared")
    return found


def _browse(page: Path, tmp_path: Path, *extra: str) -> subprocess.CompletedProcess:
    return subprocess.run(
        [
            _chromium(),
            *CHROMIUM_FLAGS,
            f"--user-data-dir={tmp_path / 'profile'}",
            "--virtual-time-budget=20000",
            "--window-size=1200,1600",
            *extra,
            page.as_uri(),
        ],
        capture_output=True,
        text=True,
        timeout=deadline(180),
    )


def _rendered(page: Path, tmp_path: Path) -> str:
    dom = _browse(page, tmp_path, "--dump-dom")
    assert dom.returncode == 0, dom.stderr[-2000:]
    return dom.stdout


def test_front_page_renders_in_chromium(site: Path, tmp_path: Path) -> None:
    page = site / "index.html"
    # one browser run gives both the rendered DOM (stdout) and the screenshot (a file)
    shot = tmp_path / "front.png"
    done = _browse(page, tmp_path, "--dump-dom", f"--screenshot={shot}")
    assert done.returncode == 0 and shot.is_file(), done.stderr[-2000:]
    dom = done.stdout
    assert "<title>mfstein" in dom
    assert dom.count("<mjx-container") >= 1 and "<merror" not in dom  # MathJax typeset, offline
    assert 'src="_images/table1.png"' in dom
    # the figure is drawn: the screenshot holds the plot's coloured pixels
    import matplotlib.image

    rgb = matplotlib.image.imread(shot)[..., :3]
    coloured = (rgb.max(axis=-1) - rgb.min(axis=-1) > 0.3).sum()
    assert coloured > 2000, f"only {coloured} coloured pixels: the figure did not render"


def test_an_api_page_renders_in_chromium(site: Path, tmp_path: Path) -> None:
    pages = sorted(
        p for p in (site / "api" / "generated").glob("*.html") if 'class="math' in p.read_text()
    )
    assert pages, "no API page shows a formula"
    page = pages[0]
    dom = _rendered(page, tmp_path)
    assert f"<title>{page.stem}" in dom
    assert dom.count("<mjx-container") >= 1 and "<merror" not in dom
    assert 'class="sig' in dom  # the signature, from autodoc


# -- notebooks: full-size runs stored with the docs, no test plumbing on the page ----
def _notebooks_build():
    sys.path.insert(0, str(ROOT / "docs"))
    try:
        import notebooks_build
    finally:
        sys.path.remove(str(ROOT / "docs"))
    return notebooks_build


def test_every_notebook_has_a_current_full_size_run() -> None:
    nbb = _notebooks_build()
    stale = [name for name in nbb.names() if nbb.current_full(name) is None]
    assert not stale, (
        f"docs/notebooks_full/ lacks a current full-size run of {stale}: "
        f"run python docs/run_full_notebooks.py {' '.join(stale)}"
    )


def test_a_stored_run_follows_prose_and_tags_but_not_code() -> None:
    import nbformat

    nbb = _notebooks_build()
    new = nbformat.v4.new_notebook(
        cells=[
            nbformat.v4.new_markdown_cell("# Title"),
            nbformat.v4.new_code_cell("x = 1", metadata={"tags": ["remove-cell"]}),
            nbformat.v4.new_code_cell("print(x)"),
        ]
    )
    ran = nbformat.v4.new_notebook(
        cells=[
            nbformat.v4.new_markdown_cell("# Old title"),
            nbformat.v4.new_markdown_cell("Old prose."),
            nbformat.v4.new_code_cell("x = 1", execution_count=1),
            nbformat.v4.new_code_cell(
                "print(x)",
                execution_count=2,
                outputs=[nbformat.v4.new_output("stream", name="stdout", text="1\n")],
            ),
        ],
        metadata={"mfstein": {"size": "full"}},
    )
    page = nbb.merged(new, ran)
    assert [c.source for c in page.cells] == ["# Title", "x = 1", "print(x)"]
    assert page.cells[1].metadata["tags"] == ["remove-cell"]
    assert page.cells[2].outputs[0]["text"] == "1\n" and page.cells[2].execution_count == 2
    assert page.metadata["mfstein"] == {"size": "full"}
    new.cells[2].source = "print(x + 1)"
    with pytest.raises(ValueError, match="code differs"):
        nbb.merged(new, ran)


def test_notebook_pages_show_full_runs_and_no_test_plumbing(site: Path) -> None:
    for nb in sorted((ROOT / "notebooks").glob("*.py")):
        html = (site / "notebooks" / f"{nb.stem}.html").read_text()
        assert "executed at full size" in html, nb.stem
        for plumbing in ("RESULT_FILE", "MFSTEIN_NOTEBOOK_RESULT", "os.environ"):
            assert plumbing not in html, f"{nb.stem} shows {plumbing}"
        # the first code cell shown is a science cell (parameters), not the size switch
        first = html.index('class="cell_input')
        assert "SIZE = " not in html[first : first + 2000], nb.stem


#: The body holds this many columns of code at 1280 px (docs/_static/mfstein.css,
#: docs/conf.py): CLI help is rendered at 100 (docs/make_cli_reference.py).
COLUMNS = 110

#: Measures every <pre> of the given pages, each in an iframe 1280 px wide: per
#: block its longest line (characters), scrollWidth, clientWidth and whether it or
#: a box around it scrolls sideways; the rows land in #result as JSON.
_PRE_CHECK = """<!DOCTYPE html><html><body><pre id="result">pending</pre><script>
const pages = %s;
function scrolls(node) {
  for (; node && node.tagName !== "BODY"; node = node.parentElement) {
    const x = getComputedStyle(node).overflowX;
    if (x === "auto" || x === "scroll") return true;
  }
  return false;
}
function check(url) {
  return new Promise(resolve => {
    const frame = document.createElement("iframe");
    frame.style.width = "1280px";
    frame.style.height = "1000px";
    frame.onload = () => {
      const blocks = [];
      for (const pre of frame.contentDocument.querySelectorAll("pre")) {
        const lines = pre.textContent.split("\\n");
        const longest = lines.reduce((a, b) => (b.length > a.length ? b : a));
        blocks.push([longest.length, pre.scrollWidth, pre.clientWidth, scrolls(pre),
                     longest.slice(0, 120)]);
      }
      frame.remove();
      resolve([url, blocks]);
    };
    frame.src = url;
    document.body.appendChild(frame);
  });
}
(async () => {
  const rows = [];
  for (const url of pages) rows.push(await check(url));
  document.getElementById("result").textContent = JSON.stringify(rows);
})();
</script></body></html>
"""


def test_code_and_output_blocks_fit_or_scroll_at_1280_px(site: Path, tmp_path: Path) -> None:
    """No <pre> is clipped: up to COLUMNS columns it fits the body outright (CLI
    help, the notebooks' tables); a longer line (e.g. a generated kernel's source)
    scrolls sideways inside its own box, never hidden, never re-wrapped."""
    import json
    import re

    pages = sorted(
        str(p.relative_to(site)) for p in site.rglob("*.html") if "<pre" in p.read_text()
    )
    assert "cli.html" in pages and "notebooks/07_second_order.html" in pages
    checker = site / "_pre_check.html"
    checker.write_text(_PRE_CHECK % json.dumps(pages), encoding="utf-8")
    try:
        dom = _browse(checker, tmp_path, "--allow-file-access-from-files", "--dump-dom")
    finally:
        checker.unlink()
    assert dom.returncode == 0, dom.stderr[-2000:]
    found = re.search(r'<pre id="result">(.*?)</pre>', dom.stdout, re.S)
    assert found and found.group(1) != "pending", dom.stdout[-2000:]
    rows = json.loads(unescape(found.group(1)))
    assert [url for url, _ in rows] == pages
    blocks = [(url, *b) for url, bs in rows for b in bs]
    assert len(blocks) >= 50 and any(b[1] >= 98 for b in blocks)  # the CLI help was seen
    too_narrow = [b for b in blocks if b[1] <= COLUMNS and b[2] > b[3]]
    clipped = [b for b in blocks if b[2] > b[3] and not b[4]]
    assert not too_narrow, f"blocks of <= {COLUMNS} columns that do not fit: {too_narrow[:10]}"
    assert not clipped, f"blocks that neither fit nor scroll: {clipped[:10]}"
