"""What a reader sees: every page of the built book in headless Chromium, offline.

Run by ``make test-browser`` (part of ``make test``) after ``make book``; not collected by
``make test-unit``. Chromium and its driver are Debian's ``chromium`` and ``chromium-driver``
(the make target installs them when missing). Networking is off: every host name resolves to
nothing and the proxy is a closed port, so a page that needs the internet fails here. The
window is 1280 px wide, where the text column is about 680 px.

On every page (the measurements are ``reader_checks.js``):

* math typeset by MathJax, and no raw TeX (``$``, ``\\(``, ``\\frac``, ``^{``...) left in the
  text outside rendered math and code;
* nothing wider than the column: no code, output, table, figure or formula that scrolls
  sideways or sticks out of it, except a table marked as a scroll container
  (``wide-table``, see :func:`dpkmeans.study.reading.table`);
* every figure shown at 60% of its natural width or more, loaded, with alt text;
* none of the team's internal shorthand (:data:`SHORTHAND`), and no file name that is neither
  in the repository nor a dataset file of ``data/datasets.toml``;
* every cross-reference resolved (no unresolved role, no raw label), every internal link and
  anchor resolving, no JavaScript error in the console;
* on a phone (390 px wide, :data:`PHONE`): nothing wider than the window unless it is inside a
  box that scrolls sideways (formulas, wide tables and proof boxes scroll in their own box).

And once: the source archive that every page links holds the repository.
One screenshot per page goes to ``_build/screenshots/`` for a person to look at.
``$DPKMEANS_BOOK_HTML`` points the tests at another build of the book.
"""

from __future__ import annotations

import os
import re
import sys
import tarfile
from html.parser import HTMLParser
from pathlib import Path
from urllib.parse import unquote, urlsplit

import pytest

sys.path.insert(0, str(Path(__file__).parent))
sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "book" / "_ext"))
from chromium import chromium, wait_for_mathjax  # noqa: E402
from source_archive import source_files  # noqa: E402

ROOT = Path(__file__).resolve().parents[2]
HTML = Path(os.environ.get("DPKMEANS_BOOK_HTML") or ROOT / "_build" / "html")
SHOTS = HTML.parent / "screenshots"
CHECKS = (Path(__file__).with_name("reader_checks.js")).read_text(encoding="utf-8")

#: The team's shorthand, which a reader cannot decode: names of our working notes, numbered
#: items of them, issue numbers, and papers called by a file number instead of their authors.
SHORTHAND = re.compile(
    r"seed (?:paper )?0\d\d|\bS\d/S\d|reference §|§\s?\d|DESIGN\.md|algorithms\.md|"
    r"book-conventions\.md|dp-libraries\.md|\bissues? #?\d+|audit item|\bflaw \d-\d|"
    r"\bitem \d-\d|\.\./shared", re.IGNORECASE)
#: A file name in the text: it must be in the repository (or be a dataset's file).
FILE_NAME = re.compile(
    r"(?<![\w/.-])([A-Za-z_][\w./-]*\.(?:py|md|yaml|yml|csv|json|toml|txt|ipynb|cfg))\b")
#: File names a page shows as examples of what a command writes; they are not files of ours.
EXAMPLE_FILES = {"roster.csv", "grades.csv", "key.json", "parameters.csv", "canvas.csv",
                 "moodle.csv", "NN_slug.py",
                 "NN_slug.ipynb"}
#: A sphinx-proof or figure label shown as text: a cross-reference that did not resolve.
RAW_LABEL = re.compile(r"\b(?:thm|def|lem|ex|fig|eq|alg|cor|prop|rem|tbl)-[a-z0-9]+(?:-[a-z0-9]+)+\b")
PAGES = sorted(p for p in HTML.rglob("*.html")
               if not {"_static", "_sources", "_images"} & set(p.relative_to(HTML).parts)
               and p.name not in ("genindex.html", "search.html"))


