"""Chapters are committed as clean notebooks: the build makes the outputs."""

import json
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
NOTEBOOKS = sorted((ROOT / "book").glob("*.ipynb"))


def test_there_are_chapters():
    assert len(NOTEBOOKS) >= 2


@pytest.mark.parametrize("path", NOTEBOOKS, ids=lambda p: p.name)
def test_notebook_has_no_outputs(path):
    nb = json.loads(path.read_text())
    for cell in nb["cells"]:
        if cell["cell_type"] == "code":
            assert cell.get("outputs") == [], f"{path.name}: a code cell has outputs"
            assert cell.get("execution_count") is None, f"{path.name}: executed cell"


def test_every_chapter_is_in_the_toc():
    toc = (ROOT / "_toc.yml").read_text()
    for path in NOTEBOOKS:
        assert f"book/{path.stem}" in toc, f"{path.name} is not in _toc.yml"
