"""What an assignment is: its per-student parameters, its questions and how an answer is marked.

An :class:`Assignment` belongs to a chapter of the book. Each student gets their own
parameters (a seed, a dataset, an epsilon, ...) drawn from the assignment's pools by a seed
that hashes the course seed and the student's id, so the same roster and course seed always
give the same assignments. Each :class:`Question` names the variable the student sets and
computes its reference answer with the library, for that student's parameters.
"""

from __future__ import annotations

import math
import numbers
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from dpkmeans.sweep import cell_seed

__all__ = ["Assignment", "Mark", "Question", "mark_answer", "student_parameters"]

#: How the submitted value of a question arrives from the executed notebook (see
#: :func:`dpkmeans.assignments.notebook.collect_answers`): present, the value if it is a real
#: number, and its type and short repr for feedback.
Answer = Mapping[str, Any]


@dataclass(frozen=True)
class Question:
    """One auto-marked question: the student sets ``variable`` to a number.

    ``reference(parameters, context)`` computes the answer with the library; ``context`` holds
    what the assignment's ``prepare`` computed once for that student (the data, a fitted model).
    An answer is right when ``|value - reference| <= atol + rtol |reference|``. ``hint`` is the
    feedback for a wrong answer: it says where to look, never the answer.
    """

    variable: str
    prompt: str
    reference: Callable[[Mapping[str, Any], Mapping[str, Any]], float]
    hint: str
    points: float = 1.0
    rtol: float = 1e-6
    atol: float = 0.0

    def __post_init__(self) -> None:
        if not self.variable.isidentifier():
            raise ValueError(f"question variable must be a Python name, got {self.variable!r}")
        if self.points <= 0 or self.rtol < 0 or self.atol < 0:
            raise ValueError(f"question {self.variable}: points > 0 and tolerances >= 0 needed")


@dataclass(frozen=True)
class Assignment:
    """A chapter's assignment: parameter pools, the notebook's text and code, its questions.

    ``pools`` maps each drawn parameter to its choices; ``fixed`` are the same for everyone.
    ``setup`` is the code cell that follows the parameters cell (imports, the student's data);
    ``prepare(parameters)`` computes, once per student, what the references share.
    """

    chapter: int
    slug: str
    title: str
    introduction: str
    pools: Mapping[str, Sequence[Any]]
    setup: str
    questions: tuple[Question, ...]
    prepare: Callable[[Mapping[str, Any]], Mapping[str, Any]]
    fixed: Mapping[str, Any] = field(default_factory=dict)

    def __post_init__(self) -> None:
        names = [q.variable for q in self.questions]
        if len(set(names)) != len(names):
            raise ValueError(f"chapter {self.chapter}: two questions set the same variable")
        clash = set(names) & (set(self.pools) | set(self.fixed) | {"STUDENT", "SEED"})
        if clash:
            raise ValueError(f"chapter {self.chapter}: {sorted(clash)} is a parameter and an answer")

    @property
    def max_points(self) -> float:
        return float(sum(q.points for q in self.questions))

    def references(self, parameters: Mapping[str, Any]) -> dict[str, float]:
        """Every question's reference answer for one student's parameters."""
        context = self.prepare(parameters)
        return {q.variable: float(q.reference(parameters, context)) for q in self.questions}


def student_parameters(assignment: Assignment, course_seed: int, student_id: str) -> dict[str, Any]:
    """The papermill parameters of one student: ``STUDENT``, ``SEED`` and one draw from each
    pool, all from a seed hashed from the course seed, the chapter and the student id (stable:
    adding a student to the roster changes nobody else's parameters)."""
    seed = cell_seed(course_seed, {"chapter": assignment.chapter, "student": student_id})
    rng = np.random.default_rng(seed)
    drawn = {name: _plain(choices[int(rng.integers(len(choices)))])
             for name, choices in assignment.pools.items()}
    return {"STUDENT": student_id, "SEED": int(seed % 2**31), **dict(assignment.fixed), **drawn}


def _plain(value: Any) -> Any:
    """A pool value as a plain Python scalar (papermill writes parameters as literals)."""
    return value.item() if isinstance(value, np.generic) else value


@dataclass(frozen=True)
class Mark:
    """The mark of one answer: points out of ``out_of`` and the feedback line."""

    points: float
    out_of: float
    feedback: str


def mark_answer(question: Question, answer: Answer | None, reference: float, *,
                error: str | None = None) -> Mark:
    """Mark one submitted answer against its reference (see :class:`Question`); ``error`` is
    the notebook's first error, if any, named when the answer is missing."""
    name = question.variable
    if answer is None or not answer.get("present", False):
        why = f" (the notebook raised {error})" if error else ""
        return Mark(0.0, question.points, f"no answer: `{name}` is not set{why}")
    value = answer.get("value")
    if answer.get("ellipsis"):
        return Mark(0.0, question.points, f"no answer: `{name}` is still `...`")
    if value is None:
        return Mark(0.0, question.points,
                    f"`{name}` must be a number, got {answer.get('type', '?')}: {answer.get('repr', '')}")
    if not math.isfinite(value):
        return Mark(0.0, question.points, f"`{name}` is {value}, not a finite number")
    if abs(value - reference) <= question.atol + question.rtol * abs(reference):
        return Mark(question.points, question.points, "correct")
    return Mark(0.0, question.points, f"`{name}` = {value:.6g} is not right. {question.hint}")


def is_real_number(value: Any) -> bool:
    """True for int, float and numpy real scalars (and 0-d real arrays), not for bool."""
    if isinstance(value, np.ndarray) and value.ndim == 0:
        value = value[()]
    return isinstance(value, numbers.Real) and not isinstance(value, bool | np.bool_)
