"""The book's Sphinx extensions (``_ext/``): the parts that need no build."""

from __future__ import annotations

import re
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "_ext"))

citations = pytest.importorskip("citations")
page_scripts = pytest.importorskip("page_scripts")
nojs_math = pytest.importorskip("nojs_math")


def test_same_authors_and_year_get_letters_in_title_order():
    from pybtex.database import parse_file

    entries = parse_file(str(ROOT / "references.bib")).entries
    letters = citations.suffixes(entries)
    assert letters == {
        "srivastava2015highway": "a",  # "Highway Networks"
        "srivastava2015training": "b",  # "Training Very Deep Networks"
        "pascanu2013construct": "a",  # "How to Construct ..."
        "pascanu2013difficulty": "b",  # "On the Difficulty ..."
    }
    assert citations.authors(entries["gershgorin1931"]) == "Geršgorin"
    assert citations.authors(entries["zilly2017recurrent"]) == "Zilly et al."
    assert citations.authors(entries["hochreiter1997long"]) == (
        "Hochreiter and Schmidhuber"
    )


def test_icons_are_cut_from_the_icon_script_by_family():
    script = (
        'var p={"trash-can":[448,512,[61460,"trash-alt"],"f2ed","M1 1z"],'
        'github:[496,512,[],"f09b","M2 2z"]};s("fab",p);'
        'var q={bars:[448,512,["navicon"],"f0c9","M3 3z"]};s("fas",q);'
    )
    icons = page_scripts.icon_paths(script)
    assert icons["fab"]["github"] == (496, 512, "M2 2z")
    assert icons["fab"]["trash-alt"] == (448, 512, "M1 1z")  # an alias
    assert icons["fas"]["navicon"] == icons["fas"]["bars"] == (448, 512, "M3 3z")
    css = page_scripts.icons_css(icons, {"bars", "github", "unknown"})
    assert ".fa-solid.fa-bars" in css and ".fa-brands.fa-github" in css
    assert "viewBox='0 0 448 512'" in css
    assert "unknown" not in css


SOURCE = '''
import x


class Outer:
    """Outer's docstring."""

    def method(self, a):
        """Method's docstring,
        over two lines with ``markup``.
        """

        def helper(b):
            """Inner docstring."""
            return b + 1  # kept comment

        return helper(a)


if True:

    @decorator
    def guarded(z):
        "one-line docstring"
        return z
'''


def test_source_listing_drops_every_docstring_and_keeps_the_code():
    import source_listing

    method = source_listing.object_source(SOURCE, "Outer.method")
    assert method.splitlines()[0] == "def method(self, a):"
    assert "docstring" not in method and "``" not in method
    assert "    def helper(b):" in method and "# kept comment" in method
    assert method.rstrip().endswith("return helper(a)")
    # inside an if-block, decorator included, dedented
    guarded = source_listing.object_source(SOURCE, "guarded")
    assert guarded.splitlines() == ["@decorator", "def guarded(z):", "    return z"]
    with pytest.raises(ValueError, match="no 'missing'"):
        source_listing.object_source(SOURCE, "Outer.missing")


def test_chapters_show_package_code_through_rhn_source():
    import json
    import re

    for path in sorted((ROOT / "book").glob("*.ipynb")):
        for cell in json.loads(path.read_text())["cells"]:
            text = "".join(cell["source"])
            assert not re.search(r"\{literalinclude\}[^\n]*\n:pyobject:", text), (
                f"{path.name}: use rhn-source for package objects (no docstring)"
            )


def test_search_index_takes_the_name_without_its_accent():
    import search_fold

    assert search_fold.folds("geršgorin") == {"gershgorin", "gersgorin"}
    assert search_fold.folds("plain") == set()
    mapping = {"geršgorin": {"a", "b"}, "gershgorin": {"c"}, "plain": {"d"}}
    assert search_fold.add_folded(mapping) == 2
    assert mapping["gersgorin"] == {"a", "b"}
    assert mapping["gershgorin"] == {"a", "b", "c"}
    assert mapping["geršgorin"] == {"a", "b"} and mapping["plain"] == {"d"}


def test_a_page_keeps_one_viewport_tag_and_loads_mathjax_only_with_maths():
    html = (
        '<meta name="viewport" content="width=device-width, initial-scale=1.0" />'
        '<meta name="viewport" content="width=device-width, initial-scale=1" />\n'
        "<title>t</title>\n"
        '  <meta name="viewport" content="width=device-width, initial-scale=1"/>\n'
    )
    one = page_scripts.one_viewport(html)
    assert one.count('name="viewport"') == 1 and "<title>t</title>" in one
    assert page_scripts.one_viewport(one) == one
    assert page_scripts.has_math(r'<span class="math notranslate">\(x\)</span>')
    assert page_scripts.has_math(r"<p>\[ a = b \]</p>")
    assert not page_scripts.has_math("<p>a page about 2 + 2</p>")


def test_mathjax_config_breaks_lines_and_keeps_formulas_out_of_the_tab_order():
    import yaml

    config = yaml.safe_load((ROOT / "_config.yml").read_text())["sphinx"]["config"]
    mathjax = config["mathjax3_config"]
    assert mathjax["output"]["displayOverflow"] == "linebreak"
    assert mathjax["options"]["a11y"]["inTabOrder"] is False
    assert mathjax["options"]["menuOptions"]["settings"]["inTabOrder"] is False
    # the font from the site, not from a CDN
    assert mathjax["loader"]["paths"]["fonts"] == "[mathjax]/fonts"
    assert page_scripts.MATHJAX_FONT.name == "mathjax-newcm-font"


