"""No warning or error on the private path prints a private count or value.

Under add/remove adjacency the number of records N is private, and so is every value of X. The
records here number 37 and hold the sentinel 0.123456789, so a message that prints either is
caught. The clipping warning says only that values were clipped, not how many. The limits on
absurd parameters (k above the records, a budget below what the exact samplers draw) are errors
that say the limit in the caller's parameters, before any noise is drawn.
"""

from __future__ import annotations

import re
import warnings

import numpy as np
import pandas as pd
import pytest

from dpkmeans import DPKPrototypes
from dpkmeans.api.estimators import DPKMeans
from dpkmeans.engine.prototypes import MixedLayout, encode
from dpkmeans.errors import BudgetTooSmallError, ClippingWarning

N = 37
SENTINEL = 0.123456789


def _messages(fit) -> list[str]:
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        try:
            fit()
        except (ValueError, TypeError) as err:
            return [str(err)] + [str(w.message) for w in caught]
    return [str(w.message) for w in caught]


def _assert_private_free(messages: list[str]) -> None:
    assert messages
    for text in messages:
        assert str(N) not in text, text
        assert "0.123" not in text and "secret" not in text and "2465" not in text, text


def _kmeans(**kw):
    return DPKMeans(n_clusters=40, epsilon=1.0, bounds=(0.0, 1.0), random_state=0, **kw)


def _kproto(**kw):
    return DPKPrototypes(n_clusters=40, epsilon=1.0, bounds=(0.0, 1.0), random_state=0, **kw)


def _frame() -> pd.DataFrame:
    rng = np.random.default_rng(0)
    return pd.DataFrame({"x": rng.uniform(0, 1, N), "c": rng.choice(["a", "b"], N)})


def test_more_clusters_than_records_does_not_print_n():
    X = np.full((N, 2), 0.5)
    _assert_private_free(_messages(lambda: _kmeans().fit(X)))
    _assert_private_free(_messages(lambda: _kproto(categories=[["a", "b"]]).fit(_frame())))


@pytest.mark.parametrize("X", [
    np.full(N, SENTINEL),  # 1-D: scikit-learn printed the array
    np.full((N, 0), SENTINEL),  # no feature: printed shape=(N, 0)
    np.array([[SENTINEL + 1j, 0.5]] * N),  # complex: printed the array
    np.array([["secret", SENTINEL]] * N, dtype=object),  # printed the value
], ids=["1-D", "no feature", "complex", "text"])
def test_bad_x_messages_print_neither_records_nor_their_number(X):
    _assert_private_free(_messages(lambda: _kmeans().fit(X)))


def test_mixed_estimator_messages():
    frame = _frame()
    unknown = frame.assign(c=["secret"] * 3 + list(frame.c[3:]))
    _assert_private_free(_messages(lambda: _kproto(categories=[["a", "b"]]).fit(unknown)))
    missing = frame.assign(c=[None] * 3 + list(frame.c[3:]))
    msg = _messages(lambda: _kproto(categories=[["a", "b"]]).fit(missing))
    _assert_private_free(msg)
    assert "3" not in msg[0]  # how many are missing is private too
    nan = frame.assign(x=[np.nan] * 3 + list(frame.x[3:]))
    msg = _messages(lambda: _kproto(categories=[["a", "b"]]).fit(nan))
    _assert_private_free(msg)
    assert "3" not in msg[0]
    text = np.array([["secret", "a"]] + [["0.5", "b"]] * (N - 1), dtype=object)
    _assert_private_free(_messages(lambda: _kproto(categorical=[1],
                                                   categories=[["a", "b"]]).fit(text)))
    _assert_private_free(_messages(lambda: _kproto(categorical=[1],
                                                   categories=[["a", "b"]]).fit(
        np.array(["a"] * N, dtype=object))))


def test_encode_messages():
    layout = MixedLayout((3,), 1, 0.5)
    X = np.full((N, 1), SENTINEL)
    codes = np.zeros((N, 1), dtype=int)
    codes[:5, 0] = 2465
    _assert_private_free(_messages(lambda: encode(X, codes, layout)))
    _assert_private_free(_messages(lambda: encode(X, codes[:-1], layout)))
    _assert_private_free(_messages(lambda: encode(X[:, 0], codes, layout)))


def test_clipping_warning_gives_no_count_and_points_at_the_callers_line():
    X = np.full((N, 2), 0.5)
    X[:3] = 2.0  # 6 values clipped, in both columns
    for fit in (lambda: DPKMeans(n_clusters=2, epsilon=1.0, bounds=(0.0, 1.0),
                                 random_state=0).fit(X),
                lambda: DPKPrototypes(n_clusters=2, epsilon=1.0, bounds=(0.0, 1.0),
                                      random_state=0).fit(pd.DataFrame(X, columns=["x", "y"]))):
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            fit()
        clipped = [w for w in caught if issubclass(w.category, ClippingWarning)]
        assert len(clipped) == 1
        text = str(clipped[0].message)
        assert "clipped" in text and not any(ch.isdigit() for ch in text), text
        assert clipped[0].filename == __file__
    for estimator in (DPKMeans, DPKPrototypes):
        doc = " ".join(estimator.__doc__.split())
        assert "ClippingWarning" in doc and "clip count" not in doc and "not shown" in doc


