"""Smallest figure text of an executed chapter, in CSS px at the laptop column.

    python tools/figure_text.py executed.ipynb [...]

For each PNG output made through ``rhn.plots.use_style`` (which records the
figure's smallest font size in the PNG): the width the page shows it at
(its own width, or the column's when it is wider) and its smallest text in
CSS pixels there. The browser test (tests/browser/test_reader.py) measures
the same on the built site; this is the quick check while writing a chapter.
Exit status 1 when a figure's text is under 9 px or a figure lacks the record.
"""

from __future__ import annotations

import base64
import json
import sys
from pathlib import Path

from rhn.plots import png_facts, smallest_text_px

COLUMN_PX = 757  # the chapter column at 1366 x 900 (sphinx-book-theme)
MIN_PX = 9.0


def report(path: Path) -> list[str]:
    problems = []
    cells = json.loads(path.read_text())["cells"]
    for i, cell in enumerate(cells):
        for out in cell.get("outputs", []):
            data = out.get("data", {})
            if "image/png" not in data or any("widget" in k for k in data):
                continue  # a widget's PNG stand-in is not a figure of its own
            png = base64.b64decode(data["image/png"])
            width = out.get("metadata", {}).get("image/png", {}).get("width")
            shown = min(width or png_facts(png)[0], COLUMN_PX)
            name = cell.get("metadata", {}).get("mystnb", {}).get("figure", {})
            name = name.get("name", f"cell {i}")
            px = smallest_text_px(png, shown)
            if px is None:
                print(f"{path.name} {name}: no recorded text size (use_style?)")
                problems.append(name)
                continue
            flag = "" if px >= MIN_PX else "   < 9 px"
            print(
                f"{path.name} {name}: shown {shown} px, smallest text {px:.1f} px{flag}"
            )
            if px < MIN_PX:
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