def test_a_phone_gets_the_narrow_drawing_of_a_figure():
    narrow_figures = pytest.importorskip("narrow_figures")
    html = (
        '<figure><img alt="a plot" src="../_images/abc.png" style="width: 640px;" />'
        '</figure><img src="../_images/other.png" />'
    )
    out = narrow_figures.picture(html, "abc.png", "abc-phone.png")
    assert out.count("<picture>") == 1
    assert (
        '<picture><source media="(max-width: 600px)" srcset="../_images/abc-phone.png"'
        ' type="image/png"><img alt="a plot" src="../_images/abc.png"'
    ) in out
    assert '<img src="../_images/other.png" />' in out  # another figure is left
    assert narrow_figures.picture(out, "abc.png", "abc-phone.png") == out


def test_narrow_png_redraws_a_row_of_panels_readable_at_a_phone():
    import base64
    import io

    import matplotlib
    from PIL import Image

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    from rhn import plots

    with matplotlib.rc_context(plots.STYLE):
        fig, axes = plt.subplots(1, 3, figsize=(7.2, 2.9), layout="constrained")
        for ax in axes:
            ax.plot([0, 1], [0, 1], label="RHN")
            ax.legend()
            ax.set_xlabel("lag n")
        specs = [ax.get_subplotspec() for ax in axes]
        png, meta = plots.figure_png_for_phone(fig)
        # the laptop's drawing is the figure as it was made; its text at a
        # phone's column would be under 10.5 px
        assert plots.smallest_text_px(png, plots.PHONE_COLUMN_PX) < plots.PHONE_TEXT_PX
        narrow = meta[plots.NARROW_KEY]
        data = base64.b64decode(narrow["png"])
        shown = min(narrow["width"], plots.PHONE_COLUMN_PX)
        assert plots.smallest_text_px(data, shown) >= plots.PHONE_TEXT_PX == 10.5
        assert round(plots.png_facts(data)[1]) == 300  # sharp on a 3x screen
        # the panels stacked: taller than wide (the row was 2.5 times wider)
        image = Image.open(io.BytesIO(data))
        assert image.height > image.width
        # and the figure is left as it was
        assert [ax.get_subplotspec() for ax in axes] == specs
        assert tuple(fig.get_size_inches()) == (7.2, 2.9)
        # a figure that reads on a phone as it is gets no second drawing
        small, _ = plt.subplots(figsize=(3.2, 2.4))
        assert plots.narrow_png(small) is None
        plt.close("all")


def test_narrow_png_lays_a_figure_legend_out_in_one_column():
    """Figure 4.1: two disc panels over a legend of three columns under both;
    the phone's drawing stacks the panels and puts the legend in one column
    (matplotlib keeps a legend's columns unless its box is built again)."""
    import base64

    import matplotlib
    import torch

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    from rhn import plots

    gen = torch.Generator().manual_seed(0)
    J = 0.25 * torch.randn(8, 8, generator=gen, dtype=torch.float64)
    J += torch.diag(torch.linspace(-4, 4, 8, dtype=torch.float64))
    with matplotlib.rc_context(plots.STYLE):
        fig, axes = plt.subplots(1, 2, figsize=(7.2, 3.6), layout="constrained")
        plots.plot_spectrum(J, ax=axes[0], title="(a) row discs of $J$")
        plots.plot_spectrum(J, ax=axes[1], columns=True, legend=False, title="(b)")
        key = axes[0].get_legend()
        fig.legend(
            key.legend_handles,
            [t.get_text() for t in key.get_texts()],
            loc="outside lower center",
            ncols=3,
        )
        key.remove()
        _, meta = plots.figure_png_for_phone(fig)
        narrow = meta[plots.NARROW_KEY]
        data = base64.b64decode(narrow["png"])
        shown = min(narrow["width"], plots.PHONE_COLUMN_PX)
        assert plots.smallest_text_px(data, shown) >= plots.PHONE_TEXT_PX
        assert fig.legends[0]._ncols == 3  # the figure is left as it was
        plt.close("all")


def _gershgorin_block(mosaic, size):
    """Complex-plane panels and a sweep, laid out by ``mosaic``, as in the
    chapter on Gersgorin's theorem."""
    import matplotlib.pyplot as plt
    import torch

    from rhn import plots

    fig = plt.figure(figsize=size, layout="constrained")
    axd = fig.subplot_mosaic(mosaic)
    J = torch.diag(torch.linspace(-3, 3, 6)) + 0.5
    for k in axd:
        if k != "s":
            plots.plot_spectrum(J, ax=axd[k], legend=False, title=f"$g = {k}$")
    for top in (10, 2, 3):
        axd["s"].plot([0, 1], [1, top], label=f"curve {top}")
    axd["s"].set(xlabel="weight scale $g$", ylabel="size", yscale="log")
    axd["s"].legend()
    return fig, axd


