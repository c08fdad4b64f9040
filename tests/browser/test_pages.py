"""What a reader sees: every page of the built book in headless Chromium, offline (issue 15).

Run by ``make test-browser`` (part of ``make test``) after ``make book``; not collected by
``make test-unit``. Chromium and its driver are Debian's ``chromium`` and ``chromium-driver``
(the make target installs them when missing). Networking is off: every host name resolves to
nothing and the proxy is a closed port, so a page that needs the internet fails here.

On every page: math typeset by MathJax (its output elements present, no raw ``\\(`` left in
the text), every image loaded with a non-empty alt text, no JavaScript error in the console,
and every internal link and anchor resolving. One screenshot per page goes to
``_build/screenshots/`` for a person to look at.
"""

from __future__ import annotations

import re
import shutil
from html.parser import HTMLParser
from pathlib import Path
from urllib.parse import unquote, urlsplit

import pytest

ROOT = Path(__file__).resolve().parents[2]
HTML = ROOT / "_build" / "html"
SHOTS = ROOT / "_build" / "screenshots"
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
    driver_path, chromium = shutil.which("chromedriver"), shutil.which("chromium")
    if not (driver_path and chromium):
        pytest.fail("chromium and chromedriver are needed (make test-browser installs them)")
    from selenium import webdriver
    from selenium.webdriver.chrome.service import Service

    options = webdriver.ChromeOptions()
    options.binary_location = chromium
    for flag in ("--headless=new", "--no-sandbox", "--disable-gpu", "--disable-dev-shm-usage",
                 "--window-size=1280,1600", "--allow-file-access-from-files",
                 "--host-resolver-rules=MAP * ~NOTFOUND", "--proxy-server=127.0.0.1:9",
                 "--proxy-bypass-list=<-loopback>", "--disable-background-networking"):
        options.add_argument(flag)
    options.set_capability("goog:loggingPrefs", {"browser": "ALL"})
    driver = webdriver.Chrome(service=Service(driver_path), options=options)
    driver.set_page_load_timeout(60)
    SHOTS.mkdir(parents=True, exist_ok=True)
    yield driver
    driver.quit()


def _wait_for_mathjax(driver) -> None:
    """Until MathJax's startup promise settles (pages without math settle at once)."""
    driver.set_script_timeout(60)
    driver.execute_async_script(
        "const done = arguments[arguments.length - 1];"
        "if (!window.MathJax || !MathJax.startup || !MathJax.startup.promise) { done(false); }"
        "else { MathJax.startup.promise.then(() => done(true), () => done(false)); }")


@pytest.mark.parametrize("page", PAGES, ids=lambda p: str(p.relative_to(HTML)))
def test_what_a_reader_sees(browser, page: Path):
    browser.get_log("browser")  # drop what earlier pages left
    browser.get(page.as_uri())
    _wait_for_mathjax(browser)
    source = page.read_text(encoding="utf-8")
    name = str(page.relative_to(HTML)).replace("/", "__").removesuffix(".html")
    browser.save_screenshot(str(SHOTS / f"{name}.png"))
    has_math = bool(re.search(r'class="[^"]*\bmath\b', source))
    typeset = browser.execute_script("return document.querySelectorAll('mjx-container').length")
    text = browser.execute_script("return document.body.innerText")
    problems = []
    if has_math and not typeset:
        problems.append("the page has math but MathJax typeset none of it")
    raw = [m.group(0) for m in re.finditer(r"\\\(|\\\[|\\begin\{", text)]
    if raw:
        problems.append(f"raw LaTeX left in the text ({len(raw)} places)")
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
