"""The second issue-31 review of the site on a phone, one check per defect.

- The playground (chapter 14) plays on a 390 x 844 phone whose CPU is four
  times slower (CDP's CPU throttling) with few long tasks: the page redraws
  at most every 100 ms while it plays, and less often where a frame costs
  more than 20 ms (five frames' cost apart), into canvases of the pixels they
  are shown at, in a layer of their own.
- The learning-rate slider reads the learning rate ("0.01"), not its log10.
- The playground's canvas text is at least 10.5 CSS px on a phone.
- On a laptop (1366 x 900) the widgets' labels and read-outs (slider labels,
  their values, the charts' axis labels, legends and the spectral radius) are
  at least 13 CSS px; the tick labels are left to ``test_phone.py``.
- The API page starts with a list of its modules, each a link to its section.

The third review (390 x 844 phone, 1366 x 900 laptop):

- A figure without a phone drawing fits the phone's column when its
  smallest text there is at least 9.5 CSS px, and scrolls only below that.
- Every button of the page header shows a focus outline when tabbed to.
- A code cell that scrolls sideways on a phone shows the shade of its
  hidden side, as the tables do.
- A chapter's title on a phone is 24-30 px, above its sections' headings,
  and chapter 3's takes at most 3 lines.
- The general index on a phone: one column, links at least 24 px tall, the
  jump box's letters 44 px squares.
- Without JavaScript a page's formulas are MathML, not TeX source.
- A source listing that scrolls sideways on a phone draws the cue.

(The figures' text on a phone, 10.5 px, is checked in ``test_phone.py``; the
rho note of ``rhn.plots.plot_discs`` in ``tests/test_plots.py``.) Per check,
the numbers measured go to ``test-output/browser/review31-phone.json``. Run by
``make browser``, after the book is built.
"""

from __future__ import annotations

import json
import os
from io import BytesIO
from pathlib import Path
from urllib.parse import unquote, urlparse

import pytest

if not os.environ.get("RHN_BROWSER_TESTS"):
    pytest.skip(
        "browser tests run with `make browser`, after the book is built",
        allow_module_level=True,
    )

from PIL import Image  # noqa: E402
from playwright.sync_api import Browser  # noqa: E402

from rhn.plots import smallest_text_px  # noqa: E402

from .common import OUT, SITE, Visit  # noqa: E402
from .playground_page import play_windows  # noqa: E402
from .test_phone import _visit  # noqa: E402
from .test_playground_harness import OBSERVE_LONG_TASKS_JS, _open  # noqa: E402
from .test_site import _widget_pages  # noqa: E402

PLAYGROUND = "book/14_playground.html"
REPORT = OUT / "review31-phone.json"
THROTTLE = 4  # the phone's CPU: four times slower than this machine's
PLAY_S = 8
# measured on the 2-core build machine (load 0.5-2.5), 8 s of play: 73-94
# long tasks of 50-295 ms before the redraws were made cheap, 12-42 of at
# most 132 ms after (the count varies with the machine's load), and 51 on a
# CI machine whose frames took 54-82 ms. Since then a playing playground
# spaces its redraws to five times a frame's cost: a frame of over 50 ms
# comes at most every 250 ms, at most 32 in 8 s on any machine, whatever its
# speed; 12-15 measured here
MAX_LONG_TASKS = 45
MAX_LONG_TASK_MS = 180
LAPTOP_LABEL_PX = 13.0
PHONE_CANVAS_TEXT_PX = 10.5


def _report(key: str, value: object) -> None:
    OUT.mkdir(parents=True, exist_ok=True)
    data = json.loads(REPORT.read_text()) if REPORT.is_file() else {}
    data[key] = value
    REPORT.write_text(json.dumps(data, indent=1) + "\n")


def _playground_ready(visit: Visit) -> None:
    """Wait until the playground has drawn its canvases and published numbers."""
    visit.page.wait_for_selector(
        ".rhn-playground-root[data-rhn-numbers] canvas", timeout=60000
    )