def test_narrow_png_gives_up_quietly_where_constrained_layout_collapses():
    """A row of two complex-plane panels and a sweep spanning two columns
    cannot be laid out at a phone's width (the row does not stack: a panel
    spans cells): no phone drawing, and none of matplotlib's warnings about
    the discarded attempt reach the page."""
    import warnings

    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    from rhn import plots

    with matplotlib.rc_context(plots.STYLE):
        fig, _ = _gershgorin_block([["0", "1", "s", "s"]], (7.2, 3.0))
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            assert plots.narrow_png(fig) is None
            assert plots.narrow_reason(fig) == "the layout engine could not lay it out"
        assert [str(w.message) for w in caught] == []
        assert tuple(fig.get_size_inches()) == (7.2, 3.0)
        plt.close("all")


def test_narrow_png_stacks_a_mosaic_block_and_the_panel_beside_it():
    """Figure 4.4: four complex-plane panels in a 2 x 2 block, the sweep
    beside them spanning both rows; on a phone the block's panels stack in
    reading order and the sweep comes after them."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    from rhn import plots

    with matplotlib.rc_context(plots.STYLE):
        mosaic = [["0", "1", "s"], ["2", "3", "s"]]
        fig, axd = _gershgorin_block(mosaic, (7.2, 5.0))
        _, meta = plots.figure_png_for_phone(fig)
        assert _phone_text_px(meta) >= plots.PHONE_TEXT_PX
        assert plots._panels(fig)[0] == [axd[k] for k in "0123s"]
        assert tuple(fig.get_size_inches()) == (7.2, 5.0)
        plt.close("all")


def test_a_figure_without_a_phone_drawing_scrolls_at_a_readable_width(tmp_path):
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    from rhn import plots

    narrow_figures = pytest.importorskip("narrow_figures")
    with matplotlib.rc_context(plots.STYLE):
        wide, ax = plt.subplots(figsize=(7.2, 3))  # 9 pt ticks: 6 px at 342 px
        ax.set_xlabel("lag n")
        small, ax = plt.subplots(figsize=(3.2, 2.4))  # reads on a phone as it is
        ax.set_xlabel("lag n")
        for name, fig in (("wide.png", wide), ("small.png", small)):
            (tmp_path / name).write_bytes(plots.figure_png(fig)[0])
        plt.close("all")
    html = '<img src="../_images/wide.png" /><p>x</p><img src="../_images/small.png" />'
    out = narrow_figures.scroll_wide(html, tmp_path)
    assert out.count("rhn-wide-figure") == 1
    need = narrow_figures.readable_width((tmp_path / "wide.png").read_bytes())
    png = (tmp_path / "wide.png").read_bytes()
    assert plots.smallest_text_px(png, need) == pytest.approx(10.7)
    assert f"--rhn-read-width: {need:.0f}px" in out
    assert '<img src="../_images/small.png" />' in out
    assert narrow_figures.scroll_wide(out, tmp_path) == out


def test_a_scrolling_figure_is_as_wide_as_its_scripts_need(tmp_path):
    """The exponents of a log axis (0.7 of the tick labels) set the width a
    figure without a phone drawing scrolls at: 9 px even where rhn-site.js
    fits it to the column (its text at 9.5 px rather than 10.7)."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    from rhn import plots

    narrow_figures = pytest.importorskip("narrow_figures")
    with matplotlib.rc_context(plots.STYLE):
        fig, ax = plt.subplots(figsize=(7.2, 3))
        ax.semilogy([1, 2], [1e-5, 1])
        png = plots.figure_png(fig)[0]
        plt.close(fig)
    need = narrow_figures.readable_width(png)
    assert plots.smallest_script_px(png, need) == pytest.approx(
        narrow_figures.MIN_SCRIPT_PX
    )
    assert plots.smallest_text_px(png, need) > narrow_figures.MIN_TEXT_PX
    fitted = need * 9.5 / narrow_figures.MIN_TEXT_PX  # rhn-site.js's fit
    assert plots.smallest_script_px(png, fitted) == pytest.approx(plots.SCRIPT_PX)


def test_narrow_png_draws_for_a_phone_a_figure_whose_scripts_are_small_there():
    """A figure 4.3 in wide: in a phone's column its text is over 10.5 px but
    the exponents of its log axis are under 9 px; its phone drawing has both."""
    import base64

    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    from rhn import plots

    with matplotlib.rc_context(plots.STYLE):
        fig, ax = plt.subplots(figsize=(4.3, 3.0), layout="constrained")
        ax.semilogy([1, 40], [1e-9, 1], label="RHN $b_T = 2$")
        ax.set(xlabel="lag $n$", ylabel="gradient norm")
        ax.legend()
        png, meta = plots.figure_png_for_phone(fig)
        plt.close(fig)
    column = plots.PHONE_COLUMN_PX
    assert plots.smallest_text_px(png, column) >= plots.PHONE_TEXT_PX
    assert plots.smallest_script_px(png, column) < plots.SCRIPT_PX
    narrow = meta[plots.NARROW_KEY]
    data = base64.b64decode(narrow["png"])
    shown = min(narrow["width"], column)
    assert plots.smallest_text_px(data, shown) >= plots.PHONE_TEXT_PX
    assert plots.smallest_script_px(data, shown) >= plots.SCRIPT_PX


