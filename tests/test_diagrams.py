"""The diagrams drawn by code: parts present, bad arguments rejected."""

import matplotlib

matplotlib.use("Agg")

import matplotlib.pyplot as plt  # noqa: E402
import pytest  # noqa: E402

from rhn import diagrams  # noqa: E402


@pytest.mark.parametrize("depth", [1, 3, 8])
def test_rhn_cell_has_one_box_node_and_carry_per_micro_layer(depth):
    ax = diagrams.draw_rhn_cell(depth)
    gids = [p.get_gid() for p in ax.patches] + [a.get_gid() for a in ax.texts]
    for part in ("micro-layer", "gate", "carry"):
        found = sorted(g for g in gids if g and g.startswith(part + "-"))
        assert found == sorted(f"{part}-{k}" for k in range(depth))
    texts = " ".join(t.get_text() for t in ax.texts)
    assert "x^{[t]}" in texts and "s^{[t]}" in texts and "1 - t_0" in texts
    plt.close(ax.figure)


def test_rhn_cell_uncoupled_labels_and_given_axes():
    fig, ax = plt.subplots()
    assert diagrams.draw_rhn_cell(2, ax, coupled=False) is ax
    texts = " ".join(t.get_text() for t in ax.texts)
    assert "c_1" in texts and "1 - t" not in texts
    plt.close(fig)


def test_rhn_cell_rejects_bad_depth():
    with pytest.raises(ValueError, match="depth"):
        diagrams.draw_rhn_cell(0)
    with pytest.raises(ValueError, match="depth"):
        diagrams.draw_rhn_cell(9)
    with pytest.raises(TypeError, match="depth"):
        diagrams.draw_rhn_cell(2.0)
