"""rhn.plots: pure functions that draw on the axes they are given."""

import matplotlib
import numpy as np
import pytest
import torch

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402

import rhn  # noqa: E402
from rhn import analysis, plots  # noqa: E402


@pytest.fixture(autouse=True)
def _close_figures():
    yield
    plt.close("all")


def test_colors_cover_models_and_spectra():
    for key in ("rhn", "lstm", "gru", "rnn", "disc", "eigenvalue", "unit_circle"):
        assert matplotlib.colors.is_color_like(plots.COLORS[key])


def test_plot_discs_draws_on_given_axes():
    _, ax = plt.subplots()
    centres = torch.tensor([0.5, -0.2, 0.1])
    radii = torch.tensor([0.3, 0.1, 0.0])
    eigs = torch.tensor([0.4 + 0.1j, 0.4 - 0.1j, -0.2 + 0j])
    out = plots.plot_discs(centres, radii, eigs, ax=ax)
    assert out is ax
    # one collection of 3 discs, centred where asked
    discs = [c for c in ax.collections if len(c.get_paths()) == 3]
    assert discs, "the discs were not drawn as one collection"
    assert ax.get_aspect() == 1.0
    x0, x1 = ax.get_xlim()
    y0, y1 = ax.get_ylim()
    assert x0 < -1 and x1 > 1 and y0 < -1 and y1 > 1  # the unit circle fits
    texts = " ".join(t.get_text() for t in ax.texts)
    assert "rho" in texts and "0.412" in texts  # |0.4 + 0.1i| = 0.412
    assert ax.get_legend() is not None


def test_plot_discs_new_figure_and_numpy_input():
    ax = plots.plot_discs(np.array([1.0, 1.0]), [0.2, 0.5], legend=False)
    assert ax.get_legend() is None
    assert len(ax.texts) == 0  # no eigenvalues, nothing cut: nothing to annotate


def _note_covers(ax) -> list[int]:
    """The discs of ``ax`` (as drawn last) that its rho note's box meets."""
    note = ax.texts[0].get_window_extent()
    disc = next(c for c in ax.collections if len(c.get_paths()) > 1)
    hit = []
    for i, path in enumerate(disc.get_paths()):
        box = path.get_extents(disc.get_transform())  # display pixels
        (cx, cy), r = box.get_points().mean(axis=0), box.width / 2
        # nearest point of the note's box to the disc's centre
        nx = min(max(cx, note.x0), note.x1)
        ny = min(max(cy, note.y0), note.y1)
        if (nx - cx) ** 2 + (ny - cy) ** 2 < r**2:
            hit.append(i)
    return hit


@pytest.mark.parametrize("size", [(7.2, 3.6), (3.4, 6.4)], ids=["laptop", "phone"])
def test_rho_note_covers_no_disc(size):
    # figure 4.1 of chapter 4: eight discs along the real axis from -4 to 4
    # (some cut by the view, so the note has two lines),
    # two panels side by side on a laptop, stacked in a phone's drawing
    gen = torch.Generator().manual_seed(0)
    J = 0.25 * torch.randn(8, 8, generator=gen, dtype=torch.float64) + torch.diag(
        torch.linspace(-4, 4, 8, dtype=torch.float64)
    )
    stacked = size[0] < size[1]
    fig, axes = plt.subplots(
        2 if stacked else 1, 1 if stacked else 2, figsize=size, layout="constrained"
    )
    plots.plot_spectrum(J, ax=axes[0], title="(a) row discs of $J$")
    plots.plot_spectrum(J, ax=axes[1], columns=True, legend=False, title="(b)")
    fig.canvas.draw()
    for ax in axes:
        # the note has both lines: rho and the discs cut by the view
        assert "rho" in ax.texts[0].get_text() and "cut" in ax.texts[0].get_text()
        assert not _note_covers(ax), _note_covers(ax)
        # and it stays clear of the title
        title = ax.title.get_window_extent()
        assert ax.texts[0].get_window_extent().y1 <= title.y0 + 1