def _growth_figure(labels, suptitle=None):
    """Two panels sharing y, their legend under both, as figure 3.3."""
    import matplotlib.pyplot as plt

    fig, axes = plt.subplots(
        1, 2, figsize=(7.2, 4.8), sharey=True, layout="constrained"
    )
    for ax, letter in zip(axes, "ab", strict=True):
        for k, label in enumerate(labels):
            ax.plot([0.5, 1, 1.5, 2], [0.5 + k, 1, 2, 3], "o-", label=label)
        ax.set(xlabel="weight scale $g$", title=f"({letter}) orthogonal $R$")
    axes[0].set_ylabel("growth factor per step")
    if suptitle:
        fig.suptitle(suptitle)
    fig.legend(*axes[0].get_legend_handles_labels(), loc="outside lower center")
    return fig


def _phone_script_px(meta):
    import base64

    from rhn import plots

    narrow = meta[plots.NARROW_KEY]
    data = base64.b64decode(narrow["png"])
    return plots.smallest_script_px(data, min(narrow["width"], plots.PHONE_COLUMN_PX))


def test_narrow_png_breaks_a_legend_entry_wider_than_a_phone_onto_two_lines():
    """A legend entry of some 60 characters with formulas would keep the
    phone's drawing wider than its column (its scripts under 9 px there);
    broken at a space outside the formulas it fits, and the figure keeps
    its own labels."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    from rhn import plots

    labels = [
        r"$\gamma\,\|R\|_2$, the bound",
        r"estimate from the slopes: geometric mean over the steps of "
        r"$g\,\mathrm{rms}_i\, f'(a^{[t]}_i)$",
    ]
    with matplotlib.rc_context(plots.STYLE):
        fig = _growth_figure(labels)
        _, meta = plots.figure_png_for_phone(fig)
        assert [t.get_text() for t in fig.legends[0].get_texts()] == labels
        plt.close(fig)
    assert _phone_text_px(meta) >= plots.PHONE_TEXT_PX
    assert _phone_script_px(meta) >= plots.SCRIPT_PX


def test_narrow_png_breaks_the_longest_line_of_a_title_of_two_lines():
    """Figure 3.3's title is two lines already; its longer one, wider than a
    phone's drawing, is broken again (a third line), so the drawing fits the
    column and its scripts are 9 px."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    from rhn import plots

    two = (
        "Per-step growth of the gradient:\nbound, Jacobian norms, estimate, measurement"
    )
    assert plots._split_in_two(two) == (
        "Per-step growth of the gradient:\nbound, Jacobian norms,\n"
        "estimate, measurement"
    )
    labels = [r"$\gamma\,\|R\|_2$, the bound", r"measured rate $q^{1/T}$"]
    with matplotlib.rc_context(plots.STYLE):
        fig = _growth_figure(labels, suptitle=two)
        _, meta = plots.figure_png_for_phone(fig)
        assert fig._suptitle.get_text() == two
        plt.close(fig)
    assert _phone_text_px(meta) >= plots.PHONE_TEXT_PX
    assert _phone_script_px(meta) >= plots.SCRIPT_PX


def _build_html(src, tmp_path):
    """Build the small Sphinx project in ``src`` to HTML; returns the folder."""
    sphinx_app = pytest.importorskip("sphinx.application")
    out = tmp_path / "html"
    sphinx_app.Sphinx(
        str(src),
        str(src),
        str(out),
        str(tmp_path / "doctrees"),
        "html",
        status=None,
        warning=None,
        freshenv=True,
    ).build()
    return out