class _Links(HTMLParser):
    """Every id and every href of a page."""

    def __init__(self) -> None:
        super().__init__()
        self.ids: set[str] = set()
        self.hrefs: list[str] = []

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        a = dict(attrs)
        if a.get("id"):
            self.ids.add(a["id"])
        if tag == "a" and a.get("name"):
            self.ids.add(a["name"])
        if tag in ("a", "link") and a.get("href"):
            self.hrefs.append(a["href"])


def _parse(page: Path) -> _Links:
    parser = _Links()
    parser.feed(page.read_text(encoding="utf-8"))
    return parser


@pytest.fixture(scope="module")
def browser():
    if not PAGES:
        pytest.fail(f"no book in {HTML}: run make book first")
    try:
        driver = chromium(console_log=True)
    except RuntimeError as missing:
        pytest.fail(str(missing))
    SHOTS.mkdir(parents=True, exist_ok=True)
    yield driver
    driver.quit()


#: A page that only forwards the reader (the book's ``index.html``): ``<meta http-equiv=
#: "Refresh" content="0; url=...">``.
REFRESH = re.compile(r'<meta\s+http-equiv="Refresh"\s+content="\d+;\s*url=([^"]+)"',
                     re.IGNORECASE)


#: A phone's window, in CSS px (the width the phone test reads every page at).
PHONE = (390, 844)


def _on_phone(browser) -> None:
    """Read pages as a phone does: a 390 px window, touch, the mobile viewport rules."""
    browser.execute_cdp_cmd("Emulation.setDeviceMetricsOverride", {
        "width": PHONE[0], "height": PHONE[1], "deviceScaleFactor": 2, "mobile": True})


def _check_redirect(browser, page: Path, target: str) -> None:
    """A forwarding page leads to a built page, and the browser arrives there. Its target gets
    the reader checks as a page of its own; waiting for MathJax here would race the refresh,
    which can unload the page while the wait's script runs."""
    from selenium.webdriver.support.ui import WebDriverWait

    destination = (page.parent / unquote(target)).resolve()
    assert destination.is_file(), f"{page.name} forwards to {target}, which was not built"
    browser.get(page.as_uri())
    WebDriverWait(browser, 30).until(lambda b: b.current_url == destination.as_uri())


@pytest.mark.parametrize("page", PAGES, ids=lambda p: str(p.relative_to(HTML)))
def test_what_a_reader_sees(browser, page: Path):
    source = page.read_text(encoding="utf-8")
    redirect = REFRESH.search(source)
    if redirect:
        _check_redirect(browser, page, redirect.group(1))
        return
    browser.get_log("browser")  # drop what earlier pages left
    browser.get(page.as_uri())
    wait_for_mathjax(browser)
    name = str(page.relative_to(HTML)).replace("/", "__").removesuffix(".html")
    browser.save_screenshot(str(SHOTS / f"{name}.png"))
    has_math = bool(re.search(r'class="[^"]*\bmath\b', source))
    typeset = browser.execute_script("return document.querySelectorAll('mjx-container').length")
    problems = []
    if has_math and not typeset:
        problems.append("the page has math but MathJax typeset none of it")
    measured = browser.execute_script(CHECKS)
    problems += [f"raw TeX: {where}" for where in measured["rawTex"]]
    problems += [f"wider than the column: {where}" for where in measured["wide"]]
    problems += [f"figure too small: {where}" for where in measured["small"]]
    problems += [f"unresolved reference: {where}" for where in measured["unresolved"]]
    problems += [f"internal shorthand: {m.group(0)!r} in "
                 f"...{measured['text'][max(0, m.start() - 60):m.end() + 20]!r}..."
                 for m in SHORTHAND.finditer(measured["text"])]
    problems += [f"names a file that is not in the book's source: {name}"
                 for name in sorted(set(FILE_NAME.findall(measured["text"])))
                 if not _known_file(name)]
    problems += [f"raw label (an unresolved cross-reference?): {m.group(0)}"
                 for m in RAW_LABEL.finditer(measured["visibleText"])]
    images = browser.execute_script(
        "return Array.from(document.images).map(i => [i.getAttribute('src'), i.alt,"
        " i.complete && i.naturalWidth > 0])")
    for src, alt, loaded in images:
        if not loaded:
            problems.append(f"image not loaded: {src}")
        if not (alt or "").strip():
            problems.append(f"image without alt text: {src}")
    errors = [e["message"] for e in browser.get_log("browser") if e["level"] == "SEVERE"]
    problems += [f"console: {e}" for e in errors]
    assert not problems, "\n".join(problems)


