"""The plan calculator of the synthesis chapter, used as a reader uses it: the built page opened
from ``file://`` in headless Chromium, offline (tests/browser/chromium.py), requests typed into
the form and the button pressed.

* Its answers are ``recommend``'s (:mod:`dpkmeans.synthesis.recommend`): the algorithm, the
  predicted relative objective and its interval as the book writes numbers (three significant
  digits), whether the request lies outside what the book measured, the regimes it rests on
  and the alternatives in order; at a regime the book evaluated, a mid-range request, one far
  outside everything measured, at delta > 0, at a delta between the measured ones and under
  replace adjacency.
* Bad input (a negative epsilon, k above N, an empty field, a delta outside [0, 1), a word
  for a count) shows one clear message in the page and no answer, and the console stays
  free of errors; a good request afterwards is answered again.
* On paper (print media) the form and its answer are hidden and the note saying where the
  calculator is is shown; on screen, the other way round.

Run by ``make test-browser`` after ``make book``; ``$DPKMEANS_BOOK_HTML`` points it at another
build of the book.
"""

from __future__ import annotations

import os
import sys
from pathlib import Path

import pandas as pd
import pytest

sys.path.insert(0, str(Path(__file__).parent))
from chromium import chromium  # noqa: E402

from dpkmeans.study.reading import number  # noqa: E402
from dpkmeans.synthesis import recommend as rec  # noqa: E402
from dpkmeans.synthesis.leaderboard import DELTA  # noqa: E402

ROOT = Path(__file__).resolve().parents[2]
HTML = Path(os.environ.get("DPKMEANS_BOOK_HTML") or ROOT / "_build" / "html")
PAGE = HTML / "notebooks" / "12_synthesis.html"

#: What the page shows of its answer (or of its refusal), read in the page.
READ = """
const box = document.querySelector('.plan-calculator');
const answer = box.querySelector('.plan-calculator-answer');
const error = box.querySelector('.plan-calculator-result .plan-calculator-error');
if (!answer) return {error: error ? error.textContent : null};
const text = s => answer.querySelector(s).textContent;
return {
  error: error ? error.textContent : null,
  algorithm: text('.plan-calculator-algorithm'),
  predicted: text('.plan-calculator-predicted'),
  lo: text('.plan-calculator-lo'),
  hi: text('.plan-calculator-hi'),
  outside: answer.dataset.outside === 'true',
  nearest: Array.from(answer.querySelectorAll('.plan-calculator-nearest li'),
                      li => li.textContent),
  alternatives: Array.from(answer.querySelectorAll('.plan-calculator-table tbody tr'),
                           tr => tr.cells[0].textContent),
  text: answer.textContent,
};
"""


@pytest.fixture(scope="module")
def browser():
    if not PAGE.is_file():
        pytest.fail(f"no chapter page {PAGE}: run make book first")
    try:
        driver = chromium(console_log=True)
    except RuntimeError as missing:
        pytest.fail(str(missing))
    driver.get(PAGE.as_uri())
    yield driver
    driver.quit()


def _severe(driver) -> list[str]:
    return [e["message"] for e in driver.get_log("browser") if e["level"] == "SEVERE"]


def _ask(driver, N: object, d: object, k: object, epsilon: object, delta: object = 0.0,
         relation: str = "add/remove") -> dict:
    """Type a request into the form, press the button and read what the page shows."""
    from selenium.webdriver.common.by import By
    from selenium.webdriver.support.ui import Select

    form = driver.find_element(By.CSS_SELECTOR, "form.plan-calculator-form")
    for name, value in (("N", N), ("d", d), ("k", k), ("epsilon", epsilon)):
        field = form.find_element(By.NAME, name)
        field.clear()
        field.send_keys(str(value))
    choice = "zero" if delta == 0 else "value"
    form.find_element(By.CSS_SELECTOR, f'input[name="delta-choice"][value="{choice}"]').click()
    if choice == "value":
        field = form.find_element(By.NAME, "delta")
        field.clear()
        field.send_keys(str(delta))
    Select(form.find_element(By.NAME, "neighbour")).select_by_value(relation)
    form.find_element(By.CSS_SELECTOR, "button[type=submit]").click()
    return driver.execute_script(READ)


def _check(shown: dict, request: tuple) -> rec.Recommendation:
    """The page's answer is recommend's, to the digits the book writes."""
    answer = rec.recommend(*request)
    assert shown["error"] is None, shown["error"]
    assert shown["algorithm"] == answer.algorithm, request
    assert shown["predicted"] == number(answer.predicted), request
    assert (shown["lo"], shown["hi"]) == tuple(number(v) for v in answer.interval), request
    assert shown["outside"] == answer.outside, request
    assert tuple(shown["nearest"]) == answer.nearest, request
    assert shown["alternatives"] == list(answer.alternatives["algorithm"]), request
    return answer


