"""A missing optional dependency is named with the extra that installs it (dpkmeans.extras)."""

from __future__ import annotations

import sys

import numpy as np
import pytest

from dpkmeans import cli
from dpkmeans.extras import EXTRA_OF_MODULE, MissingExtraError, extra_of, require


def test_every_extra_named_is_an_extra_of_the_package():
    import tomllib
    from pathlib import Path

    meta = tomllib.loads((Path(__file__).resolve().parents[1] / "pyproject.toml").read_text())
    assert set(EXTRA_OF_MODULE.values()) <= set(meta["project"]["optional-dependencies"])


def test_require_names_the_extra(monkeypatch):
    monkeypatch.setitem(sys.modules, "cvxpy", None)  # as if it were not installed
    with pytest.raises(MissingExtraError, match=r'the \'sdp\' extra installs: pip install '
                                                r'"dpkmeans\[sdp\]"') as info:
        require("cvxpy", "the colored mechanism's optimal covariance")
    assert isinstance(info.value, ImportError)
    assert extra_of("dask.array") == "dask" and extra_of("os") is None and extra_of(None) is None


def test_a_module_of_no_extra_is_raised_as_it_is(monkeypatch):
    with pytest.raises(ModuleNotFoundError):
        require("no_such_module_here", "nothing")


def test_the_dask_backend_says_which_extra(monkeypatch):
    from dpkmeans import DPKMeans

    monkeypatch.setitem(sys.modules, "dask", None)
    X = np.zeros((10, 2))
    with pytest.raises(MissingExtraError, match=r'pip install "dpkmeans\[dask\]"'):
        DPKMeans(n_clusters=2, epsilon=1.0, bounds=(-1, 1), backend="dask",
                 random_state=0).fit(X)


def test_the_command_line_names_the_extra_in_one_line(monkeypatch, capsys, tmp_path):
    monkeypatch.setitem(sys.modules, "yaml", None)
    sweep = tmp_path / "grid.yaml"
    sweep.write_text("experiment: x\n")
    assert cli.main(["sweep", str(sweep)]) == 2
    err = capsys.readouterr().err
    assert err.startswith("error: this command needs yaml") and err.count("\n") == 1
    assert 'pip install "dpkmeans[book]"' in err
