"""Browser tests of the built book: every page in headless Chromium.

Run by ``make browser`` after the strict book build (``make test`` does both);
plain ``pytest`` skips this module because there may be no built site. The
site is served from ``_build/html`` (or ``$RHN_SITE``) on 127.0.0.1; every
request that leaves 127.0.0.1 fails the test (MathJax and the widget loader
are the site's own: ``_ext/page_scripts.py``, ``_ext/widget_scripts.py``).
Chromium is Debian's
(``/usr/bin/chromium``, or ``$CHROMIUM``); Playwright drives it and never
downloads a browser.

For every page: it loads with no uncaught error; math is typeset by MathJax;
every image has loaded and each notebook figure is on the page; and, on pages
with interactive figures (``rhn.widgets``), moving each slider or toggle
changes the numbers the figure computed and its drawing. The numbers
themselves are compared with the package in ``test_widgets_site.py``.
Screenshots go to ``test-output/browser/`` so that a failure can be looked at.
"""

from __future__ import annotations

import json
import os
import re
from pathlib import Path

import pytest

if not os.environ.get("RHN_BROWSER_TESTS"):
    pytest.skip(
        "browser tests run with `make browser`, after the book is built",
        allow_module_level=True,
    )

from playwright.sync_api import Page  # noqa: E402
from playwright.sync_api import TimeoutError as PlaywrightTimeoutError  # noqa: E402

from .common import OUT, SITE, Visit  # noqa: E402

EXECUTED = SITE.parent / "jupyter_execute"  # notebooks with outputs, from the build
MAX_PAGE_BYTES = 5 * 1024 * 1024
WIDGET_VIEW = "application/vnd.jupyter.widget-view+json"
WIDGET_STATE = "application/vnd.jupyter.widget-state+json"
FIGURE_CLASS = "rhn-interactive-figure"  # rhn.widgets.DOM_CLASS


def _pages() -> list[str]:
    if not (SITE / "index.html").is_file():
        raise FileNotFoundError(f"no built site at {SITE}: run `make book` first")
    skip = {"_static", "_sources", "_images"}
    return sorted(
        p.relative_to(SITE).as_posix()
        for p in SITE.rglob("*.html")
        if not skip & set(p.relative_to(SITE).parts)
    )


PAGES = _pages()


def _notebook(page: str) -> dict | None:
    """The executed notebook a page was made from (``None`` for .md pages)."""
    path = (EXECUTED / page).with_suffix(".ipynb")
    return json.loads(path.read_text()) if path.is_file() else None


def _count_outputs(nb: dict | None) -> tuple[int, int]:
    """(static figures, interactive figures) that the page should show.

    Interactive figures are the ``rhn.widgets`` figures whose views are among
    the outputs (other widgets, such as progress bars, are not counted).
    """
    figures, views = 0, set()
    for cell in (nb or {}).get("cells", []):
        for out in cell.get("outputs", []):
            data = out.get("data", {})
            if WIDGET_VIEW in data:
                views.add(data[WIDGET_VIEW]["model_id"])
            elif "image/png" in data or "image/svg+xml" in data:
                figures += 1
    state = (nb or {}).get("metadata", {}).get("widgets", {})
    models = state.get(WIDGET_STATE, {}).get("state", {})
    interactive = sum(
        1
        for model_id in views
        if FIGURE_CLASS
        in models.get(model_id, {}).get("state", {}).get("_dom_classes", [])
    )
    return figures, interactive


def _shot_name(page_path: str, suffix: str = "") -> Path:
    return OUT / (re.sub(r"[^A-Za-z0-9_.-]", "_", page_path) + suffix + ".png")


def _wait_for_mathjax(page: Page) -> None:
    # MathJax (3 and 4) replaces the config object window.MathJax once loaded
    page.wait_for_function(
        "() => !window.MathJax || (window.MathJax.startup && "
        "window.MathJax.startup.promise)",
        timeout=30000,
    )
    page.evaluate("async () => { if (window.MathJax) await MathJax.startup.promise; }")


