"""Browser tests of the built book: every page in headless Chromium.

Run by ``make browser`` after the strict book build (``make test`` does both);
plain ``pytest`` skips this module because there may be no built site. The
site is served from ``_build/html`` (or ``$RHN_SITE``) on 127.0.0.1; requests
for MathJax, require.js and the widget manager, which the pages load from
CDNs, are answered from ``node_modules`` (``npm ci``), and every other request
that leaves 127.0.0.1 fails the test. Chromium is Debian's
(``/usr/bin/chromium``, or ``$CHROMIUM``); Playwright drives it and never
downloads a browser.

For every page: it loads with no uncaught error; math is typeset by MathJax;
every image has loaded and each notebook figure is on the page; and, on pages
with interactive figures, moving each slider or toggle changes the figure that
is shown. Screenshots go to ``test-output/browser/`` so that a failure can be
looked at.
"""

from __future__ import annotations

import json
import os
import re
from collections.abc import Iterator
from pathlib import Path

import pytest

from .assets import CONTENT_TYPES, local_file
from .server import serve

if not os.environ.get("RHN_BROWSER_TESTS"):
    pytest.skip(
        "browser tests run with `make browser`, after the book is built",
        allow_module_level=True,
    )

from playwright.sync_api import Browser, Page, sync_playwright  # noqa: E402
from playwright.sync_api import TimeoutError as PlaywrightTimeoutError  # noqa: E402

ROOT = Path(__file__).resolve().parents[2]
SITE = Path(os.environ.get("RHN_SITE", ROOT / "_build" / "html")).resolve()
EXECUTED = SITE.parent / "jupyter_execute"  # notebooks with outputs, from the build
OUT = ROOT / "test-output" / "browser"
CHROMIUM = os.environ.get("CHROMIUM", "/usr/bin/chromium")
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


@pytest.fixture(scope="session")
def base_url() -> Iterator[str]:
    with serve(SITE) as url:
        yield url


@pytest.fixture(scope="session")
def browser() -> Iterator[Browser]:
    if not Path(CHROMIUM).exists():
        pytest.fail(f"{CHROMIUM} not found: `apt-get install chromium` (make browser)")
    OUT.mkdir(parents=True, exist_ok=True)
    with sync_playwright() as p:
        b = p.chromium.launch(
            executable_path=CHROMIUM,
            args=[
                "--no-sandbox",
                "--disable-gpu",
                "--disable-background-networking",
                "--disable-component-update",
                "--no-first-run",
                "--disable-quic",
                "--disable-sync",
            ],
        )
        yield b
        b.close()


class _Visit:
    """One page, with its uncaught errors and the requests that left the site."""

    def __init__(self, browser: Browser, base_url: str, page_path: str) -> None:
        self.context = browser.new_context(viewport={"width": 1280, "height": 900})
        self.page: Page = self.context.new_page()
        self.errors: list[str] = []
        self.blocked: list[str] = []
        self.base_url = base_url
        self.page.on("pageerror", lambda exc: self.errors.append(str(exc)))
        self.page.route("**/*", self._route)
        url = base_url + page_path
        self.redirect = 'http-equiv="refresh"' in (SITE / page_path).read_text().lower()
        self.page.goto(url, wait_until="load")
        if self.redirect:
            # the root index.html only redirects to the book's first page
            self.page.wait_for_url(lambda now: now != url, timeout=10000)
            self.page.wait_for_load_state("load")

    def _route(self, route) -> None:  # noqa: ANN001 - playwright's Route
        url = route.request.url
        if url.startswith(self.base_url) or url.startswith("data:"):
            route.continue_()
            return
        try:
            path = local_file(url)
        except LookupError as err:
            self.blocked.append(str(err))
            route.abort()
            return
        if path is None:
            self.blocked.append(url)
            route.abort()
            return
        route.fulfill(
            path=path,
            headers={
                "Access-Control-Allow-Origin": "*",
                "Content-Type": CONTENT_TYPES.get(path.suffix, "text/plain"),
            },
        )

    def close(self) -> None:
        self.context.close()


@pytest.fixture
def visit(browser: Browser, base_url: str, request) -> Iterator[_Visit]:  # noqa: ANN001
    v = _Visit(browser, base_url, request.param)
    yield v
    v.close()


def _shot_name(page_path: str, suffix: str = "") -> Path:
    return OUT / (re.sub(r"[^A-Za-z0-9_.-]", "_", page_path) + suffix + ".png")


def _wait_for_mathjax(page: Page) -> None:
    # MathJax 3 replaces the config object window.MathJax once it has loaded
    page.wait_for_function(
        "() => !window.MathJax || (window.MathJax.startup && "
        "window.MathJax.startup.promise)",
        timeout=30000,
    )
    page.evaluate("async () => { if (window.MathJax) await MathJax.startup.promise; }")


