"""The whole book as one printable PDF, printed by headless Chromium from the single-page build.

``make pdf`` builds the book with Sphinx's single-page builder (``jupyter-book build .
--builder singlehtml``), then runs this module on it::

    python book/_ext/print_pdf.py _build/singlehtml _build/pdf/private-kmeans-reproduced.pdf

It opens the page in Debian's headless Chromium, offline (the browser test's driver,
``tests/browser/chromium.py``), waits until MathJax has typeset every formula, adds a title
page and a table of contents of every part, chapter and section, opens the folded boxes
(solutions, hidden outputs), applies the print styles (``print.css`` beside this file: no
navigation, the page's full width, each chapter on a new page, figures, table rows and
displayed formulas never split, code that wraps), sets a displayed formula wider than the page
smaller, and prints with Chromium's ``Page.printToPDF``: A4, page numbers in the footer, and
the headings as the PDF's outline (bookmarks). It prints more than once: the text of a
printing with a probe in each heading (poppler's ``pdftotext``) tells on which page each
heading of the contents fell, until two printings agree; the last printing shows those page
numbers in the contents (:data:`NUMBER_CONTENTS`), and the chapters are checked to start on the
pages it gives. Then it measures the pages
(``pdf_layout.py``: blank pages, figures cut from their captions, pages left mostly empty).

The HTML book links the PDF at :data:`PDF` (``book/_ext/reader.py``).
"""

from __future__ import annotations

import argparse
import base64
import html
import re
import shutil
import sys
import time
from pathlib import Path
from typing import Any

#: What a reader downloads, under the HTML output (``make pdf`` copies the PDF there).
PDF = "_downloads/private-kmeans-reproduced.pdf"

sys.path.insert(0, str(Path(__file__).resolve().parent))
from pdf_layout import captions, measure, misplaced_chapters, page_texts  # noqa: E402

ROOT = Path(__file__).resolve().parents[2]
PRINT_CSS = Path(__file__).with_name("print.css")
#: The copy of the book's single page that Chromium opens, at the build's top so that the
#: page's relative links (``_static/``, ``_images/``) resolve: Sphinx writes the page under the
#: name of the book's root document (``book/intro.html``) with links relative to the top.
PRINTED_PAGE = "print.html"

#: The footer of every page: the book's title and the page number.
FOOTER = ('<div style="font-size: 8px; width: 100%; padding: 0 15mm; color: #555; '
          'display: flex; justify-content: space-between;">'
          '<span>{title}</span><span><span class="pageNumber"></span> / '
          '<span class="totalPages"></span></span></div>')

