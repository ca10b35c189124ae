"""The site's search finds "Gershgorin" as well as "Geršgorin".

Sphinx indexes words as written, so a reader who types the name without its
háček found only the pages that use the ASCII spelling in code
(``gershgorin_discs``). Before the index is written, every indexed word with
accents is added again without them (``geršgorin`` also as ``gershgorin``
and ``gersgorin``), pointing to the same pages: every spelling finds them.
The index entries that the search ranks first (a chapter's ``{index}``
entries, such as "Geršgorin disc") are searchable in every spelling too,
without a second entry in the general index.
"""

from __future__ import annotations

import unicodedata
from typing import Any

# letters whose usual English spelling is two letters (Geršgorin, Gershgorin)
DIGRAPHS = str.maketrans({"š": "sh", "č": "ch", "ž": "zh", "ß": "ss"})


def folds(word: str) -> set[str]:
    """``word``'s spellings without accents: ``geršgorin`` -> gershgorin, gersgorin."""
    parts = unicodedata.normalize("NFKD", word)
    plain = "".join(c for c in parts if not unicodedata.combining(c))
    spelled = unicodedata.normalize("NFKD", word.translate(DIGRAPHS))
    spelled = "".join(c for c in spelled if not unicodedata.combining(c))
    return {plain, spelled} - {word}


def add_folded(mapping: dict[str, set[str]]) -> int:
    """Index each accented word's pages under its plain spellings too; how many."""
    added = 0
    for word, pages in list(mapping.items()):
        for plain in folds(word):
            mapping.setdefault(plain, set()).update(pages)
            added += 1
    return added


def _fold_index(app: Any) -> list[Any]:
    indexer = getattr(app.builder, "indexer", None)
    if indexer is not None:
        add_folded(indexer._mapping)
        add_folded(indexer._title_mapping)
        for docname, entries in indexer._index_entries.items():
            folded = {
                (plain, target, main)
                for entry, target, main in entries
                for plain in folds(entry)
            }
            indexer._index_entries[docname] = sorted(set(entries) | folded)
    return []  # html-collect-pages: no pages of our own


def setup(app: Any) -> dict[str, Any]:
    # html-collect-pages runs in the builder's finish, before the index is dumped
    app.connect("html-collect-pages", _fold_index)
    return {"parallel_read_safe": True, "parallel_write_safe": True}
