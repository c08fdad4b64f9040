"""The book's own Sphinx extension (book/_ext/reader.py): captions as alt text, one copy of
each script, the run-it-yourself note of every notebook page, the source archive
(book/_ext/source_archive.py), the link to the printed book and the repository buttons."""

from __future__ import annotations

import os
import subprocess
import sys
import tarfile
from pathlib import Path
from types import SimpleNamespace

import pytest
from docutils import nodes
from docutils.frontend import get_default_settings
from docutils.parsers.rst import Parser
from docutils.utils import new_document

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "book" / "_ext"))
import source_archive  # noqa: E402
from reader import (  # noqa: E402
    REPOSITORY_ENV,
    book_pdf_role,
    caption_as_alt,
    fill_archive_links,
    repository_buttons,
    run_locally_note,
    source_archive_role,
    unique_scripts,
)


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
        self.reader_commit = source_archive.Commit("abc123def456789", 0, True)
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
        "book's source": "../_downloads/private-kmeans-reproduced-source.tar.gz",
        "05_dplloyd.ipynb": "../_sources/notebooks/05_dplloyd.ipynb",
        "how to run a chapter": "../book/how_to_use.html#running-one-chapter-on-your-own-machine",
        "the whole book as one PDF": "../_downloads/private-kmeans-reproduced.pdf"}
    assert ".venv/bin/jupyter lab notebooks/05_dplloyd.ipynb" in note.astext()
    assert "commit abc123def456 with uncommitted changes" in note.astext()


def test_the_student_edition_links_neither_the_source_nor_the_pdf():
    """Both hold the solutions: the student edition's note names the commands only."""
    app = _App({"notebooks/05_dplloyd": "notebooks/05_dplloyd.ipynb",
                "book/how_to_use": "book/how_to_use.md"})
    app.config = SimpleNamespace(hide_solutions=True)
    doc = _page("DPLloyd")
    run_locally_note(app, doc, "notebooks/05_dplloyd")
    links = {r.astext(): r["refuri"] for r in doc.findall(nodes.reference)}
    assert links == {
        "how to run a chapter": "../book/how_to_use.html#running-one-chapter-on-your-own-machine"}
    assert "make install" in doc.astext() and "PDF" not in doc.astext()


def test_markdown_pages_get_no_note():
    app = _App({"book/how_to_use": "book/how_to_use.md"})
    doc = _page("How to use")
    run_locally_note(app, doc, "book/how_to_use")
    assert not list(doc.findall(nodes.container))


def test_the_archive_role_links_the_archive_with_this_builds_commit():
    app = _App({"book/how_to_use": "book/how_to_use.md"})
    doc = _page("How to use")
    placeholder, messages = source_archive_role("source-archive", "", "get the code", 1, None)
    assert not messages
    doc.children[0] += nodes.paragraph("", "", *placeholder)
    fill_archive_links(app, doc, "book/how_to_use")
    link = next(iter(doc.findall(nodes.reference)))
    assert link["refuri"] == "../_downloads/private-kmeans-reproduced-source.tar.gz"
    assert link.astext() == "get the code"
    assert "(commit abc123def456 with uncommitted changes)" in doc.astext()


def test_the_pdf_role_links_the_printed_book_in_the_full_edition_only():
    for student in (False, True):
        app = _App({"book/how_to_use": "book/how_to_use.md"})
        app.config = SimpleNamespace(hide_solutions=student)
        doc = _page("How to use")
        placeholder, messages = book_pdf_role("book-pdf", "", "the printed book", 1, None)
        assert not messages
        doc.children[0] += nodes.paragraph("", "", *placeholder)
        fill_archive_links(app, doc, "book/how_to_use")
        links = [r["refuri"] for r in doc.findall(nodes.reference)]
        assert links == ([] if student else ["../_downloads/private-kmeans-reproduced.pdf"])
        assert "the printed book" in doc.astext()


def _git(root: Path, *args: str) -> str:
    env = {**os.environ, "GIT_AUTHOR_NAME": "t", "GIT_AUTHOR_EMAIL": "t@t",
           "GIT_COMMITTER_NAME": "t", "GIT_COMMITTER_EMAIL": "t@t",
           "GIT_AUTHOR_DATE": "2026-01-01T00:00:00Z", "GIT_COMMITTER_DATE": "2026-01-01T00:00:00Z"}
    return subprocess.run(["git", "-C", str(root), *args], check=True, capture_output=True,
                          text=True, env=env).stdout


def _members(archive: Path) -> dict[str, bytes]:
    with tarfile.open(archive, "r:gz") as tar:
        return {m.name: tar.extractfile(m).read() for m in tar.getmembers() if m.isfile()}