#: Run in the page before printing: marks chapters, adds the parts' titles, the title page and
#: the table of contents, opens folded boxes, drops hidden code, and adds the print styles.
#: ``arguments[0]``: the parts, ``[[caption, [docname, ...]], ...]``; ``arguments[1]``: the
#: title page's lines; ``arguments[2]``: the print styles.
PREPARE = r"""
const [parts, titleLines, css] = arguments;
document.documentElement.dataset.mode = 'light';
document.documentElement.dataset.theme = 'light';
// Only the book's text is printed: the article, alone in the page (the theme's columns and
// sidebars would also cut the printout short, as a grid cannot be split across pages).
const article = document.querySelector('article.bd-article');
document.body.replaceChildren(article);
// The table of contents links an anchor of its own at each entry: section ids repeat from one
// chapter to the next in the single page ("summary", "exercises"). Each entry's heading also
// gets a probe, a word in white 2 px text that takes no room (PROBE in print_pdf.py), so that
// the first printing tells on which page the heading fell; the entry shows a placeholder page
// number until then.
let anchors = 0;
const anchor = (section, heading, link) => {
  const mark = document.createElement('span');
  mark.id = 'print-toc-' + (anchors += 1);
  section.prepend(mark);
  const probe = document.createElement('span');
  probe.className = 'print-page-probe';
  probe.textContent = 'PKTOC' + anchors + 'X';
  heading.prepend(probe);
  link.href = '#' + mark.id;
  const title = document.createElement('span');
  title.className = 'print-toc-title';
  title.innerHTML = heading.innerHTML;
  const number = document.createElement('span');
  number.className = 'print-toc-page';
  number.dataset.entry = String(anchors);
  number.textContent = '000';
  link.replaceChildren(title, number);
};
const partOf = {};
parts.forEach(([caption, docs], i) => docs.forEach(d => { partOf[d] = [caption, i]; }));

// Every document of the book after the root starts a new page; a part's title goes before the
// part's first document.
const toc = document.createElement('nav');
toc.className = 'print-toc';
toc.innerHTML = '<h2>Contents</h2>';
let list = null, seenParts = new Set();
for (const marker of document.querySelectorAll('span[id^="document-"]')) {
  const doc = marker.id.slice('document-'.length);
  const section = marker.nextElementSibling;
  if (!section || section.tagName !== 'SECTION') continue;
  section.classList.add('print-chapter');
  const [caption, index] = partOf[doc] || ['', -1];
  if (index >= 0 && !seenParts.has(index)) {
    seenParts.add(index);
    const part = document.createElement('div');
    part.className = 'print-part';
    part.id = 'print-part-' + index;
    part.textContent = caption;
    marker.before(part);
    const title = document.createElement('p');
    title.className = 'print-toc-part';
    title.textContent = caption;
    toc.append(title);
    list = document.createElement('ul');
    toc.append(list);
  }
  if (!list) { list = document.createElement('ul'); toc.append(list); }
  const heading = section.querySelector('h1, h2, h3, h4');
  if (!heading) continue;
  const chapter = document.createElement('li');
  chapter.className = 'print-toc-chapter';
  const link = document.createElement('a');
  anchor(section, heading, link);
  chapter.append(link);
  const level = Number(heading.tagName[1]) + 1;
  const subs = Array.from(section.querySelectorAll(':scope > section > h' + level))
    .filter(h => !h.closest('.exercise, .solution, .dropdown, .admonition'));
  if (subs.length) {
    const inner = document.createElement('ul');
    for (const h of subs) {
      const item = document.createElement('li');
      const a = document.createElement('a');
      anchor(h.parentElement, h, a);
      item.append(a);
      inner.append(item);
    }
    chapter.append(inner);
  }
  list.append(chapter);
}
toc.querySelectorAll('.headerlink, mjx-assistive-mml, .print-page-probe')
  .forEach(e => e.remove());

const titlePage = document.createElement('div');
titlePage.className = 'print-title';
titlePage.innerHTML = titleLines.map((line, i) => i ? '<p>' + line + '</p>'
                                                    : '<h1>' + line + '</h1>').join('');
article.prepend(titlePage, toc);

// Hidden code cells: a cell whose output is shown keeps its output and drops its code; a
// folded cell without output is dropped.
for (const box of document.querySelectorAll('details.hide')) {
  if (box.querySelector('.cell_output')) {
    box.open = true;
    box.querySelectorAll(':scope > summary, .cell_input').forEach(e => e.remove());
  } else {
    box.remove();
  }
}
document.querySelectorAll('details').forEach(d => { d.open = true; });
// Links to other files of the HTML book (downloads, the notebooks) lead nowhere from a PDF:
// they print as their text. Links within the book and to the web stay.
for (const a of document.querySelectorAll('a[href]')) {
  const href = a.getAttribute('href');
  if (!/^(#|[a-z]+:)/i.test(href)) { a.replaceWith(...a.childNodes); }
}
document.querySelectorAll('.toggle-hidden').forEach(e => e.classList.remove('toggle-hidden'));

const style = document.createElement('style');
style.id = 'print-styles';
style.textContent = css;
document.head.append(style);
return document.querySelectorAll('.print-chapter').length;
"""