def test_chapter_links_read_chapter_n_and_textual_citations_link_whole(tmp_path):
    """A small book built with the two extensions: ``{ref}`` to a chapter gives
    "chapter N" (title as tooltip), ``{cite:t}`` links "Authors [year]"."""
    src = tmp_path / "src"
    src.mkdir()
    (src / "conf.py").write_text(
        "import sys\n"
        f"sys.path.insert(0, {str(ROOT / '_ext')!r})\n"
        "extensions = ['myst_parser', 'sphinxcontrib.bibtex', 'citations',"
        " 'chapter_refs']\n"
        "bibtex_bibfiles = ['refs.bib']\n"
        "bibtex_reference_style = 'rhn_author_year'\n"
        "bibtex_default_style = 'rhn_author_year'\n"
    )
    (src / "refs.bib").write_text(
        "@article{zilly2017, author = {Zilly, J. and Srivastava, R. and"
        " Koutn{\\'\\i}k, J. and Schmidhuber, J.}, title = {Recurrent Highway"
        " Networks}, journal = {ICML}, year = {2017}}\n"
    )
    (src / "index.md").write_text(
        "# Book\n\n```{toctree}\n:numbered:\none\ntwo\nback\n```\n"
    )
    (src / "one.md").write_text("(ch-one)=\n# The first chapter\n\nText.\n")
    (src / "back.md").write_text("(back)=\n# Notation\n\nText.\n")
    (src / "two.md").write_text(
        "(ch-two)=\n# The second chapter\n\n(sec-two)=\n## A section\n\n"
        "As {ref}`ch-one` showed.\n\n"
        "{ref}`ch-one` starts it.\n\n"
        "Chapters {ref}`ch-one` and {ref}`ch-two` agree.\n\n"
        "Both ({ref}`ch-one`, {ref}`ch-two`).\n\n"
        "Told in chapter\n{ref}`ch-one` across a line break.\n\n"
        "Earlier breaks stay: the\ngradient, the\nstate, then chapter\n"
        "{ref}`ch-two` last.\n\n"
        "Chapters {ref}`ch-one` and\n{ref}`ch-two` agree across one.\n\n"
        "Unchanged: {ref}`sec-two`, {ref}`the first <ch-one>`.\n\n"
        "{cite:t}`zilly2017` and {cite:p}`zilly2017`.\n\n"
        "```{bibliography}\n```\n"
    )
    out = _build_html(src, tmp_path)
    html = (out / "two.html").read_text(encoding="utf-8")
    text = re.sub(r"<[^>]+>", "", html)
    assert "As chapter\xa01 showed." in text  # a no-break space
    # the word the prose says joins the link: "chapter 1" is one link
    links = [
        re.sub(r"<[^>]+>", "", a)
        for a in re.findall(r"<a [^>]*rhn-chapter-ref[^>]*>(.*?)</a>", html, re.S)
    ]
    assert links[:4] == ["chapter\xa01", "Chapter\xa01", "Chapters\xa01", "2"]
    text = text.replace("\xa0", " ")
    assert "Chapter 1 starts it." in text
    assert "Chapters 1 and 2 agree." in text
    assert "Chapters 1 and\n2 agree across one." in text  # not "chapter 2"
    assert "Both (chapters 1, 2)." in text
    # "chapter" at the end of a source line still joins the link, once
    assert "Told in chapter 1 across" in text
    # the earlier line breaks of that paragraph stay spaces (they are Text
    # nodes equal to the one the link takes "chapter" from)
    assert "the\ngradient, the\nstate, then chapter 2 last." in text
    assert "chapter chapter" not in text.lower()
    assert "Unchanged: A section, the first." in text
    assert 'title="The first chapter"' in html
    # {cite:t}: one link around authors and year; {cite:p} as before
    link = re.search(r'<a [^>]*href="#id\d+"[^>]*>(.*?)</a>', html, re.S)
    assert link and re.sub(r"<[^>]+>", "", link.group(1)) == "Zilly et al. [2017]"
    assert "[Zilly et al., 2017]" in text


def test_a_page_without_javascript_gets_the_light_theme():
    page_scripts = pytest.importorskip("page_scripts")
    html = (
        '<html lang="en" data-content_root="../" data-theme="auto">\n<head>'
        '<script>document.documentElement.dataset.theme = "auto";</script>'
    )
    out = page_scripts.light_without_script(html)
    assert out.startswith('<html lang="en" data-content_root="../" data-theme="light">')
    # the inline script, which sets the reader's mode with JavaScript, is kept
    assert out.endswith('dataset.theme = "auto";</script>')
    assert page_scripts.light_without_script(out) == out


def test_a_page_without_javascript_hides_the_buttons_that_need_it():
    page_scripts = pytest.importorskip("page_scripts")
    html = "<html><head><title>t</title></head><body>x</body></html>"
    out = page_scripts.hide_script_buttons(html)
    head = out[: out.index("</head>")]
    assert "<noscript><style>" in head and ".sidebar-toggle" in head
    assert ".dropdown-toggle" in head  # the header's menus
    assert page_scripts.hide_script_buttons(out) == out  # once
    assert page_scripts.hide_script_buttons("<p>no head</p>") == "<p>no head</p>"


def test_the_skip_link_leads_past_the_header_buttons_to_the_article():
    page_scripts = pytest.importorskip("page_scripts")
    html = (
        '<div class="skip-link"><a href="#main-content">Skip to main content</a>'
        '</div><main id="main-content"><div class="header">buttons</div>'
        '<article class="bd-article"><h1>Title</h1></article></main>'
    )
    out = page_scripts.skip_to_article(html)
    assert '<a href="#rhn-article">Skip to main content</a>' in out
    assert '<article class="bd-article" id="rhn-article" tabindex="-1">' in out
    assert page_scripts.skip_to_article(out) == out  # once
    assert page_scripts.skip_to_article("<p>no link</p>") == "<p>no link</p>"


def _phone_text_px(meta):
    import base64

    from rhn import plots

    narrow = meta[plots.NARROW_KEY]
    data = base64.b64decode(narrow["png"])
    return plots.smallest_text_px(data, min(narrow["width"], plots.PHONE_COLUMN_PX))


