"""What an assignment is: its per-student parameters, its questions and how an answer is marked.

An :class:`Assignment` belongs to a chapter of the book. Each student gets their own
parameters (a seed, a dataset, an epsilon, ...) drawn from the assignment's pools by a seed
that hashes the course seed and the student's id, so the same roster and course seed always
give the same assignments. Each :class:`Question` names the variable the student sets and
computes its reference answer with the library, for that student's parameters.
"""

from __future__ import annotations

import contextlib
import io
import math
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from dpkmeans.study.sweep import cell_seed

__all__ = ["Assignment", "Mark", "Question", "mark_answer", "run_setup", "student_parameters",
           "student_questions"]

#: How the submitted value of a question arrives from the executed notebook (see
#: :func:`dpkmeans_classroom.notebook.collect_answers`): present, the value if it is a real
#: number, and its type and short repr for feedback.
Answer = Mapping[str, Any]


@dataclass(frozen=True)
class Question:
    """One auto-marked question: the student sets ``variable`` to a number.

    ``reference(parameters, context)`` computes the answer with the library; ``context`` holds
    what the assignment's ``prepare`` computed once for that student (the data, a fitted model).
    A numeric answer is right when ``|value - reference| <= atol + rtol |reference|``; an
    option number must equal the reference.

    With ``choices`` the question is multiple choice: the notebook lists the options numbered
    from 1, the student sets ``variable`` to the number of their choice, and ``reference``
    returns the number of the right option (it may depend on the student's parameters).

    ``hint`` is the feedback for a wrong answer: it says where to look, never the answer.
    ``solution`` is the model solution's code for the question's cell (it may use the setup
    cell's names); the tests grade it and expect full marks.
    """

    variable: str
    prompt: str
    reference: Callable[[Mapping[str, Any], Mapping[str, Any]], float]
    hint: str
    points: float = 1.0
    rtol: float = 1e-6
    atol: float = 0.0
    choices: tuple[str, ...] = ()
    solution: str = ""

    def __post_init__(self) -> None:
        if not self.variable.isidentifier() or self.variable.startswith("_"):
            raise ValueError(f"question variable must be a public Python name, got "
                             f"{self.variable!r}")
        if self.points <= 0 or self.rtol < 0 or self.atol < 0:
            raise ValueError(f"question {self.variable}: points > 0 and tolerances >= 0 needed")
        if self.choices and len(self.choices) < 2:
            raise ValueError(f"question {self.variable}: a multiple-choice question needs at "
                             "least two choices")
        if not self.solution.strip():
            raise ValueError(f"question {self.variable}: a model solution is needed")

    @property
    def kind(self) -> str:
        """``"choice"`` for multiple choice, else ``"number"``."""
        return "choice" if self.choices else "number"

    def prompt_text(self) -> str:
        """The prompt as the notebook shows it: the question, its options, what to set."""
        if not self.choices:
            return f"{self.prompt}\n\nSet `{self.variable}` to a number."
        options = "\n".join(f"{i}. {text}" for i, text in enumerate(self.choices, start=1))
        return (f"{self.prompt}\n\n{options}\n\nSet `{self.variable}` to the number of your "
                f"choice (1 to {len(self.choices)}).")

    def check_reference(self, value: float) -> float:
        """``value`` as a reference answer, or a ValueError naming the question."""
        value = float(value)
        if not math.isfinite(value):
            raise ValueError(f"question {self.variable}: reference {value} is not finite")
        if self.choices and (value != int(value) or not 1 <= value <= len(self.choices)):
            raise ValueError(f"question {self.variable}: reference {value} is not an option "
                             f"number 1..{len(self.choices)}")
        return value