#: Resolves once MathJax has typeset the page (including the table of contents' copies of the
#: chapter titles), every image has loaded and every font is ready.
SETTLE = r"""
const done = arguments[arguments.length - 1];
(async () => {
  if (window.MathJax && MathJax.startup && MathJax.startup.promise) {
    await MathJax.startup.promise;
    if (MathJax.typesetPromise) { await MathJax.typesetPromise(); }
  }
  await Promise.all(Array.from(document.images).map(
    img => img.complete ? null : new Promise(r => { img.onload = img.onerror = r; })));
  await document.fonts.ready;
  const broken = Array.from(document.images).filter(i => !(i.complete && i.naturalWidth > 0))
    .map(i => i.getAttribute('src'));
  const raw = Array.from(document.querySelectorAll('.math')).filter(
    m => !m.querySelector('mjx-container') && !m.closest('mjx-container')).length;
  return {broken, raw, typeset: document.querySelectorAll('mjx-container').length};
})().then(done, e => done({error: String(e)}));
"""


#: The text's width on the printed page, in CSS pixels: A4's 210 mm less print.css's margins.
PAGE_WIDTH = round((210 - 30) / 25.4 * 96)

#: Run with the page laid out as printed. A displayed formula wider than the page is set
#: smaller until it fits (MathJax does not break displayed formulas across lines). A table
#: wider than the page is set smaller, down to :data:`SMALLEST_TABLE` of its size, and if
#: that is not enough its cells break inside words (``print-fit`` in print.css). Returns how
#: many formulas and tables were set smaller, and what is still wider than the page (outside
#: MathJax's hidden copy of the formulas for screen readers): Chromium would shrink every page
#: of the book to fit it.
FIT = r"""
const smallest = arguments[0];
const width = document.querySelector('article.bd-article').getBoundingClientRect().right;
let formulas = 0, tables = 0;
for (const e of document.querySelectorAll('mjx-container[display="true"]')) {
  if (e.scrollWidth > e.clientWidth + 1) {
    e.style.fontSize = Math.floor(100 * e.clientWidth / e.scrollWidth) + '%';
    formulas += 1;
  }
}
const tooWide = e => e.getBoundingClientRect().right > width + 1;
for (const t of document.querySelectorAll('article table')) {
  if (!tooWide(t)) continue;
  tables += 1;
  const size = parseFloat(getComputedStyle(t).fontSize);
  for (let scale = 0.95; tooWide(t) && scale >= smallest - 1e-9; scale -= 0.05) {
    t.style.fontSize = (size * scale).toFixed(2) + 'px';
  }
  if (tooWide(t)) { t.classList.add('print-fit'); }
}
const wide = [];
for (const e of document.querySelectorAll('article *')) {
  if (!tooWide(e) || e.closest('mjx-assistive-mml')) continue;
  if (e.parentElement && tooWide(e.parentElement)) continue;
  const where = e.closest('section[id]');
  wide.push(e.tagName.toLowerCase() + ' in section ' + (where ? where.id : '?') + ': '
            + e.textContent.trim().replace(/\s+/g, ' ').slice(0, 60));
}
return {formulas, tables, wide};
"""

#: The smallest a table is set to fit the page, as a fraction of its size.
SMALLEST_TABLE = 0.6


#: The probe's word, as the first printing's text shows it (PREPARE adds one to each heading
#: the contents list): its number is the contents entry's.
PROBE = re.compile(r"PKTOC(\d+)X")

#: Run between the two printings: each contents entry gets the page its heading fell on
#: (``arguments[0]``: entry number -> page), and the probes go. Neither changes the layout:
#: the numbers take the placeholder's fixed width, the probes take no room.
NUMBER_CONTENTS = r"""
const pages = arguments[0];
let missing = 0;
for (const number of document.querySelectorAll('.print-toc-page')) {
  const page = pages[number.dataset.entry];
  if (page === undefined) { missing += 1; number.textContent = ''; }
  else { number.textContent = String(page); }
}
document.querySelectorAll('.print-page-probe').forEach(e => e.remove());
const chapters = Array.from(document.querySelectorAll('.print-toc-chapter > a > .print-toc-page'))
  .map(n => Number(n.textContent)).filter(n => n > 0);
return {missing, chapters};
"""


def probe_pages(texts: list[str]) -> dict[str, int]:
    """Each contents entry's page (from 1), from the probes in the pages' text (the first
    page an entry's probe appears on)."""
    pages: dict[str, int] = {}
    for number, text in enumerate(texts, start=1):
        for entry in PROBE.findall(text):
            pages.setdefault(entry, number)
    return pages