def test_playground_plays_on_a_slow_phone_with_few_long_tasks(
    browser: Browser, base_url: str
) -> None:
    with _visit(browser, base_url, PLAYGROUND, "phone") as visit:
        page = visit.page
        _playground_ready(visit)
        page.evaluate("() => window.MathJax?.startup?.promise")
        page.wait_for_timeout(500)
        w = page.locator(".rhn-playground-root")
        w.scroll_into_view_if_needed()
        page.wait_for_timeout(300)
        cdp = visit.context.new_cdp_session(page)
        cdp.send("Emulation.setCPUThrottlingRate", {"rate": THROTTLE})
        page.evaluate(OBSERVE_LONG_TASKS_JS)
        w.locator("button[name=play]").tap()
        # a second window where the first fails: on a busy machine another
        # process can stretch a frame past the bound once (seen on the 2-core
        # build machine while the unit tests ran)
        windows = play_windows(
            page,
            w,
            PLAY_S,
            lambda x: (
                x["steps"] > 50
                and len(x["long_tasks_ms"]) <= MAX_LONG_TASKS
                and max(x["long_tasks_ms"], default=0) <= MAX_LONG_TASK_MS
            ),
        )
        steps, long_tasks = windows[-1]["steps"], windows[-1]["long_tasks_ms"]
        cdp.send("Emulation.setCPUThrottlingRate", {"rate": 1})
        draw_every_ms = float(w.get_attribute("data-rhn-draw-every-ms"))
        assert not visit.errors, visit.errors
    _report(
        "playground_throttled",
        {
            "cpu_slowdown": THROTTLE,
            "seconds": PLAY_S,
            "draw_every_ms": draw_every_ms,
            "windows": windows,
        },
    )
    assert steps > 50, windows
    assert len(long_tasks) <= MAX_LONG_TASKS, windows
    assert max(long_tasks, default=0) <= MAX_LONG_TASK_MS, windows


def test_learning_rate_slider_reads_the_learning_rate(browser, tmp_path) -> None:  # noqa: ANN001
    for page in _open(browser, tmp_path, 0):
        row = page.locator(".rhn-control[data-name=log_lr]")
        assert row.locator("label").inner_text().strip() == "learning rate"
        assert row.locator("output").inner_text() == "0.01"
        slider = row.locator("input")
        # the slider still moves log10 of it: one step of its range is a decade
        slider.evaluate(
            "(s) => { s.value = '-3'; s.dispatchEvent(new Event('input')); }"
        )
        assert row.locator("output").inner_text() == "0.001"
        # the drawn numbers echo the rate the worker trains at, which arrives
        # in its next message: wait for it rather than read it at once
        page.wait_for_function(
            """() => JSON.parse(document.querySelector('.rhn-playground-root')
                .dataset.rhnNumbers).values.log_lr === -3""",
            timeout=10_000,
        )
        numbers = json.loads(
            page.locator(".rhn-playground-root").get_attribute("data-rhn-numbers")
        )
        assert numbers["values"]["log_lr"] == -3


# each canvas's font (the context's own, after drawing) in CSS px: the canvas
# draws in coordinates 600 wide, shown at its CSS width
CANVAS_TEXT_JS = """() => [...document.querySelectorAll('.rhn-playground-root canvas')]
    .map((c) => parseFloat(c.getContext('2d').font)
        * c.getBoundingClientRect().width / 600)"""


def test_playground_canvas_text_reads_on_a_phone(
    browser: Browser, base_url: str
) -> None:
    with _visit(browser, base_url, PLAYGROUND, "phone") as visit:
        page = visit.page
        _playground_ready(visit)
        page.locator(".rhn-playground-root button[name=step]").tap()
        page.wait_for_timeout(500)
        sizes = page.evaluate(CANVAS_TEXT_JS)
    _report("playground_canvas_text_px_phone", [round(px, 2) for px in sizes])
    assert len(sizes) == 3 and min(sizes) >= PHONE_CANVAS_TEXT_PX, sizes


