"""``python -m benchmarks.dpkccm_reproduction``: the older name of
``python -m benchmarks.reproduction dpkccm`` (:mod:`benchmarks.reproduction`), kept for
the commands that the README and the chapters quote. It takes the same options and writes
``benchmarks/dpkccm_reproduction.json``.
"""

from __future__ import annotations

from benchmarks.reproduction import paper_main

main = paper_main("dpkccm")

if __name__ == "__main__":
    raise SystemExit(main())
