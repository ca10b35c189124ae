"""rhn.plots.plot_paper_depth: the RHN paper's depth sweep, redrawn from its numbers."""

from __future__ import annotations

import matplotlib

matplotlib.use("Agg")

import matplotlib.pyplot as plt  # noqa: E402
import numpy as np  # noqa: E402
import pytest  # noqa: E402

from rhn import plots  # noqa: E402


def test_the_reported_numbers():
    """The table as the paper reports it: depth 1 to 10 at one budget, the width
    falling as the depth grows. (The abstract's 65.4 is the paper's best
    depth-10 model, not this sweep's row, whose tied test perplexity is 66.0.)"""
    sweep = plots.PAPER_PTB_DEPTH
    assert sorted(sweep) == [1, 5, 8, 10]
    assert [sweep[d][0] for d in sorted(sweep)] == [1275, 1000, 890, 830]
    assert sweep[1][4] == 90.6 and sweep[10][4] == 66.0
    tests = [sweep[d][2] for d in sorted(sweep)]
    assert tests[0] - min(tests) > 20  # the gain from depth 1 to depth >= 5


def test_plot_draws_every_value_with_two_cues():
    fig, ax = plt.subplots()
    out = plots.plot_paper_depth(ax=ax)
    assert out is ax
    lines = ax.get_lines()
    assert len(lines) == 4
    drawn = sorted(v for line in lines for v in line.get_ydata())
    reported = sorted(v for row in plots.PAPER_PTB_DEPTH.values() for v in row[1:])
    np.testing.assert_allclose(drawn, reported)
    # no two series share both colour and dash, nor colour and marker
    cues = {
        (line.get_color(), line.get_linestyle(), line.get_marker()) for line in lines
    }
    assert len(cues) == 4
    labels = [t.get_text() for t in ax.get_xticklabels()]
    assert labels[0] == "D=1\nH=1275" and labels[-1] == "D=10\nH=830"
    plt.close(fig)


def test_bad_sweep():
    with pytest.raises(TypeError, match="sweep"):
        plots.plot_paper_depth({})
    with pytest.raises(ValueError, match="sweep"):
        plots.plot_paper_depth({1: (10, 1.0)})
