"""Sphinx extension: one citation style, author-year, in the text and the bibliography.

sphinxcontrib-bibtex cites author-year in the text
(``bibtex_reference_style: author_year``) but numbers the bibliography
(pybtex's ``plain`` style), and two papers by the same authors in the same
year get the same citation ("Srivastava et al., 2015" names both the highway
networks papers). This extension

1. gives every entry whose authors and year it shares with another a letter
   after the year (2015a, 2015b, in the order of their titles), in the text;
2. registers the pybtex style ``rhn_author_year`` (``plain`` with labels such
   as "Srivastava et al., 2015a"), which ``_config.yml`` names in
   ``bibtex_default_style``, so the bibliography shows the same label as the
   text;
3. registers the referencing style ``rhn_author_year``
   (``bibtex_reference_style``): sphinxcontrib-bibtex's ``author_year``, but a
   textual citation (``{cite:t}``) is one link, "Zilly et al. [2017]", where
   the stock style links the year alone ("[2017]": a link of four digits,
   which says nothing read out of context and is a small target on a phone).
"""

from __future__ import annotations

from collections import defaultdict
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pybtex.plugin
import sphinxcontrib.bibtex.plugin
from pybtex.database import parse_file
from pybtex.richtext import Text
from pybtex.style.formatting.plain import Style as PlainStyle
from pybtex.style.labels import BaseLabelStyle
from sphinxcontrib.bibtex.style.referencing import basic_author_year
from sphinxcontrib.bibtex.style.referencing.author_year import (
    AuthorYearReferenceStyle,
)
from sphinxcontrib.bibtex.style.template import (
    join,
    join2,
    node,
    post_text,
    pre_text,
    reference,
)

SUFFIX: dict[str, str] = {}  # entry key -> "a", "b", ... where years collide


def _last_name(person: Any) -> str:
    name = " ".join(person.prelast_names + person.last_names)
    return Text.from_latex(name).render_as("text")  # Ger{\v{s}}gorin -> Geršgorin


def authors(entry: Any) -> str:
    """The names a citation shows: "Geršgorin", "Gal and Ghahramani", "Zilly et al."."""
    people = entry.persons.get("author") or entry.persons.get("editor") or []
    names = [_last_name(p) for p in people]
    if len(names) >= 3:
        return f"{names[0]} et al."
    return " and ".join(names) or entry.fields.get("title", "Anon.")


def suffixes(entries: dict[str, Any]) -> dict[str, str]:
    """``{key: letter}`` for the entries whose authors and year collide."""
    groups: dict[tuple[str, str], list[str]] = defaultdict(list)
    for key, entry in entries.items():
        groups[authors(entry), entry.fields.get("year", "")].append(key)
    out = {}
    for keys in groups.values():
        if len(keys) > 1:
            keys.sort(key=lambda k: entries[k].fields.get("title", "").lower())
            out.update({k: "abcdefghijklmnopqrstuvwxyz"[i] for i, k in enumerate(keys)})
    return out


@node
def _year(children: Any, data: dict[str, Any]) -> Text:
    """The year with its letter (2015a); the stock template has no letter."""
    assert not children
    entry = data["entry"]
    return Text(entry.fields.get("year", "n.d.") + SUFFIX.get(entry.key, ""))


class AuthorYearLabels(BaseLabelStyle):
    """Bibliography labels that match the citations: "Zilly et al., 2017"."""

    def format_labels(self, sorted_entries: Any) -> Any:
        for entry in sorted_entries:
            year = entry.fields.get("year", "n.d.") + SUFFIX.get(entry.key, "")
            yield f"{authors(entry)}, {year}"


class AuthorYearStyle(PlainStyle):
    default_label_style = "rhn_author_year"


@dataclass
class WholeLinkTextualStyle(basic_author_year.BasicAuthorYearTextualReferenceStyle):
    """``{cite:t}`` as one link, all of "Zilly et al. [2017]", where the stock
    style links "2017" alone."""

    def inner(self, role_name: str) -> Any:
        author = self.person.author_or_editor_or_title(full="s" in role_name)
        return join2(sep1=self.pre_text_sep, sep2=self.post_text_sep)[
            pre_text,
            reference[
                join(sep=self.text_reference_sep)[
                    author, join[self.bracket.left, _year, self.bracket.right]
                ]
            ],
            post_text,
        ]


@dataclass
class ReferenceStyle(AuthorYearReferenceStyle):
    """sphinxcontrib-bibtex's ``author_year`` with :class:`WholeLinkTextualStyle`."""

    def __post_init__(self) -> None:
        super().__post_init__()
        textual = WholeLinkTextualStyle(
            bracket=self.bracket_textual,
            person=self.person,
            text_reference_sep=self.text_reference_sep,
            pre_text_sep=self.pre_text_sep,
            post_text_sep=self.post_text_sep,
        )
        self.styles = [
            textual
            if isinstance(s, basic_author_year.BasicAuthorYearTextualReferenceStyle)
            else s
            for s in self.styles
        ]
        self.role_style.update((name, textual) for name in textual.role_names())


def _load(app: Any, config: Any) -> None:
    entries: dict[str, Any] = {}
    for name in config.bibtex_bibfiles:
        entries.update(parse_file(str(Path(app.confdir) / name)).entries)
    SUFFIX.clear()
    SUFFIX.update(suffixes(entries))


def setup(app: Any) -> dict[str, Any]:
    pybtex.plugin.register_plugin(
        "pybtex.style.labels", "rhn_author_year", AuthorYearLabels
    )
    pybtex.plugin.register_plugin(
        "pybtex.style.formatting", "rhn_author_year", AuthorYearStyle
    )
    sphinxcontrib.bibtex.plugin.register_plugin(
        "sphinxcontrib.bibtex.style.referencing", "rhn_author_year", ReferenceStyle
    )
    # the author-year reference styles look the template up in their module
    basic_author_year.year = _year
    app.connect("config-inited", _load)
    return {"parallel_read_safe": True, "parallel_write_safe": True}