# the labels and read-outs of every widget, in CSS px: HTML labels and
# outputs, and the SVG charts' text outside the tick labels (the .grid group)
LABELS_JS = """() => {
    const out = [];
    for (const e of document.querySelectorAll(
            '.rhn-widget .rhn-control label, .rhn-widget .rhn-control .rhn-label,'
            + ' .rhn-widget output, .rhn-playground-status')) {
        out.push([e.textContent.trim().slice(0, 30),
                  parseFloat(getComputedStyle(e).fontSize)]);
    }
    for (const svg of document.querySelectorAll('.rhn-widget svg.rhn-plot')) {
        const scale = svg.getBoundingClientRect().width / svg.viewBox.baseVal.width;
        for (const t of svg.querySelectorAll('text')) {
            if (!t.textContent.trim() || t.closest('.grid')) continue;
            out.push([t.textContent.trim().slice(0, 30),
                      parseFloat(getComputedStyle(t).fontSize) * scale]);
        }
    }
    return out;
}"""


@pytest.mark.parametrize("page_path", [*_widget_pages(), PLAYGROUND])
def test_widget_labels_are_13_px_on_a_laptop(
    browser: Browser, base_url: str, page_path: str
) -> None:
    with _visit(browser, base_url, page_path, "laptop") as visit:
        visit.page.wait_for_selector(".rhn-widget[data-rhn-numbers]", timeout=60000)
        labels = visit.page.evaluate(LABELS_JS)
    assert labels, f"{page_path}: no widget labels"
    _report(
        f"smallest_label_px_laptop {page_path}", round(min(px for _, px in labels), 2)
    )
    small = [(text, round(px, 2)) for text, px in labels if px < LAPTOP_LABEL_PX]
    assert not small, f"{page_path}: labels under {LAPTOP_LABEL_PX} px: {small}"


LOCAL_CONTENTS_JS = """() => {
    const nav = document.querySelector('article .contents');
    if (!nav) return null;
    const links = [...nav.querySelectorAll('a[href^="#"]')];
    const sections = [...document.querySelectorAll('article section > h2')];
    return {top: nav.getBoundingClientRect().top + scrollY,
            links: links.length, sections: sections.length,
            missing: links.map((a) => a.getAttribute('href').slice(1))
                .filter((id) => !document.getElementById(decodeURIComponent(id)))};
}"""


def test_api_page_lists_its_modules_at_the_top(browser: Browser, base_url: str) -> None:
    with _visit(browser, base_url, "book/api.html", "phone") as visit:
        nav = visit.page.evaluate(LOCAL_CONTENTS_JS)
        height = visit.page.evaluate("() => document.documentElement.scrollHeight")
    assert nav is not None, "book/api.html: no list of its modules"
    _report("api_page_phone", {"height_px": height, **nav})
    # near the top of a page of about 130,000 px, one link per module section
    assert nav["top"] < 2000, nav
    assert nav["links"] == nav["sections"] > 20, nav
    assert not nav["missing"], nav


# --- third review -----------------------------------------------------------

WIDE_FIT_TEXT_PX = 9.5
# every chapter: since the phone drawings of rhn.plots.narrow_png cover every
# static figure, no page should hold a figure a phone scrolls sideways (the
# widgets' fallback images, shown only without JavaScript, are skipped)
WIDE_PAGES = [
    f"book/{p.name}" for p in sorted((SITE / "book").glob("[0-9][0-9]_*.html"))
]
WIDE_BOXES_JS = """async () => {
    const out = [];
    for (const box of document.querySelectorAll('.rhn-wide-figure')) {
        const img = box.querySelector('img');
        if (img.classList.contains('rhn-widget-fallback')) continue;
        img.loading = 'eager';
        await img.decode().catch(() => {});
        out.push({src: img.currentSrc, column: box.clientWidth,
                  shown: img.getBoundingClientRect().width,
                  fits: box.classList.contains('rhn-wide-fits'),
                  scrolls: box.scrollWidth > box.clientWidth + 1});
    }
    return out;
}"""


