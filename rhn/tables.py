"""Tables for notebooks: an HTML table on a web page, aligned text elsewhere.

The book's chapters show results as tables rather than as columns padded with
spaces in ``print``: a padded line is cut off or wrapped on a phone, and a
screen reader reads it as one long string. :func:`table` returns an object
that Jupyter (and the book's build) shows as an HTML ``<table>`` and that
``print`` or a plain terminal shows as aligned text::

    from rhn.tables import table
    table([("RHN", 0.012), ("GRU", 0.034)], ["model", "final loss"],
          formats={"final loss": "{:.3f}"})
"""

from __future__ import annotations

import html
import numbers
import re
from collections.abc import Callable, Mapping, Sequence
from typing import Any

__all__ = ["Table", "table"]

Format = str | Callable[[Any], str]


# a label's maths, $b_f$ or $D = 4$ (the names matplotlib legends typeset):
# a table shows it as HTML, b<sub>f</sub>, or as plain text, b_f
_MATH = re.compile(r"\$([^$]+)\$")
_SCRIPT = re.compile(r"([_^])(\{[^{}]*\}|\\?[A-Za-z0-9]+)")
_SYMBOLS = {
    "alpha": "\u03b1",
    "beta": "\u03b2",
    "gamma": "\u03b3",
    "delta": "\u03b4",
    "epsilon": "\u03b5",
    "lambda": "\u03bb",
    "mu": "\u03bc",
    "rho": "\u03c1",
    "sigma": "\u03c3",
    "tau": "\u03c4",
    "ell": "\u2113",
    "lVert": "\u2016",
    "rVert": "\u2016",
    "cdot": "\u00b7",
    "times": "\u00d7",
    "le": "\u2264",
    "ge": "\u2265",
    "ne": "\u2260",
    "approx": "\u2248",
    "infty": "\u221e",
}


def _symbols(tex: str) -> str:
    """``tex`` with its commands as characters (``\\sigma`` is σ), a minus
    sign for "-", and no braces or other commands (``\\mathrm{x}`` is x)."""
    tex = re.sub(r"\\([A-Za-z]+)", lambda m: _SYMBOLS.get(m.group(1), ""), tex)
    tex = re.sub(r"\\[,;:! ]", "\u2009", tex)
    return (
        tex.replace("-", "\u2212").replace("~", " ").replace("{", "").replace("}", "")
    )


def plain_label(text: str) -> str:
    """``text`` with each ``$...$`` maths as plain text: ``$b_f$=1`` is b_f=1."""
    return _MATH.sub(
        lambda m: _symbols(m.group(1)).replace("{", "").replace("}", ""), text
    )


def html_label(text: str) -> str:
    """``text`` as HTML, each ``$...$`` maths typeset with tags: letters in
    italics, ``_x`` and ``^x`` as sub- and superscripts (``$b_f$`` is
    ``<i>b</i><sub>f</sub>``); the rest escaped."""
    out, start = [], 0
    for m in _MATH.finditer(text):
        out.append(html.escape(text[start : m.start()]))
        out.append(_math_html(m.group(1)))
        start = m.end()
    out.append(html.escape(text[start:]))
    return "".join(out)


def _math_html(tex: str) -> str:
    parts, start = [], 0
    for m in _SCRIPT.finditer(tex):
        parts.append(_italic(tex[start : m.start()]))
        tag = "sub" if m.group(1) == "_" else "sup"
        parts.append(f"<{tag}>{_italic(m.group(2).strip('{}'))}</{tag}>")
        start = m.end()
    parts.append(_italic(tex[start:]))
    return "".join(parts)


def _italic(tex: str) -> str:
    """Single Latin letters (variables) in italics, words upright."""
    text = html.escape(_symbols(tex))
    return re.sub(r"(?<![A-Za-z])([A-Za-z])(?![A-Za-z])", r"<i>\1</i>", text)


def _cell(value: Any, fmt: Format | None) -> str:
    if fmt is not None:
        return fmt(value) if callable(fmt) else fmt.format(value)
    if isinstance(value, bool) or value is None:
        return str(value)
    if isinstance(value, numbers.Integral):
        return str(value)
    if isinstance(value, numbers.Real):
        return f"{float(value):.4g}"
    return str(value)


