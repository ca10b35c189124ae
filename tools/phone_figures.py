"""Which figures of an executed chapter a phone reads, and why not.

    python tools/phone_figures.py book/NN_x.ipynb [...]
    python tools/phone_figures.py --why book/NN_x.ipynb

For each PNG figure output made through ``rhn.plots.use_style``: whether it
reads in a phone's column as it is, carries a phone drawing (``rhn:narrow``),
fits the column with its text at least 9.5 px and its superscripts and
subscripts 9 px (the site fits it), or scrolls sideways; then one line per
chapter with the counts.

``--why`` executes a copy of the chapter (the notebook is not rewritten) with
:func:`rhn.plots.narrow_png` wrapped, counts the copy's figures, and prints
for each figure that gets no phone drawing :func:`rhn.plots.narrow_reason`'s
answer; ``--keep DIR`` writes the executed copy there. Exit status 1 when a
figure would scroll sideways.
"""

from __future__ import annotations

import argparse
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

FITS_PX = 9.5  # rhn-site.js fits a figure whose text is this size in the column


def figures(notebook: dict) -> list[tuple[str, str]]:
    """``(figure name, verdict)`` for each figure output of a notebook's JSON."""
    found = []
    cells = notebook["cells"]
    for i, cell in enumerate(cells):
        outputs = [
            o for o in cell.get("outputs", []) if "image/png" in o.get("data", {})
        ]
        for k, out in enumerate(outputs):
            if any("widget" in key for key in out["data"]):
                continue  # a widget's PNG stand-in is not a figure of its own
            png = base64.b64decode(out["data"]["image/png"])
            meta = out.get("metadata", {}).get("image/png", {})
            shown = min(meta.get("width") or png_facts(png)[0], PHONE_COLUMN_PX)
            name = cell.get("metadata", {}).get("mystnb", {}).get("figure", {})
            name = name.get("name", f"cell {i}") + (f".{k}" if len(outputs) > 1 else "")
            px = smallest_text_px(png, shown)
            at_column = smallest_text_px(png, PHONE_COLUMN_PX)
            # superscripts and subscripts: 9 px wherever the phone shows it
            script = smallest_script_px(png, shown) or float("inf")
            script_at_column = smallest_script_px(png, PHONE_COLUMN_PX)
            if NARROW_KEY in meta:
                verdict = "phone drawing"
            elif px is None or (px >= PHONE_TEXT_PX and script >= SCRIPT_PX):
                verdict = "reads as it is"
            elif (
                at_column is not None
                and at_column >= FITS_PX
                and (script_at_column or float("inf")) >= SCRIPT_PX
            ):
                verdict = f"fits ({at_column:.1f} px)"
            else:
                verdict = f"scrolls ({px:.1f} px)"
            found.append((name, verdict))
    return found


_HOOK = """
import json as _json, rhn.plots as _plots
_plain = _plots.narrow_png
def _logged(fig, **kw):
    out = _plain(fig, **kw)
    if out is None:
        reason = _plots.narrow_reason(fig)
        if reason != "reads as it is":
            titles = [ax.get_title() for ax in fig.axes if ax.get_title()]
            with open({log!r}, "a") as f:
                f.write(_json.dumps([len(fig.axes), titles[:2], reason]) + "\\n")
    return out
_plots.narrow_png = _logged
"""


def why(path: Path) -> tuple[dict, list[str]]:
    """Execute a copy of ``path``: the executed notebook's JSON, and
    :func:`narrow_reason`'s answer for each figure without a phone drawing."""
    import tempfile

    import nbformat
    from nbclient import NotebookClient

    nb = nbformat.read(path, as_version=4)
    with tempfile.TemporaryDirectory() as tmp:
        log = Path(tmp) / "why.jsonl"
        log.touch()
        nb.cells.insert(0, nbformat.v4.new_code_cell(_HOOK.format(log=str(log))))
        resources = {"metadata": {"path": str(path.resolve().parent)}}
        NotebookClient(nb, timeout=1800, resources=resources).execute()
        return json.loads(nbformat.writes(nb)), log.read_text().splitlines()


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("notebooks", nargs="+", type=Path)
    parser.add_argument("--why", action="store_true")
    parser.add_argument(
        "--keep", type=Path, help="with --why: a folder for the executed copies"
    )
    args = parser.parse_args(argv)
    scrolls = 0
    for path in args.notebooks:
        notebook, reasons = json.loads(path.read_text()), []
        if args.why:
            notebook, reasons = why(path)
            if args.keep is not None:
                args.keep.mkdir(parents=True, exist_ok=True)
                (args.keep / path.name).write_text(json.dumps(notebook))
        found = figures(notebook)
        for name, verdict in found:
            print(f"{path.name} {name}: {verdict}")
        n_phone = sum(v == "phone drawing" for _, v in found)
        n_scroll = sum(v.startswith("scrolls") for _, v in found)
        scrolls += n_scroll
        print(
            f"{path.name}: {len(found)} figures, {n_phone} with a phone drawing, "
            f"{n_scroll} scroll sideways"
        )
        for line in reasons:
            print(f"{path.name} why: {line}")
    return 1 if scrolls else 0


if __name__ == "__main__":
    sys.exit(main())
