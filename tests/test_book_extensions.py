"""The book's own Sphinx extension (book/_ext): figure captions become alt text (issue 15)."""

from __future__ import annotations

import sys
from pathlib import Path

from docutils import nodes
from docutils.utils import new_document
from docutils.frontend import get_default_settings
from docutils.parsers.rst import Parser

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "book" / "_ext"))
from figure_alt import caption_as_alt  # noqa: E402


def _document_with(alt: str | None) -> tuple[nodes.document, nodes.image]:
    doc = new_document("test", get_default_settings(Parser))
    figure = nodes.figure()
    image = nodes.image(uri="_images/abc123.png", **({} if alt is None else {"alt": alt}))
    figure += image
    figure += nodes.caption(text="NICV against  epsilon\n on blood.")
    doc += figure
    return doc, image


def test_a_figure_without_alt_gets_its_caption():
    for alt in (None, "", "_images/abc123.png", "abc123.png"):
        doc, image = _document_with(alt)
        caption_as_alt(None, doc, "page")
        assert image["alt"] == "NICV against epsilon on blood."


def test_a_written_alt_is_kept_and_images_outside_figures_are_left_alone():
    doc, image = _document_with("a hand-written description")
    loose = nodes.image(uri="_images/loose.png")
    doc += loose
    caption_as_alt(None, doc, "page")
    assert image["alt"] == "a hand-written description"
    assert "alt" not in loose.attributes or not loose["alt"]