@pytest.mark.parametrize("page_path", WIDE_PAGES)
def test_wide_figure_fits_the_phone_column_when_its_text_is_9_5_px(
    browser: Browser, base_url: str, page_path: str
) -> None:
    """The drawing's own smallest text (read from its PNG) at the column's
    width decides: at least 9.5 px, the figure is shown at the column's width
    and does not scroll; under it, it scrolls."""
    with _visit(browser, base_url, page_path, "phone") as visit:
        boxes = visit.page.evaluate(WIDE_BOXES_JS)
        assert not visit.errors, visit.errors
    problems, seen = [], {}
    for box in boxes:
        file = SITE / unquote(urlparse(box["src"]).path).lstrip("/")
        px = smallest_text_px(file.read_bytes(), box["column"])
        name = Path(file).name
        seen[name] = {"text_px_at_column": round(px, 2), "fits": box["fits"]}
        # --rhn-read-width is rounded to a whole px: 0.03 px of slack
        if abs(px - WIDE_FIT_TEXT_PX) < 0.03:
            continue
        if (px >= WIDE_FIT_TEXT_PX) != box["fits"]:
            problems.append(f"{name}: {px:.2f} px at the column, fits={box['fits']}")
        if box["fits"] and (box["scrolls"] or abs(box["shown"] - box["column"]) > 1):
            problems.append(f"{name}: fits but is {box['shown']:.0f} px wide")
        if not box["fits"] and not box["scrolls"]:
            problems.append(f"{name}: neither fits nor scrolls")
        if box["scrolls"]:  # a phone drawing or a fitted one is what a phone gets
            problems.append(f"{name}: scrolls sideways on a phone")
    _report(f"wide_figures_phone {page_path}", seen)
    assert not problems, f"{page_path}: " + "; ".join(problems)


HEADER_FOCUS_JS = """() => {
    const e = document.activeElement;
    if (!e || !e.closest('.bd-header-article')) return null;
    const cs = getComputedStyle(e);
    return {name: e.getAttribute('aria-label') || e.title || e.innerText.trim(),
            outline: cs.outlineStyle === 'none' ? 0 : parseFloat(cs.outlineWidth),
            shadow: cs.boxShadow};
}"""
HEADER_BUTTONS = (
    "Toggle primary sidebar",
    "Launch interactive content",
    "Source repositories",
    "Download this page",
)  # no fullscreen button: _config.yml turns it off (a phone has no use for it)


def test_header_buttons_show_keyboard_focus(browser: Browser, base_url: str) -> None:
    """Tab from the top of a chapter: every header button reached draws an
    outline of at least 2 px (or a focus shadow)."""
    with Visit(browser, base_url, "book/03_bptt.html", viewport=(1366, 900)) as visit:
        page = visit.page
        page.evaluate("() => document.activeElement?.blur()")
        focused = {}
        for _ in range(40):
            page.keyboard.press("Tab")
            state = page.evaluate(HEADER_FOCUS_JS)
            if state:
                focused[state["name"]] = state
    _report("header_focus_laptop", focused)
    missing = [b for b in HEADER_BUTTONS if b not in focused]
    assert not missing, f"not reached by Tab: {missing} (reached: {list(focused)})"
    plain = [
        name
        for name, s in focused.items()
        if s["outline"] < 2 and s["shadow"] in ("none", "")
    ]
    assert not plain, f"header buttons without a focus indicator: {plain}"


CODE_CUE_JS = """() => {
    const pre = [...document.querySelectorAll('div.highlight > pre')]
        .find(p => p.scrollWidth > p.clientWidth + 1);
    if (!pre) return null;
    pre.scrollIntoView({block: 'center'});
    pre.dataset.rhnCueTest = '1';
    return {more_right: pre.classList.contains('rhn-more-right'),
            shadow: getComputedStyle(pre).boxShadow};
}"""


