"""The training playground alone, in Chromium, on a stand-alone page.

No book build is needed (``playground_page.py``). Checked: at the starting
setting the RHN learns the adding problem and the RNN stays on the plateau
after 600 steps (the claim of chapter 14, for two of the seeds behind it),
a deep RHN with open gates (D = 5, b_T = +2) stays on it and loses the
gradient, the views carry finite numbers, the controls are large enough for a finger,
moving a slider restarts the run, step trains exactly one step, and no page
error. The training runs in a Web Worker: while it plays at its heaviest
setting the page has no long task (over 50 ms), and the page's own loop
(where no worker can be made) trains to the same numbers. On a 390 x 844
phone the loss chart stays on screen while any slider moves. Run by
``make browser``.
"""

from __future__ import annotations

import json
import math
import os
from collections.abc import Iterator
from pathlib import Path

import pytest

if not os.environ.get("RHN_BROWSER_TESTS"):
    pytest.skip("browser tests run with `make browser`", allow_module_level=True)

from playwright.sync_api import Browser, Page  # noqa: E402

from rhn.widgets.playground import playground_widget  # noqa: E402

from .common import OUT  # noqa: E402
from .playground_page import (  # noqa: E402
    PLAY_JS,
    check_loss_in_view_while_sliding,
    playground_page,
)
from .server import serve  # noqa: E402

# chapter 14's claim, with the margins it states
# (rhn/_data/results/playground_seeds.json)
STEPS = 600
LEARNS_BELOW = 0.01  # the RHN's mean loss over the last 100 steps
PLATEAU_ABOVE = 0.14  # the RNN's, against the baseline 1/6


def _open(
    browser: Browser,
    tmp_path: Path,
    seed: int,
    init_script: str | None = None,
    scale: float = 1,
    **setting: object,
) -> Iterator[Page]:
    fig = playground_widget(seed=seed, data_seed=seed + 1, **setting)
    playground_page(fig, tmp_path)
    with serve(tmp_path) as url:
        context = browser.new_context(
            viewport={"width": 390, "height": 844},
            has_touch=True,
            is_mobile=True,
            device_scale_factor=scale,
        )
        page = context.new_page()
        if init_script:
            page.add_init_script(init_script)
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
        page.wait_for_selector(".rhn-playground-root[data-rhn-numbers] canvas")
        yield page
        assert not errors, f"page errors: {errors}"
        context.close()


@pytest.fixture
def page(browser: Browser, tmp_path: Path) -> Iterator[Page]:
    yield from _open(browser, tmp_path, 0)


def _numbers(page: Page) -> dict:
    return json.loads(
        page.locator(".rhn-playground-root").get_attribute("data-rhn-numbers")
    )


@pytest.mark.parametrize("seed", [0, 3])
def test_rhn_learns_and_rnn_stays_on_the_plateau(browser, tmp_path, seed) -> None:  # noqa: ANN001
    for page in _open(browser, tmp_path, seed):
        out = page.evaluate(PLAY_JS, [page.locator("#root").element_handle(), STEPS])
        n = out["numbers"]
        assert n["error"] is None and n["steps"] == STEPS
        assert n["loss_rhn"] < LEARNS_BELOW, n["loss_rhn"]
        assert n["loss_rnn"] > PLATEAU_ABOVE, n["loss_rnn"]
        assert n["baseline"] == pytest.approx(1 / 6)
        # the heatmap's numbers: D micro-layers for T steps, RNN one row
        D, T = n["values"]["depth"], n["values"]["seq_len"]
        assert len(n["grad_norms_rhn"]) == T * D and len(n["grad_norms_rnn"]) == T
        assert all(math.isfinite(v) and v > 0 for v in n["grad_norms_rhn"])
        assert all(0 < g < 1 for g in n["gate_mean"]) and len(n["gate_mean"]) == D
        OUT.mkdir(parents=True, exist_ok=True)
        (OUT / f"playground-harness-seed{seed}.json").write_text(
            json.dumps({k: v for k, v in n.items() if not k.startswith("grad")}) + "\n"
        )
        page.screenshot(path=str(OUT / f"playground-seed{seed}.png"), full_page=True)