def test_huge_discs_are_cut_and_noted():
    # weight scale 3, bias +10: radii of tens; the view stays readable
    cell = rhn.RHNCell(4, 64, 5, transform_bias=10.0, init_scale=3 / 8).double()
    x = torch.randn(4, dtype=torch.float64)
    s = torch.randn(64, dtype=torch.float64).tanh()
    J = analysis.temporal_jacobian(cell, x, s)
    _, radii = analysis.gershgorin_discs(J)
    assert radii.max() > 10
    ax = plots.plot_spectrum(J)
    rho = analysis.spectral_radius(J).item()
    x0, x1 = ax.get_xlim()
    assert x1 - x0 < 2 * 1.2 * max(4.0, 1.1 * rho)  # not zoomed out to the discs
    assert np.isfinite([x0, x1, *ax.get_ylim()]).all()
    assert any("cut" in t.get_text() for t in ax.texts)


def test_eigenvalues_outside_max_view_stay_visible():
    J = torch.diag(torch.tensor([9.0, 0.5], dtype=torch.float64))
    ax = plots.plot_spectrum(J, max_view=2.0)
    assert ax.get_xlim()[1] > 9.0


def test_fixed_view_and_redraw_on_cleared_axes():
    _, ax = plt.subplots()
    J = torch.randn(8, 8, dtype=torch.float64) / 3
    for _ in range(3):  # what a slider does
        ax.clear()
        plots.plot_spectrum(J, ax=ax, view=2.5)
    assert ax.get_xlim() == (-2.5, 2.5) and ax.get_ylim() == (-2.5, 2.5)
    ax.clear()
    plots.plot_spectrum(J, ax=ax, view=(-1, 3, -2, 2), columns=True)
    assert ax.get_xlim() == (-1, 3)


def test_column_discs_are_drawn_when_asked():
    J = torch.tensor([[0.0, 3.0], [0.0, 5.0]], dtype=torch.float64)
    # row discs: centre 0 radius 3 and centre 5 radius 0; columns: the reverse
    ax_rows = plots.plot_spectrum(J, legend=False, max_view=20.0)
    ax_cols = plots.plot_spectrum(J, legend=False, max_view=20.0, columns=True)
    assert ax_rows.get_xlim()[0] < -3 < ax_cols.get_xlim()[0]
    assert ax_cols.get_xlim()[1] > 8 > ax_rows.get_xlim()[1]


def test_bad_inputs():
    with pytest.raises(ValueError, match="centres and radii must have the same"):
        plots.plot_discs([0.0, 1.0], [0.1])
    with pytest.raises(ValueError, match="radii must be >= 0"):
        plots.plot_discs([0.0], [-0.1])
    with pytest.raises(ValueError, match="centres must be 1-D"):
        plots.plot_discs(torch.zeros(2, 3), torch.zeros(2, 3))
    with pytest.raises(ValueError, match="radii must be finite"):
        plots.plot_discs([0.0], [float("nan")])
    with pytest.raises(TypeError, match="radii must hold real numbers"):
        plots.plot_discs([0.0], [1j])
    with pytest.raises(TypeError, match="view must be"):
        plots.plot_discs([0.0], [1.0], view="big")
    with pytest.raises(ValueError, match="view must have xmin < xmax"):
        plots.plot_discs([0.0], [1.0], view=(1, 0, -1, 1))
    with pytest.raises(ValueError, match="J must be one square matrix"):
        plots.plot_spectrum(torch.zeros(2, 3, 3))


# --- the book's figure style (issue 23) -----------------------------------------


def test_models_differ_by_more_than_colour():
    models = ("rhn", "lstm", "gru", "rnn")
    okabe_ito = {c.upper() for c in plots.OKABE_ITO.values()}
    for key in models + ("disc", "eigenvalue"):
        assert plots.COLORS[key].upper() in okabe_ito, key
    for i, a in enumerate(models):
        for b in models[i + 1 :]:
            sa, sb = plots.MODEL_STYLES[a], plots.MODEL_STYLES[b]
            assert sa["color"] != sb["color"]
            assert sa["linestyle"] != sb["linestyle"] and sa["marker"] != sb["marker"]
    assert plots.model_style("RHN D=3") == plots.MODEL_STYLES["rhn"]
    assert "marker" not in plots.model_style("lstm", marker=False)
    with pytest.raises(ValueError, match="name must start with one of"):
        plots.model_style("transformer")
    with pytest.raises(TypeError, match="name must be a str"):
        plots.model_style(3)


def test_gradient_norm_lines_carry_the_model_dash_and_marker():
    ax = plots.plot_gradient_norms({"RNN": [1.0, 0.5, 0.2], "LSTM": [1.0, 0.9, 0.8]})
    rnn, lstm = ax.get_lines()
    assert rnn.get_linestyle() != lstm.get_linestyle()
    assert rnn.get_marker() == plots.MODEL_STYLES["rnn"]["marker"]
    assert rnn.get_color().upper() == plots.COLORS["rnn"].upper()


