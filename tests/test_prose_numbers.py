"""Every number a chapter's prose states is asserted, cited or structural.

``tools/prose_numbers.py`` holds the rules (its docstring states the
convention); this test runs it on every page of the book and shows, on
planted pages, that it catches an unasserted number and accepts the three
ways a number may stand.
"""

from __future__ import annotations

import importlib.util
import json
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
_SPEC = importlib.util.spec_from_file_location(
    "prose_numbers", ROOT / "tools" / "prose_numbers.py"
)
prose_numbers = importlib.util.module_from_spec(_SPEC)
sys.modules["prose_numbers"] = prose_numbers  # dataclasses look their module up
_SPEC.loader.exec_module(prose_numbers)

PAGES = prose_numbers.pages()


def test_no_page_is_exempt():
    assert prose_numbers.EXEMPT == set()


@pytest.mark.parametrize("path", PAGES, ids=lambda p: p.name)
def test_every_number_in_prose_is_asserted_cited_or_structural(path: Path):
    missed = prose_numbers.misses(path)
    assert not missed, (
        f"{path.name}: numbers in prose that no check cell asserts, no citation "
        "in the sentence quotes and no rule calls structural (assert each in a "
        "check cell, or cite its source in the same sentence):\n"
        + "\n".join(str(m) for m in missed)
    )


def _notebook(tmp_path: Path, markdown: list[str], code: list[str]) -> Path:
    cells = [{"cell_type": "markdown", "metadata": {}, "source": m} for m in markdown]
    cells += [
        {
            "cell_type": "code",
            "metadata": {"tags": ["remove-cell"]},
            "source": c,
            "outputs": [],
            "execution_count": None,
        }
        for c in code
    ]
    path = tmp_path / "99_planted.ipynb"
    path.write_text(
        json.dumps({"cells": cells, "metadata": {}, "nbformat": 4, "nbformat_minor": 5})
    )
    return path


def test_a_planted_unasserted_number_fails(tmp_path):
    path = _notebook(
        tmp_path,
        ["The loss falls to 0.0137 after training."],
        ["assert loss < 0.02"],
    )
    missed = prose_numbers.misses(path)
    assert [m.number for m in missed] == ["0.0137"]
    assert prose_numbers.main([str(path)]) == 1


def test_a_planted_number_in_a_real_chapter_fails(tmp_path):
    chapter = ROOT / "book" / "03_bptt.ipynb"
    nb = json.loads(chapter.read_text())
    nb["cells"].append(
        {
            "cell_type": "markdown",
            "metadata": {},
            "source": ["The measured rate is 0.8123 per step."],
        }
    )
    planted = tmp_path / chapter.name
    planted.write_text(json.dumps(nb))
    assert prose_numbers.misses(chapter) == []
    assert [m.number for m in prose_numbers.misses(planted)] == ["0.8123"]


def test_a_number_after_an_admonition_is_read(tmp_path):
    """Prose after a closed admonition (or any prose directive) is checked.

    The closing fence of an admonition once opened a code fence in the
    tool's reading, so every sentence after a solution was skipped up to the
    next fence: chapter 8 took a planted number after exercise 3's solution.
    """
    for opening, closing in [("```{admonition} Solution", "```"), (":::{note}", ":::")]:
        cell = [
            "**Exercise.** Why?\n",
            "\n",
            f"{opening}\n",
            "The rate is 0.6021 per step.\n",
            f"{closing}\n",
            "\n",
            "After it, the RHN kept 41.73 % more gradient.\n",
        ]
        path = _notebook(tmp_path, ["".join(cell)], ["assert x < 1"])
        assert [m.number for m in prose_numbers.misses(path)] == ["0.6021", "41.73"]
    chapter = ROOT / "book" / "08_gradient_flow.ipynb"
    nb = json.loads(chapter.read_text())
    (cell,) = [c for c in nb["cells"] if "## Further reading" in "".join(c["source"])]
    text = "".join(cell["source"])
    assert "```\n\n## Further reading" in text  # after a solution's fence
    cell["source"] = text.replace(
        "## Further reading", "The RHN kept 41.73 % more.\n\n## Further reading"
    )
    planted = tmp_path / chapter.name
    planted.write_text(json.dumps(nb))
    assert [m.number for m in prose_numbers.misses(planted)] == ["41.73"]


