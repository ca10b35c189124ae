"""The issue-31 review of the built site, one check per defect it found.

- No page shows TeX source (``$b_f$``) outside MathJax's typeset maths and
  code: tables typeset their labels (``rhn.tables``).
- A link to a chapter covers "chapter 8", not the bare "8", wherever the
  prose says "chapter" (``_ext/chapter_refs.py``).
- The phone's header buttons are tap targets of at least 44 x 44 CSS px.
- Without JavaScript, an interactive figure's picture (its PNG fallback) has
  text of at least 9 CSS px on a phone (``_ext/narrow_figures.py``).
- Search results: one entry per page and title, snippets without TeX.
- The equations the review found badly broken (2.1, 7.3, 7.5) and their
  kin (7.2 and the appendix's LSTM and GRU Jacobians) are not broken by
  MathJax on a phone: their lines are the source's own.

Run by ``make browser``, after the book is built.
"""

from __future__ import annotations

import os
import re
from pathlib import Path
from urllib.parse import unquote, urlparse

import pytest

if not os.environ.get("RHN_BROWSER_TESTS"):
    pytest.skip(
        "browser tests run with `make browser`, after the book is built",
        allow_module_level=True,
    )

from playwright.sync_api import Browser  # noqa: E402

from rhn.plots import smallest_text_px  # noqa: E402

from .common import SITE, Visit  # noqa: E402
from .test_phone import MIN_TEXT_PX, _typeset, _visit  # noqa: E402
from .test_site import PAGES, _widget_pages  # noqa: E402

# the page's visible text outside typeset maths and code (signatures too)
VISIBLE_TEXT_JS = """() => {
    const main = document.querySelector('article') || document.body;
    const copy = main.cloneNode(true);
    copy.querySelectorAll(
        // a signature is code: a default 'lag $n$' is the string itself
        'mjx-container, pre, code, script, noscript, style, .highlight, .math, dt.sig'
    ).forEach((e) => e.remove());
    return copy.innerText;
}"""
# "$b_f$", "$D = 4$": a dollar, something that is not a space or a digit, ...
RAW_TEX = re.compile(r"\$[^\s$\d][^$\n]{0,60}\$")


@pytest.mark.parametrize("page_path", PAGES)
def test_no_page_shows_tex_source(
    browser: Browser, base_url: str, page_path: str
) -> None:
    with Visit(browser, base_url, page_path) as visit:
        _typeset(visit)
        text = visit.page.evaluate(VISIBLE_TEXT_JS)
    raw = RAW_TEX.findall(text)
    assert not raw, f"{page_path}: TeX source shown: {raw[:5]}"


CHAPTER_LINKS_JS = """() => [...document.querySelectorAll('article a.rhn-chapter-ref')]
    .map((a) => {
        const before = document.createRange();
        before.setStart(a.parentNode, 0);
        before.setEndBefore(a);
        return {text: a.textContent, before: before.toString().slice(-12)};
    })"""


@pytest.mark.parametrize("page_path", [p for p in PAGES if p.startswith("book/")])
def test_chapter_links_cover_the_word_chapter(
    browser: Browser, base_url: str, page_path: str
) -> None:
    with Visit(browser, base_url, page_path) as visit:
        links = visit.page.evaluate(CHAPTER_LINKS_JS)
    bare = [
        link["before"] + "[" + link["text"] + "]"
        for link in links
        if re.fullmatch(r"\d+", link["text"].strip())
        and re.search(r"[Cc]hapters?\s*$", link["before"])
    ]
    assert not bare, f"{page_path}: a digit alone is the link: {bare}"


HEADER_TARGETS_JS = """() => [...document.querySelectorAll(
        '.bd-header-article button, .bd-header-article a.btn')]
    .filter((b) => b.getBoundingClientRect().width > 0)
    .map((b) => {
        const r = b.getBoundingClientRect();
        const name = b.getAttribute('aria-label') || b.title || b.className;
        return {name: name.slice(0, 40), w: r.width, h: r.height, right: r.right};
    })"""


@pytest.mark.parametrize("page_path", ["book/03_bptt.html", "book/api.html"])
def test_phone_header_buttons_are_44_px_tap_targets(
    browser: Browser, base_url: str, page_path: str
) -> None:
    with _visit(browser, base_url, page_path, "phone") as visit:
        buttons = visit.page.evaluate(HEADER_TARGETS_JS)
        width = visit.page.evaluate("() => document.documentElement.clientWidth")
    assert buttons, "no header buttons found"
    small = [b for b in buttons if b["w"] < 44 or b["h"] < 44]
    assert not small, f"{page_path}: tap targets under 44 x 44 px: {small}"
    assert max(b["right"] for b in buttons) <= width + 1, buttons