#: Run before each printing: the page is laid out afresh (its layout dropped and rebuilt).
#: Without it, a printing reuses some of the previous one's layout, and two printings in a
#: row put a heading near a page's end on alternate pages.
RELAYOUT = r"""
const body = document.body;
body.style.display = 'none';
void body.offsetHeight;
body.style.display = '';
void body.offsetHeight;
"""


def _print(driver: Any, title: str) -> bytes:
    """The page as Chromium prints it, laid out afresh: A4 (print.css), the footer, the
    outline."""
    driver.execute_script(RELAYOUT)
    pdf = driver.execute_cdp_cmd("Page.printToPDF", {
        "printBackground": True,
        "preferCSSPageSize": True,
        "displayHeaderFooter": True,
        "headerTemplate": "<span></span>",
        "footerTemplate": FOOTER.format(title=html.escape(title)),
        "generateDocumentOutline": True,
        "generateTaggedPDF": True,
    })
    return base64.b64decode(pdf["data"])


#: Printings with the probes before the page numbers are trusted: they are read again until two
#: printings in a row put every heading on the same page.
MAX_PROBE_PRINTINGS = 4


def _probe(driver: Any, title: str, scratch: Path) -> dict[str, int]:
    """Print once with the probes and read each contents entry's page."""
    scratch.write_bytes(_print(driver, title))
    try:
        return probe_pages(page_texts(scratch))
    finally:
        scratch.unlink()


def _print_numbered(driver: Any, title: str, output: Path) -> dict[str, Any]:
    """Print with the probes until each heading's page is stable, then print with those pages
    in the contents and without the probes. Returns how many entries got no page
    (``missing``, 0 when all did), the pages the chapters start on (``chapters``) and how many
    probe printings it took (``printings``)."""
    scratch = output.with_name(output.name + ".probe")
    pages = _probe(driver, title, scratch)
    printings = 1
    while printings < MAX_PROBE_PRINTINGS:
        again = _probe(driver, title, scratch)
        printings += 1
        if again == pages:
            break
        pages = again
    else:
        raise RuntimeError(f"the headings' pages changed in each of {printings} printings")
    numbered = driver.execute_script(NUMBER_CONTENTS, pages)
    output.write_bytes(_print(driver, title))
    return {**numbered, "printings": printings}


def _fit_to_page(driver: Any) -> dict[str, Any]:
    """Lay the page out as printed (print styles, the page's width) and set the displayed
    formulas and tables that are wider smaller (:data:`FIT`); raises when something is still
    wider than the page, as Chromium would then shrink every page to fit it."""
    driver.execute_cdp_cmd("Emulation.setEmulatedMedia", {"media": "print"})
    driver.execute_cdp_cmd("Emulation.setDeviceMetricsOverride", {
        "width": PAGE_WIDTH, "height": 1000, "deviceScaleFactor": 1, "mobile": False})
    try:
        fitted = driver.execute_script(FIT, SMALLEST_TABLE)
    finally:
        driver.execute_cdp_cmd("Emulation.clearDeviceMetricsOverride", {})
        driver.execute_cdp_cmd("Emulation.setEmulatedMedia", {"media": ""})
    if fitted["wide"]:
        raise RuntimeError("wider than the printed page, so that Chromium would shrink every "
                           "page of the book to fit: " + "; ".join(fitted["wide"]))
    return fitted


#: How long one printing may take, in seconds.
PRINT_TIMEOUT = 1200


def _chromium() -> Any:
    """The browser test's headless, offline Chromium (tests/browser/chromium.py)."""
    sys.path.insert(0, str(ROOT / "tests" / "browser"))
    from chromium import chromium

    driver = chromium()
    # loading and printing a book of 300-odd pages can take minutes on a busy machine: the
    # driver's own two-minute wait for an answer, and the one-minute wait for a page, would
    # stop it
    driver.command_executor._client_config.timeout = PRINT_TIMEOUT
    driver.set_page_load_timeout(PRINT_TIMEOUT)
    return driver


