"""What a reader's browser gets, fixed once here for every page.

* Alt text: Sphinx writes an image's file name as its ``alt`` when none is given, which is what
  a screen reader then reads. Every figure of the book has a caption (tests/test_project.py
  checks it), so each image inside a figure gets the caption's text as ``alt`` when it has none
  or only its file name.
* Scripts: each page keeps one copy of every script (an extension registering one twice, as
  Jupyter Book 1 did with sphinx-thebe's configuration, gives a SyntaxError in the console).
* MathJax on every page: chapter titles hold math, and the navigation shows them on every page,
  including pages without math of their own (Sphinx loads MathJax only where a page has math).
* Running a chapter: every notebook page says, under its title, where to download its notebook
  (the paired ``.ipynb``, from the build's ``_sources``) and how to run it with the library.
* Theme mode: a first visit starts in the "auto" light/dark mode instead of an empty one, which
  the theme reports as an error in the console.
* The book's source: every build packs the repository it was built from
  (:mod:`source_archive`) into ``_downloads/``; the ``{source-archive}`` role and every
  notebook page's note link it, with its commit.
* The printed book: ``make pdf`` prints the whole book as one PDF (:mod:`print_pdf`) into
  ``_downloads/``; the ``{book-pdf}`` role and every notebook page's note link it. The student
  edition links neither the source nor the PDF: both hold the solutions.
* The single-page build (``singlehtml``, which the PDF is printed from) writes every node the
  HTML build writes.
* Repository and launch buttons: shown only when a repository URL is set (``repository.url``
  in ``_config.yml``, or ``$DPKMEANS_REPOSITORY_URL`` at build time), never in the student
  edition (the repository holds the solutions), never a placeholder. The repository and Binder
  buttons point at the built commit (Binder builds it from ``binder/``). The Colab button
  opens the chapter on the configured branch, whose first cell installs the library from that
  same branch (``binder/launch_cell.py``); it is shown only when the build's repository is the
  one ``_config.yml`` names, the one the notebooks' first cell installs from (docs/launch.md).
* No thebe: Jupyter Book loads sphinx-thebe, which writes into every page a configuration
  naming a placeholder repository whether or not thebe is used. Thebe's "Live Code" runs only
  the cells a page shows, and the chapters compute in removed cells, so it cannot run them:
  the book drops sphinx-thebe's configuration, scripts and style, and refuses
  ``launch_buttons.thebe``.
* Reading styles (``static/reader.css``): code in a font small enough for 86-character lines,
  tables that wrap to the column, figures never wider than it; formulas, proof boxes and wide
  tables that scroll inside their own box on a phone.
* Full-size pictures: every picture of a page links its own file, so that a phone's reader can
  open a figure shrunk to the screen at its full size.

The browser test (tests/browser) checks what a reader sees on every page.
"""

from __future__ import annotations

import os
import re
from pathlib import Path, PurePosixPath
from typing import Any

import print_pdf
import source_archive
from docutils import nodes
from sphinx.errors import ConfigError


def _is_placeholder(alt: str, uri: str) -> bool:
    """No alt text, or the file name Sphinx would show instead."""
    return not alt.strip() or alt in (uri, PurePosixPath(uri).name)


def _plain(text: str) -> str:
    """A caption as a screen reader should read it: TeX commands by name (\\varepsilon ->
    epsilon), no braces or dollar signs, single spaces."""
    text = re.sub(r"\\(?:var)?([A-Za-z]+)", r"\1", text)
    text = re.sub(r"[{}$\\]", "", text)
    return " ".join(text.split())


def caption_as_alt(app: Any, doctree: nodes.document, docname: str) -> None:
    """Give every captioned figure's images their caption as alt text."""
    for figure in doctree.findall(nodes.figure):
        caption = next(iter(figure.findall(nodes.caption)), None)
        if caption is None:
            continue
        text = _plain(caption.astext())
        for image in figure.findall(nodes.image):
            if _is_placeholder(image.get("alt", ""), image.get("uri", "")):
                image["alt"] = text


#: Where the how-to page explains running one chapter (its section's anchor).
HOW_TO_RUN = ("book/how_to_use", "running-one-chapter-on-your-own-machine")


def _to_root(docname: str) -> str:
    """The relative path from a page to the HTML output's root."""
    return "../" * docname.count("/")


