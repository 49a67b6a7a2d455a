"""How the CLI prints: JSON by default (for scripts), a plain text table with ``--table``."""

from __future__ import annotations

import json
from typing import Any, Sequence

MAX_CELL = 60


def to_json(data: Any) -> str:
    return json.dumps(data, indent=2, ensure_ascii=False, default=str)


def _cell(value: Any, limit: int = MAX_CELL) -> str:
    if value is None:
        text = ""
    elif isinstance(value, bool):
        text = "true" if value else "false"
    elif isinstance(value, list) and all(isinstance(v, (str, int, float)) for v in value):
        text = ", ".join(str(v) for v in value)
    elif isinstance(value, (dict, list)):
        text = json.dumps(value, ensure_ascii=False, default=str, separators=(",", ":"))
    else:
        text = str(value)
    text = text.replace("\n", " ").replace("\r", " ")
    return text if len(text) <= limit else text[: limit - 1] + "…"


def _grid(header: Sequence[str], rows: Sequence[Sequence[str]]) -> str:
    widths = [len(h) for h in header]
    for row in rows:
        widths = [max(w, len(c)) for w, c in zip(widths, row)]

    def line(cells: Sequence[str]) -> str:
        return "  ".join(c.ljust(w) for c, w in zip(cells, widths)).rstrip()

    out = [line(header), line(["-" * w for w in widths])]
    out.extend(line(row) for row in rows)
    return "\n".join(out)


def _columns(items: Sequence[dict[str, Any]], preferred: Sequence[str] | None) -> list[str]:
    present: list[str] = []
    for item in items:
        for key in item:
            if key not in present:
                present.append(key)
    if preferred:
        chosen = [c for c in preferred if c in present]
        if chosen:
            return chosen
    scalar = [k for k in present if all(not isinstance(i.get(k), (dict, list)) for i in items)]
    return (scalar or present)[:8]


def to_table(data: Any, columns: Sequence[str] | None = None, *, max_cell: int = MAX_CELL) -> str:
    """A list of objects as rows and columns; one object as key/value lines.

    Cells longer than ``max_cell`` characters are cut with an ellipsis (--json has them whole).
    """
    if isinstance(data, list):
        if not data:
            return "(none)"
        if all(isinstance(item, dict) for item in data):
            cols = _columns(data, columns)
            return _grid(cols, [[_cell(item.get(c), max_cell) for c in cols] for item in data])
        return _grid(["value"], [[_cell(item, max_cell)] for item in data])
    if isinstance(data, dict):
        return _grid(["field", "value"], [[str(k), _cell(v, max_cell)] for k, v in data.items()])
    return _cell(data, max_cell)
