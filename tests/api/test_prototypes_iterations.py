"""How many iterations DPKPrototypes runs and how it splits its budget (book chapter 11): the
rule of :mod:`dpkmeans.papers.di.iterations`, ``max_iter`` as an upper bound, ``n_records``,
and the README's example, which must show a fit a reader recognises."""

from __future__ import annotations

import io
import math
import re
from contextlib import redirect_stdout
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from dpkmeans import DPKPrototypes
from dpkmeans.engine import schedules
from dpkmeans.engine.prototypes import MixedLayout
from dpkmeans.papers.di import variants
from dpkmeans.papers.di.iterations import SU_ERROR, prototypes_epsilon_m, prototypes_iterations
from dpkmeans.privacy.identifiability import epsilon_from_rho

README = Path(__file__).resolve().parents[2] / "README.md"
TRUE_CENTRES = {0.25: "red", 0.75: "blue"}  # the README's clusters and their colours
SEEDS = range(40)


def _readme_data(n: int) -> pd.DataFrame:
    """The README's records ("Mixed numeric and categorical records"), n of them."""
    rng = np.random.default_rng(0)
    half = n // 2
    return pd.DataFrame({"x": np.r_[rng.normal(0.25, 0.05, half), rng.normal(0.75, 0.05, half)],
                         "colour": ["red"] * half + ["blue"] * half})


def _readme_fit(X: pd.DataFrame, seed: int, **params) -> DPKPrototypes:
    return DPKPrototypes(n_clusters=2, epsilon=4.0, bounds=(0.0, 1.0),
                         categories={"colour": ["blue", "red"]}, random_state=seed,
                         **params).fit(X)


def _sensible(model: DPKPrototypes) -> bool:
    """A fit a reader recognises: each true centre (0.25, 0.75) has a fitted centre within 0.1,
    the two are different fitted centres, and each of them has its true centre's colour as
    its mode."""
    centres = model.cluster_centers_.ravel()
    modes = model.cluster_modes_.ravel()
    nearest = [int(np.argmin(np.abs(centres - true))) for true in TRUE_CENTRES]
    if len(set(nearest)) != len(nearest):
        return False
    return all(abs(centres[j] - true) <= 0.1 and modes[j] == colour
               for j, (true, colour) in zip(nearest, TRUE_CENTRES.items()))


@pytest.mark.parametrize("n", [1000, 10_000])
def test_readme_example_is_sensible_in_at_least_38_of_40_seeds(n):
    X = _readme_data(n)
    good = sum(_sensible(_readme_fit(X, seed)) for seed in SEEDS)
    assert good >= 38, f"{good} of 40 seeds give a sensible fit at N = {n}"


def test_readme_example_seed_0_prints_recognisable_centres_and_modes():
    model = _readme_fit(_readme_data(1000), 0)
    assert _sensible(model)
    assert model.n_iter_planned_ == 2 and model.n_records_used_ == 1000
    assert model.privacy_spent_.epsilon == pytest.approx(4.0)


def test_the_readme_example_prints_what_its_comment_says():
    section = README.read_text().split("\n## Using the library\n", 1)[1].split("\n## ", 1)[0]
    code = next(block for block in re.findall(r"```python\n(.*?)```", section, flags=re.S)
                if "DPKPrototypes" in block)
    expected = [line[2:] for line in code.splitlines() if line.startswith("# ")][-1]
    printed = io.StringIO()
    with redirect_stdout(printed):
        exec(code, {})  # noqa: S102 - the README's own example
    assert printed.getvalue().strip() == expected


# -- the rule ----------------------------------------------------------------------------------
def test_epsilon_m_is_su_criterion_for_each_part():
    """Each part's first-order error (book chapter 11) at its minimum is exactly 2/500."""
    N, k, levels = 5000, 3, [2, 4]
    box = (np.zeros(2), np.array([1.0, 4.0]))
    eps_r, eps_c = prototypes_epsilon_m(N, k, box, levels)
    half = np.array([0.5, 2.0])
    delta_r = 2.0 * (half.sum() + 1.0)  # replace, centred
    rho = schedules.SU_RHO["[-1,1]"]
    numeric_error = (2 * k**3 * delta_r**2 * (np.sum(half**-2.0) + 4 * 2 * rho**2)
                     / (N**2 * eps_r**2))
    q = sum((math.log(n - 1) + 1) ** 2 + 1 for n in levels)
    categorical_error = 64 * len(levels) ** 2 * k**3 * q / (N**2 * eps_c**2)
    assert numeric_error == pytest.approx(SU_ERROR)
    assert categorical_error == pytest.approx(SU_ERROR)


