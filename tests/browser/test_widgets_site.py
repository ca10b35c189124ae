"""The interactive figures of the built site compute what the package computes.

For each page with an ``rhn.widgets`` figure (chapters 4, 7 and 9): the
numbers saved in the page are the package's (the figure was built with the
defaults), and at several slider settings, between grid points too, the
spectral radius, disc centres and radii (chapters 4 and 7) or the gradient
norms (chapter 9) that the browser computed agree with ``rhn.analysis`` /
``rhn.gradflow`` to 1e-9 relative (``widget_checks.REL``; the issue asks for
1e-6). Redraw times go to
``test-output/browser/redraw-ms.json``. Run by ``make browser``.
"""

from __future__ import annotations

import json
import os

import pytest

if not os.environ.get("RHN_BROWSER_TESTS"):
    pytest.skip(
        "browser tests run with `make browser`, after the book is built",
        allow_module_level=True,
    )

from rhn import widgets  # noqa: E402

from .common import OUT, SITE, Visit  # noqa: E402
from .test_site import FIGURE_CLASS, WIDGET_STATE, WIDGET_VIEW, _widget_pages  # noqa: E402
from .widget_checks import SETTINGS, compare, redraw_ms, set_and_read  # noqa: E402

EXECUTED = SITE.parent / "jupyter_execute"
DEFAULTS = {
    "rnn_discs": widgets.rnn_discs_widget,
    "rhn_jacobian": widgets.rhn_jacobian_widget,
    "gradient_flow": widgets.gradient_flow_widget,
}


def _figures_of(page: str) -> list[dict]:
    """The data of each rhn figure of a page, in page order, from its notebook."""
    nb = json.loads((EXECUTED / page).with_suffix(".ipynb").read_text())
    state = nb["metadata"]["widgets"][WIDGET_STATE]["state"]
    out = []
    for cell in nb["cells"]:
        for output in cell.get("outputs", []):
            view = output.get("data", {}).get(WIDGET_VIEW)
            if view and FIGURE_CLASS in state[view["model_id"]]["state"].get(
                "_dom_classes", []
            ):
                out.append(state[view["model_id"]]["state"]["data"])
    return out


@pytest.mark.parametrize("visit", _widget_pages(), indirect=True, ids=_widget_pages())
def test_widget_numbers_agree_with_the_package(visit: Visit) -> None:
    page = visit.page
    page_path = page.url.split("/", 3)[-1]
    datas = _figures_of(page_path)
    page.wait_for_selector(f".{FIGURE_CLASS} .rhn-widget[data-rhn-numbers] svg")
    figures = page.locator(f".{FIGURE_CLASS}")
    assert figures.count() == len(datas) >= 1
    log_path = OUT / "redraw-ms.json"
    log = json.loads(log_path.read_text()) if log_path.is_file() else {}
    for i, data in enumerate(datas):
        kind = data["kind"]
        # the chapter built the figure with the defaults: the page holds
        # exactly the numbers that the Python reference uses
        assert data == json.loads(json.dumps(DEFAULTS[kind]().data)), kind
        figure = figures.nth(i)
        figure.scroll_into_view_if_needed()
        worst: dict[str, float] = {}
        times = []
        for values in SETTINGS[kind]:
            numbers = set_and_read(figure, values)
            for name, err in compare(kind, numbers).items():
                worst[name] = max(worst.get(name, 0.0), err)
            times.append(redraw_ms(figure))
        log[f"{page_path}#{i}"] = {"kind": kind, "worst_rel_err": worst, "ms": times}
    OUT.mkdir(parents=True, exist_ok=True)
    log_path.write_text(json.dumps(log, indent=1))
    assert not visit.errors, f"uncaught errors on {page_path}: {visit.errors}"
