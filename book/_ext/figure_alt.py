"""Alt text for every figure of the book, set once here from its caption (issue 15).

Sphinx writes an image's file name as its ``alt`` when none is given, which is what a screen
reader then reads. Every figure of the book has a caption (tests/test_project.py checks it), so
this extension gives each image inside a figure the caption's text as ``alt`` when the image
has none or only its file name.
"""

from __future__ import annotations

from pathlib import PurePosixPath
from typing import Any

from docutils import nodes


def _is_placeholder(alt: str, uri: str) -> bool:
    """No alt text, or the file name Sphinx would show instead."""
    return not alt.strip() or alt in (uri, PurePosixPath(uri).name)


def caption_as_alt(app: Any, doctree: nodes.document, docname: str) -> None:
    """Give every captioned figure's images their caption as alt text."""
    for figure in doctree.findall(nodes.figure):
        caption = next(iter(figure.findall(nodes.caption)), None)
        if caption is None:
            continue
        text = " ".join(caption.astext().split())
        for image in figure.findall(nodes.image):
            if _is_placeholder(image.get("alt", ""), image.get("uri", "")):
                image["alt"] = text


def setup(app: Any) -> dict[str, Any]:
    app.connect("doctree-resolved", caption_as_alt)
    return {"parallel_read_safe": True, "parallel_write_safe": True}
