"""The values a stored notebook glues (myst-nb ``glue``), by name, as the book shows them: a
test reads what a chapter states from its committed ``.ipynb`` without running it."""

from __future__ import annotations

import ast
import json
from pathlib import Path

#: The MIME prefix under which myst-nb stores a glued value.
RECORD = "application/papermill.record/"


def _text(value: str | list[str]) -> str:
    return "".join(value) if isinstance(value, list) else value


def _plain(text: str) -> str:
    """A glued value's plain text: a string's repr read back, anything else as it is."""
    try:
        value = ast.literal_eval(text)
    except (ValueError, SyntaxError):
        return text
    return value if isinstance(value, str) else text


def glued_values(notebook: Path) -> dict[str, str]:
    """Every value ``notebook`` glues, by name: its markdown (tables, lists) where it has one,
    else its plain text (a string's repr read back into the string)."""
    out: dict[str, str] = {}
    for cell in json.loads(Path(notebook).read_text(encoding="utf-8"))["cells"]:
        for output in cell.get("outputs", []):
            name = output.get("metadata", {}).get("scrapbook", {}).get("name")
            data = output.get("data", {})
            if name is None:
                continue
            if f"{RECORD}text/markdown" in data:
                out[name] = _text(data[f"{RECORD}text/markdown"])
            elif f"{RECORD}text/plain" in data:
                out[name] = _plain(_text(data[f"{RECORD}text/plain"]))
    return out
