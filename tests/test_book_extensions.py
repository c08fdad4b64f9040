"""The book's own Sphinx extension (book/_ext/reader.py): captions as alt text, one copy of
each script, the run-it-yourself note of every notebook page (issue 15)."""

from __future__ import annotations

import sys
from pathlib import Path

from docutils import nodes
from docutils.utils import new_document
from docutils.frontend import get_default_settings
from docutils.parsers.rst import Parser

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "book" / "_ext"))
from reader import caption_as_alt, run_locally_note, unique_scripts  # noqa: E402


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


class _Builder:
    def get_relative_uri(self, source: str, target: str) -> str:
        return "../" * source.count("/") + f"{target}.html"


class _App:
    """The part of a Sphinx application that run_locally_note reads."""

    def __init__(self, sources: dict[str, str]):
        self.builder = _Builder()
        self.env = type("Env", (), {"all_docs": dict.fromkeys(sources),
                                    "doc2path": lambda _, doc, base: sources[doc]})()


def _page(title: str) -> nodes.document:
    doc = new_document("test", get_default_settings(Parser))
    section = nodes.section()
    section += nodes.title(text=title)
    section += nodes.paragraph(text="First paragraph.")
    doc += section
    return doc


def test_a_notebook_page_says_where_its_notebook_is_and_how_to_run_it():
    app = _App({"notebooks/05_dplloyd": "notebooks/05_dplloyd.ipynb",
                "book/how_to_use": "book/how_to_use.md"})
    doc = _page("DPLloyd")
    run_locally_note(app, doc, "notebooks/05_dplloyd")
    section = next(iter(doc.findall(nodes.section)))
    note = section.children[1]  # right under the title
    assert "run-locally" in note["classes"]
    links = {r.astext(): r["refuri"] for r in note.findall(nodes.reference)}
    assert links == {
        "05_dplloyd.ipynb": "../_sources/notebooks/05_dplloyd.ipynb",
        "how to run a chapter": "../book/how_to_use.html#running-one-chapter-on-your-own-machine"}
    assert ".venv/bin/jupyter lab notebooks/05_dplloyd.ipynb" in note.astext()


def test_markdown_pages_get_no_note():
    app = _App({"book/how_to_use": "book/how_to_use.md"})
    doc = _page("How to use")
    run_locally_note(app, doc, "book/how_to_use")
    assert not list(doc.findall(nodes.container))
