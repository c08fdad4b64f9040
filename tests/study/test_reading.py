"""Numbers and tables for people (dpkmeans.study.reading): what the book's prose and tables show."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from dpkmeans.study.reading import (
    count_of,
    machine,
    markdown_table,
    number,
    percent,
    share,
    table,
    yes_no,
)


@pytest.mark.parametrize("value, shown", [
    (1e-06, "10⁻⁶"), (2.5e-05, "2.5 × 10⁻⁵"), (-2e-9, "−2 × 10⁻⁹"), (12000.0, "12,000"),
    (48842, "48,842"), (np.int64(748), "748"), (0.012345, "0.0123"), (3.14159, "3.14"),
    (-0.5, "−0.5"), (1.0, "1"), (123456.7, "123,000"), (1.5e7, "15,000,000"),
    (1.23e7 + 0.5, "1.23 × 10⁷"), (float("nan"), "–"), (float("inf"), "∞"), (0.0, "0"),
])
def test_numbers_are_written_as_people_write_them(value, shown):
    assert number(value) == shown


def test_no_python_notation_reaches_the_reader():
    for value in (1e-06, 1e-05, 2.5e-7, 1e10 + 0.5, 0.1 + 0.2, 100.0):
        text = number(value)
        assert "e-" not in text and "e+" not in text and not text.endswith(".0"), text


def test_booleans_and_non_numbers_are_refused():
    with pytest.raises(TypeError, match="yes_no"):
        number(True)
    with pytest.raises(TypeError):
        number("3")
    with pytest.raises(TypeError):
        yes_no(1)
    with pytest.raises(TypeError):
        percent(None)


def test_percent_yes_no_and_counts():
    assert percent(1.0) == "100%" and percent(0.1234, 1) == "12.3%"
    assert yes_no(True) == "yes" and yes_no(np.bool_(False)) == "no"
    assert count_of(4, 5) == "4 of 5" and count_of(1200, 5000) == "1,200 of 5,000"


FRAME = pd.DataFrame({"algorithm": ["a|b", "c"], "epsilon": [1e-6, 0.5],
                      "private": [True, False], "runs": [1000, 20]})


def test_html_table_has_no_index_and_writes_values_for_people():
    html = table(FRAME, name="t-1").to_html()
    assert 'class="reading-table"' in html and 'id="T_t-1"' in html
    assert "10⁻⁶" in html and "yes" in html and "1,000" in html
    assert "True" not in html and "1e-06" not in html
    assert "row_heading" not in html  # no index column
    assert table(FRAME, name="t-1").to_html() == html  # the same HTML on every run
    assert "wide-table" in table(FRAME, name="w", wide=True).to_html()


def test_markdown_table_escapes_pipes_and_aligns_numbers():
    text = markdown_table(FRAME, formats={"runs": lambda r: f"{r} runs"})
    lines = text.splitlines()
    assert lines[0] == "| algorithm | epsilon | private | runs |"
    assert lines[1] == "| :--- | ---: | :--- | ---: |"
    assert lines[2] == "| a\\|b | 10⁻⁶ | yes | 1000 runs |"


def test_bad_tables_are_refused_with_a_clear_error():
    with pytest.raises(TypeError, match="DataFrame"):
        table([[1, 2]])
    with pytest.raises(ValueError, match="name"):
        table(FRAME, name="not a name")
    with pytest.raises(ValueError, match="columns"):
        markdown_table(FRAME, formats={"missing": str})
    with pytest.raises(ValueError, match="align"):
        markdown_table(FRAME, align={"runs": "middle"})


def test_shares_take_the_decimals_they_need():
    assert [share(f) for f in (1.0, 0.975, 0.1234, 0.0, 0.82)] == \
        ["100%", "97.5%", "12.3%", "0%", "82%"]
    assert share(0.99996) == "> 99.9%" and share(0.0001) == "< 0.1%"


def test_a_machine_is_described_from_either_kind_of_record():
    full = {"machine": "x86_64", "cpu": "AMD EPYC", "cpu_count": 2, "ram_GB": 25.28}
    sweep = {"cpu": "x86_64", "cores": 2, "cpu_model": "AMD EPYC"}
    assert machine(full) == "AMD EPYC, x86-64, 2 cores, 25 GB of memory"
    assert machine(sweep) == "AMD EPYC, x86-64, 2 cores"
    assert machine({"cpu": "x86_64", "cores": 2}) == "x86-64, 2 cores"
    assert machine({}) == "an unrecorded machine"
    with pytest.raises(TypeError):
        machine("AMD")