def test_use_style_sets_readable_sizes_and_leaves_set_colours_solid():
    with matplotlib.rc_context():
        plots.use_style()  # no IPython here: rcParams only
        rc = matplotlib.rcParams
        assert rc["figure.dpi"] == 100 and rc["font.size"] >= 9
        cycle = [c["color"].upper() for c in rc["axes.prop_cycle"]]
        assert cycle[:4] == [
            plots.COLORS[k].upper() for k in ("rhn", "lstm", "gru", "rnn")
        ]
        # a chapter that sets only the colour of a line gets a solid line
        _, ax = plt.subplots()
        lines = [ax.plot([0, 1], color="k")[0] for _ in range(3)]
        assert {line.get_linestyle() for line in lines} == {"-"}


def test_figure_png_is_sharp_records_its_smallest_text_and_says_its_width():
    import io

    from PIL import Image

    with matplotlib.rc_context(plots.STYLE):
        fig, ax = plt.subplots(figsize=(5, 3))
        ax.plot([0, 1], [0, 1], label="a")
        ax.legend(fontsize=7.5)
        ax.text(0.5, 0.5, "", fontsize=2)  # empty text is not text a reader sees
        assert plots.smallest_text_pt(fig) == 7.5
        png, meta = plots.figure_png(fig)
    image = Image.open(io.BytesIO(png))
    assert image.text[plots.SMALLEST_TEXT_KEY] == "7.50"
    assert meta == {"width": round(image.width / 2)}
    assert round(image.info["dpi"][0]) == 200
    # shown at 100 CSS px per inch: 7.5 pt is 7.5 / 72 * 100 = 10.4 px
    assert 7.5 / 72 * image.info["dpi"][0] * meta["width"] / image.width > 9
    # png_facts reads what PIL reads; smallest_text_px turns it into CSS px
    width, dpi, pt = plots.png_facts(png)
    assert (width, round(dpi), pt) == (image.width, 200, 7.5)
    px = plots.smallest_text_px(png, meta["width"])
    assert px == pytest.approx(7.5 / 72 * 100, rel=0.01)
    assert plots.smallest_text_px(png, meta["width"] / 2) == pytest.approx(px / 2)
    plain = io.BytesIO()
    image.save(plain, format="PNG")  # PIL drops the text chunk
    assert plots.smallest_text_px(plain.getvalue(), 100) is None
    with pytest.raises(ValueError, match="PNG"):
        plots.png_facts(b"not a png")


# --- superscripts and subscripts (the exponents of a log axis, $b_T$) -------------


def test_smallest_script_reads_log_exponents_subscripts_and_nested_scripts():
    with matplotlib.rc_context(plots.STYLE):
        fig, ax = plt.subplots(figsize=(4, 3))
        ax.plot([1, 2], [1e-5, 1], label="RNN")
        ax.legend()
        # plain text and a linear axis: no scripts
        assert plots.smallest_script_pt(fig) == float("inf")
        # a log axis's tick labels are $10^{-5}$: the exponent at 0.7 of them
        ax.set_yscale("log")
        size = ax.yaxis.get_ticklabels()[0].get_fontsize()
        assert plots.smallest_script_pt(fig) == pytest.approx(0.7 * size)
        ax.yaxis.set_tick_params(labelsize=9)  # the book's old tick labels
        assert plots.smallest_script_pt(fig) == pytest.approx(6.3)
        # a legend's $b_T$ and a title's script of a script
        ax.set_yscale("linear")
        ax.legend(labels=["RHN $b_T = -2$"], fontsize=8)
        assert plots.smallest_script_pt(fig) == pytest.approx(5.6)
        ax.set_title("$x^{y^z}$", fontsize=10)
        assert plots.smallest_script_pt(fig) == pytest.approx(4.9)
        # hidden text and text that is not mathematics are not read
        ax.title.set_visible(False)
        ax.text(0.5, 0.5, "$5 and 10^3", fontsize=6)  # no pair of dollars
        assert plots.smallest_script_pt(fig) == pytest.approx(5.6)