@pytest.mark.parametrize("visit", PAGES, indirect=True, ids=PAGES)
def test_page(visit: _Visit) -> None:
    page, page_path = visit.page, visit.page.url.split("/", 3)[-1]
    if visit.redirect:  # the page it leads to is tested on its own
        assert page_path in PAGES, f"redirect to a page that is not built: {page_path}"
        assert not visit.errors, f"uncaught errors: {visit.errors}"
        return
    _wait_for_mathjax(page)
    nb = _notebook(page_path)
    figures, interactive = _count_outputs(nb)
    if interactive:
        # the widget manager renders the views from the saved state on load
        page.wait_for_function(
            f"() => [...document.querySelectorAll('.{FIGURE_CLASS}')]"
            ".filter(f => f.querySelector('img.widget-image')).length"
            f" >= {interactive}",
            timeout=60000,
        )
    page.screenshot(path=_shot_name(page_path), full_page=True)

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


_CONTROL_JS = """(root) => [...root.querySelectorAll(
    '.widget-slider .noUi-handle, .widget-toggle-buttons')]"""

# the src of the one image of an interactive figure that is shown (the frames
# of a Stack that are not selected are hidden); blob: URLs, one per frame
_VISIBLE_FIGURE_JS = """(root) => {
    const imgs = [...root.querySelectorAll('img.widget-image')]
        .filter(i => i.offsetParent !== null && i.naturalWidth > 0);
    return imgs.length === 1 ? imgs[0].src : `${imgs.length} images shown`;
}"""


def _visible_figure_png(output) -> bytes:  # noqa: ANN001
    """A screenshot of the shown figure alone (not the slider's readout)."""
    images = output.locator("img.widget-image")
    for k in range(images.count()):
        if images.nth(k).is_visible():
            return images.nth(k).screenshot()
    raise AssertionError("no figure shown")


def _widget_pages() -> list[str]:
    return [p for p in PAGES if _count_outputs(_notebook(p))[1]]


@pytest.mark.parametrize("visit", _widget_pages(), indirect=True, ids=_widget_pages())
def test_sliders_move_the_figure(visit: _Visit) -> None:
    page, page_path = visit.page, visit.page.url.split("/", 3)[-1]
    expected = _count_outputs(_notebook(page_path))[1]
    page.wait_for_selector(f".{FIGURE_CLASS} img.widget-image", timeout=60000)
    outputs = page.locator(f".{FIGURE_CLASS}")
    assert outputs.count() == expected
    moved = 0
    for i in range(outputs.count()):
        output = outputs.nth(i)
        output.scroll_into_view_if_needed()
        n_controls = output.evaluate(f"root => ({_CONTROL_JS})(root).length")
        assert n_controls >= 1, f"{page_path}: interactive figure {i} has no control"
        for j in range(n_controls):
            before = output.evaluate(_VISIBLE_FIGURE_JS)
            assert before.startswith(("blob:", "data:")), f"{page_path}: {before}"
            pixels_before = _visible_figure_png(output)
            sliders_before = _sliders_before(output, j)
            is_slider = output.evaluate(
                f"(root) => ({_CONTROL_JS})(root)[{j}]"
                ".classList.contains('noUi-handle')"
            )
            if is_slider:
                handle = output.locator(".widget-slider .noUi-handle").nth(
                    sliders_before
                )
                handle.focus()
                at_end = handle.get_attribute("aria-valuenow") == handle.get_attribute(
                    "aria-valuemax"
                )
                handle.press("ArrowLeft" if at_end else "ArrowRight")
            else:
                group = output.locator(".widget-toggle-buttons").nth(j - sliders_before)
                group.locator("button:not(.mod-active)").first.click()
            try:
                page.wait_for_function(
                    "([root, before]) => {"
                    f" const now = ({_VISIBLE_FIGURE_JS})(root);"
                    " return /^(blob|data):/.test(now) && now !== before; }",
                    arg=[output.element_handle(), before],
                    timeout=10000,
                )
            except PlaywrightTimeoutError:
                output.screenshot(path=_shot_name(page_path, f"-widget{i}-stuck"))
                pytest.fail(
                    f"{page_path}: moving control {j} of interactive figure {i} "
                    "did not change the figure within 10 s"
                )
            assert _visible_figure_png(output) != pixels_before, (
                f"{page_path}: control {j} of figure {i} changed the image source "
                "but not the pixels shown"
            )
            moved += 1
        output.screenshot(path=_shot_name(page_path, f"-widget{i}-moved"))
    assert not visit.errors, f"uncaught errors on {page_path}: {visit.errors}"
    assert moved >= 1


def _sliders_before(output, j: int) -> int:  # noqa: ANN001
    """How many of the controls before the ``j``-th one are sliders."""
    return output.evaluate(
        f"(root) => ({_CONTROL_JS})(root).slice(0, {j})"
        ".filter(e => e.classList.contains('noUi-handle')).length"
    )


def test_every_cdn_script_has_a_local_copy() -> None:
    """Each external script a page asks for is served from node_modules."""
    urls = set()
    for page in PAGES:
        html = (SITE / page).read_text()
        urls |= set(re.findall(r'<script[^>]*\ssrc="(https?://[^"]+)"', html))
    assert any("mathjax" in url for url in urls)
    for url in urls:
        assert local_file(url) is not None, f"no local copy for {url}"
    with pytest.raises(LookupError, match="asks for"):
        local_file(
            "https://cdn.jsdelivr.net/npm/@jupyter-widgets/html-manager@0.1.0/dist/embed-amd.js"
        )
