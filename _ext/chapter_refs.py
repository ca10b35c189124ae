"""Sphinx extension: a reference to a chapter reads "chapter 3", not its title.

A ``{ref}`` to a chapter's label without a text of its own (``{ref}`ch-bptt```)
makes Sphinx write the chapter's whole title as the link ("the subject of
Backpropagation through time"): long links that wrap over two lines on a phone
and read oddly in a sentence. The book cites chapters by number in its prose
("chapter {ref}`ch-gradient-flow`", "Chapters {ref}`ch-bptt` and ..."), so
this extension, before the references are resolved, gives each such link the
text of the chapter's number, from the numbered table of contents:

- "chapter 3" (or "Chapter 3" where a sentence or a table cell starts),
  with a no-break space;
- where the prose already says "chapter" or "chapters" just before it
  ("chapter {ref}`ch-bptt`"), that word joins the link, "chapter 3" (a link
  on the digit alone is a small target that reads as a footnote);
- "3" alone where it follows another chapter link with only ", ", "and" or
  "or" between them;
- in a run of such links that the prose does not introduce, "chapters 10, 12"
  (the first link carries the word);

and keeps the chapter's title as the link's tooltip (``title``). A reference
with a text of its own (``{ref}`chapter 3 <ch-bptt>```), a reference to a
section that is not a chapter's title, and a page without a number
(the appendix, the back matter) are left alone.
"""

from __future__ import annotations

import re
from typing import Any

from docutils import nodes
from sphinx import addnodes
from sphinx.transforms.post_transforms import SphinxPostTransform

# the prose names the chapter itself just before the link
_WORD_BEFORE = re.compile(r"\b[Cc]hapters?\s+$")
# what may stand between two links of one run: "3, 7", "3 and 7", "3, and 7"
_JOIN = re.compile(r"^\s*(?:,|,?\s*and|,?\s*or)\s*$")
# a sentence starts here: nothing before the link in its paragraph, or a full stop
_SENTENCE_START = re.compile(r"(?:^|[.!?])\s*$")


def chapter_number(env: Any, target: str) -> tuple[str, str] | None:
    """``(number, title)`` when label ``target`` names a numbered chapter's
    title, else None."""
    std = env.get_domain("std")
    docname, _labelid, sectname = std.labels.get(target, ("", "", ""))
    if not docname or docname not in env.titles:
        return None
    if env.titles[docname].astext() != sectname:
        return None  # a section inside the chapter, not its title
    number = env.toc_secnumbers.get(docname, {}).get("")
    if not number:
        return None
    return ".".join(map(str, number)), sectname


def link_words(before: str, paragraph_before: str, count: int) -> list[str]:
    """The words to put before the numbers of a run of ``count`` chapter links:
    ``before`` is the text just before the first link, ``paragraph_before`` all
    of its paragraph before it. "chapter", "Chapter" or "chapters" and a
    no-break space, or ``""``, for the first link; ``""`` for the others."""
    if _WORD_BEFORE.search(before):
        word = ""
    else:
        # a no-break space: "chapter" and its number stay on one line
        word = "chapters\u00a0" if count > 1 else "chapter\u00a0"
        if _SENTENCE_START.search(paragraph_before):
            word = word.capitalize()
    return [word] + [""] * (count - 1)


class ChapterNumbers(SphinxPostTransform):
    """Turn title-less ``{ref}`` links to chapters into "chapter N" links."""

    default_priority = 5  # before the ReferencesResolver (10)

    def run(self, **kwargs: Any) -> None:
        std = self.env.get_domain("std")
        for parent in {
            n.parent
            for n in self.document.findall(addnodes.pending_xref)
            if n.parent is not None
        }:
            for run in self._runs(parent):
                self._rewrite(std, parent, run)

    def _candidate(self, node: Any) -> tuple[str, str] | None:
        if not isinstance(node, addnodes.pending_xref):
            return None
        if node.get("refdomain") != "std" or node.get("reftype") != "ref":
            return None
        if node.get("refexplicit"):
            return None
        return chapter_number(self.env, node["reftarget"])

    def _runs(self, parent: Any) -> list[list[tuple[int, str, str]]]:
        """Runs of chapter links among ``parent``'s children:
        ``[(index, number, title), ...]``, joined by ", " / "and" / "or"."""
        runs: list[list[tuple[int, str, str]]] = []
        children = list(parent.children)
        last = None  # index of the last link of the current run
        for i, child in enumerate(children):
            found = self._candidate(child)
            if found is None:
                continue
            between = children[last + 1 : i] if last is not None else None
            # between two links of a run: ", " or "and", possibly split by
            # a line break of the source into Text nodes of its own
            joined = (
                between is not None
                and len(between) >= 1
                and all(isinstance(b, nodes.Text) for b in between)
                and _JOIN.match("".join(b.astext() for b in between))
            )
            if joined:
                runs[-1].append((i, *found))
            else:
                runs.append([(i, *found)])
            last = i
        return runs

    def _rewrite(self, std: Any, parent: Any, run: list[tuple[int, str, str]]) -> None:
        children = list(parent.children)
        first = run[0][0]
        # the text just before the link: MyST makes a line break of the source
        # a Text node of its own ("chapter", "\n", link), so join the run of
        # Text nodes that ends at the link
        texts = []
        for child in reversed(children[:first]):
            if not isinstance(child, nodes.Text):
                break
            texts.insert(0, child)
        before = "".join(t.astext() for t in texts)
        text_before = "".join(c.astext() for c in children[:first])
        words = link_words(before, text_before, len(run))
        said = _WORD_BEFORE.search(before)
        if said:
            # the prose's own "chapter" moves into the link, with a no-break
            # space: the link reads "chapter 3", not "3"
            keep = said.start()  # characters of `before` that stay
            for text in texts:
                n = len(text.astext())
                if keep < n:
                    # by position: a Text node is a string, and replace()
                    # would find the first *equal* one (an earlier "\n" of
                    # the paragraph, which then vanished: "the" + "gradient")
                    at = next(i for i, c in enumerate(parent.children) if c is text)
                    parent[at] = nodes.Text(text.astext()[:keep])
                keep = max(0, keep - n)
            words[0] = said.group(0).rstrip() + "\u00a0"
        for (index, number, title), word in zip(run, words, strict=True):
            node = children[index]
            docname, labelid, _ = std.labels[node["reftarget"]]
            link = std.build_reference_node(
                self.env.docname,
                self.app.builder,
                docname,
                labelid,
                word + number,
                "ref",
            )
            link["reftitle"] = title  # the chapter's title, as a tooltip
            link["classes"].append("rhn-chapter-ref")
            node.replace_self(link)


def setup(app: Any) -> dict[str, Any]:
    app.add_post_transform(ChapterNumbers)
    return {"parallel_read_safe": True, "parallel_write_safe": True}
