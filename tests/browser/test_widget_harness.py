"""The widgets' ES module alone, in Chromium, at the largest size (H = 32).

No book build is needed: each figure is rendered on a small page
(``harness.py``) with a stand-in for the anywidget model. Checked: the numbers
agree with the package at H = 32, the sliders are continuous (a mouse drag
lands between grid values), the redraw fits in one animation frame (median
under 16 ms; the machine that runs the tests may be loaded, so the maximum is
only recorded), the controls are large enough to hit with a finger (44 px)
and work by touch, and no page error. Run by ``make browser``.
"""

from __future__ import annotations

import json
import os
import statistics
from collections.abc import Iterator
from pathlib import Path

import pytest

if not os.environ.get("RHN_BROWSER_TESTS"):
    pytest.skip("browser tests run with `make browser`", allow_module_level=True)

from playwright.sync_api import Browser, Page  # noqa: E402

from rhn import widgets  # noqa: E402

from .common import OUT  # noqa: E402
from .harness import harness_page  # noqa: E402
from .server import serve  # noqa: E402
from .widget_checks import SETTINGS, compare, redraw_ms, set_and_read  # noqa: E402

H = 32
FIGURES = {
    "rnn_discs": (widgets.rnn_discs_widget, {"hidden_size": H}),
    "rhn_jacobian": (widgets.rhn_jacobian_widget, {"hidden_size": H}),
    "gradient_flow": (widgets.gradient_flow_widget, {"hidden_size": H}),
}
FRAME_MS = 16.0


@pytest.fixture(params=list(FIGURES))
def harness(request, browser: Browser, tmp_path: Path) -> Iterator[tuple[str, Page]]:  # noqa: ANN001
    kind = request.param
    build, settings = FIGURES[kind]
    harness_page(build(**settings), tmp_path)
    with serve(tmp_path) as url:
        context = browser.new_context(
            viewport={"width": 390, "height": 844}, has_touch=True, is_mobile=True
        )
        page = context.new_page()
        errors: list[str] = []
        page.on("pageerror", lambda exc: errors.append(str(exc)))
        page.route(
            "**/*",
            lambda route: (
                route.continue_()
                if route.request.url.startswith(url)
                else route.abort()
            ),
        )
        page.goto(url + "index.html")
        page.wait_for_selector(".rhn-widget[data-rhn-numbers] svg")
        yield kind, page
        assert not errors, f"page errors: {errors}"
        context.close()


def test_numbers_agree_at_the_largest_size(harness) -> None:  # noqa: ANN001
    kind, page = harness
    figure = page.locator("#root")
    settings = FIGURES[kind][1]
    for values in SETTINGS[kind]:
        compare(kind, set_and_read(figure, values), **settings)


def test_weight_slider_reads_the_weight_scale_g(harness) -> None:  # noqa: ANN001
    """The weight slider's label and readout are in g (the notation page): the
    RNN's value is g, the RHN's a multiple of the package's initialisation,
    shown times its g, 1/sqrt(3)."""
    kind, page = harness
    if kind == "gradient_flow":
        pytest.skip("no weight slider")
    factor = {"rnn_discs": 1.0, "rhn_jacobian": 3**-0.5}[kind]
    figure = page.locator("#root")
    row = page.locator(".rhn-control[data-name=scale]")
    assert row.locator("label").text_content() == "weight scale g"
    for values in SETTINGS[kind]:
        set_and_read(figure, values)
        shown = row.locator("output").text_content()
        assert shown == f"{values['scale'] * factor:.3g}", (values, shown)


def test_sliders_are_continuous_and_redraw_within_a_frame(harness) -> None:  # noqa: ANN001
    kind, page = harness
    figure = page.locator("#root")
    sliders = page.locator("input[type=range]")
    times: list[float] = []
    for k in range(sliders.count()):
        slider = sliders.nth(k)
        integer = slider.get_attribute("step") == "1"
        box = slider.bounding_box()
        assert box["height"] >= 44, f"slider {k} is {box['height']} px tall"
        y = box["y"] + box["height"] / 2
        seen = set()
        page.mouse.move(box["x"] + 2, y)
        page.mouse.down()
        for step in range(1, 41):
            page.mouse.move(box["x"] + 2 + (box["width"] - 4) * step / 40, y)
            page.evaluate("() => new Promise(r => requestAnimationFrame(() => r()))")
            times.append(redraw_ms(figure))
            seen.add(float(slider.input_value()))
        page.mouse.up()
        lo, hi = (float(slider.get_attribute(a)) for a in ("min", "max"))
        if integer:
            # a whole-number quantity (the depth) takes every value on the way
            assert seen == {float(v) for v in range(int(lo), int(hi) + 1)}, seen
        else:
            assert len(seen) >= 20, f"slider {k} took only {sorted(seen)}"
            # continuous: values between any grid of quarters
            assert any(abs(v * 4 - round(v * 4)) > 1e-3 for v in seen), sorted(seen)
    if sliders.count():
        median = statistics.median(times)
        OUT.mkdir(parents=True, exist_ok=True)
        log = OUT / f"harness-redraw-ms-{kind}.json"
        log.write_text(json.dumps({"H": H, "median": median, "max": max(times)}))
        assert median < FRAME_MS, f"median redraw {median:.2f} ms at H = {H}"