def _archive_link(docname: str, text: str) -> nodes.reference:
    return nodes.reference("", text, refuri=_to_root(docname) + source_archive.ARCHIVE,
                           internal=True, classes=["source-archive"])


def _pdf_link(docname: str, text: str) -> nodes.reference:
    return nodes.reference("", text, refuri=_to_root(docname) + print_pdf.PDF, internal=True,
                           classes=["book-pdf"])


def _commit_label(app: Any) -> str:
    commit = getattr(app, "reader_commit", None)
    return commit.label if commit is not None else "unknown"


def _student_edition(app: Any) -> bool:
    """The edition without solutions (``make student``): it links no source and no PDF (the
    notebooks, the archive and the printed book hold the solutions)."""
    return bool(getattr(getattr(app, "config", None), "hide_solutions", False))


def run_locally_note(app: Any, doctree: nodes.document, docname: str) -> None:
    """Under the title of every notebook page: its notebook's download link, the book's
    source archive, the two commands that run it with the library and, in the full edition,
    the whole book as one PDF to print."""
    source = str(app.env.doc2path(docname, base=False))
    if not source.endswith(".ipynb") or HOW_TO_RUN[0] not in app.env.all_docs:
        return
    section = next(iter(doctree.findall(nodes.section)), None)
    if section is None:
        return
    builder = app.builder
    download = _to_root(docname) + f"_sources/{source}"  # the HTML builder's copy
    how_to = f"{builder.get_relative_uri(docname, HOW_TO_RUN[0])}#{HOW_TO_RUN[1]}"
    name = PurePosixPath(source).name
    body = nodes.paragraph()
    body += nodes.strong(text="Run this page yourself: ")
    if _student_edition(app):
        body += nodes.Text("with the book's source from your instructor, run ")
        body += nodes.literal(text="make install")
        body += nodes.Text(", then ")
        body += nodes.literal(text=f".venv/bin/jupyter lab {source}")
        body += nodes.Text(" (")
        body += nodes.reference("", "how to run a chapter", refuri=how_to, internal=True)
        body += nodes.Text(").")
    else:
        _full_note(app, body, docname, source, download, name, how_to)
    note = nodes.container(classes=["run-locally"])
    note += body
    if not _student_edition(app):
        printed = nodes.paragraph()
        printed += nodes.strong(text="Print it: ")
        printed += _pdf_link(docname, "the whole book as one PDF")
        printed += nodes.Text(" (A4, each chapter starting on a new page).")
        note += printed
    title = next(iter(section.findall(nodes.title)), None)
    section.insert(section.index(title) + 1 if title is not None else 0, note)


def _full_note(app: Any, body: nodes.paragraph, docname: str, source: str, download: str,
               name: str, how_to: str) -> None:
    body += nodes.Text("download the ")
    body += _archive_link(docname, "book's source")
    body += nodes.Text(f" (commit {_commit_label(app)}: the library, every chapter and the "
                       "committed results), unpack it, run ")
    body += nodes.literal(text="make install")
    body += nodes.Text(", then ")
    body += nodes.literal(text=f".venv/bin/jupyter lab {source}")
    body += nodes.Text(". This page's notebook alone is ")
    body += nodes.reference("", name, refuri=download, internal=True)
    body += nodes.Text(" (")
    body += nodes.reference("", "how to run a chapter", refuri=how_to, internal=True)
    body += nodes.Text(").")


class _ArchivePlaceholder(nodes.Inline, nodes.TextElement):
    """Where the ``{source-archive}`` role (or, with ``target="pdf"``, the ``{book-pdf}``
    role) stood; filled in when the page is written, so that a cached page still names the
    commit of this build and the edition it belongs to."""


def source_archive_role(name, rawtext, text, lineno, inliner, options=None, content=None):
    """``{source-archive}`link text``` links the book's source archive of this build."""
    return [_ArchivePlaceholder(rawtext, text or "the book's source")], []


def book_pdf_role(name, rawtext, text, lineno, inliner, options=None, content=None):
    """``{book-pdf}`link text``` links the whole book as one PDF (``make pdf``)."""
    return [_ArchivePlaceholder(rawtext, text or "the whole book as one PDF", target="pdf")], []


