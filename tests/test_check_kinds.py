"""Every check in a chapter says what kind of check it is.

A code cell of a chapter that holds ``assert`` (a statement or
``torch.testing.assert_close``) carries a comment line
``# Check (KINDS): ...``, KINDS one or more of live, record, formula and
arithmetic, in that order, each at most once. Every other comment line that
opens with ``# Check`` carries the same label. book/checks.md defines the
four kinds, each named in italics.
"""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

BOOK = Path(__file__).resolve().parents[1] / "book"
NOTEBOOKS = sorted(BOOK.glob("[0-9][0-9]_*.ipynb"))
KINDS = ("live", "record", "formula", "arithmetic")
ONE = "|".join(KINDS)
LABEL = re.compile(rf"^\s*# Check \((({ONE})(, ({ONE}))*)\):")
CHECK_LINE = re.compile(r"^\s*# Checks?(:| \(|$| [A-Za-z])")


def label_problems(source: str) -> list[str]:
    """What is wrong with the check labels of one cell's source (empty: none)."""
    if "assert" not in source:
        return []
    problems, labelled = [], False
    for n, line in enumerate(source.splitlines(), 1):
        found = LABEL.match(line)
        if found:
            kinds = found.group(1).split(", ")
            if len(set(kinds)) < len(kinds):
                problems.append(f"line {n}: a kind repeated: {kinds}")
            elif kinds != sorted(kinds, key=KINDS.index):
                problems.append(f"line {n}: kinds out of order: {kinds}")
            labelled = True
        elif CHECK_LINE.match(line):
            problems.append(f"line {n}: a check line without kinds: {line.strip()}")
    if not labelled:
        problems.append("no '# Check (KINDS):' line")
    return problems


def _cells(path: Path) -> list[tuple[int, str]]:
    cells = json.loads(path.read_text())["cells"]
    return [
        (i, "".join(c["source"]))
        for i, c in enumerate(cells)
        if c["cell_type"] == "code"
    ]


def test_there_are_chapters_with_checks():
    counted = sum(
        "assert" in source for path in NOTEBOOKS for _, source in _cells(path)
    )
    assert len(NOTEBOOKS) >= 16 and counted > 100, (len(NOTEBOOKS), counted)


@pytest.mark.parametrize("path", NOTEBOOKS, ids=lambda p: p.stem)
def test_every_check_cell_names_its_kinds(path: Path) -> None:
    bad = [
        f"cell {i}: {problem}"
        for i, source in _cells(path)
        for problem in label_problems(source)
    ]
    assert not bad, f"{path.name}: " + "; ".join(bad)


@pytest.mark.parametrize(
    ("source", "ok"),
    [
        ("# Check (live): x\nassert y\n", True),
        ("# Check (live, record, formula, arithmetic): x\nassert y\n", True),
        ("x = 1\n    # Check (formula): x\nassert y\n", True),
        ("# Check: x\nassert y\n", False),
        ("# checks: x\nassert y\n", False),
        ("assert y\n", False),
        ("torch.testing.assert_close(a, b)\n", False),
        ("# Check (record, live): x\nassert y\n", False),
        ("# Check (live, live): x\nassert y\n", False),
        ("# Check (measured): x\nassert y\n", False),
        ("# Check (live): x\n# Check the rest\nassert y\n", False),
        ("print(1)\n", True),
    ],
)
def test_the_label_rule_can_fail(source: str, ok: bool) -> None:
    assert (label_problems(source) == []) is ok, label_problems(source)


def test_checks_page_defines_the_four_kinds():
    text = (BOOK / "checks.md").read_text()
    missing = [kind for kind in KINDS if f"*{kind}*" not in text]
    assert not missing, f"book/checks.md defines no {missing}"
    assert "four kinds" in text
