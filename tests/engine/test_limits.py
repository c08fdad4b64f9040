"""What a configuration cannot spend is refused when it is built, with the limit: an iteration's
budget below the smallest the exact sampler draws (``iteration_floor``), more iterations than
the budget allows (``check_iterations``), more clusters than records (``check_clusters``)."""

from __future__ import annotations

import re

import pytest

from dpkmeans.api.catalogue import FitInputs, loop_choices
from dpkmeans.engine.checks import check_clusters
from dpkmeans.engine.planning import check_iterations, iteration_floor, plan_ledger
from dpkmeans.errors import BudgetTooSmallError
from dpkmeans.papers.colored.variants import corrected as colored
from dpkmeans.papers.su.variants import dplloyd

BOX = ([0.0, 0.0], [1.0, 1.0])
LAPLACE = [name for name, c in loop_choices().items() if not c.needs_delta]  # Gaussian: no floor


def _build(name: str, epsilon: float):
    return loop_choices()[name].build(FitInputs(3, epsilon, BOX, max_iter=5, n_records=1000,
                                                delta=1e-6))


def test_a_schedule_below_the_floor_is_refused_with_the_smallest_total():
    with pytest.raises(BudgetTooSmallError, match=r"^DPLloyd: iteration 1 gets epsilon 2e-301, "
                                                  r"below .*; give epsilon >= \S+ in total") as err:
        dplloyd(3, 1e-300, BOX, iterations=5)
    minimum = err.value.minimum
    assert f"{minimum:g}" in str(err.value)
    assert plan_ledger(dplloyd(3, minimum, BOX, iterations=5)).total().epsilon == minimum
    with pytest.raises(BudgetTooSmallError):
        dplloyd(3, minimum / 1.02, BOX, iterations=5)


@pytest.mark.parametrize("name", LAPLACE)
def test_every_catalogue_configuration_names_a_minimum_that_plans(name):
    with pytest.raises(BudgetTooSmallError) as err:
        _build(name, 1e-300)
    config = _build(name, err.value.minimum)
    if config.allocation.public:  # a rule's releases depend on the data: run to know
        plan_ledger(config)
    assert iteration_floor(config) > 0


def test_check_iterations_gives_the_most_iterations_the_budget_allows():
    config = dplloyd(3, 1e-6, BOX, iterations=1)
    with pytest.raises(BudgetTooSmallError, match=r"^max_iter = 1000000000000 gives each "
                                                  r"iteration epsilon 1e-18, below") as err:
        check_iterations(config, 10**12, name="max_iter")  # no 10^12 schedule is built
    limit = int(re.search(r"at most (\d+) iterations", str(err.value)).group(1))
    check_iterations(config, limit)
    plan_ledger(dplloyd(3, 1e-6, BOX, iterations=limit))
    with pytest.raises(BudgetTooSmallError):
        dplloyd(3, 1e-6, BOX, iterations=limit + 1)


def test_check_iterations_names_epsilon_when_not_even_one_iteration_fits():
    config = dplloyd(3, 1.0, BOX, iterations=1)
    with pytest.raises(BudgetTooSmallError, match=r"^epsilon = 1e-300 is too small for one "
                                                  r"iteration .*: 5 iterations need epsilon "
                                                  r">= \S+; raise epsilon$") as err:
        check_iterations(config, 5, 1e-300)
    plan_ledger(dplloyd(3, err.value.minimum, BOX, iterations=5))


def test_gaussian_noise_has_no_floor():
    config = colored(3, 1e-300, 1e-6, BOX, iterations=1)
    assert iteration_floor(config) == 0.0
    check_iterations(config, 10**12)


def test_more_clusters_than_records_names_only_a_public_count():
    check_clusters(237, 237)
    with pytest.raises(ValueError, match="^n_clusters = 238 exceeds n_records = 237: "):
        check_clusters(238, 237, public=True)
    with pytest.raises(ValueError) as err:
        check_clusters(238, 237)
    assert "237" not in str(err.value) and "lower n_clusters" in str(err.value)
