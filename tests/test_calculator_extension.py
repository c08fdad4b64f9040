"""The plan calculator's Sphinx extension (book/_ext/calculator.py), in a small build with the
extension alone: the model lands in ``_static/`` as ``export_model`` writes it, and as a script
that assigns the same JSON; the page that holds the calculator gets its form, its scripts and
its note for paper, a page without one gets none of them; a builder that is not HTML gets the
note alone; and results that cannot be read stop the build with an error naming them."""

from __future__ import annotations

import io
import json
import re
import shutil
import sys
from pathlib import Path

import pytest

from dpkmeans.synthesis import recommend as rec

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "book" / "_ext"))
import calculator  # noqa: E402

RESULTS = ROOT / "data" / "results"


def _source(tmp_path: Path, *, results: bool = True) -> Path:
    """A book of two pages, one with the calculator, and the committed results it reads."""
    source = tmp_path / "src"
    (source / "data" / "results").mkdir(parents=True)
    if results:
        for stem in rec.SOURCES:
            shutil.copy(RESULTS / f"{stem}.csv", source / "data" / "results")
    (source / "index.rst").write_text("Book\n====\n\n.. toctree::\n\n   calc\n   plain\n")
    (source / "calc.rst").write_text("Calculator\n==========\n\n.. plan-calculator::\n")
    (source / "plain.rst").write_text("Plain\n=====\n\nNo calculator here.\n")
    return source


def _build(source: Path, out: Path, builder: str) -> str:
    """Build ``source`` into ``out``; the warnings."""
    from sphinx.application import Sphinx
    from sphinx.util.docutils import docutils_namespace

    warnings = io.StringIO()
    with docutils_namespace():  # one build's roles and nodes, as sphinx.testing does
        app = Sphinx(str(source), None, str(out), str(out.parent / f"{out.name}-doctrees"),
                     builder, confoverrides={"extensions": ["calculator"]}, status=None,
                     warning=warnings, freshenv=True)
        app.build()
    return warnings.getvalue()


@pytest.fixture(scope="module")
def html(tmp_path_factory) -> Path:
    tmp = tmp_path_factory.mktemp("calculator")
    out = tmp / "html"
    warnings = _build(_source(tmp), out, "html")
    assert not warnings, warnings
    return out


def _scripts(page: Path) -> list[str]:
    """The page's scripts, without their checksums."""
    return re.findall(r'<script src="([^"?]+)', page.read_text(encoding="utf-8"))


def test_the_model_lands_in_static_as_export_model_writes_it(html, tmp_path):
    written = (html / "_static" / calculator.MODEL_JSON).read_text(encoding="utf-8")
    expected = rec.export_model(tmp_path / "model.json").read_text(encoding="utf-8")
    assert written == expected
    script = (html / "_static" / calculator.MODEL_JS).read_text(encoding="utf-8")
    prefix = f"window.{calculator.MODEL_GLOBAL} = "
    assert script.startswith(prefix) and script.endswith(";\n")
    assert json.loads(script[len(prefix):-2]) == json.loads(expected)
    for name in (calculator.SCRIPT, calculator.STYLE):
        assert (html / "_static" / name).is_file(), name


def test_only_the_page_with_the_calculator_loads_it(html):
    page = (html / "calc.html").read_text(encoding="utf-8")
    assert 'class="plan-calculator-form"' in page and 'name="neighbour"' in page
    assert calculator.PRINT_NOTE in page and calculator.SCREEN in page
    for relation in rec.RELATIONS:
        assert f'<option value="{relation}">' in page
    scripts = _scripts(html / "calc.html")
    model = scripts.index(f"_static/{calculator.MODEL_JS}")
    assert model < scripts.index(f"_static/{calculator.SCRIPT}")  # the model first
    assert f"_static/{calculator.STYLE}" in page
    plain = (html / "plain.html").read_text(encoding="utf-8")
    assert "plan_calculator" not in plain and "plan-calculator" not in plain


def test_the_single_page_build_carries_the_calculator_and_its_model(tmp_path):
    out = tmp_path / "singlehtml"
    warnings = _build(_source(tmp_path), out, "singlehtml")
    assert not warnings, warnings
    assert f"_static/{calculator.MODEL_JS}" in _scripts(out / "index.html")
    assert (out / "_static" / calculator.MODEL_JSON).is_file()


def test_a_builder_that_is_not_html_gets_the_note_alone(tmp_path):
    out = tmp_path / "text"
    warnings = _build(_source(tmp_path), out, "text")
    assert not warnings, warnings
    text = (out / "calc.txt").read_text(encoding="utf-8")
    assert "plan calculator runs in the HTML book" in text and "<form" not in text
    assert not (out / "_static").exists()


def test_results_that_cannot_be_read_stop_the_build(tmp_path):
    from sphinx.errors import ExtensionError

    with pytest.raises(ExtensionError, match="plan calculator's model could not be written "
                                             "from .*data/results"):
        _build(_source(tmp_path, results=False), tmp_path / "html", "html")