def test_controls_step_and_restart(page: Page) -> None:
    root = page.locator(".rhn-playground-root")
    for control in page.locator("input[type=range], button").all():
        box = control.bounding_box()
        assert box["height"] >= 44, box
    page.locator("button[name=step]").tap()
    page.wait_for_function(
        "() => JSON.parse(document.querySelector('.rhn-playground-root')"
        ".dataset.rhnNumbers).steps === 1"
    )
    assert _numbers(page)["loss_rhn"] > 0
    # a new depth restarts the run from the new net's initial weights
    slider = root.locator("input[name=depth]")
    slider.evaluate("(s) => { s.value = '4'; s.dispatchEvent(new Event('input')); }")
    page.wait_for_function(
        "() => { const n = JSON.parse(document.querySelector('.rhn-playground-root')"
        ".dataset.rhnNumbers); return n.values.depth === 4 && n.steps === 0; }"
    )
    page.locator("button[name=step]").tap()
    page.wait_for_function(
        "() => JSON.parse(document.querySelector('.rhn-playground-root')"
        ".dataset.rhnNumbers).steps === 1"
    )
    n = _numbers(page)
    assert len(n["gate_mean"]) == 4 and len(n["grad_norms_rhn"]) == 4 * 30
    # the learning rate changes without a restart
    page.locator("button[name=step]").tap()
    lr = root.locator("input[name=log_lr]")
    lr.evaluate("(s) => { s.value = '-3.5'; s.dispatchEvent(new Event('input')); }")
    page.wait_for_function(
        "() => JSON.parse(document.querySelector('.rhn-playground-root')"
        ".dataset.rhnNumbers).values.log_lr === -3.5"
    )
    assert _numbers(page)["steps"] == 2


def test_phone_sees_play_and_the_loss_before_the_sliders(page: Page) -> None:
    # at 390 x 844 the play button and the loss plot come before the sliders,
    # and the canvases' text stays at 9 CSS px or more at the width shown
    facts = page.evaluate(
        """() => {
            const root = document.querySelector('.rhn-playground-root');
            const top = (sel) => root.querySelector(sel).getBoundingClientRect().top;
            const c = root.querySelector('canvas');
            const shown = c.getBoundingClientRect().width;
            const ratio = shown / parseFloat(c.style.maxWidth);
            return {play: top('button'), canvas: top('canvas'),
                    slider: top('input[type=range]'), scale: ratio};
        }"""
    )
    assert facts["play"] < facts["canvas"] < facts["slider"], facts
    assert 16 * facts["scale"] >= 9, facts  # the drawing's font is 16 px


def test_deep_rhn_with_open_gates_stays_on_the_plateau(browser, tmp_path) -> None:  # noqa: ANN001
    """Chapter 13's second setting: D = 5, b_T = +2 (seed 0)."""
    for page in _open(browser, tmp_path, 0, depth=5, transform_bias=2.0):
        out = page.evaluate(PLAY_JS, [page.locator("#root").element_handle(), STEPS])
        n = out["numbers"]
        assert n["error"] is None and n["steps"] == STEPS
        assert n["values"]["depth"] == 5 and n["values"]["transform_bias"] == 2.0
        assert n["loss_rhn"] > PLATEAU_ABOVE, n["loss_rhn"]
        # the gradient reaching step 0 is lost (chapter 14: below 1e-20)
        g = n["grad_norms_rhn"]  # index t * D + k: micro-layer 0 of steps 0, T - 1
        assert g[0] < 1e-20 * g[-5], (g[0], g[-5])


# collects the page's long tasks (Chromium's Long Tasks API: tasks of the main
# thread over 50 ms) from now on, in window.rhnLongTasks
OBSERVE_LONG_TASKS_JS = """() => {
    window.rhnLongTasks = [];
    new PerformanceObserver((list) => {
        for (const e of list.getEntries()) window.rhnLongTasks.push(e.duration);
    }).observe({type: 'longtask'});
}"""
PLAY_SECONDS = 4


def test_training_leaves_the_main_thread_free(browser, tmp_path) -> None:  # noqa: ANN001
    # the heaviest setting of the sliders: one step of both nets takes about
    # 80 ms, a long task whenever it runs on the page's main thread
    for page in _open(browser, tmp_path, 0, depth=5, seq_len=100):
        root = page.locator(".rhn-playground-root")
        assert root.get_attribute("data-rhn-worker") == "true"
        page.wait_for_timeout(500)  # the page's own start-up is not measured
        page.evaluate(OBSERVE_LONG_TASKS_JS)
        page.locator("button[name=play]").click()
        page.wait_for_timeout(1000 * PLAY_SECONDS)
        page.locator("button[name=play]").click()
        page.wait_for_timeout(200)  # the observer reports a task after it ends
        long_tasks = page.evaluate("() => window.rhnLongTasks")
        n = _numbers(page)
        OUT.mkdir(parents=True, exist_ok=True)
        (OUT / "playground-long-tasks.json").write_text(
            json.dumps(
                {
                    "seconds": PLAY_SECONDS,
                    "steps": n["steps"],
                    "long_tasks_ms": long_tasks,
                }
            )
            + "\n"
        )
        assert n["error"] is None and n["steps"] > PLAY_SECONDS, n["steps"]
        assert not long_tasks, long_tasks


