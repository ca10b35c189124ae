"""rhn.diagrams: the unrolled graphs and their longest paths, the drawings, bad
arguments rejected."""

import matplotlib
import pytest

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402

from rhn import diagrams  # noqa: E402


@pytest.fixture(autouse=True)
def _close_figures():
    yield
    plt.close("all")


def _all_path_lengths(edges, source, target):
    """Node counts of every path from source to target, by exhaustive search."""
    succ = {}
    for a, b in edges:
        succ.setdefault(a, []).append(b)
    lengths, stack = [], [(source, 1)]
    while stack:
        node, length = stack.pop()
        if node == target:
            lengths.append(length)
        for nxt in succ.get(node, []):
            stack.append((nxt, length + 1))
    return lengths


@pytest.mark.parametrize("layers, steps", [(1, 1), (1, 6), (3, 1), (3, 4), (4, 5)])
def test_graph_sizes(layers, steps):
    for kind, n_edges in (
        ("stacked", steps * (layers - 1) + layers * (steps - 1)),
        ("deep", steps * (layers - 1) + (steps - 1)),
    ):
        nodes, edges = diagrams.credit_assignment_graph(kind, layers, steps)
        assert len(nodes) == len(set(nodes)) == layers * steps
        assert len(edges) == len(set(edges)) == n_edges
        assert all(a in nodes and b in nodes for a, b in edges)


@pytest.mark.parametrize("layers, steps", [(1, 1), (1, 7), (2, 3), (3, 4), (4, 5)])
def test_longest_paths_match_the_formulas_and_exhaustive_search(layers, steps):
    source, target = (0, 0), (layers - 1, steps - 1)
    for kind, expected in (("stacked", layers + steps - 1), ("deep", layers * steps)):
        nodes, edges = diagrams.credit_assignment_graph(kind, layers, steps)
        path = diagrams.longest_path(nodes, edges, source, target)
        assert path[0] == source and path[-1] == target
        assert all(e in set(edges) for e in zip(path, path[1:], strict=False))
        assert len(path) == expected == max(_all_path_lengths(edges, source, target))
    # stacking: every path from x^[1] to the top of step T has the same length
    _, edges = diagrams.credit_assignment_graph("stacked", layers, steps)
    assert set(_all_path_lengths(edges, source, target)) == {layers + steps - 1}


def test_longest_path_picks_the_longer_branch():
    nodes = ["a", "b", "c", "d"]
    edges = [("a", "d"), ("a", "b"), ("b", "c"), ("c", "d")]
    assert diagrams.longest_path(nodes, edges, "a", "d") == ["a", "b", "c", "d"]


def test_drawing_highlights_the_longest_paths():
    _, ax = plt.subplots()
    out = diagrams.stacking_vs_deep_transition(layers=3, steps=4, ax=ax)
    assert out is ax
    by_label = {c.get_label(): c for c in ax.collections}
    assert len(by_label["longest path (stacked)"].get_offsets()) == 3 + 4 - 1
    assert len(by_label["longest path (deep)"].get_offsets()) == 3 * 4
    texts = " ".join(t.get_text() for t in ax.texts)
    assert "= 6" in texts and "= 12" in texts
    assert isinstance(diagrams.stacking_vs_deep_transition(), matplotlib.axes.Axes)


def test_bad_arguments_are_named():
    with pytest.raises(ValueError, match="kind"):
        diagrams.credit_assignment_graph("wide", 2, 3)
    with pytest.raises(ValueError, match="layers"):
        diagrams.credit_assignment_graph("deep", 0, 3)
    with pytest.raises(TypeError, match="steps"):
        diagrams.stacking_vs_deep_transition(steps=2.5)
    nodes, edges = diagrams.credit_assignment_graph("deep", 2, 2)
    with pytest.raises(ValueError, match="target"):
        diagrams.longest_path(nodes, edges, (0, 0), (5, 5))
    with pytest.raises(ValueError, match="not reachable"):
        diagrams.longest_path(nodes, edges, (1, 1), (0, 0))
    with pytest.raises(ValueError, match="cycle"):
        diagrams.longest_path([1, 2], [(1, 2), (2, 1)], 1, 2)


# --- the RHN cell ------------------------------------------------------------


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


@pytest.mark.parametrize("depth", [1, 3, 8])
@pytest.mark.parametrize("vertical", [False, True])
def test_rhn_cell_labels_never_overlap(depth, vertical):
    from rhn.plots import _colliding_texts

    ax = diagrams.draw_rhn_cell(depth, vertical=vertical)
    assert _colliding_texts(ax.figure) == []
    plt.close(ax.figure)


def test_rhn_cell_vertical_draws_the_same_parts_bottom_to_top():
    ax = diagrams.draw_rhn_cell(3, vertical=True)
    gids = [p.get_gid() for p in ax.patches]
    assert sorted(g for g in gids if g and g.startswith("micro-layer-")) == [
        f"micro-layer-{k}" for k in range(3)
    ]
    boxes = {p.get_gid(): p for p in ax.patches if p.get_gid()}
    ys = [boxes[f"micro-layer-{k}"].get_y() for k in range(3)]
    xs = {round(boxes[f"micro-layer-{k}"].get_x(), 9) for k in range(3)}
    assert ys == sorted(ys) and len(xs) == 1  # one column, micro-layer 0 lowest
    assert not hasattr(ax.figure, "rhn_phone_drawing")  # it is the phone's
    plt.close(ax.figure)
    with pytest.raises(TypeError, match="vertical"):
        diagrams.draw_rhn_cell(3, vertical="yes")


def test_rhn_cell_brings_its_phone_drawing_and_a_phone_reads_it():
    """The chapter's figure (horizontal) carries the vertical drawing, which
    the book serves to phones: its smallest text is at least PHONE_TEXT_PX in
    a phone's column and its subscripts SCRIPT_PX, where the laptop's drawing
    would show its text at about 9 px (its subscripts at about 6); on the
    laptop, at its own width, its subscripts are SCRIPT_PX too."""
    import base64

    from rhn import plots

    plots.use_style()
    ax = diagrams.draw_rhn_cell(3)
    fig = ax.figure
    png, meta = plots.figure_png_for_phone(fig)
    narrow = meta[plots.NARROW_KEY]
    phone = base64.b64decode(narrow["png"])
    shown = min(narrow["width"], plots.PHONE_COLUMN_PX)
    assert plots.smallest_text_px(phone, shown) >= plots.PHONE_TEXT_PX
    assert plots.smallest_script_px(phone, shown) >= plots.SCRIPT_PX
    laptop_on_phone = plots.smallest_text_px(png, plots.PHONE_COLUMN_PX)
    assert laptop_on_phone < 0.9 * plots.PHONE_TEXT_PX
    assert plots.smallest_script_px(png, plots.PHONE_COLUMN_PX) < 7
    assert plots.smallest_script_px(png, meta["width"]) >= plots.SCRIPT_PX
    assert len(plt.get_fignums()) == 1  # the phone's figure was closed
    plt.close(fig)