def _evaluated_regime() -> tuple:
    """A regime of the leaderboard: adult at epsilon 1, delta 0."""
    board = pd.read_csv(ROOT / "data" / "results" / "leaderboard.csv")
    row = board[(board["dataset"] == "adult") & (board["epsilon"] == 1.0)
                & (board["delta"] == 0)].iloc[0]
    return int(row["N"]), int(row["d"]), int(row["k"]), float(row["epsilon"]), 0.0


def test_the_page_answers_its_default_request_on_load(browser):
    shown = browser.execute_script(READ)
    _check(shown, (10_000, 10, 5, 1.0, 0.0))
    assert not _severe(browser)


def test_an_evaluated_regime_gets_its_own_measurements(browser):
    request = _evaluated_regime()
    answer = _check(_ask(browser, *request), request)
    assert not answer.outside and answer.nearest[0] == f"adult, k={request[2]}, ε=1"


@pytest.mark.parametrize("request_", [
    (10_000, 10, 5, 1.0, 0.0, "add/remove"),         # mid-range, pure
    (30_000, 24, 5, 0.5, 1e-6, "add/remove"),        # delta > 0: the rows at 10^-6
    (2_000, 8, 4, 0.3, 0.001, "add/remove"),         # a larger delta: a conservative answer
    (5_000, 6, 3, 2.0, 1e-9, "add/remove"),          # below every measured delta > 0: pure
    (20_000, 12, 5, 0.5, 0.0, "replace"),            # replace adjacency: one algorithm
])
def test_its_answers_are_recommends(browser, request_):
    answer = _check(_ask(browser, *request_), request_)
    shown = browser.execute_script(READ)
    if request_[4] > DELTA:
        assert "so the answer is conservative" in shown["text"]
    assert ("only algorithm the book measured" in shown["text"]) == (
        request_[5] == "replace")
    assert answer.algorithm in shown["text"]


def test_a_request_outside_the_evidence_says_so(browser):
    request = (10**9, 5_000, 1_000, 100.0, 0.0)
    answer = _check(_ask(browser, *request), request)
    shown = browser.execute_script(READ)
    assert answer.outside and shown["outside"]
    assert "Outside everything the book measured at this privacy" in shown["text"]
    assert "is above the largest measured" in shown["text"]


@pytest.mark.parametrize("request_, message", [
    ((10_000, 10, 5, -1), "ε must be above 0, got −1."),
    ((10, 5, 11, 1.0), "k (clusters) must be at most N (records): got k = 11 and N = 10."),
    (("", 10, 5, 1.0), "N (records) is empty"),
    ((10_000, 10, 5, ""), "ε is empty"),
    ((10_000, "ten", 5, 1.0), "d (features) must be a whole number, not “ten”."),
    ((10_000, 2.5, 5, 1.0), "d (features) must be a whole number"),
    ((10_000, 10, 0, 1.0), "k (clusters) must be at least 1, got 0."),
    ((10_000, 10, 5, 1.0, 1.5), "δ must lie in [0, 1), got 1.5."),
    ((10_000, 10, 5, 1.0, "-0.1"), "δ must lie in [0, 1), got −0.1."),
])
def test_bad_input_gets_one_clear_message_and_no_answer(browser, request_, message):
    browser.get_log("browser")
    delta = request_[4] if len(request_) > 4 else 0.0
    shown = _ask(browser, *request_[:4], delta)
    assert shown["error"] is not None and message in shown["error"], shown
    assert "algorithm" not in shown  # no answer beside the message
    assert not _severe(browser)
    _check(_ask(browser, 10_000, 10, 5, 1.0), (10_000, 10, 5, 1.0, 0.0))  # answers again


def test_on_paper_the_note_replaces_the_form(browser):
    def shown(selector: str) -> bool:
        return browser.execute_script(
            f"return getComputedStyle(document.querySelector('{selector}')).display"
            " !== 'none'")

    assert shown(".plan-calculator-screen") and not shown(".plan-calculator-print")
    browser.execute_cdp_cmd("Emulation.setEmulatedMedia", {"media": "print"})
    try:
        assert not shown(".plan-calculator-screen") and shown(".plan-calculator-print")
    finally:
        browser.execute_cdp_cmd("Emulation.setEmulatedMedia", {"media": ""})
