"""No warning or error on the private path prints a private count or value.

Under add/remove adjacency the number of records N is private, and so is every value of X. The
records here number 37 and hold the sentinel 0.123456789, so a message that prints either is
caught. The clipping count is the one exception: it is for the data holder only, and the
estimators' documentation and the warning itself say so.
"""

from __future__ import annotations

import warnings

import numpy as np
import pandas as pd
import pytest

from dpkmeans import DPKPrototypes
from dpkmeans.errors import ClippingWarning
from dpkmeans.api.estimators import DPKMeans
from dpkmeans.engine.prototypes import MixedLayout, encode

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


def test_clipping_count_is_for_the_data_holder_only():
    X = np.full((N, 2), 0.5)
    X[:3] = 2.0
    with pytest.warns(ClippingWarning, match="data holder only"):
        DPKMeans(n_clusters=2, epsilon=1.0, bounds=(0.0, 1.0), random_state=0).fit(X)
    for estimator in (DPKMeans, DPKPrototypes):
        doc = " ".join(estimator.__doc__.split())
        assert "ClippingWarning" in doc and "data holder only" in doc
