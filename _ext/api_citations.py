"""Sphinx extension: the API page's citations link to the bibliography.

The package's docstrings cite as plain text, "(Zilly et al., 2017)" or
"Arjovsky et al. (2016)", which reads well in ``help()``; on the built API
page (``book/api``) each such citation becomes a link to its entry in the
bibliography, as ``{cite:p}`` makes them in the chapters. An author-year
pair that fits two entries (Srivastava et al., 2015a and 2015b) is told
apart by the title the docstring gives after it; a citation of two or more
authors that fits no entry, or fits two without a title, is a build
warning, so that a new docstring cannot cite past the bibliography.
"""

from __future__ import annotations

import re
from typing import Any

from docutils import nodes
from sphinx import addnodes
from sphinx.util import logging

logger = logging.getLogger(__name__)

API_DOC = "book/api"
_NAME = r"[A-ZÀ-ÖØ-Þ][\w\-']*"
# "Zilly et al., 2017", "Gal and Ghahramani, 2016", "Zilly et al. (2017)"
# (a docstring's line may break anywhere between the words)
CITATION = re.compile(
    rf"(?P<authors>{_NAME}(?:\s+et\s+al\.|\s+and\s+{_NAME}))"
    rf"(?:,\s+(?P<year>(?:19|20)\d\d)|\s+\((?P<pyear>(?:19|20)\d\d)\))"
)
# text in these is code, maths or a link already: left alone
_SKIP = (
    nodes.reference,
    nodes.literal,
    nodes.FixedTextElement,  # literal, doctest and math blocks, raw text
    nodes.math,
    nodes.comment,
    addnodes.desc_signature,
)


def _entries(app: Any) -> list[tuple[str, str, str, str]]:
    """(label, title, docname, html id) of every entry of the bibliography."""
    domain = app.env.get_domain("cite")
    found = []
    for citation in domain.citations:
        label = str(citation.formatted_entry.label)
        title = str(citation.entry.fields.get("title", ""))
        found.append(
            (label, title, citation.bibliography_key.docname, citation.citation_id)
        )
    return found


def _words(text: str) -> str:
    return " ".join(re.sub(r"[{}]", "", text).lower().split())


def _choose(authors: str, year: str, after: str, entries: list) -> tuple | None:
    """The entry ``authors, year`` cites; two that fit are told apart by the
    title that ``after`` (the text right after the year) starts with, as in
    ``2015 (*Title*)`` or ``2013, *Title*``."""
    stem = re.compile(re.escape(f"{authors}, {year}") + "[a-z]?")
    fits = [e for e in entries if stem.fullmatch(e[0])]
    if len(fits) > 1:
        start = _words(after).lstrip(" ,(")
        fits = [e for e in fits if start.startswith(_words(e[1])[:24])]
    return fits[0] if len(fits) == 1 else None


def link_citations(app: Any, doctree: nodes.document, docname: str) -> None:
    if docname != API_DOC:
        return
    entries = _entries(app)
    for text in list(doctree.findall(nodes.Text)):
        if any(isinstance(a, _SKIP) for a in _ancestors(text)):
            continue
        source = str(text)
        matches = list(CITATION.finditer(source))
        if not matches:
            continue
        # the paragraph's text from this node on: a title in italics after a
        # citation is the next node's
        parent = text.parent
        at = sum(len(c.astext()) for c in parent.children[: parent.index(text)])
        context = parent.astext()
        pieces: list[nodes.Node] = []
        done = 0
        for m in matches:
            year = m["year"] or m["pyear"]
            after = context[at + m.end() :][:120]
            authors = " ".join(m["authors"].split())
            entry = _choose(authors, year, after, entries)
            if entry is None:
                logger.warning(
                    "api: %r cites no single entry of the bibliography (add the "
                    "work to references.bib and cite it in a chapter, or give "
                    "its title after the year)",
                    m.group(0),
                    location=(docname, getattr(parent, "line", None)),
                )
                continue
            label, title, bib_doc, anchor = entry
            uri = app.builder.get_relative_uri(docname, bib_doc) + "#" + anchor
            pieces.append(nodes.Text(source[done : m.start()]))
            link = nodes.reference(
                "",
                m.group(0),
                refuri=uri,
                reftitle=re.sub(r"[{}]", "", title),  # BibTeX's case braces
                classes=["rhn-api-cite"],
            )
            pieces.append(link)
            done = m.end()
        if not pieces:
            continue
        pieces.append(nodes.Text(source[done:]))
        parent.replace(
            text, [p for p in pieces if not (isinstance(p, nodes.Text) and not str(p))]
        )


def _ancestors(node: nodes.Node):
    node = node.parent
    while node is not None:
        yield node
        node = node.parent


def setup(app: Any) -> dict[str, Any]:
    app.connect("doctree-resolved", link_citations)
    return {"parallel_read_safe": True, "parallel_write_safe": True}