def test_narrow_png_breaks_a_title_wider_than_a_phone_onto_two_lines():
    """Figure 6.2: one axes under a title of 47 characters, which does not
    shrink with the figure; the phone's drawing breaks it in two."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    from rhn import plots

    title = "Hidden size at a fixed budget of 690,688 parameters"
    with matplotlib.rc_context(plots.STYLE):
        fig, ax = plt.subplots(figsize=(5.5, 3.2))
        ax.plot(range(1, 11), [556 / d**0.5 for d in range(1, 11)], label="RHN")
        ax.axhline(384, ls="--", label="LSTM")
        ax.set(xlabel="recurrence depth D", ylabel="hidden size H", title=title)
        ax.legend()
        _, meta = plots.figure_png_for_phone(fig)
        assert _phone_text_px(meta) >= plots.PHONE_TEXT_PX
        assert plots.narrow_reason(fig) == ""
        assert ax.get_title() == title  # the figure is left as it was
        # a break falls outside $...$ and at the space nearest the middle
        assert plots._split_in_two("a $b c$ d e") == "a $b c$\nd e"
        assert plots._split_in_two("$x y$") is None
        plt.close("all")


def test_narrow_png_stacks_a_grid_of_panels_in_one_column():
    """Figure 11.2: five panels and a legend's panel in a 2 x 3 grid, y axes
    shared; on a phone they stack, each with its own y tick labels."""
    import base64
    import io

    import matplotlib
    import numpy as np
    from PIL import Image

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    from rhn import plots

    with matplotlib.rc_context(plots.STYLE):
        fig, axes = plt.subplots(2, 3, figsize=(7.2, 4.8), sharex=True, sharey=True)
        steps = np.arange(50, 1001, 50)
        for i, ax in enumerate(axes.flat[:5]):
            ax.plot(steps, np.logspace(0, -3, len(steps)))
            ax.set(yscale="log", title=f"LSTM, forget bias +1\n(H = {40 + i})")
        axes[1, 0].set_ylabel("held-out loss")
        axes.flat[5].axis("off")
        fig.tight_layout()
        lines = [plt.Line2D([], [], label=f"seed {k}") for k in range(5)]
        axes.flat[5].legend(handles=lines, loc="center")
        specs = [ax.get_subplotspec() for ax in axes.flat]
        _, meta = plots.figure_png_for_phone(fig)
        assert _phone_text_px(meta) >= plots.PHONE_TEXT_PX
        assert plots._panels(fig) == (list(axes.flat), (2, 3))
        png = base64.b64decode(meta[plots.NARROW_KEY]["png"])
        image = Image.open(io.BytesIO(png))
        assert image.height > 3 * image.width  # six panels, one above the other
        assert [ax.get_subplotspec() for ax in axes.flat] == specs
        assert not axes[0, 1].yaxis.get_tick_params()["labelleft"]
        plt.close("all")


def test_narrow_png_moves_a_legend_too_big_for_its_axes_below_them():
    """Figure 10.3: a two-column legend in the axes' corner; in one column on
    a phone it would cover the plot and its texts, so it goes under the axes
    (below the x label), and the figure keeps its legend where it was."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    from rhn import plots

    with matplotlib.rc_context(plots.STYLE):
        fig, ax = plt.subplots(figsize=(6.4, 3.6))
        for k, name in enumerate(["RHN, init", "RHN, trained", "DT, init", "DT"]):
            ax.plot([0.1 * k, 1, 2, 3], [1e0, 1e-10, 1e-20, 1e-46], "o", label=name)
        ax.text(2.2, 2e-46, "norm 0 in float32", va="bottom")
        ax.set(
            yscale="log",
            ylim=(1e-47, 1e2),
            xlabel="recurrence depth $D$",
            ylabel="gradient norm at lag 30",
            title="Gradient at the first step",
        )
        legend = ax.legend(ncol=2, loc="lower left")
        before = plots.figure_png(fig)[0]
        _, meta = plots.figure_png_for_phone(fig)
        assert _phone_text_px(meta) >= plots.PHONE_TEXT_PX
        # the figure is drawn as before: legend, columns and place restored
        assert plots.figure_png(fig)[0] == before
        assert legend._ncols == 2 and legend._loc == 3
        # moved under the axes: its top below the x label's bottom
        fig.canvas.draw()
        moved: list = []
        legend.set_bbox_to_anchor((0, 0, 1, 1), transform=ax.transAxes)
        assert plots._legends_below(fig, moved)
        fig.canvas.draw()
        renderer = fig.canvas.get_renderer()
        top = legend.get_window_extent(renderer).y1
        assert top < ax.xaxis.label.get_window_extent(renderer).y0
        plt.close("all")


def test_a_legend_laid_out_again_keeps_its_place_and_has_no_empty_title_row():
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    from rhn import plots

    fig, ax = plt.subplots(figsize=(4, 3))
    for k in range(4):
        ax.plot([0, 1], [k, k], label=f"line {k}")
    legend = ax.legend(ncol=2, loc="lower left")
    plots._legend_columns(legend, 1)
    fig.canvas.draw()
    box = legend.get_window_extent()
    assert ax.bbox.x0 <= box.x0 and ax.bbox.y0 <= box.y0  # inside the axes
    assert not legend.get_title().get_visible()
    plt.close("all")


