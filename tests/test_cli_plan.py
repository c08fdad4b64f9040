"""``python -m dpkmeans plan``: the plan of a fit as a short table, from public quantities only,
with the recommendation when there is one; bad input is one line, ``error: ...``, exit status
2, no traceback."""

from __future__ import annotations

import subprocess
import sys
import types

import pytest

from dpkmeans.cli import main
from dpkmeans.synthesis import planner
from tests.test_cli_errors import ENV, help_of, one_error

BASE = ["plan", "--records", "10000", "--features", "10", "--clusters", "5", "--epsilon", "1"]


def test_the_plan_is_printed_as_a_table(capsys):
    assert main(BASE) == 0
    out = capsys.readouterr().out
    flat = " ".join(out.split())  # the text with its line wrapping undone
    assert "plan of algorithm='dplloyd': N = 10000 records, d = 10 features, k = 5" in out
    assert "the ledger will report: epsilon=1 (basic composition, add/remove)" in flat
    lines = out.splitlines()
    what = lines[lines.index("") + 1:]
    assert what[0].split()[:3] == ["iterations", "release", "clusters"]
    assert what[1].startswith("1-5         (S_j, n_j)")
    noise = lines[lines.index(what[0]) + 1:]
    noise = noise[noise.index("") + 1:]
    assert noise[0].split()[:3] == ["iterations", "epsilon", "sensitivity"]
    assert noise[1].startswith("1-5") and " 55 " in noise[1]
    assert max(len(line) for line in lines) <= 86, "a line wider than the book's column"
    assert "assumes: the box [-1, 1]^d: no bounds were given" in flat


def test_delta_bounds_algorithm_and_max_iter_reach_the_plan(capsys):
    argv = [*BASE, "--delta", "1e-6", "--bounds", "0", "2", "--algorithm", "colored",
            "--max-iter", "3"]
    assert main(argv) == 0
    out = capsys.readouterr().out
    flat = " ".join(out.split())  # the text with its line wrapping undone
    assert "box: [0, 2]^10" in flat and "delta = 1e-06" in flat and "3 iterations" in flat
    assert "Gaussian" in flat and "(gdp composition, add/remove)" in flat
    assert "no bounds were given" not in out


def test_the_recommendation_is_printed_when_there_is_one(capsys, monkeypatch):
    import pandas as pd

    made = types.SimpleNamespace(
        algorithm="dplloyd-impr (pure)", predicted=0.12, interval=(0.05, 0.3),
        alternatives=pd.DataFrame({"algorithm": ["dplloyd-impr (pure)", "apdp (pure)"],
                                   "predicted": [0.12, 0.2], "lo": [0.05, 0.1],
                                   "hi": [0.3, 0.4]}),
        nearest=("adult, k=5, ε=1",), outside=True, reason="the nearest regimes favour it")
    monkeypatch.setattr(planner, "recommending",
                        types.SimpleNamespace(recommend=lambda *a, **kw: made))
    assert main(BASE) == 0
    out = capsys.readouterr().out
    flat = " ".join(out.split())  # the text with its line wrapping undone
    assert ("recommended: algorithm='dplloyd-impr (pure)', predicted relative objective 0.12 "
            "(interval 0.05 to 0.3)") in flat
    assert "rests on: adult, k=5, ε=1" in flat and "outside every regime the book measured" in flat
    assert "why: the nearest regimes favour it" in flat and "apdp (pure)" in flat
    monkeypatch.setattr(planner, "recommending", None)
    assert main(BASE) == 0
    assert "recommendation: none" in capsys.readouterr().out


@pytest.mark.parametrize("change, message", [
    (["--records", "0"], "--records must be a positive integer, got '0'"),
    (["--records", "ten"], "--records must be a positive integer, got 'ten'"),
    (["--features", "2.5"], "--features must be a positive integer"),
    (["--epsilon", "-1"], "epsilon must be > 0"),
    (["--epsilon", "inf"], "--epsilon must be a finite number"),
    (["--epsilon", "one"], "--epsilon must be a number, got 'one'"),
    (["--delta", "2"], "delta must lie in (0, 1)"),
    (["--algorithm", "nope"], "algorithm must be one of"),
    (["--algorithm", "lsh", "--delta", "1e-6"], "runs outside it"),
    (["--algorithm", "colored"], "is (epsilon, delta)-DP: give delta"),
    (["--bounds", "1", "0"], "lower < upper"),
    (["--bounds", "0", "x"], "--bounds must be a number"),
    (["--clusters", "20000"], "n_clusters = 20000 exceeds n_records = 10000"),
    (["--max-iter", "0"], "--max-iter must be a positive integer"),
    (["--epsilon", "1e-9", "--max-iter", "5"], "max_iter = 5 gives each iteration epsilon"),
])
def test_bad_input_is_one_line(capsys, change, message):
    one_error(capsys, [*BASE, *change], message)  # an option given twice: the last counts


@pytest.mark.parametrize("argv, message", [
    (BASE[:3], "the following arguments are required: --features, --clusters, --epsilon"),
    ([*BASE, "--bounds", "0"], "argument --bounds: expected 2 arguments"),
])
def test_a_usage_error_is_one_line_too(capsys, argv, message):
    with pytest.raises(SystemExit) as exited:
        main(argv)
    assert exited.value.code == 2
    assert capsys.readouterr().err == f"error: {message}\n"


def test_the_real_entry_point_prints_one_line():
    proc = subprocess.run([sys.executable, "-m", "dpkmeans", *BASE[:-1], "0"], env=ENV,
                          capture_output=True, text=True, timeout=120)
    assert proc.returncode == 2, proc.stderr
    assert proc.stderr == "error: epsilon must be > 0, got 0.0\n" and proc.stdout == ""


def test_the_help_says_what_the_command_does(capsys):
    help_of()
    assert "plan" in capsys.readouterr().out
    help_of("plan")
    text = capsys.readouterr().out
    assert "public quantities only" in text and "--records N" in text and "--bounds LO HI" in text
