"""A variant of the book's ``_config.yml`` for one kind of build, written where the Makefile asks.

``make student`` builds the edition without solutions, and ``make test`` builds the book from
the notebooks' stored outputs (its notebook test has just executed every notebook again and
checked that it prints them). Both pass ``jupyter-book build --config`` a copy of
``_config.yml`` changed here::

    python book/_ext/book_config.py OUT.yml [--stored-outputs] [--student] [--cache DIR]

The local Sphinx extensions' paths are made absolute, so the copy may live anywhere and the
build may write anywhere (``--path-output``).
"""

from __future__ import annotations

import argparse
import os
from pathlib import Path

import yaml

#: The book's configuration, at the repository's root (this file is book/_ext/book_config.py).
CONFIG = Path(__file__).resolve().parents[2] / "_config.yml"


def variant(*, stored_outputs: bool = False, student: bool = False,
            cache: str | None = None) -> dict:
    """``_config.yml`` changed for the build: execution off (the stored outputs are shown),
    the student edition (no solutions, no page sources, its own title), the execution cache
    at an absolute path."""
    config = yaml.safe_load(CONFIG.read_text(encoding="utf-8"))
    root = CONFIG.parent
    sphinx = config["sphinx"]
    sphinx["local_extensions"] = {name: str((root / path).resolve())
                                  for name, path in sphinx.get("local_extensions", {}).items()}
    if stored_outputs:
        config["execute"]["execute_notebooks"] = "off"
    if cache is not None:
        config["execute"]["cache"] = os.path.abspath(cache)
    if student:
        sphinx["config"]["hide_solutions"] = True
        sphinx["config"]["html_copy_source"] = False
        config["title"] += " (student edition)"
    return config


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("out", type=Path, help="where to write the changed configuration")
    parser.add_argument("--stored-outputs", action="store_true",
                        help="show the notebooks' stored outputs: execute nothing")
    parser.add_argument("--student", action="store_true",
                        help="the student edition: solutions hidden, no page sources")
    parser.add_argument("--cache", help="the execution cache's folder")
    args = parser.parse_args(argv)
    config = variant(stored_outputs=args.stored_outputs, student=args.student, cache=args.cache)
    args.out.parent.mkdir(parents=True, exist_ok=True)
    args.out.write_text(yaml.safe_dump(config, sort_keys=False), encoding="utf-8")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