def test_toggles_work_by_touch(harness) -> None:  # noqa: ANN001
    kind, page = harness
    figure = page.locator("#root")
    buttons = page.locator(".rhn-control button")
    for k in range(buttons.count()):
        box = buttons.nth(k).bounding_box()
        assert box["height"] >= 44 and box["width"] >= 44, box
    off = page.locator(".rhn-control button[aria-pressed=false]")
    if not off.count():
        pytest.skip(f"{kind} has no toggle")
    before = figure.evaluate("(r) => r.querySelector('svg').innerHTML")
    off.first.tap()
    page.wait_for_function(
        "(before) => document.querySelector('#root svg').innerHTML !== before",
        arg=before,
        timeout=5000,
    )


def test_phone_layout_swipe_legend_and_name(harness) -> None:  # noqa: ANN001
    """At 390x844: plot above the controls and both on one screen; a touch on a
    slider that the page takes over for scrolling leaves the slider where it
    was; the SVG has an accessible name; the readout rounds like the title."""
    kind, page = harness
    plot = page.locator(".rhn-plot-area").bounding_box()
    controls = page.locator(".rhn-controls").bounding_box()
    assert controls["y"] >= plot["y"] + plot["height"] - 1, (plot, controls)
    height = controls["y"] + controls["height"] - plot["y"]
    assert height <= 844, f"plot and controls take {height:.0f} px"
    name = page.locator("svg.rhn-plot").get_attribute("aria-label") or ""
    assert len(name.split()) >= 6, name
    # each slider's label is a tap target of its own (it focuses the slider):
    # 24 px or more (WCAG 2.5.8; they were 23.8)
    labels = page.evaluate(
        "() => [...document.querySelectorAll('.rhn-control label')]"
        ".map((l) => l.getBoundingClientRect().height)"
    )
    assert labels and min(labels) >= 24, labels
    if kind != "gradient_flow":
        legend = page.locator("svg.rhn-plot .legend").text_content()
        for entry in ("Geršgorin discs", "eigenvalues", "unit circle"):
            assert entry in legend, legend
    slider = page.locator("input[type=range]").first
    before = slider.input_value()
    numbers = page.locator("#root .rhn-widget").get_attribute("data-rhn-numbers")
    # what Chromium does when a vertical pan starts on the slider: the value
    # may jump under the finger, then the pointer is cancelled for scrolling
    slider.evaluate(
        """(s) => {
        const ev = (type) =>
            new PointerEvent(type, {pointerType: 'touch', bubbles: true});
        s.dispatchEvent(ev('pointerdown'));
        s.value = String(Number(s.min) + 0.9 * (Number(s.max) - Number(s.min)));
        s.dispatchEvent(new Event('input', {bubbles: true}));
        s.dispatchEvent(ev('pointercancel'));
    }"""
    )
    page.evaluate("() => new Promise(r => requestAnimationFrame(() => r()))")
    assert slider.input_value() == before
    page.wait_for_function(
        "(n) => document.querySelector('#root .rhn-widget').dataset.rhnNumbers === n",
        arg=numbers,
        timeout=5000,
    )
    # the readout and the title round a value the same way (3 digits)
    slider.fill("0.14567" if kind == "rnn_discs" else "-2.4567")
    page.evaluate("() => new Promise(r => requestAnimationFrame(() => r()))")
    readout = page.locator(".rhn-control output").first.inner_text()
    title = page.locator("svg.rhn-plot").inner_html()
    # (a negative one with a true minus sign, U+2212, in both)
    assert readout in ("0.146", "\u22122.46") and readout in title, (
        readout,
        title[:200],
    )
    page.screenshot(path=OUT / f"harness-phone-{kind}.png")


