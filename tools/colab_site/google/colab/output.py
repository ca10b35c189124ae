"""Stand-in for ``google.colab.output`` (tools/colab.py).

Colab renders third-party widgets only after
``enable_custom_widget_manager()``; it records the widget manager's URL in
``_widgets._installed_url``, which anywidget puts into each widget's display
metadata. The stand-in does the same, with a URL that names itself, and
writes each call to the file ``RHN_COLAB_CALLS`` names (tools/colab.py reads
it after the chapter).
"""

import os
import types

STAND_IN_URL = "stand-in://colab-custom-widget-manager.js"
_widgets = types.SimpleNamespace(_installed_url=None)


def _record(call: str) -> None:
    log = os.environ.get("RHN_COLAB_CALLS")
    if log:
        with open(log, "a", encoding="utf-8") as f:
            f.write(call + "\n")


def enable_custom_widget_manager() -> None:
    _record("enable_custom_widget_manager")
    _widgets._installed_url = STAND_IN_URL


def disable_custom_widget_manager() -> None:
    _record("disable_custom_widget_manager")
    _widgets._installed_url = None