def fill_archive_links(app: Any, doctree: nodes.document, docname: str) -> None:
    """Replace each ``{source-archive}`` placeholder by the link and the commit it packs, and
    each ``{book-pdf}`` placeholder by the PDF's link."""
    for placeholder in list(doctree.findall(_ArchivePlaceholder)):
        if placeholder.get("target") == "pdf":
            placeholder.replace_self(
                nodes.Text(f"{placeholder.astext()} (from your instructor: the printed book "
                           "holds the solutions)") if _student_edition(app)
                else _pdf_link(docname, placeholder.astext()))
            continue
        if _student_edition(app):
            placeholder.replace_self(nodes.Text(
                f"{placeholder.astext()} (from your instructor: the student edition carries "
                "no source, which holds the solutions)"))
            continue
        link = _archive_link(docname, placeholder.astext())
        placeholder.replace_self([link, nodes.Text(f" (commit {_commit_label(app)})")])


def write_source_archive(app: Any, exception: Exception | None) -> None:
    """After a successful HTML build of the full edition (not the single page the PDF is
    printed from): pack the source into ``_downloads/``."""
    if (exception is None and app.builder.format == "html" and app.builder.name != "singlehtml"
            and not _student_edition(app)):
        source_archive.write_archive(Path(app.srcdir), Path(app.outdir) / source_archive.ARCHIVE)


#: Set at build time to show the repository and launch buttons for that repository.
REPOSITORY_ENV = "DPKMEANS_REPOSITORY_URL"
#: A repository's address as Binder and the theme's buttons take it.
_REPOSITORY_URL = re.compile(r"https://[A-Za-z0-9.-]+(?::[0-9]+)?/[\w.-]+/[\w.-]+")
#: The only host Colab opens notebooks from.
_COLAB_HOST = "https://github.com/"


def repository_url(value: str, where: str) -> str:
    """``value`` as a repository's address, ``https://HOST/OWNER/NAME`` without a trailing
    slash or ``.git``; "" for an empty value. Anything else is a ``ConfigError`` naming
    ``where`` it was set."""
    url = value.strip().rstrip("/")
    url = url[:-4] if url.endswith(".git") else url
    if url and not _REPOSITORY_URL.fullmatch(url):
        raise ConfigError(f"{where} is {value!r}, not a repository's address: "
                          "https://HOST/OWNER/NAME, such as https://github.com/owner/name")
    return url


def repository_buttons(app: Any, config: Any) -> None:
    """The repository button and the Binder launch button, pointing at the built commit, and
    the Colab button when the chapters' first cell installs from this repository, all when a
    repository URL is set and in the full edition; none of them (and no placeholder URL)
    otherwise."""
    app.reader_commit = source_archive.source_commit(Path(app.srcdir))
    options = dict(config.html_theme_options or {})
    configured = repository_url(options.get("repository_url") or "",
                                "repository.url in _config.yml")
    url = repository_url(os.environ.get(REPOSITORY_ENV, ""), f"${REPOSITORY_ENV}") or configured
    launch = dict(options.get("launch_buttons") or {})
    if launch.get("thebe"):
        raise ConfigError("launch_buttons.thebe: thebe's Live Code runs only the cells a page "
                          "shows, and the chapters compute in removed cells; Binder and Colab "
                          "run the whole notebook")
    app.reader_launch_branch = options.get("repository_branch") or "main"
    if url and not _student_edition(app):
        commit = app.reader_commit
        options["repository_url"] = url
        if commit.id != "unknown" and not commit.modified:
            options["repository_branch"] = commit.id
        options["use_repository_button"] = True
        if url != configured or not url.startswith(_COLAB_HOST):
            launch["colab_url"] = ""  # the notebooks' first cell installs from `configured`
    else:
        options["repository_url"] = ""
        options["use_repository_button"] = False
        launch = {k: ("" if k.endswith("_url") else v) for k, v in launch.items()}
    options["launch_buttons"] = launch
    options["use_edit_page_button"] = options["use_issues_button"] = False
    config.html_theme_options = options
    static = str(Path(__file__).resolve().parent / "static")
    if static not in config.html_static_path:
        config.html_static_path.append(static)


def colab_on_branch(app: Any, pagename: str, templatename: str, context: dict[str, Any],
                    doctree: Any) -> None:
    """The Colab button opens the notebook on the configured branch, not the built commit:
    its first cell installs the library from that branch, so that the notebook and the
    library come from one commit (the theme gives every launch button the same revision)."""
    built = app.config.html_theme_options.get("repository_branch")
    branch = getattr(app, "reader_launch_branch", None)
    if not built or not branch or built == branch:
        return
    for group in context.get("header_buttons") or []:
        for button in group.get("buttons") or []:
            if button.get("text") == "Colab":
                button["url"] = button["url"].replace(f"/blob/{built}/", f"/blob/{branch}/", 1)


