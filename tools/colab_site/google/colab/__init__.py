"""Stand-in for ``google.colab`` (tools/colab.py): only what the book touches.

The chapters look for ``"google.colab" in sys.modules`` (the set-up cell's
GPU hint); anywidget looks for ``google.colab.output`` and calls
:func:`google.colab.output.enable_custom_widget_manager`.
"""
