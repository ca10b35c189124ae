"""Sphinx extension: punctuation after inline maths stays on the formula's line.

A browser may break a line between an inline formula (MathJax draws it as one
box) and the full stop or comma after it, so that a line on a phone starts
with ". The next sentence". This transform puts a short inline formula and
the punctuation right after it into one ``<span class="rhn-nowrap">``, which
the site's style sheet keeps on one line. A long formula is left alone: it
may need to break inside itself (MathJax breaks long inline maths), and a
span that never breaks would run it off a phone's screen.
"""

from __future__ import annotations

import re
from typing import Any

from docutils import nodes
from sphinx.transforms import SphinxTransform

# what must not start a line: closing punctuation right after the formula
_PUNCT = re.compile(r"^[.,;:!?)\]\u2019\u201d]+")
# a formula longer than this (in TeX characters) may break inside itself
MAX_TEX = 40


class KeepPunctuationWithMath(SphinxTransform):
    """Wrap ``math`` + following punctuation in an ``inline.rhn-nowrap``."""

    default_priority = 700

    def apply(self, **kwargs: Any) -> None:
        for math in list(self.document.findall(nodes.math)):
            glue(math)


def glue(math: nodes.math) -> bool:
    """Join ``math`` and the punctuation after it; True when it did.

    Children are addressed by position only: text nodes are strings, and
    ``index``, ``remove`` or ``replace`` would find the first *equal* one
    (another ", " earlier in the paragraph), not this one.
    """
    parent = math.parent
    if parent is None or len(math.astext()) > MAX_TEX:
        return False
    index = next(i for i, child in enumerate(parent.children) if child is math)
    if index + 1 >= len(parent.children):
        return False
    after = parent.children[index + 1]
    if not isinstance(after, nodes.Text):
        return False
    found = _PUNCT.match(after.astext())
    if not found:
        return False
    punct, rest = found.group(0), after.astext()[found.end() :]
    if rest:
        parent[index + 1] = nodes.Text(rest)
    else:
        del parent[index + 1]
    box = nodes.inline(classes=["rhn-nowrap"])
    parent[index] = box
    box += math
    box += nodes.Text(punct)
    return True


def setup(app: Any) -> dict[str, Any]:
    app.add_transform(KeepPunctuationWithMath)
    return {"parallel_read_safe": True, "parallel_write_safe": True}