def test_code_cell_that_scrolls_shows_a_cue_on_a_phone(
    browser: Browser, base_url: str
) -> None:
    """A code cell wider than the phone is marked rhn-more-right and its right
    edge is darker with the mark than without it."""
    with _visit(browser, base_url, "book/03_bptt.html", "phone") as visit:
        page = visit.page
        cue = page.evaluate(CODE_CUE_JS)
        assert cue, "book/03_bptt.html: no code cell wider than a phone"
        pre = page.locator("pre[data-rhn-cue-test]")
        r = pre.bounding_box()
        clip = {
            "x": r["x"] + r["width"] - 6,
            "y": r["y"],
            "width": 6,
            "height": min(r["height"], 200),
        }
        grey = []
        for on in (False, True):
            pre.evaluate("(p, on) => p.classList.toggle('rhn-more-right', on)", on)
            png = page.screenshot(clip=clip, animations="disabled")
            levels = Image.open(BytesIO(png)).convert("L").tobytes()
            grey.append(sum(levels) / len(levels))
    _report("code_cue_phone", {**cue, "darker_by": round(grey[0] - grey[1], 2)})
    assert cue["more_right"], cue
    assert cue["shadow"] not in ("none", ""), cue
    assert grey[0] - grey[1] >= 3, f"right edge darker by {grey[0] - grey[1]:.1f}"


TITLE_JS = """() => {
    const h1 = document.querySelector('.bd-article h1');
    const h2 = document.querySelector('.bd-article h2');
    const r = document.createRange();
    r.selectNodeContents(h1);
    const lines = new Set([...r.getClientRects()].filter(x => x.width > 0)
        .map(x => Math.round(x.bottom)));
    return {h1_px: parseFloat(getComputedStyle(h1).fontSize),
            h2_px: h2 ? parseFloat(getComputedStyle(h2).fontSize) : 0,
            lines: Math.round(h1.getBoundingClientRect().height
                              / parseFloat(getComputedStyle(h1).lineHeight)),
            bottoms: lines.size};
}"""


def test_chapter_title_is_at_most_3_lines_on_a_phone(
    browser: Browser, base_url: str
) -> None:
    with _visit(browser, base_url, "book/03_bptt.html", "phone") as visit:
        title = visit.page.evaluate(TITLE_JS)
    _report("chapter_3_title_phone", title)
    assert 24 <= title["h1_px"] <= 30, title
    assert title["h2_px"] < title["h1_px"], title
    assert title["lines"] <= 3, title


THEME_JS = """() => ({theme: document.documentElement.dataset.theme,
    header: getComputedStyle(document.querySelector('.bd-header-article'))
        .backgroundColor,
    link: getComputedStyle(document.querySelector('.bd-article p a')).color})"""


def test_without_javascript_the_light_theme_applies(
    browser: Browser, base_url: str
) -> None:
    """Without JavaScript the page's colours are the light theme's (an opaque
    header, coloured links); with it, a dark system still gets dark."""
    with Visit(
        browser, base_url, "book/03_bptt.html", java_script_enabled=False
    ) as visit:
        plain = visit.page.evaluate(THEME_JS)
    with Visit(browser, base_url, "book/03_bptt.html", color_scheme="dark") as visit:
        dark = visit.page.evaluate(THEME_JS)
    _report("theme_without_javascript", {"no_js": plain, "js_dark": dark})
    assert plain["theme"] == "light", plain
    assert plain["header"] not in ("rgba(0, 0, 0, 0)", "transparent"), plain
    assert plain["link"] != "rgb(0, 0, 0)", plain
    assert dark["theme"] == "dark", dark


SOURCE_FIT_JS = """() => [...document.querySelectorAll(
    '.bd-article div.literal-block-wrapper div.highlight > pre')]
    .map((p) => p.scrollWidth - p.clientWidth)"""