def test_a_slider_dragged_while_it_plays_leaves_the_main_thread_free(
    browser,  # noqa: ANN001
    tmp_path,  # noqa: ANN001
) -> None:
    # a phone at 3x: the bias slider dragged across its track while it plays,
    # each move a reset of the run and a redraw of all three canvases
    for page in _open(browser, tmp_path, 0, scale=3):
        page.wait_for_timeout(500)
        page.locator("button[name=play]").click()
        page.wait_for_timeout(500)
        page.evaluate(OBSERVE_LONG_TASKS_JS)
        slider = page.locator("input[name=transform_bias]")
        slider.scroll_into_view_if_needed()
        box = slider.bounding_box()
        y = box["y"] + box["height"] / 2
        page.mouse.move(box["x"] + 4, y)
        page.mouse.down()
        for i in range(40):  # about two seconds of dragging
            page.mouse.move(box["x"] + 4 + (box["width"] - 8) * i / 39, y)
            page.wait_for_timeout(50)
        page.mouse.up()
        page.wait_for_timeout(500)
        page.locator("button[name=play]").click()
        page.wait_for_timeout(200)
        long_tasks = page.evaluate("() => window.rhnLongTasks")
        n = _numbers(page)
        assert n["values"]["transform_bias"] > 0, n["values"]  # it moved
        assert n["error"] is None and n["steps"] > 0, n
        assert not long_tasks, long_tasks


# every clearing of a canvas made to take SLOW_CLEAR_MS: each redraw clears
# the loss chart, so each frame of the page costs at least that much
SLOW_CLEAR_MS = 30
SLOW_CLEAR_JS = f"""{{
    const clear = CanvasRenderingContext2D.prototype.clearRect;
    CanvasRenderingContext2D.prototype.clearRect = function (...args) {{
        const until = performance.now() + {SLOW_CLEAR_MS};
        while (performance.now() < until) {{}}
        return clear.apply(this, args);
    }};
}}"""


def test_slow_frames_space_the_redraws_out(browser, tmp_path) -> None:  # noqa: ANN001
    # a frame of 30 ms or more: the playing playground redraws at most every
    # 5 x 30 = 150 ms, not every 100 ms, and keeps training
    for page in _open(browser, tmp_path, 0, init_script=SLOW_CLEAR_JS):
        root = page.locator(".rhn-playground-root")
        page.locator("button[name=play]").click()
        page.wait_for_timeout(1500)
        page.locator("button[name=play]").click()
        every = root.get_attribute("data-rhn-draw-every-ms")
        assert every is not None, "no frame was timed while it played"
        assert 5 * SLOW_CLEAR_MS <= float(every) <= 1000, every
        assert _numbers(page)["steps"] > 0


def test_page_loop_without_a_worker_trains_the_same(browser, tmp_path) -> None:  # noqa: ANN001
    runs = {}
    for worker, script in ((True, None), (False, "delete window.Worker;")):
        for page in _open(browser, tmp_path / str(worker), 0, init_script=script):
            root = page.locator("#root")
            assert (
                root.locator(".rhn-playground-root").get_attribute("data-rhn-worker")
                == str(worker).lower()
            )
            runs[worker] = page.evaluate(PLAY_JS, [root.element_handle(), 50])
    with_worker, in_page = runs[True]["numbers"], runs[False]["numbers"]
    assert with_worker["steps"] == in_page["steps"] == 50
    for key in ("loss_rhn", "loss_rnn", "gate_mean", "grad_norms_rhn"):
        assert with_worker[key] == in_page[key], key


def test_phone_keeps_the_loss_in_view_while_a_slider_moves(page: Page) -> None:
    root = page.locator("#root")
    # a page of text around the widget, as in the chapter: room to scroll
    page.evaluate("() => { document.body.style.padding = '100vh 0'; }")
    facts = check_loss_in_view_while_sliding(page, root)
    assert len(facts) == 8