def test_epsilon_m_falls_as_one_over_n_and_ignores_one_level_attributes():
    a = prototypes_epsilon_m(1000, 2, (0.0, 1.0), [2])
    b = prototypes_epsilon_m(4000, 2, (0.0, 1.0), [2, 1])
    assert b[0] == pytest.approx(a[0] / 4)
    assert b[1] == pytest.approx(a[1] / 4 * 2)  # d_c = 2 halves each draw's budget
    assert prototypes_epsilon_m(1000, 2, (0.0, 1.0), [])[1] == 0.0


@pytest.mark.parametrize("n", [300, 1000, 3000, 10_000, 30_000])
def test_the_last_iteration_gets_each_part_its_minimum_and_one_more_would_not(n):
    eps = 4.0
    plan = prototypes_iterations(n, 2, (0.0, 1.0), [3], epsilon=eps)
    T, share = plan.iterations, plan.categorical_share
    eps_rm, eps_cm = plan.epsilon_m
    assert share == pytest.approx(eps_cm / (eps_rm + eps_cm))
    last = schedules.halving(eps, T)[-1]
    if 2 < T < 7:  # inside Su et al.'s clip
        assert last * (1 - share) >= eps_rm * (1 - 1e-12)
        assert last * share >= eps_cm * (1 - 1e-12)
        one_more = schedules.halving(eps, T + 1)[-1]
        assert one_more * (1 - share) < eps_rm and one_more * share < eps_cm
    assert 2 <= T <= 7


def test_max_iter_is_an_upper_bound_and_a_given_split_is_kept():
    free = prototypes_iterations(100_000, 2, (0.0, 1.0), [2], epsilon=4.0)
    capped = prototypes_iterations(100_000, 2, (0.0, 1.0), [2], epsilon=4.0, max_iter=3)
    assert (free.iterations, capped.iterations, capped.rule_iterations) == (7, 3, 7)
    fixed = prototypes_iterations(1000, 2, (0.0, 1.0), [2], epsilon=4.0, categorical_share=0.1)
    assert fixed.categorical_share == 0.1
    with pytest.raises(ValueError, match="exactly one of epsilon and budgets"):
        prototypes_iterations(1000, 2, (0.0, 1.0), [2])


def test_explicit_iterations_of_the_paper_configuration_are_unchanged():
    """Callers that pass (or default) the configuration's iterations keep their results."""
    layout = MixedLayout((2,), 1, 0.12)
    config = variants.kprototypes_corrected(layout, (0.0, 1.0), epsilon=4.0)
    assert config.iterations == variants.ITERATIONS == 10


# -- the estimator -----------------------------------------------------------------------------
def test_estimator_uses_the_rule_and_reports_it():
    X = _readme_data(1000)
    model = _readme_fit(X, 1)
    plan = prototypes_iterations(1000, 2, (0.0, 1.0), [2], epsilon=4.0)
    assert DPKPrototypes().max_iter is None
    assert model.n_iter_planned_ == plan.iterations and model.n_iter_ <= plan.iterations
    assert model.categorical_share_ == pytest.approx(plan.categorical_share)
    notes = model.ledger_.to_frame()["label"].str.contains("book chapter 11")
    assert notes.sum() == 1
    assert model.privacy_spent_.epsilon == pytest.approx(4.0)


def test_estimator_max_iter_caps_the_rule():
    model = _readme_fit(_readme_data(10_000), 0, max_iter=3)
    assert model.n_iter_planned_ == 3 and model.max_iter == 3


def test_stated_n_records_is_what_the_rule_reads():
    X = _readme_data(1000)
    model = _readme_fit(X, 0, n_records=100_000)
    assert model.n_records_used_ == 100_000
    assert model.n_iter_planned_ == prototypes_iterations(100_000, 2, (0.0, 1.0), [2],
                                                          epsilon=4.0).iterations
    with pytest.raises(ValueError, match="n_records"):
        _readme_fit(X, 0, n_records=0)


def test_pairs_of_rho_plan_from_their_own_budgets():
    X = _readme_data(1000)
    model = DPKPrototypes(n_clusters=2, rho=(0.05, 0.7), m=(10001, 2), bounds=(0.0, 1.0),
                          categories={"colour": ["blue", "red"]}, random_state=0).fit(X)
    pair = (epsilon_from_rho(0.05, 10001), epsilon_from_rho(0.7, 2))
    plan = prototypes_iterations(1000, 2, (0.0, 1.0), [2], budgets=pair)
    assert model.n_iter_planned_ == plan.iterations
    assert model.categorical_share_ == pytest.approx(pair[1] / sum(pair))
