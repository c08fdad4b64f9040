"""The book's own Sphinx extension (book/_ext/reader.py): captions as alt text, one copy of
each script (issue 15)."""

from __future__ import annotations

import sys
from pathlib import Path

from docutils import nodes
from docutils.utils import new_document
from docutils.frontend import get_default_settings
from docutils.parsers.rst import Parser

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "book" / "_ext"))
from reader import caption_as_alt, unique_scripts  # noqa: E402


def _document_with(alt: str | None) -> tuple[nodes.document, nodes.image]:
    doc = new_document("test", get_default_settings(Parser))
    figure = nodes.figure()
    image = nodes.image(uri="_images/abc123.png", **({} if alt is None else {"alt": alt}))
    figure += image
    figure += nodes.caption(text="NICV against  \\varepsilon\n on $[0, 1]^{d}$.")
    doc += figure
    return doc, image


def test_a_figure_without_alt_gets_its_caption():
    for alt in (None, "", "_images/abc123.png", "abc123.png"):
        doc, image = _document_with(alt)
        caption_as_alt(None, doc, "page")
        assert image["alt"] == "NICV against epsilon on [0, 1]^d."


def test_a_written_alt_is_kept_and_images_outside_figures_are_left_alone():
    doc, image = _document_with("a hand-written description")
    loose = nodes.image(uri="_images/loose.png")
    doc += loose
    caption_as_alt(None, doc, "page")
    assert image["alt"] == "a hand-written description"
    assert "alt" not in loose.attributes or not loose["alt"]


def test_a_page_keeps_one_copy_of_each_script():
    from sphinx.builders.html import JavaScript

    one = JavaScript(None, body="const THEBE_JS_URL = 'x'")
    other = JavaScript("sphinx-thebe.js", **{"async": "async"})
    again = JavaScript("", body="const THEBE_JS_URL = 'x'")  # as a second registration has it
    context = {"script_files": [one, other, again]}
    unique_scripts(None, "page", "page.html", context, None)
    assert context["script_files"] == [one, other]
