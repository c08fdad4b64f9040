"""Screenshots of the places a reader judges the book by, one per defect of the reading review.

    .venv/bin/python tests/browser/capture.py --html _build/html --out _build/screenshots/after \
        --beside _build/screenshots/before

Each view is a page and an element on it, found by a CSS selector and a phrase its text
contains (so that the same view finds its element in an older build of the book, whose
markup differs), shot in headless Chromium at the browser test's 1280 px, offline. Run it on
two builds (for example one of an earlier commit); ``--beside`` names the folder of the
earlier pictures and writes each pair side by side into ``<out>/compare/``. Not a test:
``make test-browser`` runs the checks; this only takes pictures for a person to look at.
"""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).parent))
from chromium import WINDOW, chromium, wait_for_mathjax  # noqa: E402

#: (name, page, CSS selector, phrase in the element's text, or "" for the first match; phrases
#: separated by "|" are alternatives, the first one found wins: an older build's words)
VIEWS = (
    ("01-math-sequential-composition", "notebooks/03_composition.html", "div.proof",
     "joint density"),
    ("01-math-colored-theorem", "notebooks/09_colored.html", "div#thm-colored-pdp", ""),
    ("01-math-ap-proof", "notebooks/10_schedules.html", "div.proof", "form a progression"),
    ("01-math-intro-part-one", "book/intro.html", "section", "Part I"),
    ("01-math-references", "book/references.html", "div.citation", "Hongxia Jin"),
    ("02-shorthand-dpkccm", "notebooks/07_dpkccm.html", "section#the-merge", ""),
    ("02-shorthand-schedules", "notebooks/10_schedules.html", "section", "secondary source"),
    ("03-chapter12-headline-claims", "notebooks/12_synthesis.html", "section#headline-claims",
     ""),
    ("03-chapter12-privacy-claims", "notebooks/12_synthesis.html", "section",
     "Every paper claims its algorithm is private"),
    ("04-figure-silhouette", "notebooks/08_silhouette.html", "figure#fig-silhouette-f", ""),
    ("04-figure-colored", "notebooks/09_colored.html", "figure#fig-colored-dplloyd", ""),
    ("04-figure-schedules", "notebooks/10_schedules.html", "figure", "ten cases"),
    ("05-chapter12-verdicts", "notebooks/12_synthesis.html", "section#headline-claims", ""),
    ("06-get-the-code-note", "notebooks/05_dplloyd.html", "div.run-locally", ""),
    ("06-get-the-code-how-to", "book/how_to_use.html", "section", "Running one chapter"),
    ("07-plumbing-dpkccm", "notebooks/07_dpkccm.html", "section", "claims ledger"),
    ("08-notation-silhouette-proof", "notebooks/08_silhouette.html", "div.proof", ""),
    ("09-raw-values-silhouette", "notebooks/08_silhouette.html", "div.cell",
     "bit-identical"),
    ("09-raw-values-schedules", "notebooks/10_schedules.html", "div.cell_output",
     "NaN|from a run"),
    ("10-front-matter-intro", "book/intro.html", "article", ""),
    ("10-front-matter-notation", "book/notation.html", "article", ""),
)

_FIND = """
const [selector, phrases] = arguments;
const all = Array.from(document.querySelectorAll(selector));
for (const phrase of phrases.split("|")) {
  const hits = phrase ? all.filter(e => e.textContent.includes(phrase)) : all;
  // the innermost match, so that a phrase picks its own section and not the page
  hits.sort((a, b) => a.textContent.length - b.textContent.length);
  if (hits.length) return hits[0];
}
return null;
"""


def capture(html: Path, out: Path) -> list[str]:
    """Shoot every view of the book in ``html`` into ``out``; returns the views not found."""
    out.mkdir(parents=True, exist_ok=True)
    driver = chromium()
    missing = []
    try:
        for name, page, selector, phrase in VIEWS:
            driver.get((html / page).resolve().as_uri())
            wait_for_mathjax(driver)
            element = driver.execute_script(_FIND, selector, phrase)
            if element is None:
                missing.append(name)
                continue
            height = driver.execute_script("return arguments[0].scrollHeight", element)
            driver.set_window_size(WINDOW[0], max(WINDOW[1], min(int(height) + 400, 12000)))
            driver.execute_script("arguments[0].scrollIntoView({block: 'start'})", element)
            time.sleep(0.3)
            element.screenshot(str(out / f"{name}.png"))
            driver.set_window_size(*WINDOW)
    finally:
        driver.quit()
    return missing


def side_by_side(before: Path, after: Path, out: Path) -> list[str]:
    """Each view shot in both folders, before on the left and after on the right, into
    ``out``; returns the views written."""
    from PIL import Image, ImageDraw

    out.mkdir(parents=True, exist_ok=True)
    written = []
    for name, *_ in VIEWS:
        left, right = before / f"{name}.png", after / f"{name}.png"
        if not (left.is_file() and right.is_file()):
            continue
        a, b = Image.open(left).convert("RGB"), Image.open(right).convert("RGB")
        pair = Image.new("RGB", (a.width + b.width + 30, max(a.height, b.height) + 30), "white")
        pair.paste(a, (0, 30))
        pair.paste(b, (a.width + 30, 30))
        draw = ImageDraw.Draw(pair)
        draw.text((5, 8), "before", fill="black")
        draw.text((a.width + 35, 8), "after", fill="black")
        pair.save(out / f"{name}.png")
        written.append(name)
    return written


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--html", type=Path, default=Path("_build/html"),
                        help="the built book (default: _build/html)")
    parser.add_argument("--out", type=Path, default=Path("_build/screenshots/views"),
                        help="where the pictures go (default: _build/screenshots/views)")
    parser.add_argument("--beside", type=Path, default=None,
                        help="a folder of earlier pictures: write each pair side by side into "
                             "<out>/compare")
    args = parser.parse_args()
    if not (args.html / "index.html").is_file():
        parser.error(f"no built book in {args.html}: run make book first")
    missing = capture(args.html, args.out)
    print(f"{len(VIEWS) - len(missing)} views in {args.out}"
          + (f"; not found: {', '.join(missing)}" if missing else ""))
    if args.beside is not None:
        pairs = side_by_side(args.beside, args.out, args.out / "compare")
        print(f"{len(pairs)} before/after pairs in {args.out / 'compare'}")


if __name__ == "__main__":
    main()