#: What sphinx-thebe adds to a build, besides its configuration value.
_THEBE_MODULE = "sphinx_thebe"
_THEBE_CSS = "sphinx-thebe.css"


def without_thebe(app: Any, config: Any) -> None:
    """Drop what sphinx-thebe (which Jupyter Book always loads) adds to every page: its
    configuration naming a placeholder repository, its scripts, its style sheet and its
    static files. The book offers no thebe button (:func:`repository_buttons`)."""
    for listeners in list(app.events.listeners.values()):
        for listener in list(listeners):
            if getattr(listener.handler, "__module__", "") == _THEBE_MODULE:
                app.disconnect(listener.id)
    app.registry.css_files[:] = [(name, attributes) for name, attributes
                                 in app.registry.css_files if name != _THEBE_CSS]


def unique_scripts(app: Any, pagename: str, templatename: str, context: dict[str, Any],
                   doctree: Any) -> None:
    """Drop repeated scripts (same file or same inline body and attributes) from a page,
    keeping the first."""
    scripts = context.get("script_files")
    if not scripts:
        return
    seen, kept = set(), []
    for script in scripts:
        # an inline script's file name is None or "", depending on how it was registered
        key = (getattr(script, "filename", None) or "",
               tuple(sorted(getattr(script, "attributes", {}).items())))
        if key not in seen:
            seen.add(key)
            kept.append(script)
    context["script_files"] = kept


#: The theme stores the reader's light/dark choice; on a first visit there is none, the page
#: starts with an empty mode, and the theme's script logs an error before falling back to
#: "auto". Starting from "auto" is the same page without the error.
_DEFAULT_MODE = ('if (!document.documentElement.dataset.mode) '
                 '{ document.documentElement.dataset.mode = "auto"; }')


#: Every picture of the article opens its full-size file on a click: on a phone, a figure shrunk
#: to the screen's width has labels too small to read (the phone test checks the links).
_FULL_SIZE = r"""
document.addEventListener("DOMContentLoaded", () => {
  for (const img of document.querySelectorAll("article.bd-article img")) {
    if (img.closest("a")) continue;
    const link = document.createElement("a");
    link.className = "full-size";
    link.href = img.getAttribute("src");
    link.title = "Open the picture at full size";
    img.replaceWith(link);
    link.append(img);
  }
});
"""


def single_page_handlers(app: Any) -> None:
    """Let the single-page builder (``singlehtml``, which the printable PDF starts from) write
    every node the HTML builder writes. Sphinx looks a node's writer up under the builder's
    name and only falls back to its format ("html") when no extension registered any writer
    for that name; sphinx-exercise registers some for "singlehtml", so myst-nb's hidden-cell
    node (registered for "html" only) would stop the build."""
    handlers = app.registry.translation_handlers
    single = handlers.get("singlehtml")
    if single is not None:
        for name, visit_depart in handlers.get("html", {}).items():
            single.setdefault(name, visit_depart)


def setup(app: Any) -> dict[str, Any]:
    app.set_html_assets_policy("always")  # MathJax on every page: titles in the menu hold math
    app.connect("doctree-resolved", caption_as_alt)
    app.connect("config-inited", repository_buttons)
    app.connect("config-inited", without_thebe)
    app.add_role("source-archive", source_archive_role)
    app.add_role("book-pdf", book_pdf_role)
    app.add_node(_ArchivePlaceholder)
    app.connect("doctree-resolved", fill_archive_links)
    app.connect("doctree-resolved", run_locally_note)
    app.connect("build-finished", write_source_archive)
    app.connect("builder-inited", single_page_handlers)
    app.add_css_file("reader.css")
    app.connect("html-page-context", unique_scripts, priority=900)  # after every other handler
    app.connect("html-page-context", colab_on_branch, priority=600)  # after the theme's (501)
    app.add_js_file(None, body=_DEFAULT_MODE, priority=100)
    app.add_js_file(None, body=_FULL_SIZE)
    return {"parallel_read_safe": True, "parallel_write_safe": True}