class Table:
    """A table of strings: ``header`` (one name per column) and ``rows``.

    Made by :func:`table`. ``str(t)`` is aligned plain text; Jupyter shows
    ``t`` through ``_repr_html_`` as an HTML table, numbers right-aligned.
    """

    def __init__(
        self,
        header: list[str],
        rows: list[list[str]],
        numeric: list[bool],
        caption: str | None = None,
    ) -> None:
        self.header, self.rows, self.numeric, self.caption = (
            header,
            rows,
            numeric,
            caption,
        )

    def __str__(self) -> str:
        widths = [
            max(len(plain_label(r[j])) for r in [self.header, *self.rows])
            for j in range(len(self.header))
        ]

        def line(cells: list[str]) -> str:
            return "  ".join(
                plain_label(c).rjust(w) if num else plain_label(c).ljust(w)
                for c, w, num in zip(cells, widths, self.numeric, strict=True)
            ).rstrip()

        lines = [line(self.header), "  ".join("-" * w for w in widths)]
        lines += [line(r) for r in self.rows]
        if self.caption:
            lines.insert(0, plain_label(self.caption))
        return "\n".join(lines)

    __repr__ = __str__

    def _repr_html_(self) -> str:
        def row(cells: list[str], tag: str) -> str:
            out = []
            for c, num in zip(cells, self.numeric, strict=True):
                align = ' class="rhn-num"' if num else ""
                out.append(f"<{tag}{align}>{html_label(c)}</{tag}>")
            return "<tr>" + "".join(out) + "</tr>"

        body = "".join(row(r, "td") for r in self.rows)
        scroll = (  # a table wider than the column scrolls in this box
            '<div class="rhn-table-wrap"><table class="rhn-table">'
            f"<thead>{row(self.header, 'th')}</thead>"
            f"<tbody>{body}</tbody></table></div>"
        )
        if not self.caption:
            return scroll
        # the caption outside the scroll box, so that it wraps in the column
        # instead of scrolling away with a wide table
        return (
            '<figure class="rhn-table-figure">'
            f"<figcaption>{html_label(self.caption)}</figcaption>{scroll}</figure>"
        )


def table(
    rows: Sequence[Sequence[Any]],
    header: Sequence[str],
    *,
    formats: Mapping[str, Format] | None = None,
    caption: str | None = None,
) -> Table:
    """A table to show in a notebook (HTML) or print (aligned text).

    Args:
        rows: one sequence of values per row, each as long as ``header``.
        header: the column names.
        formats: per column name, a format string (``"{:.3f}"``) or a function
            from the value to its text; other numbers get 4 significant digits.
        caption: an optional line shown above the table.

    Returns:
        A :class:`Table`; the last expression of a cell shows it.

    Raises:
        TypeError: ``header`` is a string, or ``rows`` is not a sequence of rows.
        ValueError: a row's length differs from the header's, or ``formats``
            names a column the header lacks.
    """
    if isinstance(header, str) or not isinstance(header, Sequence):
        raise TypeError(
            f"header must be a sequence of column names, got {type(header).__name__}"
        )
    header = [str(h) for h in header]
    if not header:
        raise ValueError("header must name at least one column, got an empty one")
    formats = dict(formats or {})
    unknown = sorted(set(formats) - set(header))
    if unknown:
        raise ValueError(f"formats names columns not in header: {unknown}")
    if isinstance(rows, str) or not isinstance(rows, Sequence):
        raise TypeError(f"rows must be a sequence of rows, got {type(rows).__name__}")
    text_rows: list[list[str]] = []
    numeric = [True] * len(header)
    for i, r in enumerate(rows):
        if isinstance(r, str) or not isinstance(r, Sequence):
            raise TypeError(f"rows[{i}] must be a sequence, got {type(r).__name__}")
        if len(r) != len(header):
            raise ValueError(
                f"rows[{i}] has {len(r)} values, expected {len(header)} "
                f"(one per column of header)"
            )
        for j, value in enumerate(r):
            if isinstance(value, bool) or not isinstance(value, numbers.Number):
                numeric[j] = False
        text_rows.append(
            [_cell(v, formats.get(h)) for v, h in zip(r, header, strict=True)]
        )
    return Table(header, text_rows, numeric, caption)
