"""tools/prose_words.py: what counts as visible prose, and the book's pages under
the limit (this test is how CI runs the count)."""

from __future__ import annotations

import importlib.util
import json
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
_spec = importlib.util.spec_from_file_location(
    "prose_words", ROOT / "tools" / "prose_words.py"
)
prose_words = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(prose_words)


def test_counts_prose_and_leaves_out_maths_code_and_markup():
    text = "\n".join(
        [
            "---",
            "front: matter words",
            "---",
            "(ch-label)=",
            "# Two words",
            "",
            "One two three, with $b_T = -3$ inline.",  # 6 words + "$b_T", "-3$"
            "",
            "$$",
            "x = y + z \\quad words in maths",
            "$$ (eq-label)",
            "",
            "$$ a = b $$",
            "",
            "\\begin{align}",
            "  \\begin{bmatrix} 1 \\end{bmatrix} maths",
            "\\end{align}",
            "",
            "```python",
            "print('code words')",
            "```",
            "",
            "```{math}",
            "more maths",
            "```",
            "",
            "````{admonition} Solution words",
            ":class: dropdown",
            "Dropdown prose counts.",
            "```{code-cell}",
            "code inside",
            "```",
            "````",
            "",
            "    indented code block",
            "",
            "```{index} ! hidden entry, ! another",
            "```",
            "",
            "- a list item",
            "<!-- a comment -->",
            "<!--",
            "a longer comment",
            "-->",
            "Last line.",
        ]
    )
    md = prose_words._drop_front_matter(text)
    kept = prose_words.prose(md).split()
    assert "front:" not in kept and "(ch-label)=" not in kept
    hidden_words = ["maths", "code", "print('code", "indented", "comment", "dropdown"]
    for hidden in [*hidden_words, "entry,", "another"]:
        assert hidden not in kept, hidden
    # words hold a letter or digit ("#", "-" and "=" are not words): heading 2,
    # sentence 7, the admonition's title 2, its body 3, list item 3, last line 2
    assert prose_words.count_words(md) == 2 + 7 + 2 + 3 + 3 + 2


def test_notebook_pages_count_markdown_cells_only(tmp_path):
    nb = {
        "cells": [
            {
                "cell_type": "markdown",
                "metadata": {},
                "source": ["Five words ", "in two"],
            },
            {"cell_type": "code", "metadata": {}, "source": ["not prose at all"]},
            {"cell_type": "markdown", "metadata": {}, "source": "three more words"},
        ],
        "metadata": {},
        "nbformat": 4,
        "nbformat_minor": 5,
    }
    path = tmp_path / "99_x.ipynb"
    path.write_text(json.dumps(nb))
    assert prose_words.counts([path]) == {"99_x.ipynb": 7}


def test_limit(tmp_path, capsys):
    words = {"a.ipynb": prose_words.LIMIT, "b.ipynb": prose_words.LIMIT + 1}
    assert prose_words.over_limit(words) == ["b.ipynb"]
    # the command line fails on a page one word over the limit, not on one at it
    for extra, status in ((0, 0), (1, 1)):
        page = tmp_path / f"page{extra}.md"
        page.write_text("word " * (prose_words.LIMIT + extra))
        assert prose_words.main([str(page)]) == status
    assert "over the limit" in capsys.readouterr().out


def test_the_books_pages_are_under_the_limit():
    """No page of book/ is longer than the limit; no page is exempt."""
    words = prose_words.counts()
    assert len(words) >= 16, "the count found too few pages"
    assert prose_words.over_limit(words) == [], words
