"""A phone (390x844, 3x, touch) and a laptop (1366x900) meet the book (issue 31).

- Every display equation fits its column (MathJax 4 breaks it into lines) or
  its box scrolls sideways; no formula is a Tab stop.
- The contents panels (the chapter list, the page contents) close after a tap
  on an entry and on Escape.
- Figures: the smallest text of every figure the page shows (the phone's own
  drawing where ``_ext/narrow_figures.py`` serves one) and of every
  interactive chart is at least 9 CSS px, at both sizes.
- No control is hidden under another: the header's buttons and the
  interactive figures' controls get the tap at their centre.

Per page, the equations that fit and the smallest text go to
``test-output/browser/phone.json``. Run by ``make browser``.
"""

from __future__ import annotations

import json
import os
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

from .common import OUT, SITE, Visit  # noqa: E402
from .test_site import FIGURE_CLASS, PAGES, _widget_pages  # noqa: E402

PHONE = {"viewport": (390, 844), "device_scale_factor": 3, "is_mobile": True}
LAPTOP = {"viewport": (1366, 900)}
SIZES = {"phone": PHONE, "laptop": LAPTOP}
MIN_TEXT_PX = 9.0
REPORT = OUT / "phone.json"
MATH_PAGES = [p for p in PAGES if "\\[" in (SITE / p).read_text(encoding="utf-8")]
CHAPTERS = [p for p in PAGES if p.startswith("book/") and p[5:7].isdigit()]


def _visit(browser: Browser, base_url: str, page_path: str, size: str) -> Visit:
    options = dict(SIZES[size])
    viewport = options.pop("viewport")
    if size == "phone":
        options["has_touch"] = True
    return Visit(browser, base_url, page_path, viewport=viewport, **options)


def _report(key: str, page: str, value: object) -> None:
    OUT.mkdir(parents=True, exist_ok=True)
    data = json.loads(REPORT.read_text()) if REPORT.is_file() else {}
    data.setdefault(key, {})[page] = value
    REPORT.write_text(json.dumps(data, indent=1, sort_keys=True))


def _typeset(visit: Visit) -> None:
    visit.page.evaluate(
        "async () => { if (window.MathJax) await MathJax.startup.promise; }"
    )


EQUATIONS_JS = """() => [...document.querySelectorAll('article div.math')]
    .filter(d => d.querySelector('mjx-container'))
    .map(d => ({
        number: (d.querySelector('.eqno')?.innerText || '').replace('#', '').trim(),
        fits: d.scrollWidth <= d.clientWidth + 1,
        scrolls: ['auto', 'scroll'].includes(getComputedStyle(d).overflowX),
        page_fits: d.getBoundingClientRect().right <= window.innerWidth + 1,
    }))"""


@pytest.mark.parametrize("size", SIZES)
@pytest.mark.parametrize("page_path", MATH_PAGES)
def test_display_equations_fit_or_scroll_and_are_no_tab_stops(
    browser: Browser, base_url: str, page_path: str, size: str
) -> None:
    with _visit(browser, base_url, page_path, size) as visit:
        _typeset(visit)
        equations = visit.page.evaluate(EQUATIONS_JS)
        tab_stops = visit.page.evaluate(
            "() => [...document.querySelectorAll('mjx-container, mjx-container *')]"
            ".filter(e => e.tabIndex >= 0).length"
        )
        assert not visit.errors and not visit.blocked, (visit.errors, visit.blocked)
    fit = [e for e in equations if e["fits"]]
    _report(f"equations_fit_{size}", page_path, f"{len(fit)} of {len(equations)}")
    name = [e["number"] or "unnumbered" for e in equations]
    lost = [n for n, e in zip(name, equations, strict=True) if not e["page_fits"]]
    cut = [
        n
        for n, e in zip(name, equations, strict=True)
        if not (e["fits"] or e["scrolls"])
    ]
    assert not lost, f"{page_path} ({size}): equations run off the page: {lost}"
    assert not cut, f"{page_path} ({size}): equations cut off, not scrolling: {cut}"
    assert tab_stops == 0, f"{page_path} ({size}): {tab_stops} formulas are Tab stops"


DIALOGS = {
    "primary": (".primary-toggle", "#pst-primary-sidebar-modal"),
    "secondary": (".secondary-toggle", "#pst-secondary-sidebar-modal"),
}


def _open(visit: Visit, toggle: str, dialog: str) -> None:
    page = visit.page
    index = page.evaluate(
        """(sel) => [...document.querySelectorAll(sel)].findIndex(e =>
            e.getBoundingClientRect().width > 0 && e.closest('[hidden]') === null)""",
        toggle,
    )
    page.locator(toggle).nth(index).tap()
    page.wait_for_function(f"() => document.querySelector('{dialog}').open")