def test_narrow_png_turns_crowded_labels_of_two_lines_upright():
    """Figure 5.3: six categories named on two lines each; slanted at a
    phone's width they still collide, upright they do not, and the plot
    keeps at least half its panel's height."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    from rhn import plots

    with matplotlib.rc_context(plots.STYLE):
        fig, ax = plt.subplots(figsize=(7.2, 4.2))
        names = ["plain", "He init"]
        names += [f"highway\n$b_T$ = {b}" for b in (0, -2, -3, -4)]
        for j in range(6):
            for r in range(5):
                x = [j - 0.2 + 0.1 * r] * 10
                label = f"repeat {r + 1}" if j == 0 else None
                ax.plot(x, [0.1 + 0.05 * k for k in range(10)], "o", label=label)
        ax.axhline(0.69, ls=":", label="chance, ln 2")
        ax.set_xticks(range(6), names)
        ax.set(ylabel="lowest held-out loss", title="50 layers, 10 seeds")
        ax.legend(ncol=3, loc="upper center", bbox_to_anchor=(0.5, -0.15))
        fig.tight_layout()
        _, meta = plots.figure_png_for_phone(fig)
        assert _phone_text_px(meta) >= plots.PHONE_TEXT_PX
        assert ax.get_xticklabels()[0].get_rotation() == 0  # left as it was
        plt.close("all")


def test_phone_figures_tells_each_figure_of_a_chapter_apart():
    """tools/phone_figures.py: a figure with a phone drawing, one that reads
    as it is, one the site fits to the column and one that scrolls."""
    import base64
    import importlib.util

    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    from rhn import plots

    root = Path(__file__).resolve().parent.parent
    spec = importlib.util.spec_from_file_location(
        "phone_figures", root / "tools" / "phone_figures.py"
    )
    tool = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(tool)

    def output(size, narrow=False):
        with matplotlib.rc_context(plots.STYLE):
            fig, ax = plt.subplots(figsize=size)
            ax.set_xlabel("lag n")
            png, meta = plots.figure_png(fig)
            plt.close(fig)
        if narrow:
            meta[plots.NARROW_KEY] = {"png": "", "width": 300}
        data = {"image/png": base64.b64encode(png).decode()}
        return {"data": data, "metadata": {"image/png": meta}}

    def cell(name, out):
        figure = {"mystnb": {"figure": {"name": name}}}
        return {"cell_type": "code", "metadata": figure, "outputs": [out]}

    notebook = {
        "cells": [
            cell("phone", output((7.2, 3), narrow=True)),
            cell("small", output((3.2, 2.4))),
            cell("fits", output((5.3, 2.4))),  # about 10 px at 342 px
            cell("wide", output((7.2, 3))),  # about 7 px at 342 px
        ]
    }
    verdicts = dict(tool.figures(notebook))
    assert verdicts["phone"] == "phone drawing"
    assert verdicts["small"] == "reads as it is"
    assert verdicts["fits"].startswith("fits")
    assert verdicts["wide"].startswith("scrolls")


def test_punctuation_after_a_short_formula_stays_on_its_line(tmp_path):
    """A built page: ``$x$.`` becomes one no-wrap span; a long formula, a
    formula before a word and a formula at a paragraph's end stay as they are."""
    src = tmp_path / "src"
    src.mkdir()
    (src / "conf.py").write_text(
        "import sys\n"
        f"sys.path.insert(0, {str(ROOT / '_ext')!r})\n"
        "extensions = ['myst_parser', 'math_punct']\n"
        "myst_enable_extensions = ['dollarmath']\n"
    )
    long = "a_1 + a_2 + a_3 + a_4 + a_5 + a_6 + a_7 + a_8 + a_9"
    (src / "index.md").write_text(
        "# Page\n\nShort $x_t$. Then $y$), and $z$ words.\n\n"
        f"Long ${long}$. End $w$\n\n"
        # a text equal to the one after a formula stands earlier (", "), and
        # soft line breaks: every word and comma stays where it was
        "Use (`code`,\n$a = 1$, $b = 2$,\n$c = 3$)? As $d$, $e$ and the\n"
        "gradient passes.\n"
    )
    out = _build_html(src, tmp_path)
    html = (out / "index.html").read_text(encoding="utf-8")
    boxes = re.findall(r'<span class="rhn-nowrap">(.*?)</span>(?=[^<]*)', html)
    glued = re.findall(
        r'<span class="rhn-nowrap"><span class="math[^"]*">\\\((.*?)\\\)</span>'
        r"([^<]*)</span>",
        html,
    )
    assert glued[:2] == [("x_t", "."), ("y", "),")], boxes
    assert glued[2:] == [("a = 1", ","), ("b = 2", ","), ("c = 3", ")?"), ("d", ",")]
    assert "Then " in html and " and " in html  # the text after stays
    assert f"\\({long}\\)</span>." in html  # too long to glue
    assert html.count("rhn-nowrap") == 6
    text = re.sub(r"<[^>]+>", "", html)
    assert "Use (code,\n\\(a = 1\\), \\(b = 2\\),\n\\(c = 3\\))?" in text
    assert "As \\(d\\), \\(e\\) and the\ngradient passes." in text