@pytest.mark.parametrize("visit", PAGES, indirect=True, ids=PAGES)
def test_page(visit: Visit) -> None:
    page, page_path = visit.page, visit.page.url.split("/", 3)[-1]
    if visit.redirect:  # the page it leads to is tested on its own
        assert page_path in PAGES, f"redirect to a page that is not built: {page_path}"
        assert not visit.errors, f"uncaught errors: {visit.errors}"
        return
    _wait_for_mathjax(page)
    nb = _notebook(page_path)
    figures, interactive = _count_outputs(nb)
    if interactive:
        # the widget manager renders the views from the saved state on load,
        # and each figure draws itself at once (rhn/widgets/js/index.js)
        page.wait_for_function(
            f"() => document.querySelectorAll('.{FIGURE_CLASS} .rhn-widget"
            f"[data-rhn-numbers] svg').length >= {interactive}",
            timeout=60000,
        )
    # long pages (the API reference) take a while to capture on a loaded machine
    page.screenshot(path=_shot_name(page_path), full_page=True, timeout=120000)

    assert not visit.errors, f"uncaught errors on {page_path}: {visit.errors}"
    assert not visit.blocked, f"{page_path} requested unknown hosts: {visit.blocked}"
    assert (SITE / page_path).stat().st_size < MAX_PAGE_BYTES

    # math: every formula the page has is rendered by MathJax
    math = page.evaluate(
        """() => {
        const all = [...document.querySelectorAll('.math')];
        return {total: all.length,
                typeset: all.filter(e => e.querySelector('mjx-container')).length};
    }"""
    )
    assert math["typeset"] == math["total"], f"untypeset math on {page_path}: {math}"
    if nb is not None and any(
        "$" in "".join(c["source"]) for c in nb["cells"] if c["cell_type"] == "markdown"
    ):
        assert math["total"] > 0, f"{page_path} has $...$ in its source but no math"

    # figures: every image loaded, every figure output of the notebook shown
    broken = page.evaluate(
        "() => [...document.images].filter(i => !(i.complete && i.naturalWidth > 0))"
        ".map(i => i.src.slice(0, 80))"
    )
    assert not broken, f"images that did not load on {page_path}: {broken}"
    shown = page.evaluate(
        "() => [...document.querySelectorAll('.cell_output img')]"
        ".filter(i => !i.closest('.jupyter-widgets') && i.naturalWidth > 0).length"
    )
    assert shown >= figures, (
        f"{page_path}: {shown} figures shown, notebook has {figures}"
    )


def _widget_pages() -> list[str]:
    return [p for p in PAGES if _count_outputs(_notebook(p))[1]]


_FIGURE_STATE_JS = """(root) => {
    const w = root.querySelector('.rhn-widget');
    return {numbers: w.dataset.rhnNumbers, svg: w.querySelector('svg').innerHTML};
}"""


@pytest.mark.parametrize("visit", _widget_pages(), indirect=True, ids=_widget_pages())
def test_sliders_move_the_figure(visit: Visit) -> None:
    """Every slider and toggle of every figure changes the numbers and the SVG."""
    page, page_path = visit.page, visit.page.url.split("/", 3)[-1]
    expected = _count_outputs(_notebook(page_path))[1]
    page.wait_for_selector(f".{FIGURE_CLASS} .rhn-widget[data-rhn-numbers] svg")
    outputs = page.locator(f".{FIGURE_CLASS}")
    assert outputs.count() == expected
    moved = 0
    for i in range(outputs.count()):
        output = outputs.nth(i)
        output.scroll_into_view_if_needed()
        sliders = output.locator("input[type=range]")
        toggles = output.locator("[role=group]")
        assert sliders.count() + toggles.count() >= 1, f"{page_path}: no control"
        controls = [("slider", k) for k in range(sliders.count())]
        controls += [("toggle", k) for k in range(toggles.count())]
        for kind, k in controls:
            before = output.evaluate(_FIGURE_STATE_JS)
            if kind == "slider":
                slider = sliders.nth(k)
                lo, hi = (float(slider.get_attribute(a)) for a in ("min", "max"))
                now = float(slider.input_value())
                # a value between any grid points, away from the current one
                target = lo + 0.6180339 * (hi - lo)
                if abs(target - now) < 0.05 * (hi - lo):
                    target = lo + 0.1 * (hi - lo)
                slider.fill(str(target))
            else:
                toggles.nth(k).locator("button[aria-pressed=false]").first.click()
            try:
                page.wait_for_function(
                    f"([root, before]) => ({_FIGURE_STATE_JS})(root).numbers"
                    " !== before.numbers",
                    arg=[output.element_handle(), before],
                    timeout=10000,
                )
            except PlaywrightTimeoutError:
                output.screenshot(path=_shot_name(page_path, f"-widget{i}-stuck"))
                pytest.fail(
                    f"{page_path}: moving {kind} {k} of interactive figure {i} "
                    "did not change the figure within 10 s"
                )
            after = output.evaluate(_FIGURE_STATE_JS)
            assert after["svg"] != before["svg"], (
                f"{page_path}: {kind} {k} of figure {i} changed the numbers "
                "but not the drawing"
            )
            moved += 1
        output.screenshot(path=_shot_name(page_path, f"-widget{i}-moved"))
    assert not visit.errors, f"uncaught errors on {page_path}: {visit.errors}"
    assert moved >= 1