@pytest.fixture(scope="module")
def phone():
    if not PAGES:
        pytest.fail(f"no book in {HTML}: run make book first")
    try:
        driver = chromium()
    except RuntimeError as missing:
        pytest.fail(str(missing))
    _on_phone(driver)
    yield driver
    driver.quit()


@pytest.mark.parametrize("page", PAGES, ids=lambda p: str(p.relative_to(HTML)))
def test_a_phone_scrolls_only_boxes(phone, page: Path):
    """At 390 px (a phone), nothing of the article is wider than the window, except inside a
    box that scrolls sideways (a formula, a wide table): the page itself never hides part of
    a formula, a table or a figure past the screen's edge; and a figure shrunk below 60% of
    its width links its full-size picture. A screenshot of the page's top goes to
    ``_build/screenshots/phone/``."""
    if REFRESH.search(page.read_text(encoding="utf-8")):
        return  # a forwarding page: its target is checked as a page of its own
    phone.get(page.as_uri())
    wait_for_mathjax(phone)
    shots = SHOTS / "phone"
    shots.mkdir(parents=True, exist_ok=True)
    name = str(page.relative_to(HTML)).replace("/", "__").removesuffix(".html")
    phone.save_screenshot(str(shots / f"{name}.png"))
    measured = phone.execute_script(CHECKS)
    problems = [f"wider than a phone's window, outside a scrolling box: {where}"
                for where in measured["viewport"]]
    problems += [f"a figure shrunk on a phone without a link to its full size: {where}"
                 for where in measured["unlinked"]]
    assert not problems, "\n".join(problems)


#: The repository's files, as the source archive packs them (book/_ext/source_archive.py).
REPOSITORY_FILES = set(source_files(ROOT))
REPOSITORY_NAMES = {f.rsplit("/", 1)[-1] for f in REPOSITORY_FILES}
DATASET_REGISTRY = (ROOT / "data" / "datasets.toml").read_text(encoding="utf-8")


def _known_file(name: str) -> bool:
    """A file of the repository (a bare name: any folder; with folders: a path that ends so),
    a dataset file of the registry, or one of the examples a page writes."""
    base = name.rsplit("/", 1)[-1]
    if base in EXAMPLE_FILES or name in DATASET_REGISTRY:
        return True
    if "/" not in name:
        return name in REPOSITORY_NAMES
    return any(f == name or f.endswith("/" + name) for f in REPOSITORY_FILES)


def test_the_source_archive_holds_the_repository():
    """Every page links the archive of the source the book was built from; it unpacks into one
    folder with the Makefile, the library, the notebooks and the committed results."""
    archive = HTML / "_downloads" / "private-kmeans-reproduced-source.tar.gz"
    assert archive.is_file(), f"no source archive at {archive}"
    with tarfile.open(archive, "r:gz") as tar:
        names = tar.getnames()
    top = {n.split("/", 1)[0] for n in names}
    assert top == {"private-kmeans-reproduced"}, top
    inside = {n.split("/", 1)[1] for n in names if "/" in n}
    for needed in ("Makefile", "SOURCE_COMMIT", "pyproject.toml", "src/dpkmeans/__init__.py",
                   "notebooks/03_composition.ipynb", "data/results/leaderboard.csv"):
        assert needed in inside, needed
    assert not any(n.startswith((".venv/", "_build/", ".git/")) for n in inside)
    linked = [p for p in NOTEBOOK_PAGES
              if "private-kmeans-reproduced-source.tar.gz" in p.read_text(encoding="utf-8")]
    assert linked == NOTEBOOK_PAGES, "a chapter does not link the source archive"
    how_to = (HTML / "book" / "how_to_use.html").read_text(encoding="utf-8")
    assert "../_downloads/private-kmeans-reproduced-source.tar.gz" in how_to