def book_page(build: Path) -> Path:
    """The single page of a ``singlehtml`` build: the file its ``index.html`` forwards to (the
    book's root document), or ``index.html`` itself."""
    index = build / "index.html"
    text = index.read_text(encoding="utf-8")
    forward = re.search(r'http-equiv="Refresh"\s+content="\d+;\s*url=([^"]+)"', text, re.I)
    return build / forward.group(1) if forward else index


def parts(toc_file: Path = ROOT / "_toc.yml") -> list[tuple[str, list[str]]]:
    """The book's parts as ``_toc.yml`` lists them: each caption and its documents."""
    import yaml

    toc = yaml.safe_load(toc_file.read_text(encoding="utf-8"))
    found = []
    for part in toc.get("parts", []):
        docs = []
        for chapter in part.get("chapters", []):
            docs.append(chapter["file"])
            docs += [section["file"] for section in chapter.get("sections", [])]
        found.append((part.get("caption", ""), docs))
    return found


def title_lines(title: str) -> list[str]:
    """The title page: the title, the authors, and the commit the book was built from."""
    import yaml

    sys.path.insert(0, str(Path(__file__).resolve().parent))
    from source_archive import source_commit

    config = yaml.safe_load((ROOT / "_config.yml").read_text(encoding="utf-8"))
    commit = source_commit(ROOT)
    return [html.escape(title), html.escape(config.get("author", "")),
            f"Printed from the book built from commit {html.escape(commit.label)}, "
            f"{time.strftime('%d %B %Y')}"]


def print_book(build: Path, output: Path) -> dict[str, Any]:
    """Print the ``singlehtml`` build in ``build`` to ``output``; returns what was measured
    (chapters, typeset formulas, formulas set smaller to fit, seconds)."""
    start = time.monotonic()
    build, output = build.resolve(), output.resolve()
    page = build / PRINTED_PAGE
    shutil.copyfile(book_page(build), page)
    driver = _chromium()
    try:
        driver.set_script_timeout(300)
        driver.get(page.as_uri())
        title = driver.title
        count = driver.execute_script(PREPARE, parts(), title_lines(title),
                                         PRINT_CSS.read_text(encoding="utf-8"))
        state = driver.execute_async_script(SETTLE)
        if state.get("error") or state["broken"] or state["raw"]:
            raise RuntimeError(f"the page is not ready to print: {state}")
        fitted = _fit_to_page(driver)
        output.parent.mkdir(parents=True, exist_ok=True)
        partial = output.with_name(output.name + ".partial")
        numbered = _print_numbered(driver, title, partial)
    finally:
        driver.quit()
    if numbered["missing"]:
        raise RuntimeError(f"{numbered['missing']} entries of the contents found no page")
    wrong = misplaced_chapters(page_texts(partial))
    if wrong:
        raise RuntimeError(f"chapters not on the page the contents give: {wrong}")
    partial.replace(output)
    layout = measure(output, set(numbered["chapters"]),
                     captions(page.read_text(encoding="utf-8")), body=min(numbered["chapters"]))
    return {"chapters": count, "formulas": state["typeset"], "shrunk": fitted["formulas"],
            "tables": fitted["tables"],
            "printings": numbered["printings"], "seconds": round(time.monotonic() - start, 1),
            "layout": layout}


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("build", type=Path, help="the singlehtml build (_build/singlehtml)")
    parser.add_argument("output", type=Path, help="the PDF to write")
    args = parser.parse_args(argv)
    done = print_book(args.build, args.output)
    size = args.output.stat().st_size / 1e6
    print(f"{args.output}: {done['chapters']} chapters, {done['formulas']} formulas typeset "
          f"({done['shrunk']} set smaller to fit the page; {done['tables']} tables too), "
          f"{size:.1f} MB, "
          f"printed in {done['seconds']} s ({done['printings']} printings to find the "
          "headings' pages, then the book)")
    print(done["layout"].summary())
    return 0


if __name__ == "__main__":
    sys.exit(main())
