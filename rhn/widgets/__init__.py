r"""Interactive figures: sliders that compute in the reader's browser.

Python builds a small model (seeded weights and inputs, float64) and hands
its numbers to an anywidget widget; the widget's ES module runs the RHN steps,
the analytic temporal Jacobian, the Geršgorin discs, the eigenvalues and the
gradient norms in the browser, with the same formulas as :mod:`rhn.analysis`
and :mod:`rhn.gradflow`, and draws them in SVG. The sliders are continuous
and need no kernel: the website, which has none, runs the same module from
the widget state saved in the page.

Where each part lives (one hop from here):

- ``rhn.widgets.models``: the models, the numbers sent to the browser,
  and the Python reference numbers (:func:`example_rnn_jacobian`,
  :func:`example_rhn_jacobian`, :func:`gradient_flow_curves`);
- ``rhn.widgets.interactive``: the widgets (:func:`rnn_discs_widget`,
  chapter 4; :func:`rhn_jacobian_widget`, chapter 7;
  :func:`gradient_flow_widget`, chapter 9);
- ``rhn.widgets.figures``: the same figures drawn by matplotlib, the PNG
  that front ends without widgets (PDF, nbconvert) show;
- ``rhn.widgets.playground``: the training playground of chapter 14
  (:func:`playground_widget`), which trains an RHN and a tanh RNN in the
  browser (``js/playground*.js``, bundled into ``static/playground.js``);
- ``rhn/widgets/js/``: the browser side (``numerics.js``: the mathematics;
  ``draw.js``: the drawing shared by the three figures; ``controls.js``;
  ``index.js``), bundled by ``rhn.widgets.build`` into
  ``rhn/widgets/static/widget.js``.

This subpackage needs ``anywidget`` (``pip install "rhn[widgets]"``); the rest
of the package does not import it.
"""

from __future__ import annotations

try:
    import anywidget  # noqa: F401
except ImportError as err:  # pragma: no cover - depends on the environment
    raise ImportError(
        "rhn.widgets needs anywidget; install it with: pip install 'rhn[widgets]'"
    ) from err

from .figures import (
    gradient_flow_figure,
    render_png,
    rhn_jacobian_figure,
    rnn_discs_figure,
)
from .interactive import (
    DOM_CLASS,
    InteractiveFigure,
    gradient_flow_widget,
    rhn_jacobian_widget,
    rnn_discs_widget,
)
from .models import (
    BIAS_GRID,
    example_rhn_jacobian,
    example_rnn_jacobian,
    gradient_flow_curves,
    gradient_flow_data,
    rhn_jacobian_data,
    rnn_discs_data,
)
from .playground import Playground, playground_widget

__all__ = [
    "BIAS_GRID",
    "DOM_CLASS",
    "InteractiveFigure",
    "example_rnn_jacobian",
    "example_rhn_jacobian",
    "gradient_flow_curves",
    "rnn_discs_data",
    "rhn_jacobian_data",
    "gradient_flow_data",
    "rnn_discs_widget",
    "rhn_jacobian_widget",
    "gradient_flow_widget",
    "render_png",
    "rnn_discs_figure",
    "rhn_jacobian_figure",
    "gradient_flow_figure",
    "Playground",
    "playground_widget",
]