# the discs' plot: its half-width, the largest tick label, and each disc's
# radius (SVG px) and drawn width
DISCS_JS = """(r) => {
    const svg = r.querySelector('svg');
    const ticks = [...svg.querySelectorAll('.grid text')]
        .map((t) => Math.abs(Number(t.textContent.replace('\\u2212', '-'))));
    const view = Number(svg.dataset.rhnView);
    const discs = [...svg.querySelectorAll('circle.disc')].map((c) => {
        const b = c.getBoundingClientRect();
        return {r: Number(c.getAttribute('r')), w: b.width};
    });
    return {view, most: Math.max(...ticks), discs};
}"""


def test_identity_discs_are_dots_on_axes_that_fit(browser, tmp_path) -> None:  # noqa: ANN001
    """Chapter 4's identity mode: discs of radius 0 at g = 1.1 are drawn as
    dots, and the axes shrink from ±3.2 to ±1.25 around them (the unit circle
    and the eigenvalue at 1.1); back to ±3.2 for the Gaussian matrix."""
    harness_page(widgets.rnn_discs_widget(hidden_size=H), tmp_path)
    with serve(tmp_path) as url:
        context = browser.new_context(viewport={"width": 390, "height": 844})
        page = context.new_page()
        page.goto(url + "index.html")
        page.wait_for_selector(".rhn-widget[data-rhn-numbers] svg")
        figure = page.locator("#root")
        numbers = set_and_read(figure, {"scale": 1.1, "init": "identity"})
        assert max(numbers["radii"]) == 0, numbers["radii"]
        got = figure.evaluate(DISCS_JS)
        assert got["view"] == 1.25 and got["most"] == 1, got
        assert all(d["r"] >= 3 and d["w"] > 2 for d in got["discs"]), got["discs"]
        set_and_read(figure, {"scale": 2.2, "init": "gaussian"})
        got = figure.evaluate(DISCS_JS)
        assert got["view"] == 3.2 and got["most"] == 3, got
        context.close()


def _open_local(browser, url: str, viewport: tuple[int, int]):  # noqa: ANN001, ANN202
    """The harness page at ``url`` in a new context of ``viewport``, every
    request that leaves it refused; returns (context, page) once drawn."""
    context = browser.new_context(
        viewport={"width": viewport[0], "height": viewport[1]}
    )
    page = context.new_page()
    page.route(
        "**/*",
        lambda route: (
            route.continue_() if route.request.url.startswith(url) else route.abort()
        ),
    )
    page.goto(url + "index.html")
    page.wait_for_selector(".rhn-widget[data-rhn-numbers] svg")
    return context, page


# the legend's box and, per curve, how many points of its segments (21 a
# segment) fall inside it, in CSS px
LEGEND_CROSSED_JS = """(r) => {
    const svg = r.querySelector('svg.rhn-plot');
    const L = svg.querySelector('.legend').getBoundingClientRect();
    const m = svg.getScreenCTM();
    const hits = {};
    for (const line of svg.querySelectorAll('polyline')) {
        const pts = [...line.points].map((p) => p.matrixTransform(m));
        let n = 0;
        for (let i = 1; i < pts.length; i++) {
            for (let s = 0; s <= 20; s++) {
                const x = pts[i - 1].x + ((pts[i].x - pts[i - 1].x) * s) / 20;
                const y = pts[i - 1].y + ((pts[i].y - pts[i - 1].y) * s) / 20;
                if (x >= L.left && x <= L.right && y >= L.top && y <= L.bottom) n++;
            }
        }
        hits[line.getAttribute('class')] = n;
    }
    return {hits, legend: svg.querySelector('.legend').textContent};
}"""


@pytest.mark.parametrize("viewport", [(390, 844), (1366, 900)], ids=["phone", "laptop"])
def test_no_curve_crosses_the_gradient_legend(browser, tmp_path, viewport) -> None:  # noqa: ANN001
    """Chapter 9's figure: the legend lies outside the plot, so no curve runs
    through it at any bias (inside it, on a phone, the RHN's curve crossed it
    from b_T = 0.5 up)."""
    harness_page(widgets.gradient_flow_widget(hidden_size=H), tmp_path)
    with serve(tmp_path) as url:
        context, page = _open_local(browser, url, viewport)
        figure = page.locator("#root")
        for bias in (-10.0, -4.0, -2.0, -1.0, 0.0, 0.5, 1.0, 2.0, 4.0, 10.0):
            set_and_read(figure, {"transform_bias": bias})
            got = figure.evaluate(LEGEND_CROSSED_JS)
            assert "RHN" in got["legend"] and "LSTM" in got["legend"], got
            assert not any(got["hits"].values()), (bias, got["hits"])
        page.screenshot(path=OUT / f"harness-gradient-legend-{viewport[0]}.png")
        context.close()


