"""Wall-clock time of ``.ci/run`` from a clean clone (target: at most 10 minutes on 2 cores),
with the time of each stage of ``make test``.

Run it on a quiet machine, from the repository root, with the verified data beside it
(``../shared/data``, as CI has it)::

    .venv/bin/python -m benchmarks.ci_time               # writes benchmarks/ci_time.json

It clones the committed ``HEAD`` into a fresh folder (nothing installed, no caches), links the
data folder beside the clone as CI does, runs ``.ci/run`` there and reads the stage times that
``make test`` prints ("make test: STAGE took N s"; the stages of its two lanes overlap, so
they add up to more than the whole). The clone's own set-up (``.venv``, the comparison
environment, Debian's packages when missing: the stage "set-up") is part of the time, as in
CI. This is a benchmark, not a test: nothing fails; the clone's log is kept beside the JSON's
path (``ci_time.log``).
"""

from __future__ import annotations

import argparse
import json
import os
import re
import subprocess
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
TARGET_S = 600
STAGE = re.compile(r"^make test: (\S+) took (\d+) s$", re.M)
TOTAL = re.compile(r"^make test finished in (\d+) s$", re.M)


def _git(*args: str) -> str:
    return subprocess.run(["git", *args], cwd=ROOT, check=True, capture_output=True,
                          text=True).stdout.strip()


def stage_times(log: str) -> dict[str, int]:
    """The seconds of each stage of ``make test``, as it prints them."""
    return {name: int(seconds) for name, seconds in STAGE.findall(log)}


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m benchmarks.ci_time",
                                     description=__doc__.split("\n")[0])
    parser.add_argument("--shared", type=Path, default=ROOT.parent / "shared",
                        help="the folder CI finds beside the clone (default: ../shared)")
    parser.add_argument("--out", type=Path, default=ROOT / "benchmarks" / "ci_time.json")
    args = parser.parse_args(argv)
    commit = _git("rev-parse", "--short", "HEAD")
    with tempfile.TemporaryDirectory(prefix="dpkmeans-ci-") as tmp:
        clone = Path(tmp) / "main"
        subprocess.run(["git", "clone", "-q", str(ROOT), str(clone)], check=True)
        if args.shared.exists():
            os.symlink(args.shared.resolve(), Path(tmp) / "shared")
        load_before = os.getloadavg()
        start = time.perf_counter()
        done = subprocess.run(["./.ci/run"], cwd=clone, capture_output=True, text=True)
        wall = time.perf_counter() - start
        log = done.stdout + done.stderr
    args.out.parent.mkdir(parents=True, exist_ok=True)
    args.out.with_suffix(".log").write_text(log)
    total = TOTAL.search(log)
    stages = stage_times(log)
    setup = stages.get("set-up")
    result = {
        "benchmark": 8, "name": ".ci/run from a clean clone",
        "what": "git clone of HEAD, ../shared beside it, ./.ci/run (make test)",
        "commit": commit, "exit_code": done.returncode, "wall_s": round(wall, 1),
        "make_test_s": int(total.group(1)) if total else None,
        "stages_s": stages, "setup_s": setup,
        "target": f"<= {TARGET_S} s", "met": done.returncode == 0 and wall <= TARGET_S,
        "cores": os.cpu_count(), "load_before": load_before, "load_after": os.getloadavg(),
    }
    args.out.write_text(json.dumps(result, indent=2) + "\n")
    print(json.dumps(result, indent=2))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