@pytest.mark.parametrize(
    "page_path", ["book/01_introduction.html", "book/07_rhn_jacobian.html"]
)
def test_on_a_laptop_the_packages_source_fits_its_column(
    browser: Browser, base_url: str, page_path: str
) -> None:
    """The package's source listings (lines up to 88 characters) scrolled by
    2 to 19 px on a laptop, to show a character or two."""
    with Visit(browser, base_url, page_path, viewport=(1366, 900)) as visit:
        over = visit.page.evaluate(SOURCE_FIT_JS)
    assert over and max(over) <= 1, over


NOJS_WIDE_JS = """() => [...document.querySelectorAll('.rhn-wide-figure')].map((b) => ({
    scrolls: getComputedStyle(b).overflowX,
    wider: b.scrollWidth > b.clientWidth + 1,
    cue: getComputedStyle(b, '::after').opacity}))"""


def test_without_javascript_a_wide_stand_in_picture_scrolls_with_a_cue(
    browser: Browser, base_url: str
) -> None:
    """Chapter 7's interactive figure without JavaScript is its picture, wider
    than the phone's column: it scrolls in its box, and the shaded right edge
    that says so is shown (the script that sets the cue does not run)."""
    with Visit(
        browser,
        base_url,
        "book/07_rhn_jacobian.html",
        viewport=(390, 844),
        java_script_enabled=False,
        is_mobile=True,
        has_touch=True,
    ) as visit:
        boxes = visit.page.evaluate(NOJS_WIDE_JS)
    _report("nojs_wide_figures", boxes)
    wide = [b for b in boxes if b["wider"]]
    assert wide, boxes
    assert all(b["scrolls"] == "auto" and b["cue"] == "1" for b in wide), boxes


DARK_TABLE_JS = """() => {
    const t = document.querySelector('table.rhn-table');
    const card = t.closest('div.output');
    const page = getComputedStyle(document.body).backgroundColor;
    return {card: getComputedStyle(card).backgroundColor,
            text: getComputedStyle(t.querySelector('td')).color, page};
}"""


def test_in_dark_mode_the_books_tables_take_the_pages_colours(
    browser: Browser, base_url: str
) -> None:
    """The theme puts HTML outputs on a light card, even in dark mode: the
    book's tables (rhn.tables) showed as light boxes on the dark page. They
    now sit on the page with its light text."""
    with Visit(
        browser, base_url, "book/11_training.html", color_scheme="dark"
    ) as visit:
        got = visit.page.evaluate(DARK_TABLE_JS)
    _report("dark_tables", got)
    assert got["card"] in ("rgba(0, 0, 0, 0)", "transparent"), got
    light = [int(v) for v in got["text"][4:-1].split(",")[:3]]
    assert min(light) > 150, got  # light text on the dark page


INDEX_TARGETS_JS = """() => {
    const size = (a) => { const r = a.getBoundingClientRect();
                          return [r.width, r.height]; };
    const entries = [...document.querySelectorAll('table.genindextable li > a')]
        .map(size);
    const letters = [...document.querySelectorAll('.genindex-jumpbox a')].map(size);
    const cells = [...document.querySelectorAll('table.genindextable td')]
        .map((td) => td.getBoundingClientRect().width);
    return {entries: entries.length, letters: letters.length,
            lowest_entry: Math.min(...entries.map((s) => s[1])),
            smallest_letter: Math.min(...letters.map((s) => Math.min(...s))),
            narrowest_cell: Math.min(...cells),
            page_width: document.documentElement.scrollWidth};
}"""


def test_general_index_has_tap_targets_on_a_phone(
    browser: Browser, base_url: str
) -> None:
    """The general index on a phone: its entries in one column, each link at
    least 24 px tall (WCAG 2.5.8), the jump box's letters 44 px squares, and
    nothing wider than the screen."""
    with _visit(browser, base_url, "genindex.html", "phone") as visit:
        facts = visit.page.evaluate(INDEX_TARGETS_JS)
    _report("genindex_phone", facts)
    assert facts["entries"] > 100 and facts["letters"] > 10, facts
    assert facts["lowest_entry"] >= 24, facts
    assert facts["smallest_letter"] >= 44, facts
    assert facts["narrowest_cell"] > 300, facts  # one column, not two of 33 %
    assert facts["page_width"] <= 390, facts


