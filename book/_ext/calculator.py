"""The plan calculator of the synthesis chapter: the algorithm the book's results favour at a
reader's public (N, d, k, epsilon, delta) and neighbour relation, with its predicted relative
objective and interval, worked out in the reader's browser, offline, without a kernel.

* The directive ``{plan-calculator}`` writes the form and the place of its answer (HTML
  builders) and a one-line note for paper: the printed book hides the form (``print.css``)
  and prints the note, which the screen does not show (``static/plan_calculator.css``).
* Every HTML build (``html``, the ``singlehtml`` page the PDF is printed from, the student
  edition) writes the model, :func:`dpkmeans.synthesis.recommend.export_model` fitted to the
  committed results of the book being built (``data/results``), into ``_static/`` as
  :data:`MODEL_JSON`, and the same text as a script that assigns it to a global,
  :data:`MODEL_JS`: a page opened from ``file://`` may not fetch a file beside it (Chromium
  refuses), but it loads a script, offline and over HTTP alike.
* The pages that hold a calculator load that script, ``static/plan_calculator.js`` (the
  evaluation the module docstring of :mod:`dpkmeans.synthesis.recommend` gives, which
  tests/synthesis/test_recommend.py holds to ``recommend``'s numbers) and
  ``static/plan_calculator.css``; no other page does.

tests/browser/test_calculator.py uses the built page in Chromium and compares its answers with
``recommend``'s; tests/test_calculator_extension.py builds a page with this extension alone.
"""

from __future__ import annotations

import html
import json
from pathlib import Path
from typing import Any

from docutils import nodes
from sphinx.application import Sphinx
from sphinx.errors import ExtensionError
from sphinx.util.docutils import SphinxDirective

#: The model, as :func:`dpkmeans.synthesis.recommend.export_model` writes it, in ``_static/``.
MODEL_JSON = "plan_calculator_model.json"
#: The same model as a script: ``window.dpkmeansPlanModel = <the JSON>;``.
MODEL_JS = "plan_calculator_model.js"
#: The global the model script sets and the calculator reads.
MODEL_GLOBAL = "dpkmeansPlanModel"
#: The calculator's script and style (``static/`` beside this file).
SCRIPT = "plan_calculator.js"
STYLE = "plan_calculator.css"
#: The class of the directive's container: the pages that hold one get the scripts.
CLASS = "plan-calculator"
#: The class of what only a screen shows (the form and its answer; print.css hides it).
SCREEN = "plan-calculator-screen"
#: What the printed book says instead of the form.
PRINT_NOTE = ("The plan calculator runs in the HTML book: open this section there to use it, "
              "in any browser, offline.")
#: The request the form starts with.
DEFAULTS = {"N": "10000", "d": "10", "k": "5", "epsilon": "1", "delta": "1e-6"}
#: How each neighbour relation is offered.
RELATION_TEXT = {"add/remove": "add/remove a record", "replace": "replace a record"}


def _field(name: str, label: str, hint: str, mode: str) -> str:
    return (f'<label class="plan-calculator-field"><span>{label}</span>'
            f'<input name="{name}" type="text" inputmode="{mode}" autocomplete="off" '
            f'spellcheck="false" value="{html.escape(DEFAULTS[name])}">'
            f"<small>{hint}</small></label>")