FALLBACK_JS = """() => [...document.querySelectorAll('img.rhn-widget-fallback')]
    .map((img) => ({src: img.currentSrc || img.src,
                    shown: img.getBoundingClientRect().width}))"""


@pytest.mark.parametrize("page_path", _widget_pages())
def test_figure_pictures_without_javascript_read_on_a_phone(
    browser: Browser, base_url: str, page_path: str
) -> None:
    # scripts off: what a reader without JavaScript sees
    with _visit(
        browser, base_url, page_path, "phone", java_script_enabled=False
    ) as visit:
        images = visit.page.evaluate(FALLBACK_JS)
    assert images, f"{page_path}: no figure picture for a reader without JavaScript"
    for img in images:
        file = SITE / unquote(urlparse(img["src"]).path).lstrip("/")
        px = smallest_text_px(file.read_bytes(), img["shown"])
        assert px is not None, f"{Path(file).name} does not record its text size"
        assert px >= MIN_TEXT_PX, f"{page_path}: {Path(file).name} text {px:.1f} px"


SEARCH_JS = """() => [...document.querySelectorAll('#search-results li')].map((li) => ({
    href: li.querySelector('a').getAttribute('href').split('#')[0],
    title: li.querySelector('a').textContent,
    snippet: li.querySelector('p.context')?.textContent || '',
}))"""


@pytest.mark.parametrize("query", ["RHN cell", "Jacobian", "carry gate"])
def test_search_lists_a_page_once_without_tex(
    browser: Browser, base_url: str, query: str
) -> None:
    with Visit(browser, base_url, "search.html?q=" + query.replace(" ", "+")) as v:
        v.page.wait_for_function(
            "() => /Search finished/.test(document.body.innerText)", timeout=30000
        )
        # the snippets arrive one page at a time
        v.page.wait_for_function(
            "() => [...document.querySelectorAll('#search-results li')]"
            ".every((li) => li.querySelector('p.context, :scope > span'))",
            timeout=30000,
        )
        results = v.page.evaluate(SEARCH_JS)
    # a chapter once, not also as "6. The RHN cell > The RHN cell" (its own
    # heading as a section); "5. Highway layers > Its Jacobian" is a section
    keys = []
    for r in results:
        page, _, section = r["title"].partition(" > ")
        own = re.sub(r"^[\d.]+\s*", "", page) == section
        keys.append((r["href"], page if own else r["title"]))
    assert len(keys) == len(set(keys)), keys
    tex = [r["snippet"][:80] for r in results if re.search(r"\\[A-Za-z]", r["snippet"])]
    assert not tex, tex
    # snippets are prose: not the code cells' source or their toggles
    code = [r["snippet"][:80] for r in results if "code cell" in r["snippet"]]
    assert not code, code
    # a formula once: not again from its MathML twin for readers without
    # JavaScript (D−1 then k=0,…,D−1 was read twice: "D−1k=0,…,D−1")
    twice = [r["snippet"][:80] for r in results if "−1k=0" in r["snippet"]]
    assert not twice, twice


EQUATION_LINES_JS = """(label) => {
    const d = document.getElementById(label)?.closest('div.math')
        || document.querySelector(`div.math#${label}`);
    if (!d) return null;
    // MathJax's own line breaks: each broken line is an mjx-linebox
    return {auto: d.querySelectorAll('mjx-linebox').length,
            fits: d.scrollWidth <= d.clientWidth + 1};
}"""
REVIEWED = {
    "book/02_recurrent_shapes.html": ["equation-eq-shapes-rnn"],
    "book/07_rhn_jacobian.html": [
        "equation-eq-rhnjac-uncoupled",
        "equation-eq-rhnjac-coupled",
        "equation-eq-rhnjac-discs",
    ],
    "book/17_disc_bounds.html": [
        "equation-eq-gradflow-lstm-c",
        "equation-eq-gradflow-lstm-h",
        "equation-eq-gradflow-gru",
    ],
}


@pytest.mark.parametrize("page_path", sorted(REVIEWED))
def test_reviewed_equations_break_only_where_written(
    browser: Browser, base_url: str, page_path: str
) -> None:
    with _visit(browser, base_url, page_path, "phone") as visit:
        _typeset(visit)
        found = {
            label: visit.page.evaluate(EQUATION_LINES_JS, label)
            for label in REVIEWED[page_path]
        }
    for label, eq in found.items():
        assert eq is not None, f"{page_path}: no equation {label}"
        assert eq["auto"] == 0 and eq["fits"], f"{page_path}: {label} {eq}"
