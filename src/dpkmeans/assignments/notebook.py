"""The assignment notebook: written from the :class:`~dpkmeans.assignments.spec.Assignment`,
parametrized per student by papermill, and executed again by papermill for grading.

The notebook has a ``parameters`` cell (papermill's tag) with the defaults, the setup cell,
then one markdown prompt and one code cell ``variable = ...`` per question. Papermill injects
each student's parameters after the ``parameters`` cell; at grading it injects them again from
the instructor's key (replacing the injected cell), so a submission is graded on the student's
own parameters whatever its cells say. The grader then appends one cell that writes the
answers' values to a JSON file (:func:`collect_answers`).
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Mapping
from pathlib import Path
from typing import Any

from dpkmeans.assignments.spec import Assignment, is_real_number
from dpkmeans.errors import DPKMeansError

__all__ = ["COLLECTOR_TAG", "build_notebook", "collect_answers", "execute", "model_solution",
           "parametrize", "write"]

#: Tag of the cell the grader appends (it is never in a student's notebook).
COLLECTOR_TAG = "dpkmeans-collect-answers"

_KERNEL = {"display_name": "Python 3", "language": "python", "name": "python3"}


def _papermill():
    try:
        import nbformat
        import papermill
    except ImportError as exc:  # pragma: no cover - the book extra is installed in the project
        raise DPKMeansError("assignments need papermill and nbformat: "
                            "pip install 'dpkmeans[book]'") from exc
    return nbformat, papermill


def build_notebook(assignment: Assignment, defaults: Mapping[str, Any]):
    """The assignment's notebook (nbformat v4) with ``defaults`` in its parameters cell."""
    nbformat, _ = _papermill()
    v4 = nbformat.v4
    parameters = "\n".join(f"{name} = {value!r}" for name, value in defaults.items())
    cells = [
        v4.new_markdown_cell(f"# Assignment: {assignment.title}\n\n{assignment.introduction}"),
        v4.new_markdown_cell(
            "Your parameters are in the cell below the next one (*injected parameters*). "
            "Do not change them: your notebook is graded with the parameters you were given."),
        v4.new_code_cell(parameters, metadata={"tags": ["parameters"]}),
        v4.new_code_cell(assignment.setup),
    ]
    for number, question in enumerate(assignment.questions, start=1):
        cells.append(v4.new_markdown_cell(
            f"## Question {number} ({question.points:g} point{'s' if question.points != 1 else ''})"
            f"\n\n{question.prompt_text()}"))
        cells.append(v4.new_code_cell(f"{question.variable} = ...  # your answer"))
    nb = v4.new_notebook(cells=cells)
    nb.metadata["kernelspec"] = dict(_KERNEL)
    nb.metadata["dpkmeans_assignment"] = {"chapter": assignment.chapter, "slug": assignment.slug}
    return nb


def model_solution(assignment: Assignment, handout):
    """A copy of a student's handed-out notebook with every answer cell replaced by the
    question's model solution (the tests grade it and expect full marks)."""
    import copy

    solved = copy.deepcopy(handout)
    solutions = {f"{q.variable} = ...": q.solution for q in assignment.questions}
    for cell in solved.cells:
        for start, solution in solutions.items():
            if cell.cell_type == "code" and cell.source.startswith(start):
                cell.source = solution
    return solved


def write(nb, path: Path) -> None:
    """Write a notebook to ``path``."""
    nbformat, _ = _papermill()
    nbformat.write(nb, str(path))


def parametrize(template: Path, output: Path, parameters: Mapping[str, Any]) -> None:
    """Write ``template`` with one student's ``parameters`` injected (papermill, not executed)."""
    _, papermill = _papermill()
    papermill.execute_notebook(str(template), str(output), parameters=dict(parameters),
                               prepare_only=True, kernel_name="python3", progress_bar=False)


def execute(submission: Path, output: Path, parameters: Mapping[str, Any],
            variables: Iterable[str], answers_path: Path, *, timeout: float) -> str | None:
    """Run a submission with papermill on ``parameters`` and write its answers to
    ``answers_path``. Every cell runs, even after one fails, so that later answers still count.
    Returns None, or the first error as one line ("cell 7: NameError: ...")."""
    nbformat, papermill = _papermill()
    try:
        nb = nbformat.read(str(submission), as_version=4)
    except Exception as exc:  # noqa: BLE001 - any unreadable file is the student's to fix
        return f"the submission is not a readable notebook ({type(exc).__name__}: {exc})"
    nb.cells = [c for c in nb.cells if COLLECTOR_TAG not in c.get("metadata", {}).get("tags", [])]
    if not any("parameters" in c.get("metadata", {}).get("tags", []) for c in nb.cells):
        return "the `parameters` cell is missing (its tag was removed)"
    nb.cells.append(nbformat.v4.new_code_cell(
        "from dpkmeans.assignments.notebook import collect_answers as _collect\n"
        f"_collect(globals(), {list(variables)!r}, {str(answers_path)!r})",
        metadata={"tags": [COLLECTOR_TAG]}))
    prepared = output.with_suffix(".prepared.ipynb")
    nbformat.write(nb, str(prepared))
    try:
        papermill.execute_notebook(str(prepared), str(output), parameters=dict(parameters),
                                   kernel_name="python3", progress_bar=False,
                                   cwd=str(submission.parent), allow_errors=True,
                                   execution_timeout=timeout)
    except papermill.PapermillExecutionError as exc:
        return f"cell {exc.exec_count}: {exc.ename}: {exc.evalue}".strip()
    except Exception as exc:  # noqa: BLE001 - a timeout or a dead kernel is the submission's
        return f"{type(exc).__name__}: {str(exc).splitlines()[0] if str(exc) else ''}"
    finally:
        prepared.unlink(missing_ok=True)
    return None


def collect_answers(namespace: Mapping[str, Any], variables: Iterable[str], path: str) -> None:
    """Write each variable's value (if a real number) with its type and a short repr to JSON;
    run by the grader's last cell inside the student's kernel."""
    answers = {}
    for name in variables:
        present = name in namespace
        value = namespace.get(name)
        number = float(value) if present and is_real_number(value) else None
        answers[name] = {
            "present": present,
            "ellipsis": value is Ellipsis,
            "value": number,  # NaN and inf stay (JSON allow_nan) and are marked as such
            "type": type(value).__name__,
            "repr": repr(value)[:80],
        }
    Path(path).write_text(json.dumps(answers, allow_nan=True))
