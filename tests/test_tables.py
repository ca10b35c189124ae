"""rhn.tables.table: HTML in a notebook, aligned text in print, clear errors."""

import pytest

from rhn.tables import table


def test_text_and_html_agree_on_the_cells():
    t = table(
        [("RHN", 0.01234, 3), ("GRU <x>", 1.5, 12)],
        ["model", "loss", "steps"],
        formats={"loss": "{:.3f}"},
        caption="final losses",
    )
    text = str(t).splitlines()
    assert text[0] == "final losses"
    assert text[1].split() == ["model", "loss", "steps"]
    assert text[3].split() == ["RHN", "0.012", "3"]
    # numbers are right-aligned: the columns end at the same place
    assert text[3].index("0.012") + 5 == text[4].index("1.500") + 5
    assert text[3].endswith(" 3") and text[4].endswith("12")
    html = t._repr_html_()
    assert html.count("<tr>") == 3 and "<figcaption>final losses</figcaption>" in html
    # the caption stands outside the box that scrolls a wide table
    assert html.index("</figcaption>") < html.index('<div class="rhn-table-wrap">')
    assert "GRU &lt;x&gt;" in html and "<x>" not in html  # escaped
    assert html.count('class="rhn-num"') == 2 * 3  # two numeric columns, 3 rows
    assert "<td>RHN</td>" in html


def test_default_number_format_and_callable_format():
    t = table([(1, 2.0 / 3, True)], ["a", "b", "c"], formats={"a": lambda v: f"#{v}"})
    assert t.rows == [["#1", "0.6667", "True"]]
    assert t.numeric == [True, True, False]  # a bool column is not numeric


@pytest.mark.parametrize(
    ("rows", "header", "kwargs", "error", "words"),
    [
        ([(1, 2)], ["a"], {}, ValueError, "rows[0] has 2 values, expected 1"),
        ([(1,)], "a", {}, TypeError, "header must be a sequence"),
        ([(1,)], [], {}, ValueError, "header must name"),
        ("ab", ["a"], {}, TypeError, "rows must be a sequence"),
        ([1], ["a"], {}, TypeError, "rows[0] must be a sequence"),
        ([(1,)], ["a"], {"formats": {"b": "{}"}}, ValueError, "not in header"),
    ],
)
def test_bad_input_names_the_argument(rows, header, kwargs, error, words):
    with pytest.raises(error, match=words.replace("[", r"\[").replace("]", r"\]")):
        table(rows, header, **kwargs)


def test_maths_in_labels_is_typeset_not_shown_as_tex():
    # the model names of chapters 9 and 14 carry matplotlib's maths ($b_f$)
    t = table(
        [("LSTM $b_f$=1", 0.5), ("RHN, $D = 4$, $b_T = -2$", 0.25)], ["model", "loss"]
    )
    page = t._repr_html_()
    assert "$" not in page and "b_f" not in page
    assert "LSTM <i>b</i><sub><i>f</i></sub>=1" in page
    assert "<i>D</i> = 4, <i>b</i><sub><i>T</i></sub> = \u22122" in page
    text = str(t)
    assert "$" not in text and "LSTM b_f=1" in text
    # the columns stay aligned on the shown text, not on the TeX
    lines = text.splitlines()
    assert len({len(line) for line in lines[1:]}) == 1
