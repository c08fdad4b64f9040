"""The Execution status page's table: every notebook page of the book, when its outputs were
computed, how long its cells ran and whether every cell ran cleanly, in every kind of build.

myst-nb's own ``{nb-exec-table}`` lists only what the build itself executed (or took from its
execution cache): a build from the notebooks' stored outputs (``make book
BOOK_OUTPUTS=stored``, which ``make test`` and the PDF use) executes nothing, and its table
was a header row alone. The ``{execution-status}`` directive lists every notebook page
instead, one row each:

* when the build executed the notebook, or took it from the execution cache: myst-nb's
  record of that execution (its time, run time and success);
* when it shows the outputs stored in the notebook (execution ``off``): the record nbclient
  writes into every code cell it runs (``metadata.execution``, the times each cell started
  and finished), read from the ``.ipynb``; the run time is the first cell's start to the last
  cell's end, and the run is complete when every code cell holds that record and an
  execution count, in order, and no cell's output is an error.

A paragraph before the table says which of the two the build did. The page is read again in
every build, so that its table never lags behind a notebook that changed.
"""

from __future__ import annotations

import json
import posixpath
from dataclasses import dataclass
from datetime import datetime, timezone
from pathlib import Path
from typing import Any

from docutils import nodes
from sphinx.addnodes import pending_xref
from sphinx.transforms.post_transforms import SphinxPostTransform
from sphinx.util.docutils import SphinxDirective

#: The table's columns.
HEADER = ("Page", "Outputs computed (UTC)", "Cells' run time (s)", "Status", "Outputs from")

#: The outputs' origin, as the last column says it.
FROM_STORED = "the notebook's stored outputs"
FROM_BUILD = {"cache": "this build's execution (or its execution cache)",
              "other": "this build's execution"}


@dataclass(frozen=True)
class Run:
    """One notebook's execution, as the table shows it.

    Attributes
    ----------
    when : datetime or None
        When its outputs were computed (UTC), None when nothing records it.
    seconds : float or None
        How long its cells ran, None when nothing records it.
    status : str
        ``"complete"`` (every cell ran, none failed), ``"failed"`` or ``"incomplete"``.
    origin : str
        Where the outputs come from (:data:`FROM_STORED` or one of :data:`FROM_BUILD`).
    """

    when: datetime | None
    seconds: float | None
    status: str
    origin: str


def _timestamp(text: str | None) -> datetime | None:
    """An ISO time as nbclient writes it (``2026-11-27T00:56:08.885635Z``), in UTC."""
    if not text:
        return None
    return datetime.fromisoformat(text.replace("Z", "+00:00")).astimezone(timezone.utc)


def stored_run(notebook: dict[str, Any]) -> Run:
    """The execution recorded in a notebook's stored outputs (a parsed ``.ipynb``).

    Parameters
    ----------
    notebook : dict
        The notebook, as ``json.load`` reads it.

    Returns
    -------
    Run
        Its start-to-end run time and end time from the code cells' ``metadata.execution``,
        and ``"failed"`` if an output is an error, ``"incomplete"`` if a non-empty code cell
        has no execution record or count, or the counts are out of order.
    """
    cells = [c for c in notebook.get("cells", []) if c.get("cell_type") == "code"
             and "".join(c.get("source", "")).strip()]
    records = [c.get("metadata", {}).get("execution", {}) for c in cells]
    starts = [_timestamp(r.get("iopub.execute_input") or r.get("iopub.status.busy"))
              for r in records]
    ends = [_timestamp(r.get("shell.execute_reply") or r.get("iopub.status.idle"))
            for r in records]
    counts = [c.get("execution_count") for c in cells]
    failed = any(o.get("output_type") == "error" for c in cells for o in c.get("outputs", []))
    ordered = all(isinstance(n, int) for n in counts) and counts == sorted(set(counts))
    complete = ordered and all(starts) and all(ends)
    begin = min((s for s in starts if s), default=None)
    end = max((e for e in ends if e), default=None)
    seconds = (end - begin).total_seconds() if begin and end else None
    status = "failed" if failed else "complete" if complete else "incomplete"
    return Run(end, seconds, status, FROM_STORED)


def build_run(data: dict[str, Any], mode: str) -> Run:
    """The execution myst-nb recorded for a notebook in this build (its ``exec_data``)."""
    when = datetime.fromtimestamp(data["mtime"], tz=timezone.utc) if data.get("mtime") else None
    origin = FROM_BUILD["cache" if mode == "cache" else "other"]
    return Run(when, data.get("runtime"), "complete" if data.get("succeeded") else "failed",
               origin)