def test_every_internal_link_and_anchor_resolves():
    """Every relative href of every page points to a built file and, with a #fragment, to an
    id on it."""
    if not PAGES:
        pytest.fail(f"no book in {HTML}: run make book first")
    parsed: dict[Path, _Links] = {}
    broken = []
    for page in PAGES:
        for href in _parse(page).hrefs:
            parts = urlsplit(href)
            if parts.scheme or href.startswith(("//", "mailto:", "javascript:")):
                continue
            target = (page.parent / unquote(parts.path)).resolve() if parts.path else page
            if not target.exists():
                broken.append(f"{page.relative_to(HTML)}: {href} (no such file)")
                continue
            if parts.fragment and target.suffix == ".html":
                ids = parsed.setdefault(target, _parse(target)).ids
                if unquote(parts.fragment) not in ids:
                    broken.append(f"{page.relative_to(HTML)}: {href} (no such anchor)")
    assert not broken, "\n".join(broken[:50])



NOTEBOOK_PAGES = [p for p in PAGES if (HTML / "_sources" / p.relative_to(HTML)).with_suffix(
    ".ipynb").exists()]


def test_the_status_page_lists_every_notebook_page():
    """The Execution status page has one row per page made from a notebook (whatever the
    build executed: a build from stored outputs executes nothing), each linking its page,
    with a time, a run time and a status, and says where the outputs come from."""
    status = (HTML / "book" / "status.html").read_text(encoding="utf-8")
    body = re.search(r"<tbody>(.*?)</tbody>", status, re.DOTALL)
    assert body, "no table on the status page"
    rows = re.findall(r"<tr[^>]*>(.*?)</tr>", body.group(1), re.DOTALL)
    linked = set()
    for row in rows:
        cells = [re.sub(r"<[^>]+>", "", c).strip()
                 for c in re.findall(r"<td[^>]*>(.*?)</td>", row, re.DOTALL)]
        href = re.search(r'href="([^"#]+)', row)
        assert href, f"a row without a link: {cells}"
        linked.add((HTML / "book" / href.group(1)).resolve())
        assert re.fullmatch(r"\d{4}-\d\d-\d\d \d\d:\d\d", cells[1]), cells
        assert re.fullmatch(r"\d+\.\d", cells[2]), cells
        assert cells[3] == "complete", cells
    assert len(rows) == len(NOTEBOOK_PAGES)
    assert linked == {p.resolve() for p in NOTEBOOK_PAGES}
    assert "outputs" in re.sub(r"<[^>]+>", "", status[:body.start()])


@pytest.mark.parametrize("page", NOTEBOOK_PAGES, ids=lambda p: str(p.relative_to(HTML)))
def test_every_chapter_offers_its_notebook_and_how_to_run_it(page: Path):
    """The note under the title links the page's own .ipynb (the link test checks that it
    resolves) and names the commands that run it."""
    source = page.read_text(encoding="utf-8")
    note = re.search(r'<div class="run-locally[^"]*">(.*?)</div>', source, re.DOTALL)
    assert note, "no 'Run this page yourself' note"
    own = (HTML / "_sources" / page.relative_to(HTML)).with_suffix(".ipynb")
    hrefs = [(page.parent / h).resolve() for h in re.findall(r'href="([^"#]+)"', note.group(1))]
    assert own.resolve() in hrefs
    text = re.sub(r"<[^>]+>", "", note.group(1))
    assert "make install" in text and "jupyter lab notebooks/" in text
    assert "_downloads/private-kmeans-reproduced-source.tar.gz" in note.group(1)
