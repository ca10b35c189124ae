"""The book's Sphinx extensions (``_ext/``): the parts that need no build."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "_ext"))

citations = pytest.importorskip("citations")
page_scripts = pytest.importorskip("page_scripts")


def test_same_authors_and_year_get_letters_in_title_order():
    from pybtex.database import parse_file

    entries = parse_file(str(ROOT / "references.bib")).entries
    letters = citations.suffixes(entries)
    assert letters == {
        "srivastava2015highway": "a",  # "Highway Networks"
        "srivastava2015training": "b",  # "Training Very Deep Networks"
        "pascanu2013construct": "a",  # "How to Construct ..."
        "pascanu2013difficulty": "b",  # "On the Difficulty ..."
    }
    assert citations.authors(entries["gershgorin1931"]) == "Geršgorin"
    assert citations.authors(entries["zilly2017recurrent"]) == "Zilly et al."
    assert citations.authors(entries["hochreiter1997long"]) == (
        "Hochreiter and Schmidhuber"
    )


def test_icons_are_cut_from_the_icon_script_by_family():
    script = (
        'var p={"trash-can":[448,512,[61460,"trash-alt"],"f2ed","M1 1z"],'
        'github:[496,512,[],"f09b","M2 2z"]};s("fab",p);'
        'var q={bars:[448,512,["navicon"],"f0c9","M3 3z"]};s("fas",q);'
    )
    icons = page_scripts.icon_paths(script)
    assert icons["fab"]["github"] == (496, 512, "M2 2z")
    assert icons["fab"]["trash-alt"] == (448, 512, "M1 1z")  # an alias
    assert icons["fas"]["navicon"] == icons["fas"]["bars"] == (448, 512, "M3 3z")
    css = page_scripts.icons_css(icons, {"bars", "github", "unknown"})
    assert ".fa-solid.fa-bars" in css and ".fa-brands.fa-github" in css
    assert "viewBox='0 0 448 512'" in css
    assert "unknown" not in css


SOURCE = '''
import x


class Outer:
    """Outer's docstring."""

    def method(self, a):
        """Method's docstring,
        over two lines with ``markup``.
        """

        def helper(b):
            """Inner docstring."""
            return b + 1  # kept comment

        return helper(a)


if True:

    @decorator
    def guarded(z):
        "one-line docstring"
        return z
'''


def test_source_listing_drops_every_docstring_and_keeps_the_code():
    import source_listing

    method = source_listing.object_source(SOURCE, "Outer.method")
    assert method.splitlines()[0] == "def method(self, a):"
    assert "docstring" not in method and "``" not in method
    assert "    def helper(b):" in method and "# kept comment" in method
    assert method.rstrip().endswith("return helper(a)")
    # inside an if-block, decorator included, dedented
    guarded = source_listing.object_source(SOURCE, "guarded")
    assert guarded.splitlines() == ["@decorator", "def guarded(z):", "    return z"]
    with pytest.raises(ValueError, match="no 'missing'"):
        source_listing.object_source(SOURCE, "Outer.missing")


def test_chapters_show_package_code_through_rhn_source():
    import json
    import re

    for path in sorted((ROOT / "book").glob("*.ipynb")):
        for cell in json.loads(path.read_text())["cells"]:
            text = "".join(cell["source"])
            assert not re.search(r"\{literalinclude\}[^\n]*\n:pyobject:", text), (
                f"{path.name}: use rhn-source for package objects (no docstring)"
            )


def test_search_index_takes_the_name_without_its_accent():
    import search_fold

    assert search_fold.folds("geršgorin") == {"gershgorin", "gersgorin"}
    assert search_fold.folds("plain") == set()
    mapping = {"geršgorin": {"a", "b"}, "gershgorin": {"c"}, "plain": {"d"}}
    assert search_fold.add_folded(mapping) == 2
    assert mapping["gersgorin"] == {"a", "b"}
    assert mapping["gershgorin"] == {"a", "b", "c"}
    assert mapping["geršgorin"] == {"a", "b"} and mapping["plain"] == {"d"}
