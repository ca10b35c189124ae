"""Chapter 14 on the built site: the playground trains offline, within 1 MB.

The page weighs at most 1 MB, loads every script from the site (no request
leaves it), and the playground, drawn by the site's widget loader from the
state saved in the page,
trains: at the starting setting, after 600 steps, the RHN's loss is below
0.01 and the RNN's above 0.14, as the chapter says. On a phone (390 x 844,
scale 3) it trains in its Web Worker with no long task on the page while it
plays, and the loss chart stays on screen, below the theme's sticky bar,
while any slider moves; scrolled on to the heatmap and the gates, the sticky
head leaves with the sliders and covers neither. Run by ``make browser``.
"""

from __future__ import annotations

import json
import os
import re

import pytest

if not os.environ.get("RHN_BROWSER_TESTS"):
    pytest.skip(
        "browser tests run with `make browser`, after the book is built",
        allow_module_level=True,
    )

from rhn.widgets.playground import PLAYGROUND_CLASS  # noqa: E402

from .common import OUT, SITE, Visit  # noqa: E402
from .playground_page import (  # noqa: E402
    PLAY_JS,
    check_loss_in_view_while_sliding,
    play_windows,
)
from .test_playground_harness import (  # noqa: E402
    LEARNS_BELOW,
    OBSERVE_LONG_TASKS_JS,
    PLATEAU_ABOVE,
    STEPS,
)
from .test_reader import MAX_EXTRA_BYTES, PLAIN_CHAPTER, _transfer  # noqa: E402

PAGE = "book/14_playground.html"

# Scrolls each of the heatmap and the gates to just below the theme's bar,
# then to the middle of the screen, and lists where the playground's sticky
# head overlaps one of them ([canvas, where, head bottom, canvas top])
COVERED_JS = """async (selector) => {
  const root = document.querySelector(selector + ' .rhn-playground-root');
  const head = root.querySelector('.rhn-playground-head');
  const bar = document.querySelector('.bd-header-article');
  const barBottom = bar ? bar.getBoundingClientRect().bottom : 0;
  const canvases = [...root.querySelectorAll('canvas')]
    .filter((c) => !head.contains(c));
  const frame = () => new Promise((r) => requestAnimationFrame(() => r()));
  const found = [];
  for (const c of canvases) {
    for (const [where, y] of [['top', barBottom + 2], ['middle', innerHeight / 2]]) {
      window.scrollBy(0, c.getBoundingClientRect().top - y);
      await frame(); await frame();
      const h = head.getBoundingClientRect(), r = c.getBoundingClientRect();
      if (h.bottom > r.top + 1 && h.top < r.bottom - 1) {
        found.push([c.getAttribute('aria-label'), where, h.bottom, r.top]);
      }
    }
  }
  return found;
}"""
MAX_BYTES = 1_000_000


def test_playground_page_is_light_and_local() -> None:
    path = SITE / PAGE
    html = path.read_text()
    assert path.stat().st_size <= MAX_BYTES, path.stat().st_size
    srcs = re.findall(r'<script[^>]*\ssrc="([^"]+)"', html)
    assert not [s for s in srcs if "://" in s or s.startswith("//")], srcs
    for src in srcs:
        assert (path.parent / src.split("?")[0]).resolve().is_file(), src
    # the site's small widget loader draws it (_ext/widget_scripts.py)
    assert "widget-loader.js" in html and "embed-amd" not in html


def test_playground_weighs_little_more_than_a_plain_chapter(browser, base_url) -> None:  # noqa: ANN001
    # _transfer waits for the network to go idle: the playground draws at once
    plain = _transfer(browser, base_url, PLAIN_CHAPTER)
    total = _transfer(browser, base_url, PAGE)
    OUT.mkdir(parents=True, exist_ok=True)
    (OUT / "playground-weight.json").write_text(
        json.dumps(
            {
                "html_bytes": (SITE / PAGE).stat().st_size,
                "transfer_bytes": total,
                "plain_chapter_bytes": plain,
            }
        )
        + "\n"
    )
    assert total - plain <= MAX_EXTRA_BYTES, (total, plain)


@pytest.mark.parametrize("visit", [PAGE], indirect=True, ids=[PAGE])
def test_playground_trains_on_the_site(visit: Visit) -> None:
    page = visit.page
    root = page.locator(f".{PLAYGROUND_CLASS}")
    page.wait_for_selector(
        f".{PLAYGROUND_CLASS} .rhn-playground-root[data-rhn-numbers] canvas",
        timeout=60000,
    )
    assert root.count() == 1
    root.scroll_into_view_if_needed()
    out = page.evaluate(PLAY_JS, [root.element_handle(), STEPS])
    n = out["numbers"]
    assert n["error"] is None and n["steps"] == STEPS
    assert n["loss_rhn"] < LEARNS_BELOW, n["loss_rhn"]
    assert n["loss_rnn"] > PLATEAU_ABOVE, n["loss_rnn"]
    OUT.mkdir(parents=True, exist_ok=True)
    (OUT / "playground-site.json").write_text(
        json.dumps(
            {
                "steps_per_s": out["steps_per_s"],
                "loss_rhn": n["loss_rhn"],
                "loss_rnn": n["loss_rnn"],
                "bytes": (SITE / PAGE).stat().st_size,
            }
        )
        + "\n"
    )
    root.screenshot(path=str(OUT / "playground-site.png"))
    assert not visit.blocked, f"requests that left the site: {visit.blocked}"
    assert not visit.errors, f"uncaught errors: {visit.errors}"


def test_playground_on_a_phone(browser, base_url) -> None:  # noqa: ANN001
    with Visit(
        browser,
        base_url,
        PAGE,
        viewport=(390, 844),
        device_scale_factor=3,
        is_mobile=True,
        has_touch=True,
    ) as visit:
        page = visit.page
        page.wait_for_selector(
            f".{PLAYGROUND_CLASS} .rhn-playground-root[data-rhn-numbers] canvas",
            timeout=60000,
        )
        # the page's own start-up (MathJax typesetting) is not measured
        page.evaluate("() => window.MathJax?.startup?.promise")
        page.wait_for_timeout(500)
        w = page.locator(f".{PLAYGROUND_CLASS} .rhn-playground-root")
        assert w.get_attribute("data-rhn-worker") == "true"
        w.scroll_into_view_if_needed()
        page.evaluate(OBSERVE_LONG_TASKS_JS)
        play = w.locator("button[name=play]")
        play.tap()
        # training runs in a worker: a 3 s window of play has no long task
        # on the main thread (a second window where a stray task hit the first)
        windows = play_windows(
            page, w, 3, lambda x: x["steps"] > 30 and not x["long_tasks_ms"]
        )
        last = windows[-1]
        assert last["steps"] > 30 and not last["long_tasks_ms"], windows
        # sliders moved while it plays
        facts = check_loss_in_view_while_sliding(page, w)
        page.screenshot(path=str(OUT / "playground-phone.png"))
        # scrolled on to the heatmap and the gates, the sticky head has left
        # with the sliders: it covers neither, wherever they are on screen
        covered = page.evaluate(COVERED_JS, f".{PLAYGROUND_CLASS}")
        assert not covered, covered
        OUT.mkdir(parents=True, exist_ok=True)
        (OUT / "playground-phone.json").write_text(
            json.dumps({"windows_of_3_s": windows, "sliders": facts}) + "\n"
        )
        assert not visit.blocked, visit.blocked
        assert not visit.errors, visit.errors
