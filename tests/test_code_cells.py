"""Lint of the chapters' code cells: what a reader sees is code worth reading.

- A code cell shown unfolded on the page holds no ``assert`` statement: the
  checks that keep a page's sentences true go into cells of their own,
  tagged ``remove-cell`` (they run in every build, in Colab and under
  ``make portable``, and the site leaves them out; the book's index says so).
  Folded cells (``hide-input``, ``hide-cell``: solutions, long set-up) may
  check what they compute.
- No line of a cell the site shows (folded or not) is longer than
  ``MAX_LINE`` characters: a longer one overflows the laptop column (about
  85 characters of code fit) and scrolls sideways.
- Functions written in a chapter have plain-prose docstrings: no reST markup
  (double backquotes, ``:func:``, ``Args:`` blocks), which the page would show
  as raw source.
- No cell the site shows names an equation by its internal label
  (``eq-highway-jacobian``): the page shows a label only as a number, so in
  code and printed lines a reader would see the raw label; they name the
  equation in words.
- A number formatted into figure text after a formula and an equals sign
  (``f"$b_T$ = {b:g}"``) goes inside the formula (``f"$b_T = {b:g}$"``),
  where matplotlib writes a negative number's minus as a minus sign (U+2212)
  rather than the hyphen a plain string keeps.
"""

from __future__ import annotations

import ast
import json
import re
from pathlib import Path

import pytest

BOOK = Path(__file__).resolve().parents[1] / "book"
NOTEBOOKS = sorted(BOOK.glob("[0-9][0-9]*.ipynb"))
MAX_LINE = 80
REMOVED = {"remove-cell", "remove-input"}
FOLDED = {"hide-input", "hide-cell"}
EQ_LABEL = re.compile(r"\beq-[a-z0-9]+(?:-[a-z0-9]+)*")
# "$b_T$ = {b:g}" in an f-string: a formatted number after "$ =" or "$="
NUMBER_AFTER_MATH = re.compile(r"\$\s*=\s*\{[^}]*\}")
REST = re.compile(r"``|:(?:func|class|meth|data|mod|attr):`|^\s*(?:Args|Returns):\s*$")


def _cells(path: Path, hidden: set[str]) -> list[tuple[int, str]]:
    """(index, source) of the code cells with none of the tags ``hidden``."""
    cells = json.loads(path.read_text())["cells"]
    return [
        (i, "".join(c["source"]))
        for i, c in enumerate(cells)
        if c["cell_type"] == "code"
        and not hidden & set(c.get("metadata", {}).get("tags", []))
    ]


def _asserts(source: str) -> list[int]:
    try:
        tree = ast.parse(source)
    except SyntaxError:  # IPython magics: fall back to the text
        return [
            n
            for n, line in enumerate(source.splitlines(), 1)
            if line.lstrip().startswith("assert ")
        ]
    return [node.lineno for node in ast.walk(tree) if isinstance(node, ast.Assert)]


def _docstrings(source: str) -> list[str]:
    try:
        tree = ast.parse(source)
    except SyntaxError:
        return []
    kinds = (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)
    return [
        ast.get_docstring(node) or ""
        for node in ast.walk(tree)
        if isinstance(node, kinds)
    ]


@pytest.mark.parametrize("path", NOTEBOOKS, ids=lambda p: p.stem)
def test_no_assert_in_an_unfolded_cell(path: Path) -> None:
    found = [
        f"cell {i}, line {n}"
        for i, source in _cells(path, REMOVED | FOLDED)
        for n in _asserts(source)
    ]
    assert not found, (
        f"{path.name}: move these asserts to a cell tagged remove-cell: "
        + ", ".join(found)
    )


@pytest.mark.parametrize("path", NOTEBOOKS, ids=lambda p: p.stem)
def test_shown_code_fits_the_column(path: Path) -> None:
    long = [
        f"cell {i}, line {n} ({len(line)} chars)"
        for i, source in _cells(path, REMOVED)
        for n, line in enumerate(source.splitlines(), 1)
        if len(line) > MAX_LINE
    ]
    assert not long, f"{path.name}: lines over {MAX_LINE} characters: " + ", ".join(
        long
    )


@pytest.mark.parametrize("path", NOTEBOOKS, ids=lambda p: p.stem)
def test_docstrings_are_plain_prose(path: Path) -> None:
    found = [
        f"cell {i}: {match.group(0)!r}"
        for i, source in _cells(path, REMOVED)
        for doc in _docstrings(source)
        for line in doc.splitlines()
        if (match := REST.search(line))
    ]
    assert not found, f"{path.name}: reST markup in docstrings: " + ", ".join(found)


@pytest.mark.parametrize("path", NOTEBOOKS, ids=lambda p: p.stem)
def test_figure_metadata_is_where_myst_nb_reads_it(path: Path) -> None:
    # MyST-NB reads a figure's caption, name and alt text from the cell's
    # metadata under "mystnb"; elsewhere they are silently ignored and the
    # site shows the image's file path as its alt text
    problems = []
    for i, cell in enumerate(json.loads(path.read_text())["cells"]):
        meta = cell.get("metadata", {})
        stray = sorted({"figure", "image"} & set(meta))
        if stray:
            problems.append(f"cell {i}: {stray} outside 'mystnb'")
        mystnb = meta.get("mystnb", {})
        if "figure" in mystnb or "image" in mystnb:
            figure, image = mystnb.get("figure", {}), mystnb.get("image", {})
            missing = [
                key
                for key, there in (
                    ("figure.caption", figure.get("caption")),
                    ("figure.name", figure.get("name")),
                    ("image.alt", image.get("alt")),
                )
                if not there
            ]
            if missing:
                problems.append(f"cell {i}: no {', '.join(missing)}")
    assert not problems, f"{path.name}: " + "; ".join(problems)


@pytest.mark.parametrize("path", NOTEBOOKS, ids=lambda p: p.stem)
def test_shown_code_names_no_equation_label(path: Path) -> None:
    labels = [
        f"cell {i}: {m.group(0)}"
        for i, source in _cells(path, REMOVED)
        for m in EQ_LABEL.finditer(source)
    ]
    assert not labels, f"{path.name}: equation labels in shown code: {labels}"


@pytest.mark.parametrize("path", NOTEBOOKS, ids=lambda p: p.stem)
def test_figure_numbers_after_a_formula_are_inside_it(path: Path) -> None:
    found = [
        f"cell {i}: {m.group(0)}"
        for i, source in _cells(path, set())
        for m in NUMBER_AFTER_MATH.finditer(source)
    ]
    assert not found, (
        f"{path.name}: a number written after a formula keeps its hyphen-minus; "
        f"put it inside the $...$: {found}"
    )