@pytest.mark.parametrize("panel", DIALOGS)
def test_contents_panel_closes_after_a_tap_on_an_entry_and_on_escape(
    browser: Browser, base_url: str, panel: str
) -> None:
    toggle, dialog = DIALOGS[panel]
    page_path = "book/04_gershgorin.html"
    with _visit(browser, base_url, page_path, "phone") as visit:
        page = visit.page
        closed = f"() => !document.querySelector('{dialog}').open"
        # an entry of this page (a section, or the page itself): the page
        # scrolls, and the panel must not stay over it
        _open(visit, toggle, dialog)
        entry = page.evaluate(
            """(dialog) => [...document.querySelectorAll(dialog + ' a[href]')]
                .findIndex(a => { const u = new URL(a.href, location.href);
                    return u.pathname === location.pathname
                        && a.getBoundingClientRect().height > 0; })""",
            dialog,
        )
        assert entry >= 0, f"{panel}: no entry of this page in the panel"
        page.locator(f"{dialog} a[href]").nth(entry).tap()
        page.wait_for_function(closed, timeout=3000)
        # Escape closes it wherever the focus is (here: nowhere in the panel)
        _open(visit, toggle, dialog)
        page.evaluate("() => document.activeElement?.blur()")
        page.keyboard.press("Escape")
        page.wait_for_function(closed, timeout=3000)
        assert not visit.errors, visit.errors


FIGURES_JS = """() => [...document.querySelectorAll('article .cell_output img')]
    .filter(img => !img.classList.contains('rhn-widget-fallback'))
    .map(img => ({src: img.currentSrc, shown: img.getBoundingClientRect().width}))"""

CHARTS_JS = """() => [...document.querySelectorAll('.rhn-widget svg.rhn-plot')]
  .map(svg => {
    const scale = svg.getBoundingClientRect().width / svg.viewBox.baseVal.width;
    const sizes = [...svg.querySelectorAll('text')].filter(t => t.textContent.trim())
        .map(t => parseFloat(getComputedStyle(t).fontSize));
    return Math.min(...sizes) * scale;
})"""


@pytest.mark.parametrize("size", SIZES)
@pytest.mark.parametrize("page_path", CHAPTERS)
def test_smallest_figure_text_is_9_px_at_both_sizes(
    browser: Browser, base_url: str, page_path: str, size: str
) -> None:
    with _visit(browser, base_url, page_path, size) as visit:
        page = visit.page
        if page_path in _widget_pages():
            page.wait_for_selector(f".{FIGURE_CLASS} .rhn-widget[data-rhn-numbers] svg")
        # lazy images: each is loaded once it is on screen
        page.evaluate(
            """async () => {
                for (const img of document.querySelectorAll('article img')) {
                    img.loading = 'eager';
                    if (!img.complete) await img.decode().catch(() => {});
                } }"""
        )
        images = page.evaluate(FIGURES_JS)
        charts = page.evaluate(CHARTS_JS)
    problems, smallest = [], {}
    for img in images:
        file = SITE / unquote(urlparse(img["src"]).path).lstrip("/")
        px = smallest_text_px(file.read_bytes(), img["shown"])
        if px is None:
            continue  # not a figure of the book's style (checked in test_reader)
        smallest[Path(file).name] = round(px, 2)
        if px < MIN_TEXT_PX:
            problems.append(f"{Path(file).name}: smallest text {px:.1f} px")
    for i, px in enumerate(charts):
        smallest[f"interactive chart {i + 1}"] = round(px, 2)
        if px < MIN_TEXT_PX:
            problems.append(f"interactive chart {i + 1}: smallest text {px:.1f} px")
    if smallest:
        _report(f"smallest_text_px_{size}", page_path, min(smallest.values()))
    assert not problems, f"{page_path} ({size}):\n" + "\n".join(problems)


COVERED_JS = """(selector) => {
    const hidden = [];
    for (const el of document.querySelectorAll(selector)) {
        const r = el.getBoundingClientRect();
        const invisible = getComputedStyle(el).visibility === 'hidden';
        if (r.width === 0 || r.height === 0 || invisible) continue;
        el.scrollIntoView({block: 'center'});
        const s = el.getBoundingClientRect();
        const x = s.left + s.width / 2, y = s.top + s.height / 2;
        const top = document.elementFromPoint(x, y);
        if (top && !el.contains(top) && !top.contains(el)) {
            const name = el.getAttribute('aria-label') || el.title || el.innerText;
            hidden.push((name || el.tagName).trim().slice(0, 40)
                + ' under ' + top.tagName + '.' + top.className);
        }
    }
    return hidden;
}"""
CONTROLS = (
    ".bd-header-article button, .bd-header-article a.btn, "
    f".{FIGURE_CLASS} input, .{FIGURE_CLASS} button, .prev-next-area a"
)


@pytest.mark.parametrize("size", SIZES)
@pytest.mark.parametrize("page_path", ["book/03_bptt.html", *_widget_pages()])
def test_no_control_is_hidden_under_another(
    browser: Browser, base_url: str, page_path: str, size: str
) -> None:
    with _visit(browser, base_url, page_path, size) as visit:
        page = visit.page
        if page_path in _widget_pages():
            page.wait_for_selector(f".{FIGURE_CLASS} .rhn-widget[data-rhn-numbers] svg")
        hidden = page.evaluate(COVERED_JS, CONTROLS)
    assert not hidden, f"{page_path} ({size}): controls under others: {hidden}"