def test_the_api_pages_module_links_are_tap_targets_on_a_phone(
    browser: Browser, base_url: str
) -> None:
    """The API page's "Modules on this page": a list of links on their own,
    each at least 24 px tall on a phone (they were 19 px)."""
    with _visit(browser, base_url, "book/api.html", "phone") as visit:
        heights = visit.page.evaluate(
            "() => [...document.querySelectorAll('.bd-article .contents li > p > a')]"
            ".map((a) => a.getBoundingClientRect().height)"
        )
    _report("api_module_links_phone", {"n": len(heights), "lowest": min(heights)})
    assert len(heights) >= 10 and min(heights) >= 24, heights


NOJS_MATH_JS = """() => {
    const article = document.querySelector('article');
    const shown = (e) => e.getBoundingClientRect().height > 0;
    const maths = [...article.querySelectorAll('math')];
    return {
        maths: maths.length,
        drawn: maths.filter(shown).length,
        tex: [...article.querySelectorAll('.math.notranslate')].filter(shown).length,
        numbers: [...article.querySelectorAll('.rhn-nojs-eqno')].filter(shown).length,
        pageWide: document.documentElement.scrollWidth > window.innerWidth + 1,
        // TeX left in the text a reader sees (code and its output aside)
        source: (() => {
            article.querySelectorAll('pre, code, .highlight').forEach(
                (e) => e.remove());
            return /\\\\(lVert|sigma|frac)|\\\\[(\\[]/.test(article.innerText);
        })(),
    };
}"""


def test_without_javascript_the_formulas_are_mathml_not_tex(
    browser: Browser, base_url: str
) -> None:
    """Without JavaScript a page's formulas are MathML that the browser draws
    (_ext/nojs_math.py), their TeX source hidden, equation numbers kept, and
    nothing wider than a phone; with JavaScript the MathML is not in the page
    (it sits in <noscript>), and MathJax typesets the TeX as before."""
    with _visit(
        browser, base_url, "book/04_gershgorin.html", "phone", java_script_enabled=False
    ) as visit:
        off = visit.page.evaluate(NOJS_MATH_JS)
    with Visit(browser, base_url, "book/04_gershgorin.html") as visit:
        on = visit.page.locator(".rhn-nojs-math").count()
    _report("mathml_without_javascript", {"no_js": off, "js_elements": on})
    assert off["maths"] > 50 and off["drawn"] == off["maths"], off
    assert off["tex"] == 0 and not off["source"], off
    assert off["numbers"] >= 3 and not off["pageWide"], off
    assert on == 0


LISTING_CUE_JS = """() => [...document.querySelectorAll('.literal-block-wrapper pre')]
    .filter((p) => p.scrollWidth > p.clientWidth + 1)
    .map((p) => ({more: p.classList.contains('rhn-more-right'),
                  shadow: getComputedStyle(p).boxShadow}))"""


def test_a_source_listing_that_scrolls_shows_the_cue_on_a_phone(
    browser: Browser, base_url: str
) -> None:
    """The package's source listings (rhn-source) that scroll sideways on a
    phone draw the same shadow as the code cells: the theme's rule for
    captioned blocks had removed it."""
    with _visit(browser, base_url, "book/06_rhn_cell.html", "phone") as visit:
        visit.page.wait_for_timeout(500)
        wide = visit.page.evaluate(LISTING_CUE_JS)
    _report("source_listing_cue_phone", wide)
    assert wide, "book/06_rhn_cell.html: no source listing wider than a phone"
    assert all(w["more"] and w["shadow"] not in ("none", "") for w in wide), wide