# the frame of the disc plot (its last top-level rect) and the legend's box
DISC_LEGEND_JS = """(r) => {
    const svg = r.querySelector('svg.rhn-plot');
    const frame = [...svg.querySelectorAll(':scope > rect')].pop();
    const F = frame.getBoundingClientRect();
    const L = svg.querySelector('.legend').getBoundingClientRect();
    return {frameBottom: F.bottom, legendTop: L.top, legendRight: L.right,
            svgRight: svg.getBoundingClientRect().right};
}"""


@pytest.mark.parametrize("kind", ["rnn_discs", "rhn_jacobian"])
@pytest.mark.parametrize("viewport", [(390, 844), (1366, 900)], ids=["phone", "laptop"])
def test_the_disc_legend_lies_under_the_plot(browser, tmp_path, viewport, kind) -> None:  # noqa: ANN001
    """Chapters 4 and 7: the legend sat inside the plot, at its bottom right,
    and large discs ran under it; now it is a row under the x label, outside
    the frame that clips the discs, and within the figure's width."""
    build, settings = FIGURES[kind]
    harness_page(build(**settings), tmp_path)
    with serve(tmp_path) as url:
        context, page = _open_local(browser, url, viewport)
        got = page.locator("#root").evaluate(DISC_LEGEND_JS)
        assert got["legendTop"] >= got["frameBottom"], got
        assert got["legendRight"] <= got["svgRight"], got
        page.screenshot(path=OUT / f"harness-disc-legend-{kind}-{viewport[0]}.png")
        context.close()


TITLE_JS = """(r) => {
    const svg = r.querySelector('svg.rhn-plot');
    const frame = [...svg.querySelectorAll(':scope > rect')].pop();
    const title = svg.querySelector(':scope > text');
    const parts = [title, ...title.querySelectorAll('tspan')];
    return {frame: frame.getBoundingClientRect().top,
            title: Math.max(...parts.map((e) => e.getBoundingClientRect().bottom)),
            text: title.textContent};
}"""


@pytest.mark.parametrize("viewport", [(390, 844), (1366, 900)], ids=["phone", "laptop"])
def test_the_disc_title_with_its_subscript_clears_the_frame(
    browser, tmp_path, viewport
) -> None:  # noqa: ANN001
    """Chapter 7's title, "RHN, D = 2, b_T = -2, ...": the T of b_T (a
    subscript) ended 2-3 px inside the plot's frame."""
    harness_page(widgets.rhn_jacobian_widget(hidden_size=H), tmp_path)
    with serve(tmp_path) as url:
        context, page = _open_local(browser, url, viewport)
        got = page.locator("#root").evaluate(TITLE_JS)
        assert "bT = \u22122" in got["text"], got
        assert got["title"] <= got["frame"] - 2, got
        context.close()


ARIA_JS = """(r) => [...r.querySelectorAll('input[type=range]')].map((i) => ({
    name: i.name, value: i.value, valuetext: i.getAttribute('aria-valuetext'),
    shown: i.parentElement.querySelector('output').textContent}))"""


def test_sliders_tell_a_screen_reader_what_they_show(browser, tmp_path) -> None:  # noqa: ANN001
    """aria-valuetext follows the readout as a slider moves: chapter 7's
    weight slider holds 1 and shows g = 0.577."""
    harness_page(widgets.rhn_jacobian_widget(hidden_size=H), tmp_path)
    with serve(tmp_path) as url:
        context, page = _open_local(browser, url, (390, 844))
        figure = page.locator("#root")
        sliders = figure.evaluate(ARIA_JS)
        scale = next(s for s in sliders if s["name"] == "scale")
        assert (scale["value"], scale["valuetext"]) == ("1", "0.577"), scale
        page.locator("input[name=scale]").fill("2.5")
        page.locator("input[name=transform_bias]").fill("-3.25")
        page.evaluate("() => new Promise(r => requestAnimationFrame(() => r()))")
        for slider in figure.evaluate(ARIA_JS):
            assert slider["valuetext"] == slider["shown"], slider
        scale = next(s for s in figure.evaluate(ARIA_JS) if s["name"] == "scale")
        assert scale["valuetext"] == "1.44", scale
        context.close()