MAX_WIDGET_PAGE_BYTES = 1_000_000  # issue 15: an interactive chapter weighs <= 1 MB


def _package_version(name: str) -> str:
    return json.loads((SITE.parents[1] / "package.json").read_text())[
        "devDependencies"
    ][name]


def test_every_script_comes_from_the_site() -> None:
    """No page loads a script from elsewhere; MathJax is the pinned version."""
    with_math = 0
    for page in PAGES:
        path = SITE / page
        html = path.read_text()
        srcs = re.findall(r'<script[^>]*\ssrc="([^"]+)"', html)
        external = [s for s in srcs if "://" in s or s.startswith("//")]
        assert not external, (page, external)
        for src in srcs:
            file = (path.parent / src.split("?")[0]).resolve()
            assert file.is_file(), (page, src)
        mathjax = [s for s in srcs if s.split("?")[0].endswith("tex-mml-chtml.js")]
        assert len(mathjax) <= 1, (page, mathjax)  # pages without math have none
        # the theme's 1.5 MB icon script is replaced by rhn-icons.css
        assert "fontawesome.js" not in html, page
        if "pydata-sphinx-theme" in html:  # not the root's redirect
            assert "rhn-icons.css" in html, page
        with_math += len(mathjax)
    assert with_math > 10, "MathJax is missing from the pages with math"
    mathjax = (SITE / "_static" / "mathjax" / "tex-mml-chtml.js").read_text()
    assert f'"{_package_version("mathjax")}"' in mathjax[:200_000]
    widget_pages = _widget_pages()
    assert widget_pages, "no page with an interactive figure was built"
    for page in widget_pages:
        path = SITE / page
        html = path.read_text()
        assert path.stat().st_size <= MAX_WIDGET_PAGE_BYTES, (page, path.stat().st_size)
        assert "widget-loader.js" in html and "embed-amd" not in html, page


def test_no_line_break_of_the_source_glues_two_words() -> None:
    """A line break of a chapter's prose is a space on the page: the word
    before it and the word after never meet ("the" + "gradient" once did,
    when an extension replaced the wrong one of equal Text nodes)."""
    glued = []
    for notebook in sorted((SITE.parents[1] / "book").glob("*.ipynb")):
        page = SITE / "book" / f"{notebook.stem}.html"
        cells = json.loads(notebook.read_text())["cells"]
        prose = "\n".join(
            "".join(c["source"]) for c in cells if c["cell_type"] == "markdown"
        )
        html = re.sub(r"<pre[^>]*>.*?</pre>", "", page.read_text(), flags=re.S)
        text = re.sub(r"<[^>]+>", "", html)
        for a, b in set(re.findall(r"([A-Za-z]{3,})\n([A-Za-z]{3,})", prose)):
            if a + b in text and a + b not in prose:
                glued.append((notebook.stem, a + b))
        # a citation after a line break: "problem [Arjovsky et al., 2016]"
        cited = re.findall(r"[a-z]\[[A-Z][a-z]+(?: et al\.| and|,)", text)
        glued += [(notebook.stem, c) for c in cited]
    assert not glued, glued


def _search_index() -> dict:
    """The site's search index: the JSON inside searchindex.js."""
    text = (SITE / "searchindex.js").read_text(encoding="utf-8")
    return json.loads(text[text.index("(") + 1 : text.rindex(")")])


def test_search_finds_gershgorin_in_every_spelling() -> None:
    """The index lists the same pages under Geršgorin, Gershgorin, Gersgorin."""
    index = _search_index()

    def pages(word: str) -> set[int]:
        found = index["terms"].get(word, [])
        return {found} if isinstance(found, int) else set(found)

    accented = pages("geršgorin")
    assert len(accented) >= 5, f"Geršgorin is on {len(accented)} pages"
    assert pages("gershgorin") >= accented and pages("gersgorin") >= accented


# chapters (by their file's stem, which keeps its number and name) whose
# sections define a term, and a chapter that only uses it (None: no such check);
# the defining sections carry a main index entry ({index} in the chapter),
# which the search ranks above text hits
DEFINED_IN = {
    "carry gate": (("06_", "07_"), "12_"),
    "variational dropout": (("06_",), "12_"),
    "temporal Jacobian": (("03_", "07_"), "08_"),
    "spectral radius": (("03_",), "08_"),
    "recurrence depth": (("06_",), "01_"),
    "highway layer": (("05_",), "01_"),
    "DT-RNN": (("10_",), "12_"),
    "Gershgorin disc": (("04_",), "07_"),
    "truncated backpropagation": (("11_",), None),
    "piano roll": (("12_",), None),
}