def test_more_clusters_than_records_is_an_error_before_any_noise():
    X = np.full((N, 2), 0.5)
    for fit in (lambda: DPKMeans(n_clusters=10**6, bounds=(0.0, 1.0), random_state=0).fit(X),
                lambda: DPKPrototypes(n_clusters=10**6, bounds=(0.0, 1.0), random_state=0).fit(
                    pd.DataFrame(X, columns=["x", "y"]))):
        with pytest.raises(ValueError, match="exceeds the number of records in X") as err:
            fit()
        _assert_private_free([str(err.value)])
    with pytest.raises(ValueError, match="n_clusters = 40 exceeds n_records = 30"):
        _kmeans(n_records=30).fit(np.full((50, 2), 0.5))


def _one_sentence(text: str) -> None:
    assert len(text) < 200 and text.count(": ") <= 1 and "continuous" not in text, text
    assert not re.search(r"\d{16}", text), text  # no 300-digit integer


@pytest.mark.parametrize("algorithm, extra", [
    ("dplloyd-impr", {}), ("apdp", {}), ("di", {}), ("dp-kccm", {}),
    ("lsh", {"delta": 1e-6, "noise": "basic"}), ("balcan", {"n_records": 237})])
def test_too_small_epsilon_names_the_smallest_that_runs(algorithm, extra):
    """The algorithms that choose their own T ("dplloyd" runs max_iter iterations and meets
    the stricter limit of 1/N per iteration first: the next test), and the two that run
    themselves, whose releases get fixed shares of epsilon."""
    X = np.random.default_rng(0).uniform(0.0, 1.0, (237, 2))

    def fit(epsilon):
        return DPKMeans(n_clusters=3, epsilon=epsilon, bounds=(0.0, 1.0), algorithm=algorithm,
                        random_state=0, **extra).fit(X)

    with pytest.raises(BudgetTooSmallError, match=r"epsilon = 1e-300 .* needs? epsilon >= ") \
            as err:
        fit(1e-300)
    _one_sentence(str(err.value))
    assert f"{err.value.minimum:g}" in str(err.value)
    assert fit(err.value.minimum).epsilon_ == err.value.minimum
    with pytest.raises(BudgetTooSmallError):
        fit(err.value.minimum / 1.02)


def test_too_small_epsilon_of_a_tight_form_names_one_that_runs():
    """lsh at (epsilon, delta) by default is calibrated under tight composition, which lowers
    its noise by a factor that depends on epsilon: the message names the basic form's smallest
    epsilon, at which the tight form runs too (with less noise)."""
    X = np.random.default_rng(0).uniform(0.0, 1.0, (237, 2))

    def fit(epsilon):
        return DPKMeans(n_clusters=3, epsilon=epsilon, bounds=(0.0, 1.0), algorithm="lsh",
                        delta=1e-6, random_state=0).fit(X)

    with pytest.raises(BudgetTooSmallError, match=r"epsilon = 1e-300 .* needs? epsilon >= ") \
            as err:
        fit(1e-300)
    _one_sentence(str(err.value))
    assert fit(err.value.minimum).ledger_.accounting == "tight"


@pytest.mark.parametrize("algorithm", ["dplloyd", "colored"])
@pytest.mark.parametrize("epsilon, max_iter", [(1.0, 10**6), (1e-6, 10**4), (1e-6, 10**12),
                                               (1e-300, 5)])
def test_iterations_that_cannot_mean_anything_are_refused_with_the_limit(algorithm, epsilon,
                                                                         max_iter):
    """max_iter past epsilon x N on N records gives every release less than 1/N: its noise
    exceeds what all the records together contribute. Refused at once (no 10^12 schedule is
    built, no 10^6 iterations run), with the limit as a formula in N, never N itself."""
    n = 237
    X = np.random.default_rng(0).uniform(0.0, 1.0, (n, 2))
    extra = {"delta": 1e-6} if algorithm == "colored" else {}
    model = DPKMeans(n_clusters=3, epsilon=epsilon, bounds=(0.0, 1.0), algorithm=algorithm,
                     max_iter=max_iter, random_state=0, **extra)
    with pytest.raises(ValueError, match=f"max_iter = {max_iter} gives each iteration "
                                         r"epsilon .* at most 1 x epsilon x N") as err:
        model.fit(X)
    assert str(n) not in str(err.value)
    _assert_private_free([str(err.value)])
    if epsilon == 1.0:  # the limit, floor(epsilon x N), runs; one more does not
        assert model.set_params(max_iter=n).fit(X).n_iter_ == n
        with pytest.raises(ValueError, match="no centre means anything"):
            model.set_params(max_iter=n + 1).fit(X)
