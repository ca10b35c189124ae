"""Visible prose words per chapter, and the limit a chapter may not pass.

    python tools/prose_words.py            # every page of book/, longest first
    python tools/prose_words.py book/08_gradient_flow.ipynb [...]

A chapter's prose is what a reader reads as text: the Markdown cells of a
notebook (the whole of a ``.md`` page), without display maths (``$$ ... $$``,
``\\begin{...} ... \\end{...}`` and ``{math}`` blocks), without code (fenced
blocks other than MyST directives, indented blocks) and without markup that is
not shown (labels such as ``(ch-x)=``, directive options such as
``:class: dropdown``, ``{index}`` entries, HTML comments, front matter). The
words of a directive's body (an admonition, a dropdown solution) are prose
and count. A word is a run of non-space characters holding a letter or a
digit, so inline maths such as ``$b_T = -3$`` counts as the words it is
written with.

Exit status 1 when a page has more than :data:`LIMIT` words; no page is
exempt. ``tests/test_prose_words.py`` runs this count on the book, so CI
(``pytest``) enforces it.
"""

from __future__ import annotations

import json
import re
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
BOOK = ROOT / "book"

LIMIT = 3500
"""The most visible prose words a page may have (a close read of about 20 min)."""

_FENCE = re.compile(r"^(\s*)(`{3,}|~{3,})(.*)$")
_WORD = re.compile(r"\S*[A-Za-z0-9]\S*")
_HIDDEN_LINE = re.compile(
    r"^\s*(\([\w:.-]+\)=\s*$"  # a label: (ch-x)=
    r"|:[\w-]+:(\s.*)?$"  # a directive option: :class: dropdown
    r"|<!--.*-->\s*$)"  # a one-line HTML comment
)


def prose(markdown: str) -> str:
    """The visible prose of a piece of MyST Markdown (see the module docstring)."""
    kept: list[str] = []
    fences: list[tuple[str, bool]] = []  # open fences: (marker, is it prose?)
    math_end = ""  # inside display maths: what closes it ($$ or \\end{name})
    in_comment = False
    previous_blank = True
    for line in markdown.splitlines():
        stripped = line.strip()
        if in_comment:
            in_comment = "-->" not in line
            continue
        if stripped.startswith("<!--") and "-->" not in stripped:
            in_comment = True
            continue
        if math_end:
            # the closing $$ may carry a label: $$ (eq-name)
            if math_end in stripped:
                math_end = ""
            continue
        match = _FENCE.match(line)
        if match:
            marker, info = match.group(2), match.group(3).strip()
            if fences and marker.startswith(fences[-1][0][0]) and not info:
                if len(marker) >= len(fences[-1][0]):
                    fences.pop()  # closes the innermost fence
                    continue
            directive = info.startswith("{") and not info.startswith(
                ("{math}", "{code", "{literalinclude}", "{raw}", "{mermaid}", "{index}")
            )
            prose_inside = directive and (not fences or fences[-1][1])
            fences.append((marker, prose_inside))
            if prose_inside:  # a title shown with the box: {admonition} Title
                kept.append(info.split("}", 1)[1])
            continue
        if fences and not fences[-1][1]:
            continue  # inside code or a maths block
        if stripped.startswith("$$"):
            # a display on one line ($$ x $$) or the start of a longer one
            math_end = "$$" if stripped.count("$$") == 1 else ""
            continue
        if stripped.startswith("\\begin{"):
            name = stripped[len("\\begin{") :].split("}", 1)[0]
            end = "\\end{" + name + "}"
            math_end = "" if end in stripped else end
            continue
        if _HIDDEN_LINE.match(line):
            continue
        if line.startswith(("    ", "\t")) and previous_blank and stripped:
            # an indented code block starts after a blank line (a list item's
            # continuation is indented too, but follows its item directly)
            previous_blank = True
            continue
        previous_blank = not stripped
        kept.append(line)
    return "\n".join(kept)


def _drop_front_matter(text: str) -> str:
    if text.startswith("---\n"):
        end = text.find("\n---", 4)
        if end != -1:
            return text[end + 4 :]
    return text


def markdown_of(path: Path) -> str:
    """The Markdown of a page: a notebook's Markdown cells, or a ``.md`` file."""
    if path.suffix == ".ipynb":
        cells = json.loads(path.read_text(encoding="utf-8"))["cells"]
        return "\n\n".join(
            "".join(c["source"]) if isinstance(c["source"], list) else c["source"]
            for c in cells
            if c["cell_type"] == "markdown"
        )
    return _drop_front_matter(path.read_text(encoding="utf-8"))


def count_words(text: str) -> int:
    """Words of visible prose in MyST Markdown ``text``."""
    return len(_WORD.findall(prose(text)))


def counts(paths: list[Path] | None = None) -> dict[str, int]:
    """Visible prose words of each page (default: every page of ``book/``)."""
    if paths is None:
        paths = sorted([*BOOK.glob("*.ipynb"), *BOOK.glob("*.md")])
    return {p.name: count_words(markdown_of(p)) for p in paths}


def over_limit(words: dict[str, int], limit: int = LIMIT) -> list[str]:
    """The pages over ``limit``."""
    return sorted(n for n, w in words.items() if w > limit)


def main(argv: list[str]) -> int:
    words = counts([Path(a) for a in argv] if argv else None)
    for name, n in sorted(words.items(), key=lambda kv: -kv[1]):
        note = ""
        if n > LIMIT:
            note = "  over the limit"
        print(f"{n:6d}  {name}{note}")
    print(f"{sum(words.values()):6d}  in all (limit {LIMIT} per page)")
    bad = over_limit(words)
    for name in bad:
        print(f"{name}: {words[name]} words, more than {LIMIT}", file=sys.stderr)
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
