"""The code passes ruff with the rules pyproject.toml selects (``[tool.ruff.lint]``: pyflakes,
pycodestyle's errors and warnings, sorted imports): the library, the tests, the benchmarks and
the notebooks' sources (whose lines are 86 characters at most, the book's column:
notebooks/ruff.toml). ``ruff check --fix`` sorts the imports and drops the unused ones.
"""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
#: What the lint reads: the notebooks by their percent-format sources.
PATHS = ["src", "tests", "benchmarks", *sorted(
    str(p.relative_to(ROOT)) for p in (ROOT / "notebooks").glob("*.py"))]


def test_ruff_passes():
    done = subprocess.run([sys.executable, "-m", "ruff", "check", "--no-cache",
                           "--output-format", "concise", *PATHS],
                          cwd=ROOT, capture_output=True, text=True, check=False)
    assert done.returncode == 0, (f"ruff check (fix: python -m ruff check --fix "
                                  f"{' '.join(PATHS[:3])} notebooks/*.py):\n"
                                  f"{done.stdout}{done.stderr}")
