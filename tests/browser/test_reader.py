"""What a reader meets at a phone's and a laptop's size (issue 23).

- The visible sidebar (☰) and page-contents buttons open what they should, at
  390x844 and at 1366x900, a laptop shows one search box, and every visible
  icon is drawn (by ``rhn-icons.css``, without the theme's icon script).
- Page weight: everything a chapter with interactive figures transfers is
  within 0.6 MB of what a chapter without them transfers.
- Figures: every image has an alt text that describes it (not a file path),
  every notebook figure is numbered and captioned, and the smallest text of
  every figure is at least 9 CSS px at the laptop's column width (from the
  PNG: its pixel width and dpi, the font size it records, and the width the
  page shows it at; ``rhn.plots.use_style`` writes the font size).

Page weights and the smallest text per page go to
``test-output/browser/reader.json``. Run by ``make browser``.
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

from rhn.plots import SCRIPT_PX, smallest_script_px, smallest_text_px  # noqa: E402

from .common import OUT, SITE, Visit  # noqa: E402
from .test_site import FIGURE_CLASS, PAGES, _widget_pages  # noqa: E402

PHONE = (390, 844)
LAPTOP = (1366, 900)
SIZES = {"phone": PHONE, "laptop": LAPTOP}
CHAPTERS = [p for p in PAGES if p.startswith("book/") and p[5:7].isdigit()]
PLAIN_CHAPTER = "book/03_bptt.html"  # no interactive figure
MAX_EXTRA_BYTES = 600_000  # an interactive chapter: at most 0.6 MB more
MIN_TEXT_PX = 9.0
REPORT = OUT / "reader.json"


def _report(key: str, page: str, value: object) -> None:
    OUT.mkdir(parents=True, exist_ok=True)
    data = json.loads(REPORT.read_text()) if REPORT.is_file() else {}
    data.setdefault(key, {})[page] = value
    REPORT.write_text(json.dumps(data, indent=1, sort_keys=True))


def _visible(visit: Visit, selector: str) -> list[int]:
    """Indices of the elements matching ``selector`` that a reader can see."""
    return visit.page.evaluate(
        """(sel) => [...document.querySelectorAll(sel)].map((e, i) => {
            const r = e.getBoundingClientRect(), s = getComputedStyle(e);
            return r.width > 0 && r.height > 0 && s.visibility !== 'hidden'
                && e.closest('[hidden]') === null ? i : -1;
        }).filter(i => i >= 0)""",
        selector,
    )


def _open_dialog(visit: Visit, toggle: str, dialog: str) -> None:
    (index,) = _visible(visit, toggle)
    visit.page.locator(toggle).nth(index).click()
    visit.page.wait_for_function(
        f"() => document.querySelector('{dialog}').open", timeout=5000
    )
    links = visit.page.locator(f"{dialog} a[href]")
    assert links.count() > 3 and links.first.is_visible()


@pytest.mark.parametrize("size", SIZES)
def test_navigation_buttons_open_what_they_should(
    browser: Browser, base_url: str, size: str
) -> None:
    page_path, viewport = "book/04_gershgorin.html", SIZES[size]
    with Visit(browser, base_url, page_path, viewport=viewport) as visit:
        page = visit.page
        page.wait_for_load_state("load")
        # every icon the reader can see is drawn (rhn-icons.css, no icon script)
        blank = page.evaluate(
            """() => [...document.querySelectorAll('i[class*="fa-"]')]
                .filter(i => i.getBoundingClientRect().width > 0)
                .filter(i => !(getComputedStyle(i).webkitMaskImage || '')
                    .includes('svg')).map(i => i.className)"""
        )
        assert not blank, f"{size}: icons without a shape: {blank}"
        search = _visible(visit, ".search-button__button")
        assert len(search) == 1, f"{size}: {len(search)} visible search boxes"
        if size == "phone":
            # the chapter list and the page contents open as dialogs
            _open_dialog(visit, ".primary-toggle", "#pst-primary-sidebar-modal")
            assert "Introduction" in page.inner_text("#pst-primary-sidebar-modal")
            page.keyboard.press("Escape")
            page.wait_for_function(
                "() => !document.querySelector('#pst-primary-sidebar-modal').open"
            )
            _open_dialog(visit, ".secondary-toggle", "#pst-secondary-sidebar-modal")
            assert "The theorem" in page.inner_text("#pst-secondary-sidebar-modal")
        else:
            # the chapter list and the contents are shown; ☰ hides and shows it
            sidebar = page.locator("#pst-primary-sidebar")
            assert sidebar.is_visible()
            assert page.locator("#pst-secondary-sidebar").is_visible()
            (index,) = _visible(visit, ".primary-toggle")
            page.locator(".primary-toggle").nth(index).click()
            page.wait_for_function(
                "() => getComputedStyle(document.querySelector("
                "'#pst-primary-sidebar')).visibility === 'hidden'"
            )
            page.locator(".primary-toggle").nth(index).click()
            page.wait_for_function(
                "() => getComputedStyle(document.querySelector("
                "'#pst-primary-sidebar')).visibility !== 'hidden'"
            )
        page.screenshot(path=OUT / f"navigation-{size}.png")
        assert not visit.errors and not visit.blocked, (visit.errors, visit.blocked)


def _transfer(browser: Browser, base_url: str, page_path: str) -> int:
    """Bytes of every file the page loads (the site serves them uncompressed)."""
    with Visit(browser, base_url, page_path, viewport=LAPTOP) as visit:
        page = visit.page
        page.evaluate(
            "async () => { if (window.MathJax) await MathJax.startup.promise; }"
        )
        figures = page.locator(f".{FIGURE_CLASS}")
        if page_path in _widget_pages():
            page.wait_for_selector(f".{FIGURE_CLASS} .rhn-widget[data-rhn-numbers] svg")
        for i in range(figures.count()):
            figures.nth(i).scroll_into_view_if_needed()
        page.evaluate("() => window.scrollTo(0, document.body.scrollHeight)")
        page.wait_for_load_state("networkidle")
        assert not visit.blocked, visit.blocked
        files = set()
        for url in visit.requested:
            path = unquote(urlparse(url).path).lstrip("/")
            file = SITE / (path or "index.html")
            if file.is_dir():
                file = file / "index.html"
            files.add(file)
        return sum(f.stat().st_size for f in files if f.is_file())


def test_interactive_chapters_weigh_little_more_than_a_plain_one(
    browser: Browser, base_url: str
) -> None:
    plain = _transfer(browser, base_url, PLAIN_CHAPTER)
    _report("transfer_bytes", PLAIN_CHAPTER, plain)
    for page in _widget_pages():
        total = _transfer(browser, base_url, page)
        _report("transfer_bytes", page, total)
        assert total - plain <= MAX_EXTRA_BYTES, (
            f"{page} transfers {total:,} bytes, {PLAIN_CHAPTER} {plain:,}"
        )


FIGURES_JS = """() => [...document.querySelectorAll('article img')].map(img => ({
    src: img.getAttribute('src'), alt: img.getAttribute('alt') || '',
    shown: img.getBoundingClientRect().width, natural: img.naturalWidth,
    notebook: img.closest('.cell_output') !== null,
    fallback: img.classList.contains('rhn-widget-fallback'),
    caption: (img.closest('figure')?.querySelector('figcaption')?.innerText || '')
}))"""


@pytest.mark.parametrize("page_path", CHAPTERS)
def test_figures_are_described_numbered_and_readable(
    browser: Browser, base_url: str, page_path: str
) -> None:
    with Visit(browser, base_url, page_path, viewport=LAPTOP) as visit:
        page = visit.page
        if page_path in _widget_pages():
            page.wait_for_selector(f".{FIGURE_CLASS} .rhn-widget[data-rhn-numbers] svg")
        images = page.evaluate(FIGURES_JS)
        widget_captions = page.evaluate(
            f"() => [...document.querySelectorAll('.{FIGURE_CLASS}')].map(w => "
            "w.closest('figure')?.querySelector('figcaption')?.innerText || '')"
        )
    problems, smallest = [], {}
    for img in images:
        name = Path(img["src"]).name
        alt = img["alt"].strip()
        if len(alt.split()) < 4 or "/" in alt or alt.endswith((".png", ".svg")):
            problems.append(f"{name}: alt text {alt[:40]!r} does not describe it")
        if img["notebook"] and not img["caption"].startswith("Figure "):
            problems.append(f"{name}: no numbered caption ({img['caption'][:30]!r})")
        if not img["notebook"] or img["fallback"]:
            continue
        file = ((SITE / page_path).parent / unquote(img["src"])).resolve()
        data = file.read_bytes()
        px = smallest_text_px(data, img["shown"])
        script = smallest_script_px(data, img["shown"])
        if px is None or script is None:
            problems.append(f"{name}: the PNG does not record its text sizes")
            continue
        smallest[name] = round(px, 2)
        if px < MIN_TEXT_PX:
            problems.append(f"{name}: smallest text {px:.1f} px < {MIN_TEXT_PX}")
        if script < SCRIPT_PX:  # a superscript or subscript of its text
            problems.append(f"{name}: smallest script {script:.1f} px < {SCRIPT_PX}")
    for caption in widget_captions:
        if not caption.startswith("Figure "):
            problems.append(
                f"interactive figure without a numbered caption: {caption!r}"
            )
    if smallest:
        _report("smallest_text_px", page_path, min(smallest.values()))
    assert not problems, f"{page_path}:\n" + "\n".join(problems)


# reprs a cell prints by accident (a call's return value as its last line)
STRAY_OUTPUT = (
    "<torch._C.Generator",
    "<matplotlib.",
    "Text(0",
    "<Figure size",
    "Warning: ",  # a library's warning (UserWarning, FutureWarning, ...)
)

CODE_JS = """() => {
    const shown = e => e.clientWidth > 0 && e.closest('details:not([open])') === null;
    const cells = [...document.querySelectorAll('.cell_input pre')].filter(shown);
    return {
        cells: cells.length,
        overflow: cells.filter(p => p.scrollWidth > p.clientWidth + 1)
            .map(p => p.innerText.split('\\n').reduce(
                (a, b) => (b.length > a.length ? b : a), '').slice(0, 60)),
        outputs: [...document.querySelectorAll('.cell_output pre')]
            .map(p => p.innerText),
        wide_outputs: [...document.querySelectorAll('.cell_output pre')]
            .filter(shown).filter(p => p.scrollWidth > p.clientWidth + 1)
            .map(p => p.innerText.slice(0, 60)),
    };
}"""


@pytest.mark.parametrize("page_path", CHAPTERS)
def test_code_fits_the_column_and_outputs_are_meant(
    browser: Browser, base_url: str, page_path: str
) -> None:
    with Visit(browser, base_url, page_path, viewport=LAPTOP) as visit:
        found = visit.page.evaluate(CODE_JS)
    _report("shown_code_cells", page_path, found["cells"])
    assert not found["overflow"], (
        f"{page_path}: code cells scroll sideways at {LAPTOP[0]} px; their longest "
        f"lines: {found['overflow']}"
    )
    stray = [
        text[:60] for text in found["outputs"] if any(s in text for s in STRAY_OUTPUT)
    ]
    assert not stray, f"{page_path}: outputs nobody meant to print: {stray}"
    assert not found["wide_outputs"], (
        f"{page_path}: outputs wider than the column: {found['wide_outputs']}"
    )


@pytest.mark.parametrize("page_path", CHAPTERS)
def test_a_phone_never_scrolls_sideways(
    browser: Browser, base_url: str, page_path: str
) -> None:
    with Visit(browser, base_url, page_path, viewport=PHONE) as visit:
        width = visit.page.evaluate(
            "() => [document.documentElement.scrollWidth, window.innerWidth]"
        )
        console_errors = visit.console_errors
    assert width[0] <= width[1], f"{page_path}: the page is {width[0]} px wide"
    # a first visit (an empty localStorage): the theme finds its mode
    assert not console_errors, f"{page_path}: console errors {console_errors}"