def test_api_citations_find_author_year_pairs_and_tell_twins_apart():
    api = pytest.importorskip("api_citations")
    text = (
        "variational (Gal and Ghahramani, 2016): reused; the paper (Zilly et al., "
        "2017, section 5.1); Zilly et al. (2017) hold; (Gers et al., 2000; "
        "Jozefowicz et al., 2015); Boulanger-Lewandowski et al., 2012; values "
        "and weights, 2016; inputs and Outputs, 2016; study (Zilly\n    et al., "
        "2017, section 5.1)"
    )
    found = [m.group(0) for m in api.CITATION.finditer(text)]
    assert found == [
        "Gal and Ghahramani, 2016",
        "Zilly et al., 2017",
        "Zilly et al. (2017)",
        "Gers et al., 2000",
        "Jozefowicz et al., 2015",
        "Boulanger-Lewandowski et al., 2012",
        "Zilly\n    et al., 2017",
    ]
    entries = [
        ("Srivastava et al., 2015a", "Highway Networks", "book/bibliography", "id4"),
        ("Srivastava et al., 2015b", "Training Very Deep Networks", "b", "id5"),
        ("Zilly et al., 2017", "Recurrent Highway Networks", "b", "id3"),
    ]
    assert api._choose("Zilly et al.", "2017", "", entries)[3] == "id3"
    twin = " (Training very deep\n    networks) define it"  # the text after the year
    assert api._choose("Srivastava et al.", "2015", twin, entries)[3] == "id5"
    assert (
        api._choose("Srivastava et al.", "2015", ", Highway networks", entries)[3]
        == "id4"
    )
    assert api._choose("Srivastava et al.", "2015", "no title", entries) is None
    # a title further on is not the citation's
    later = "). Highway networks carry the input."
    assert api._choose("Srivastava et al.", "2015", later, entries) is None
    assert api._choose("Cho et al.", "2014", "", entries) is None


def test_api_citations_link_each_citation_to_its_own_entry_in_a_doctree():
    """On a parsed docstring: two citations of one author-year pair in one
    paragraph each link to the paper whose title follows it; one without a
    title is left as text, with a warning; code and doctest blocks are left
    alone."""
    from types import SimpleNamespace

    from docutils import nodes
    from docutils.core import publish_doctree

    api = pytest.importorskip("api_citations")
    source = (
        "Srivastava et al., 2015 (*Training very deep networks*) train deep\n"
        "nets, and Srivastava et al., 2015 (*Highway networks*) define the\n"
        "layer; Srivastava et al., 2015. Highway networks carry their input.\n"
        "``Zilly et al., 2017`` in code.\n\n"
        ">>> f()  # Zilly et al., 2017\n"
    )
    doctree = publish_doctree(source, settings_overrides={"report_level": 5})

    def citation(label, title, anchor):
        return SimpleNamespace(
            formatted_entry=SimpleNamespace(label=label),
            entry=SimpleNamespace(fields={"title": title}),
            bibliography_key=SimpleNamespace(docname="book/bibliography"),
            citation_id=anchor,
        )

    cited = [
        citation("Srivastava et al., 2015a", "Highway Networks", "id4"),
        citation("Srivastava et al., 2015b", "Training Very Deep Networks", "id5"),
        citation("Zilly et al., 2017", "Recurrent Highway Networks", "id3"),
    ]
    app = SimpleNamespace(
        env=SimpleNamespace(get_domain=lambda name: SimpleNamespace(citations=cited)),
        builder=SimpleNamespace(get_relative_uri=lambda a, b: "bibliography.html"),
    )
    warned = []
    original = api.logger.warning
    api.logger.warning = lambda *args, **kw: warned.append(args[1])
    try:
        api.link_citations(app, doctree, "book/api")
    finally:
        api.logger.warning = original
    links = [(r.astext(), r["refuri"]) for r in doctree.findall(nodes.reference)]
    assert links == [
        ("Srivastava et al., 2015", "bibliography.html#id5"),
        ("Srivastava et al., 2015", "bibliography.html#id4"),
    ]
    assert warned == ["Srivastava et al., 2015"]  # the third: no title after it


def test_formulas_get_a_mathml_twin_for_readers_without_javascript():
    """Every formula Sphinx writes for MathJax gets MathJax's own MathML after
    it, in <noscript>; the TeX source is hidden there, numbers kept."""
    inline = '<span class="math notranslate nohighlight">\\(a &lt; b\\)</span>'
    display = (
        '<div class="math notranslate nohighlight" id="equation-e">\n'
        '<span class="eqno">(4.1)<a class="headerlink" href="#equation-e">#</a>'
        "</span>\\[\\lVert J \\rVert_\\infty\\]</div>"
    )
    env = (
        '<div class="math notranslate nohighlight">\n'
        "\\begin{aligned} x &amp;= 1 \\end{aligned}</div>"
    )
    page = f"<html><head></head><body><p>{inline}</p>{display}{env}</body></html>"
    assert nojs_math.formulas(page) == [
        ("a < b", False),
        ("\\lVert J \\rVert_\\infty", True),
        ("\\begin{aligned} x &= 1 \\end{aligned}", True),
    ]
    found = nojs_math.formulas(page)
    mathml = dict(zip(found, nojs_math.to_mathml(found, {}), strict=True))
    assert all(m.startswith("<math") and "data-latex" not in m for m in mathml.values())
    assert mathml["a < b", False].count("<mo>&lt;</mo>") == 1
    assert 'display="block"' in mathml["\\lVert J \\rVert_\\infty", True]
    out = nojs_math.with_mathml(page, mathml)
    assert out.count("<noscript>") == 4  # three formulas and the style
    assert out.count(nojs_math.STYLE) == 1 and out.index(nojs_math.STYLE) < out.index(
        "</head>"
    )
    assert inline + "<noscript><math" in out  # right after its formula
    assert '<span class="rhn-nojs-eqno">(4.1)</span><math' in out
    assert nojs_math.with_mathml(out, mathml) == out  # a second pass: nothing
    # MathJax could not read it: no twin, the TeX stays
    assert nojs_math.with_mathml(page, {}) == page