def form_html(relations: tuple[str, ...]) -> str:
    """The calculator's form and the place of its answer, as HTML (the script fills in the
    answer; without JavaScript the page says what to run instead)."""
    options = "".join(f'<option value="{html.escape(r)}">{html.escape(RELATION_TEXT.get(r, r))}'
                      "</option>" for r in relations)
    fields = "".join((
        _field("N", "Records <var>N</var>", "a whole number", "numeric"),
        _field("d", "Features <var>d</var>", "a whole number", "numeric"),
        _field("k", "Clusters <var>k</var>", "at most <var>N</var>", "numeric"),
        _field("epsilon", "Budget <var>ε</var>", "above 0", "decimal"),
    ))
    delta = (
        '<fieldset class="plan-calculator-delta"><legend>δ</legend>'
        '<label><input type="radio" name="delta-choice" value="zero" checked> '
        "0 (pure <var>ε</var>-DP)</label>"
        '<label><input type="radio" name="delta-choice" value="value"> a value: '
        f'<input name="delta" type="text" inputmode="decimal" autocomplete="off" '
        f'spellcheck="false" value="{html.escape(DEFAULTS["delta"])}" '
        'aria-label="δ, a number in [0, 1)"></label></fieldset>')
    relation = ('<label class="plan-calculator-field plan-calculator-relation">'
                f'<span>Neighbour relation</span><select name="neighbour">{options}</select>'
                "</label>")
    return (
        f'<div class="{SCREEN}">'
        '<form class="plan-calculator-form" novalidate>'
        f'<div class="plan-calculator-fields">{fields}</div>{delta}{relation}'
        '<button type="submit">Recommend</button></form>'
        '<div class="plan-calculator-result" aria-live="polite">'
        '<p class="plan-calculator-wait">The calculator starts when the page has loaded.</p>'
        "</div>"
        '<noscript><p class="plan-calculator-error">The calculator needs JavaScript. '
        "Without it, <code>python -m dpkmeans plan</code> gives the same answer.</p>"
        "</noscript></div>")


class PlanCalculator(SphinxDirective):
    """``{plan-calculator}``: the form, its answer's place and the printed book's note."""

    has_content = False

    def run(self) -> list[nodes.Node]:
        from dpkmeans.synthesis.recommend import RELATIONS

        box = nodes.container(classes=[CLASS])
        box += nodes.raw("", form_html(tuple(RELATIONS)), format="html")
        box += nodes.paragraph(text=PRINT_NOTE, classes=["plan-calculator-print"])
        return [box]


def _has_calculator(doctree: nodes.Node | None) -> bool:
    return doctree is not None and any(
        CLASS in node["classes"] for node in doctree.findall(nodes.container))


def add_scripts(app: Sphinx, pagename: str, templatename: str, context: dict[str, Any],
                doctree: nodes.Node | None) -> None:
    """The model, the calculator's script and its style, on the pages that hold one."""
    if _has_calculator(doctree):
        app.add_js_file(MODEL_JS)
        app.add_js_file(SCRIPT)
        app.add_css_file(STYLE)


def static_folder(app: Sphinx, config: Any) -> None:
    """``static/`` beside this file is one of the build's static folders."""
    static = str(Path(__file__).resolve().parent / "static")
    if static not in config.html_static_path:
        config.html_static_path.append(static)


def results_folder(app: Sphinx) -> Path:
    """The committed results of the book being built (its source is the repository)."""
    return Path(app.srcdir) / "data" / "results"


def model_script(text: str) -> str:
    """The model's JSON as a script that assigns it to :data:`MODEL_GLOBAL`."""
    return f"window.{MODEL_GLOBAL} = {text.strip()};\n"


def write_model(app: Sphinx) -> None:
    """Before an HTML build writes its pages: the model, fitted to the book's committed
    results, into ``_static/`` as :data:`MODEL_JSON` and :data:`MODEL_JS` (there when the pages
    are written, so that their links to the script carry its checksum, as the other scripts'
    do, and a reader's browser never keeps a stale model)."""
    if app.builder.format != "html":
        return
    from dpkmeans.synthesis.recommend import evidence, export_model

    static = Path(app.outdir) / "_static"
    static.mkdir(parents=True, exist_ok=True)
    try:
        path = export_model(static / MODEL_JSON, evidence(results_folder(app)))
    except (OSError, ValueError) as problem:
        raise ExtensionError(f"the plan calculator's model could not be written from "
                             f"{results_folder(app)}: {problem}") from problem
    text = path.read_text(encoding="utf-8")
    json.loads(text)  # the script below must be the JSON, whole
    (static / MODEL_JS).write_text(model_script(text), encoding="utf-8")


def setup(app: Sphinx) -> dict[str, Any]:
    app.add_directive("plan-calculator", PlanCalculator)
    app.connect("config-inited", static_folder)
    app.connect("html-page-context", add_scripts)
    app.connect("builder-inited", write_model)
    return {"version": "1.0", "parallel_read_safe": True, "parallel_write_safe": True}