def test_figure_png_records_its_smallest_script():
    with matplotlib.rc_context(plots.STYLE):
        fig, ax = plt.subplots(figsize=(4, 3))
        ax.semilogy([1, 2], [1e-5, 1])
        ax.yaxis.set_tick_params(labelsize=9)
        png, meta = plots.figure_png(fig)
        plain, _ = plots.figure_png(plt.subplots(figsize=(4, 3))[0])
    # 6.3 pt at 100 CSS px per inch: 8.75 px, under the 9 px a script needs
    px = plots.smallest_script_px(png, meta["width"])
    assert px == pytest.approx(6.3 / 72 * 100, rel=0.01) and px < plots.SCRIPT_PX
    assert plots.smallest_script_px(plain, 100) == float("inf")
    # a PNG that does not record it (made before, or not by figure_png)
    import io

    from PIL import Image

    bare = io.BytesIO()
    Image.open(io.BytesIO(png)).save(bare, format="PNG")
    assert plots.smallest_script_px(bare.getvalue(), 100) is None


def test_the_style_draws_every_script_at_9_css_px_and_minus_signs():
    """The book's style: the exponents of a log axis, a legend's subscript
    and a title's superscript are at least 9 CSS px at the size the page
    shows the figure (100 px per inch); the old 9 pt tick labels and legends
    drew them at 6.3 pt, 8.75 px."""
    with matplotlib.rc_context(plots.STYLE):
        fig, ax = plt.subplots(figsize=(6.4, 3.2), layout="constrained")
        ax.semilogy([1, 2], [1e-5, 1], label="RHN, $b_T = -2$")
        ax.semilogy([1, 2], [1e-3, 1], label=r"$\rho(J)^n$")
        ax.plot([-2, 2], [1e-2, 1e-1])
        ax.set_title(r"$\|s^{[t]}\|$")
        ax.legend()
        png, meta = plots.figure_png(fig)
        assert plots.smallest_script_px(png, meta["width"]) >= plots.SCRIPT_PX
        # and a negative tick label has a true minus sign (U+2212)
        fig.canvas.draw()
        labels = [t.get_text() for t in ax.get_xticklabels()]
        assert any("\u2212" in t for t in labels) and not any("-" in t for t in labels)
    # the gradient-norm plot's legend (labels such as "RHN $b_T = 2$") too
    with matplotlib.rc_context(plots.STYLE):
        ax = plots.plot_gradient_norms({"RHN $b_T = 2$": [1.0, 1e-3, 1e-6]})
        png, meta = plots.figure_png(ax.figure)
        assert plots.smallest_script_px(png, meta["width"]) >= plots.SCRIPT_PX


def test_log_axes_read_plain_numbers_where_short_and_powers_of_ten_elsewhere():
    """use_style's log axes: 0.02, 0.03, ... on an axis that spans about a
    decade (not 2 x 10^-2, 3 x 10^-2, whose exponents are small and whose
    labels crowd a phone's drawing), powers of ten on an axis of 15 decades."""
    from matplotlib.scale import LogScale, scale_factory

    def labels(lo, hi, minor=False):
        fig, ax = plt.subplots(figsize=(3, 4))
        ax.semilogy([1, 2], [lo, hi])
        ax.set_ylim(lo, hi)
        fig.canvas.draw()
        ticks = ax.yaxis.get_minorticklabels() if minor else ax.get_yticklabels()
        shown = [t.get_text() for t in ticks if t.get_text()]
        return shown, plots.smallest_script_pt(fig)

    with matplotlib.rc_context():
        plots.use_style()
        scale = scale_factory("log", plt.figure().add_subplot().yaxis)
        assert isinstance(scale, LogScale) and scale.name == "log"
        major, script = labels(0.015, 0.21)
        assert "$\\mathdefault{0.1}$" in major and script == float("inf")
        minor, _ = labels(0.015, 0.21, minor=True)
        assert "$\\mathdefault{0.03}$" in minor and "$\\mathdefault{0.2}$" in minor
        assert labels(0.5, 300)[0][-2:] == [
            "$\\mathdefault{100}$",
            "$\\mathdefault{1000}$",
        ]
        powers, script = labels(1e-12, 1e3)
        assert "$\\mathdefault{10^{-6}}$" in powers and script == pytest.approx(7.0)
        # another base keeps matplotlib's labels
        fig, ax = plt.subplots()
        ax.set_yscale("log", base=2)
        ax.set_ylim(1, 64)
        fig.canvas.draw()
        assert "$\\mathdefault{2^{3}}$" in [t.get_text() for t in ax.get_yticklabels()]
