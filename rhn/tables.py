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
from collections.abc import Callable, Mapping, Sequence
from typing import Any

__all__ = ["Table", "table"]

Format = str | Callable[[Any], str]


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
            max(len(r[j]) for r in [self.header, *self.rows])
            for j in range(len(self.header))
        ]

        def line(cells: list[str]) -> str:
            return "  ".join(
                c.rjust(w) if num else c.ljust(w)
                for c, w, num in zip(cells, widths, self.numeric, strict=True)
            ).rstrip()

        lines = [line(self.header), "  ".join("-" * w for w in widths)]
        lines += [line(r) for r in self.rows]
        if self.caption:
            lines.insert(0, self.caption)
        return "\n".join(lines)

    __repr__ = __str__

    def _repr_html_(self) -> str:
        def row(cells: list[str], tag: str) -> str:
            out = []
            for c, num in zip(cells, self.numeric, strict=True):
                align = ' class="rhn-num"' if num else ""
                out.append(f"<{tag}{align}>{html.escape(c)}</{tag}>")
            return "<tr>" + "".join(out) + "</tr>"

        caption = (
            f"<caption>{html.escape(self.caption)}</caption>" if self.caption else ""
        )
        body = "".join(row(r, "td") for r in self.rows)
        return (
            '<div class="rhn-table-wrap"><table class="rhn-table">'
            f"{caption}<thead>{row(self.header, 'th')}</thead>"
            f"<tbody>{body}</tbody></table></div>"
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