def test_the_archive_packs_what_git_would_track_from_the_working_tree(tmp_path: Path):
    repo = tmp_path / "repo"
    (repo / "src").mkdir(parents=True)
    (repo / "Makefile").write_text("all:\n")
    (repo / "src" / "lib.py").write_text("x = 1\n")
    (repo / ".gitignore").write_text("_build/\n.venv/\n")
    _git(repo, "init", "-q")
    _git(repo, "add", "-A")
    _git(repo, "commit", "-qm", "first")
    (repo / "_build").mkdir()
    (repo / "_build" / "page.html").write_text("built")
    (repo / ".venv").mkdir()
    (repo / ".venv" / "python").write_text("binary")
    (repo / "src" / "lib.py").write_text("x = 2\n")  # changed, not committed
    (repo / "src" / "new.py").write_text("y = 1\n")  # new, not ignored
    commit = source_archive.write_archive(repo, tmp_path / "out" / "a.tar.gz")
    assert commit.modified and commit.id == _git(repo, "rev-parse", "HEAD").strip()
    files = _members(tmp_path / "out" / "a.tar.gz")
    top = "private-kmeans-reproduced/"
    assert set(files) == {top + n for n in ("SOURCE_COMMIT", ".gitignore", "Makefile",
                                            "src/lib.py", "src/new.py")}
    assert files[top + "src/lib.py"] == b"x = 2\n"
    assert f"commit: {commit.id}" in files[top + "SOURCE_COMMIT"].decode()
    again = source_archive.write_archive(repo, tmp_path / "out" / "b.tar.gz")
    assert again == commit
    assert (tmp_path / "out" / "a.tar.gz").read_bytes() == \
        (tmp_path / "out" / "b.tar.gz").read_bytes()  # reproducible


def test_an_archive_built_from_an_unpacked_archive_keeps_its_commit(tmp_path: Path):
    tree = tmp_path / "private-kmeans-reproduced"
    (tree / "_build").mkdir(parents=True)
    (tree / "_build" / "x.html").write_text("built")
    (tree / "data" / "raw").mkdir(parents=True)
    (tree / "data" / "raw" / "big.csv").write_text("private copy")
    (tree / "Makefile").write_text("all:\n")
    (tree / "SOURCE_COMMIT").write_text("commit: 0123456789abcdef\ntimestamp: 5\nmodified: no\n")
    commit = source_archive.write_archive(tree, tmp_path / "again.tar.gz")
    assert commit == source_archive.Commit("0123456789abcdef", 5, False)
    assert set(_members(tmp_path / "again.tar.gz")) == {
        "private-kmeans-reproduced/SOURCE_COMMIT", "private-kmeans-reproduced/Makefile"}


def _config(url: str = "") -> SimpleNamespace:
    return SimpleNamespace(html_static_path=[], html_theme_options={
        "repository_url": url, "repository_branch": "main", "use_repository_button": False,
        "launch_buttons": {"binderhub_url": "https://mybinder.org",
                           "colab_url": "https://colab.research.google.com",
                           "notebook_interface": "classic"}})


@pytest.mark.parametrize("url, from_env, colab", [
    ("", "", False),
    ("https://github.com/me/book", "", True),
    ("https://github.com/me/book", "https://github.com/me/book/", True),
    ("", "https://github.com/env/book/", False),  # the notebooks install from no repository
    ("https://github.com/me/book", "https://github.com/fork/book", False),
    ("https://gitlab.com/me/book", "", False),  # Colab opens GitHub's notebooks only
])
def test_buttons_only_with_a_repository_and_at_the_built_commit(tmp_path, monkeypatch, url,
                                                                from_env, colab):
    monkeypatch.setenv(REPOSITORY_ENV, from_env)
    (tmp_path / "SOURCE_COMMIT").write_text("commit: feedface\ntimestamp: 1\nmodified: no\n")
    app, config = SimpleNamespace(srcdir=str(tmp_path)), _config(url)
    repository_buttons(app, config)
    options = config.html_theme_options
    wanted = (from_env or url).rstrip("/")
    assert options["repository_url"] == wanted
    assert options["use_repository_button"] is bool(wanted)
    launch = options["launch_buttons"]
    assert bool(launch["binderhub_url"]) is bool(wanted)
    assert bool(launch["colab_url"]) is colab
    if wanted:
        assert options["repository_branch"] == "feedface"
        assert app.reader_launch_branch == "main"  # Colab's notebook and library
    assert config.html_static_path and config.html_static_path[0].endswith("static")


def test_the_student_edition_shows_no_repository(tmp_path, monkeypatch):
    """The repository holds the solutions."""
    monkeypatch.setenv(REPOSITORY_ENV, "https://github.com/me/book")
    app = SimpleNamespace(srcdir=str(tmp_path), config=SimpleNamespace(hide_solutions=True))
    config = _config("https://github.com/me/book")
    repository_buttons(app, config)
    options = config.html_theme_options
    assert not options["repository_url"] and not options["use_repository_button"]
    assert not any(v for k, v in options["launch_buttons"].items() if k.endswith("_url"))


def test_thebe_is_refused(tmp_path, monkeypatch):
    from sphinx.errors import ConfigError

    monkeypatch.setenv(REPOSITORY_ENV, "")
    config = _config()
    config.html_theme_options["launch_buttons"]["thebe"] = True
    with pytest.raises(ConfigError, match="removed cells"):
        repository_buttons(SimpleNamespace(srcdir=str(tmp_path)), config)
