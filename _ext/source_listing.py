"""``rhn-source``: show a function or method of the package without its docstring.

A chapter that shows the package's own code (``literalinclude`` with
``:pyobject:``) would also show the docstring, written for the API page in
reST with ``Args:`` blocks and double backquotes, which the chapter shows as
raw source. This directive takes the same two arguments and leaves the
docstrings (of the object and of anything defined inside it) out; the caption
names the file and the object, whose API entry has the docstring::

    ```{rhn-source} ../rhn/highway.py
    :pyobject: Highway.forward
    ```
"""

from __future__ import annotations

import ast
from pathlib import Path
from typing import Any

from docutils import nodes
from docutils.parsers.rst import directives
from sphinx.directives.code import container_wrapper
from sphinx.util.docutils import SphinxDirective

DEFS = (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)


def _find(scope: list[ast.stmt], name: str) -> ast.AST | None:
    """A definition named ``name`` in ``scope``, also inside if/try/with blocks."""
    for n in scope:
        if isinstance(n, DEFS):
            if n.name == name:
                return n
            continue
        for field in ("body", "orelse", "finalbody", "handlers"):
            inner = getattr(n, field, None)
            if isinstance(inner, list):
                blocks = [h.body for h in inner if isinstance(h, ast.ExceptHandler)]
                for block in blocks or [inner]:
                    found = _find(block, name)
                    if found is not None:
                        return found
    return None


def object_source(text: str, dotted: str) -> str:
    """The source of ``dotted`` (``name`` or ``Class.method``) without docstrings."""
    scope: list[ast.stmt] = ast.parse(text).body
    node: ast.AST | None = None
    for part in dotted.split("."):
        node = _find(scope, part)
        if node is None:
            raise ValueError(f"no {part!r} (of {dotted!r}) in the file")
        scope = node.body
    assert node is not None
    lines = text.splitlines()
    first = min([node.lineno, *(d.lineno for d in node.decorator_list)])
    drop: set[int] = set()
    for inner in ast.walk(node):
        body = getattr(inner, "body", None)
        if isinstance(inner, DEFS) and body and isinstance(body[0], ast.Expr):
            value = body[0].value
            if isinstance(value, ast.Constant) and isinstance(value.value, str):
                drop.update(range(body[0].lineno, body[0].end_lineno + 1))
    kept = [lines[n - 1] for n in range(first, node.end_lineno + 1) if n not in drop]
    indent = min(len(s) - len(s.lstrip()) for s in kept if s.strip())
    return "\n".join(s[indent:] for s in kept)


class RhnSource(SphinxDirective):
    required_arguments = 1
    option_spec = {"pyobject": directives.unchanged_required}

    def run(self) -> list[nodes.Node]:
        rel, path = self.env.relfn2path(self.arguments[0])
        self.env.note_dependency(rel)
        dotted = self.options.get("pyobject")
        if not dotted:
            raise self.error("rhn-source needs a :pyobject: option")
        try:
            code = object_source(Path(path).read_text(encoding="utf-8"), dotted)
        except (OSError, ValueError) as err:
            raise self.error(f"rhn-source {self.arguments[0]}: {err}") from err
        block = nodes.literal_block(code, code, language="python")
        self.set_source_info(block)
        # the path from the repository root (rhn/train/model.py), so that a
        # reader finds the file; rel is relative to the source directory
        shown = Path(rel).as_posix()
        caption = f"{shown}: {dotted} (docstring on the API page)"
        return [container_wrapper(self, block, caption)]


def setup(app: Any) -> dict[str, Any]:
    app.add_directive("rhn-source", RhnSource)
    return {"parallel_read_safe": True, "parallel_write_safe": True}
