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


# The depth sweep on Penn Treebank (perplexity) as the authors publish it: the
# table "Influence of recurrence depth on performance" in the README of the
# paper's official repository, github.com/jzilly/RecurrentHighwayNetworks
# (Zilly et al., 2017; its abstract quotes the first row's tied test
# perplexity, 90.6). Rows: depth: (units per layer, best validation, test,
# best validation with weight tying, test with weight tying), typed in by hand
# from that table, all ten depths.
PUBLISHED_PTB_DEPTH = {
    1: (1275, 92.4, 89.2, 93.2, 90.6),
    2: (1180, 79.0, 76.3, 76.9, 75.1),
    3: (1110, 75.0, 72.6, 72.7, 70.6),
    4: (1050, 73.3, 70.9, 70.8, 68.6),
    5: (1000, 72.0, 69.8, 69.7, 67.7),
    6: (960, 71.9, 69.3, 69.1, 66.6),
    7: (920, 71.7, 68.7, 68.7, 66.4),
    8: (890, 71.2, 68.5, 68.2, 66.1),
    9: (860, 71.3, 68.5, 68.1, 66.0),
    10: (830, 71.3, 68.3, 68.3, 66.0),
}


def test_every_row_is_the_published_row():
    """Each depth the package draws carries exactly the published row, with
    its columns in the published order; a mistyped or shifted value fails."""
    sweep = plots.PAPER_PTB_DEPTH
    assert set(sweep) <= set(PUBLISHED_PTB_DEPTH)
    for depth, row in sweep.items():
        assert tuple(row) == PUBLISHED_PTB_DEPTH[depth], depth
    # the rows drawn keep the sweep's ends: depth 1 and depth 10
    assert min(sweep) == 1 and max(sweep) == 10


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