@pytest.mark.parametrize("query", sorted(DEFINED_IN))
def test_search_ranks_the_defining_chapters_first(browser, base_url, query) -> None:  # noqa: ANN001
    defining, user = DEFINED_IN[query]
    # A rebuild over an old _build keeps only the changed pages' index entries
    # (Sphinx issue 12599), and the ranking falls back to text hits: say so
    index = _search_index()
    names, found = index["docnames"], index["indexentries"].items()
    entries = {Path(names[e[0]]).name for key, hits in found
               if query.lower() in key for e in hits}  # fmt: skip
    assert all(any(n.startswith(p) for n in entries) for p in defining), (
        f"searchindex.js has no index entry {query!r} for {defining} (it has "
        f"{sorted(entries)}): build from a clean _build (rm -rf _build), since "
        "Sphinx drops unchanged pages' index entries on a rebuild (issue 12599)"
    )
    with Visit(browser, base_url, "search.html?q=" + query.replace(" ", "+")) as v:
        v.page.wait_for_function(
            "() => /Search finished/.test(document.body.innerText)", timeout=30000
        )
        links = v.page.eval_on_selector_all(
            "#search-results li a", "(as) => as.map((a) => a.getAttribute('href'))"
        )
    pages = [Path(href.split("#")[0].split("?")[0]).name for href in links]
    top = pages[: len(defining)]
    assert all(any(x.startswith(p) for x in top) for p in defining), pages
    if user is not None:
        assert not any(x.startswith(user) for x in top), pages
        assert any(x.startswith(user) for x in pages), pages  # still found


# when the page's first interactive figure was drawn, and when the page fired
# DOMContentLoaded (which waits for the deferred MathJax script to run)
_DRAW_TIMES_JS = """
window.rhnTimes = {};
document.addEventListener('DOMContentLoaded', () => {
    window.rhnTimes.dom_content_loaded = performance.now();
});
new MutationObserver(() => {
    const drawn = document.querySelector('.rhn-widget[data-rhn-numbers]');
    if (!window.rhnTimes.drawn && drawn) window.rhnTimes.drawn = performance.now();
}).observe(document, {subtree: true, childList: true, attributes: true});
"""


@pytest.mark.parametrize("page_path", _widget_pages())
def test_figures_are_drawn_before_mathjax_runs(browser, base_url, page_path) -> None:  # noqa: ANN001
    """Draw first, typeset later: the widget loader does not wait for MathJax."""
    with Visit(browser, base_url, "search.html") as v:  # a page without figures
        page = v.context.new_page()
        page.add_init_script(_DRAW_TIMES_JS)
        page.goto(base_url + page_path)
        page.wait_for_selector(".rhn-widget[data-rhn-numbers]", timeout=60000)
        page.wait_for_function("() => window.rhnTimes.dom_content_loaded")
        times = page.evaluate("() => window.rhnTimes")
    assert times["drawn"] < times["dom_content_loaded"], times


def test_api_page_citations_link_to_the_bibliography() -> None:
    """The docstrings' plain-text citations ("(Zilly et al., 2017)") are links
    on the API page, each to its own entry of the bibliography; the two
    highway papers of 2015 are told apart by the title the docstring gives."""
    from bs4 import BeautifulSoup

    api = BeautifulSoup((SITE / "book/api.html").read_text(), "html.parser")
    bib = BeautifulSoup((SITE / "book/bibliography.html").read_text(), "html.parser")
    entries = {d["id"]: d.get_text(" ") for d in bib.select("div.citation")}
    links = api.select("a.rhn-api-cite")
    assert len(links) >= 15, len(links)
    cited = {}
    for a in links:
        page, _, anchor = a["href"].partition("#")
        assert page == "bibliography.html" and anchor in entries, a["href"]
        cited.setdefault(a.get_text(), set()).add(anchor)
    assert all(len(anchors) == 1 for anchors in cited.values()), cited
    (zilly,) = cited["Zilly et al., 2017"]
    assert "Recurrent highway networks" in entries[zilly]
    (highway,) = cited["Srivastava et al., 2015"]
    assert "Training very deep networks" in entries[highway]
    (dtrnn,) = cited["Pascanu et al., 2013"]
    assert "How to construct deep recurrent neural networks" in entries[dtrnn]
