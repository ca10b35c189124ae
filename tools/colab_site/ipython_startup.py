# The Colab stand-in's kernel (tools/colab.py): as in Colab, google.colab and
# its output module are loaded before the first cell runs.
import google.colab.output  # noqa: F401