def test_a_quoted_number_must_be_the_named_chapters(tmp_path):
    """The README and the API page quote chapter 11: a changed number fails."""
    readme = (ROOT / "README.md").read_text()
    sentence = "after 500 to 550 steps"
    assert sentence in readme and prose_numbers.misses(ROOT / "README.md") == []
    planted = tmp_path / "README.md"
    planted.write_text(readme.replace(sentence, "after 500 to 560 steps"))
    assert [m.number for m in prose_numbers.misses(planted)] == ["560"]
    api = (ROOT / "book" / "api.md").read_text()
    assert "500, 530, 590 and 750" in api
    planted = tmp_path / "api.md"
    planted.write_text(api.replace("500, 530, 590 and 750", "500, 530, 590 and 751"))
    assert [m.number for m in prose_numbers.misses(planted)] == ["751"]
    # a number chapter 11 does not assert, in a paragraph that names it
    planted.write_text(api + "\nChapter 11 trains for 12345 steps.\n")
    assert [m.number for m in prose_numbers.misses(planted)] == ["12345"]


def test_what_passes(tmp_path):
    path = _notebook(
        tmp_path,
        [
            # asserted, also when rounded, as a percentage or as a power of ten
            "The loss is about 0.58, 61 % of the runs train, and the gradient "
            "is $10^{-8}$ smaller and more than $10^{15}$ times smaller.",
            # quoted: a citation in the same sentence
            "The paper reports 65.4 on the test set {cite:p}`zilly2017recurrent`.",
            # structural: names, years, small counts, inline code, formulas
            "Chapter 12, equation (13), step 250 and seed 12 of 1997; two of "
            "5 seeds; `H = 4096`; $0.88^{1000}$ is a formula.",
            # a setting named in code
            "We train for 1200 steps.",
        ],
        [
            "assert abs(loss - 0.5812) < 0.01 and round(share, 2) == 0.61\n"
            "assert ratio < 1e-8 and first < 1e-15 * last",
            "STEPS = 1200",
        ],
    )
    assert prose_numbers.misses(path) == []


def test_a_number_in_a_comment_or_string_does_not_count(tmp_path):
    path = _notebook(
        tmp_path,
        ["The loss is 0.4321."],
        ['assert loss < 1  # 0.4321\nprint("0.4321")'],
    )
    assert [m.number for m in prose_numbers.misses(path)] == ["0.4321"]


def test_a_list_of_chapter_numbers_is_structural(tmp_path):
    path = _notebook(
        tmp_path,
        ["Chapters 10, 11, 13 and 14 train it; the loss is 0.4242 there."],
        ["assert x < 1"],
    )
    assert [m.number for m in prose_numbers.misses(path)] == ["0.4242"]


def test_a_tolerance_asserts_a_bound_but_not_a_value(tmp_path):
    """A tolerance (the bound of abs(a - b) < tol, an atol=, a margin added
    to a bound) asserts a sentence's "within 0.05", never a value: a sentence
    that says the rate is 0.05 passed because 0.05 was some check's tolerance
    (an outside expert's planted edit of chapter 8)."""
    checks = [
        "assert abs(rate - 0.93) < 0.05 and x <= y + 0.007\n"
        "torch.testing.assert_close(a, b, atol=0.0003, rtol=0)"
    ]
    planted = _notebook(
        tmp_path,
        ["The cell keeps 0.05 of its gradient; 0.007 and 0.0003 of the state."],
        checks,
    )
    assert [m.number for m in prose_numbers.misses(planted)] == [
        "0.05",
        "0.007",
        "0.0003",
    ]
    bounded = _notebook(
        tmp_path,
        ["The rate is 0.93, within 0.05 of the carry, and agrees to 0.0003."],
        checks,
    )
    assert prose_numbers.misses(bounded) == []