@dataclass(frozen=True)
class Assignment:
    """A chapter's assignment: parameter pools, the notebook's text and code, its questions.

    ``pools`` maps each drawn parameter to its choices; ``fixed`` are the same for everyone.
    ``setup`` is the code cell that follows the parameters cell (imports, the student's data);
    ``prepare(parameters)`` computes, once per student, what the references share.
    ``datasets`` names the parameters whose value is a dataset of the registry: the grader
    gives the student's kernel read-only copies of those datasets' files, and nothing else.
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
    datasets: tuple[str, ...] = ()

    def __post_init__(self) -> None:
        if len(self.questions) < 5:
            raise ValueError(f"chapter {self.chapter}: an assignment asks at least 5 questions")
        unknown = set(self.datasets) - set(self.pools) - set(self.fixed)
        if unknown:
            raise ValueError(f"chapter {self.chapter}: datasets {sorted(unknown)} are not "
                             "parameters")
        names = [q.variable for q in self.questions]
        if len(set(names)) != len(names):
            raise ValueError(f"chapter {self.chapter}: two questions set the same variable")
        clash = set(names) & (set(self.pools) | set(self.fixed) | {"STUDENT", "SEED"})
        if clash:
            raise ValueError(f"chapter {self.chapter}: {sorted(clash)} is a parameter and an "
                             "answer")

    @property
    def max_points(self) -> float:
        return float(sum(q.points for q in self.questions))

    def references(self, parameters: Mapping[str, Any]) -> dict[str, float]:
        """Every question's reference answer for one student's parameters."""
        context = self.prepare(parameters)
        return {q.variable: q.check_reference(q.reference(parameters, context))
                for q in self.questions}

    def dataset_names(self, parameters: Mapping[str, Any]) -> tuple[str, ...]:
        """The datasets one student's notebook reads (the values of ``datasets``)."""
        return tuple(sorted({str(parameters[name]) for name in self.datasets}))


def student_parameters(assignment: Assignment, course_seed: int, student_id: str) -> dict[str, Any]:
    """The papermill parameters of one student: ``STUDENT``, ``SEED`` and one draw from each
    pool, all from a seed hashed from the course seed, the chapter and the student id (stable:
    adding a student to the roster changes nobody else's parameters)."""
    seed = cell_seed(course_seed, {"chapter": assignment.chapter, "student": student_id})
    rng = np.random.default_rng(seed)
    drawn = {name: _plain(choices[int(rng.integers(len(choices)))])
             for name, choices in assignment.pools.items()}
    return {"STUDENT": student_id, "SEED": int(seed % 2**31), **dict(assignment.fixed), **drawn}


def student_questions(assignment: Assignment, course_seed: int, student_id: str,
                      count: int) -> tuple[Question, ...]:
    """``count`` of the assignment's questions for one student, in the assignment's order,
    drawn by a seed hashed from the course seed, the chapter and the student id (as
    :func:`student_parameters`): the same roster and course seed give the same subsets, and
    no student can choose theirs.

    Raises
    ------
    ValueError
        ``count`` is not a whole number from 1 to the number of questions.
    """
    total = len(assignment.questions)
    if not isinstance(count, int) or isinstance(count, bool) or not 1 <= count <= total:
        raise ValueError(f"chapter {assignment.chapter} has {total} questions: ask 1 to "
                         f"{total} of them, not {count!r}")
    seed = cell_seed(course_seed, {"chapter": assignment.chapter, "student": student_id,
                                   "questions": count})
    chosen = np.random.default_rng(seed).choice(total, size=count, replace=False)
    return tuple(assignment.questions[i] for i in sorted(int(i) for i in chosen))


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
                    f"`{name}` must be a number, got {answer.get('type', '?')}: "
                    f"{answer.get('repr', '')}")
    if not math.isfinite(value):
        return Mark(0.0, question.points, f"`{name}` is {value}, not a finite number")
    if question.choices and (value != int(value) or not 1 <= value <= len(question.choices)):
        return Mark(0.0, question.points, f"`{name}` = {value:g} is not one of the options "
                    f"1 to {len(question.choices)}")
    if question.choices:
        right = value == reference  # an option number: no tolerance
    else:
        right = abs(value - reference) <= question.atol + question.rtol * abs(reference)
    if right:
        return Mark(question.points, question.points, "correct")
    return Mark(0.0, question.points, f"`{name}` = {value:.6g} is not right. {question.hint}")


def run_setup(setup: str, p: Mapping[str, Any]) -> dict[str, Any]:
    """The names an assignment's setup cell defines for the parameters ``p`` (its printed
    lines are dropped): the references then use the student's very arrays."""
    namespace: dict[str, Any] = dict(p)
    with contextlib.redirect_stdout(io.StringIO()):
        exec(compile(setup, "<setup cell>", "exec"), namespace)  # noqa: S102 - our own code
    return namespace
