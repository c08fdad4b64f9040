"""The assignment notebook: written from the :class:`~dpkmeans_classroom.spec.Assignment`,
parametrized per student by papermill, and executed again by papermill for grading.

The notebook has a ``parameters`` cell (papermill's tag) with the defaults, the setup cell,
then one markdown prompt and one code cell ``variable = ...`` per question. Papermill injects
each student's parameters after the ``parameters`` cell; at grading it injects them again from
the instructor's key (replacing the injected cell), so a submission is graded on the student's
own parameters whatever its cells say. The grader then appends one cell that writes the
answers' values to a JSON file (:func:`collect_answers`), and runs the notebook in a sandbox
(:mod:`~dpkmeans_classroom.sandbox`, :mod:`~dpkmeans_classroom.runner`).
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from pathlib import Path
from typing import Any

from dpkmeans.errors import DPKMeansError
from dpkmeans_classroom.spec import Assignment, Question

__all__ = ["COLLECTOR_TAG", "MAX_NOTEBOOK_BYTES", "build_notebook", "collect_answers",
           "collector_source", "is_real_number", "model_solution", "parametrize",
           "prepare_submission", "write"]

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


def build_notebook(assignment: Assignment, defaults: Mapping[str, Any],
                   questions: Sequence[Question] | None = None):
    """The assignment's notebook (nbformat v4) with ``defaults`` in its parameters cell, asking
    ``questions`` (default: all of the assignment's), numbered from 1 in the order given."""
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
    for number, question in enumerate(questions or assignment.questions, start=1):
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


#: The largest submission the grader reads (a notebook of text and small figures).
MAX_NOTEBOOK_BYTES = 20 * 2**20


def prepare_submission(raw: bytes, parameters: Mapping[str, Any], variables: Iterable[str],
                       answers_name: str):
    """The notebook the sandbox runs, from a submission's bytes: the student's parameters
    injected by papermill (replacing whatever the submission's injected cell says), and the
    grader's collector cell last, writing the answers to ``answers_name`` in the working
    directory. Returns ``(notebook, None)`` or ``(None, "why it cannot run")``."""
    nbformat, _ = _papermill()
    from papermill.parameterize import parameterize_notebook

    try:
        nb = nbformat.reads(raw.decode("utf-8"), as_version=4)
        nbformat.validate(nb)
    except Exception as exc:  # noqa: BLE001 - any unreadable file is the student's to fix
        why = str(exc).splitlines()[0][:120] if str(exc) else ""
        return None, f"the submission is not a readable notebook ({type(exc).__name__}: {why})"
    for cell in nb.cells:  # papermill reads every cell's tags: a list of names
        tags = cell.metadata.get("tags")
        valid = isinstance(tags, list) and all(isinstance(t, str) for t in tags)
        cell.metadata["tags"] = list(tags) if valid else []
    nb.cells = [c for c in nb.cells if COLLECTOR_TAG not in c.metadata["tags"]]
    if not any("parameters" in c.metadata["tags"] for c in nb.cells):
        return None, "the `parameters` cell is missing (its tag was removed)"
    nb.metadata["kernelspec"] = dict(_KERNEL)
    nb.metadata["papermill"] = nbformat.from_dict({})
    try:
        nb = parameterize_notebook(nb, dict(parameters), report_mode=False)
    except Exception as exc:  # noqa: BLE001 - a malformed cell is the student's to fix
        return None, f"its parameters cannot be injected ({type(exc).__name__})"
    nb.cells.append(nbformat.v4.new_code_cell(collector_source(list(variables), answers_name),
                                              metadata={"tags": [COLLECTOR_TAG]}))
    return nb, None


def collector_source(variables: list[str], answers_name: str) -> str:
    """The grader's last cell: :func:`collect_answers` and its one call (no library import:
    the assignments' modules are out of the kernel's reach)."""
    import inspect

    functions = "\n".join(inspect.getsource(f) for f in (is_real_number, collect_answers))
    return (f"from __future__ import annotations\n\n{functions}\n"
            f"collect_answers(globals(), {variables!r}, {answers_name!r})")


def is_real_number(value: Any) -> bool:
    """True for int, float and numpy real scalars (and 0-d real arrays), not for bool."""
    import numbers

    try:
        import numpy as np
    except ImportError:  # pragma: no cover - the kernel has numpy
        return isinstance(value, numbers.Real) and not isinstance(value, bool)
    if isinstance(value, np.ndarray) and value.ndim == 0:
        value = value[()]
    return isinstance(value, numbers.Real) and not isinstance(value, bool | np.bool_)


def collect_answers(namespace: Mapping[str, Any], variables: Iterable[str], path: str) -> None:
    """Write each variable's value (if a real number) with its type and a short repr to JSON;
    run by the grader's last cell inside the student's kernel."""
    import json
    from pathlib import Path

    answers = {}
    for name in variables:
        present = name in namespace
        value = namespace.get(name)
        try:  # a value of the student's own type may fail to convert or to print
            number = float(value) if present and is_real_number(value) else None
            shown = str(repr(value))[:80]
        except Exception:  # noqa: BLE001 - reported as a value that is not a number
            number, shown = None, "<a value that cannot be shown>"
        answers[name] = {
            "present": present,
            "ellipsis": value is Ellipsis,
            "value": number,  # NaN and inf stay (JSON allow_nan) and are marked as such
            "type": str(type(value).__name__)[:40],
            "repr": shown,
        }
    # whole or not at all: the grader may stop the notebook while this runs
    Path(f"{path}.part").write_text(json.dumps(answers, allow_nan=True))
    Path(f"{path}.part").replace(path)
