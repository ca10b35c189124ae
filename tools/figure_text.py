"""Smallest figure text of an executed chapter, in CSS px at the laptop column.

    python tools/figure_text.py executed.ipynb [...]

For each PNG output made through ``rhn.plots.use_style`` (which records the
figure's smallest font size and its smallest superscript or subscript in the
PNG): the width the page shows it at (its own width, or the column's when it
is wider), its smallest text and its smallest script (the ``-5`` of a log
axis's ``10^{-5}``, the ``T`` of ``$b_T$``: mathematics draws them at 0.7 of
their text) in CSS pixels there; and, for a figure with a phone drawing
(``rhn:narrow``), the same in a phone's column. The browser tests
(tests/browser/test_reader.py, test_phone.py) measure the same on the built
site; this is the quick check while writing a chapter.
Exit status 1 when a figure's text or script is under 9 px on the laptop, a
phone drawing's text is under 10.5 px or its script under 9 px, or a figure
lacks the record.
"""

from __future__ import annotations

import base64
import json
import sys
from pathlib import Path

from rhn.plots import (
    NARROW_KEY,
    PHONE_COLUMN_PX,
    PHONE_TEXT_PX,
    SCRIPT_PX,
    png_facts,
    smallest_script_px,
    smallest_text_px,
)

COLUMN_PX = 757  # the chapter column at 1366 x 900 (sphinx-book-theme)
MIN_PX = 9.0


def _sizes(png: bytes, shown: float) -> tuple[float | None, float | None]:
    return smallest_text_px(png, shown), smallest_script_px(png, shown)


def _line(where: str, shown: float, text: float, script: float) -> str:
    scripts = "none" if script == float("inf") else f"{script:.1f} px"
    return f"{where}: shown {shown} px, smallest text {text:.1f} px, scripts {scripts}"


def check(png: bytes, width: int | None, narrow: dict | None = None) -> list[str]:
    """The lines :func:`report` prints for one figure, each ending in ``<``
    and what is too small when something is."""
    shown = min(width or png_facts(png)[0], COLUMN_PX)
    text, script = _sizes(png, shown)
    if text is None or script is None:
        what = "text size" if text is None else "script size"
        return [f"laptop: no recorded {what} (use_style?)   <"]
    flags = []
    if text < MIN_PX:
        flags.append("text < 9 px")
    if script < MIN_PX:
        flags.append("script < 9 px")
    lines = [_line("laptop", shown, text, script) + _flags(flags)]
    if narrow:
        data = base64.b64decode(narrow["png"])
        shown = min(narrow["width"], PHONE_COLUMN_PX)
        text, script = _sizes(data, shown)
        if text is None or script is None:
            return [*lines, "phone: no recorded text or script size   <"]
        flags = []
        if text < PHONE_TEXT_PX:
            flags.append(f"text < {PHONE_TEXT_PX} px")
        if script < SCRIPT_PX:
            flags.append(f"script < {SCRIPT_PX:g} px")
        lines.append(_line("phone", shown, text, script) + _flags(flags))
    return lines


def _flags(flags: list[str]) -> str:
    return f"   < {', '.join(flags)}" if flags else ""


def report(path: Path) -> list[str]:
    problems = []
    cells = json.loads(path.read_text())["cells"]
    for i, cell in enumerate(cells):
        for out in cell.get("outputs", []):
            data = out.get("data", {})
            if "image/png" not in data or any("widget" in k for k in data):
                continue  # a widget's PNG stand-in is not a figure of its own
            png = base64.b64decode(data["image/png"])
            meta = out.get("metadata", {}).get("image/png", {})
            name = cell.get("metadata", {}).get("mystnb", {}).get("figure", {})
            name = name.get("name", f"cell {i}")
            lines = check(png, meta.get("width"), meta.get(NARROW_KEY))
            for line in lines:
                print(f"{path.name} {name} {line}")
            if any("<" in line for line in lines):
                problems.append(name)
    return problems


def main(argv: list[str]) -> int:
    if not argv:
        print(__doc__.strip().splitlines()[2].strip(), file=sys.stderr)
        return 2
    bad = [p for arg in argv for p in report(Path(arg))]
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