class ExecutionStatusNode(nodes.General, nodes.Element):
    """Where the table goes; filled in once every page has been read."""


class ExecutionStatus(SphinxDirective):
    """``{execution-status}``: the table of every notebook page's execution."""

    has_content = False

    def run(self) -> list[nodes.Node]:
        return [ExecutionStatusNode(docname=self.env.docname)]


def notebook_pages(env: Any) -> list[tuple[str, Path]]:
    """Every page of the book made from a notebook: its docname and its ``.ipynb``, in
    docname order."""
    pages = []
    for docname in sorted(env.found_docs):
        path = Path(env.doc2path(docname))
        if path.suffix == ".ipynb":
            pages.append((docname, path))
    return pages


def page_run(env: Any, docname: str, path: Path) -> Run:
    """This build's record of the page's execution, or else its stored outputs' record."""
    from myst_nb.sphinx_ import NbMetadataCollector

    data = NbMetadataCollector.get_doc_data(env).get(docname, {}).get("exec_data")
    if data:
        return build_run(data, env.config.nb_execution_mode)
    return stored_run(json.loads(path.read_text(encoding="utf-8")))


def _row(cells: list[nodes.Node | str]) -> nodes.row:
    row = nodes.row()
    for cell in cells:
        paragraph = nodes.paragraph()
        paragraph += cell if isinstance(cell, nodes.Node) else nodes.Text(cell)
        row += nodes.entry("", paragraph)
    return row


def _link(parent: str, docname: str) -> pending_xref:
    link = pending_xref(refdoc=parent, reftarget="/" + docname, reftype="doc",
                        refdomain="std", refexplicit=False, refwarn=True)
    link += nodes.literal(text=posixpath.basename(docname))
    return link


def status_table(env: Any, parent: str) -> nodes.table:
    """The table: one row per notebook page (:func:`notebook_pages`)."""
    table = nodes.table(classes=["execution-status", "reading-table"])
    group = nodes.tgroup(cols=len(HEADER))
    table += group
    group += [nodes.colspec(colwidth=1) for _ in HEADER]
    head = nodes.thead()
    head += _row(list(HEADER))
    body = nodes.tbody()
    group += [head, body]
    for docname, path in notebook_pages(env):
        run = page_run(env, docname, path)
        body += _row([_link(parent, docname),
                      run.when.strftime("%Y-%m-%d %H:%M") if run.when else "not recorded",
                      f"{run.seconds:.1f}" if run.seconds is not None else "not recorded",
                      run.status, run.origin])
    return table


def explanation(env: Any) -> nodes.paragraph:
    """A paragraph on where this build's outputs come from."""
    paragraph = nodes.paragraph()
    if env.config.nb_execution_mode != "off":
        paragraph += nodes.Text(
            "This build executed the notebooks (or took a notebook's outputs from its "
            "execution cache, when its cells and the code it reads are unchanged): the times "
            "are those of that execution.")
        return paragraph
    paragraph += nodes.Text(
        "This build executed no notebook: every page shows the outputs stored in its "
        "notebook. The times are those of the execution that stored them, read from the "
        "notebook (each code cell records when it started and finished). ")
    paragraph += nodes.literal(text="make test")
    paragraph += nodes.Text(
        " first executes every notebook again and checks with nbval that it prints exactly "
        "these outputs, then builds the book from them.")
    return paragraph


class ExecutionStatusTransform(SphinxPostTransform):
    """Replace each :class:`ExecutionStatusNode` by the explanation and the table."""

    default_priority = 8  # before the references are resolved

    def run(self, **kwargs: Any) -> None:
        for node in list(self.document.findall(ExecutionStatusNode)):
            parent = node.get("docname") or self.env.docname
            node.replace_self([explanation(self.env), status_table(self.env, parent)])


def always_outdated(app: Any, env: Any, added: set, changed: set, removed: set) -> list[str]:
    """The pages with the table are read again in every build."""
    sources = ((doc, Path(env.doc2path(doc))) for doc in env.found_docs)
    return [doc for doc, path in sources
            if path.suffix == ".md" and "{execution-status}" in path.read_text(encoding="utf-8")]


def setup(app: Any) -> dict[str, Any]:
    app.add_node(ExecutionStatusNode)
    app.add_directive("execution-status", ExecutionStatus)
    app.add_post_transform(ExecutionStatusTransform)
    app.connect("env-get-outdated", always_outdated)
    return {"parallel_read_safe": True, "parallel_write_safe": True}
