"""Sphinx extension: the formulas as MathML for a reader without JavaScript.

MathJax typesets the TeX source of every formula in the browser; without
JavaScript a reader saw that source (``\\lVert J \\rVert_\\infty``). Once the
pages are written, every formula Sphinx wrote for MathJax (inline
``\\(...\\)``, display ``\\[...\\]`` and amsmath environments) gets a
``<noscript>`` twin right after it: the same TeX turned into MathML by
MathJax itself, at build time (``_ext/tex2mml.mjs``, one Node.js process for
the whole site, with the ``tex`` options of ``mathjax3_config``). Browsers
draw MathML natively. A ``<noscript>`` style hides the TeX source, so a
reader without JavaScript sees the MathML and a reader with it sees only
MathJax's typesetting (a ``<noscript>`` element is inert when scripts run,
and MathJax skips it). A display equation keeps its number; a box too wide
for the column scrolls.
"""

from __future__ import annotations

import html as html_lib
import json
import re
import shutil
import subprocess
from pathlib import Path
from typing import Any

from sphinx.errors import ExtensionError

ROOT = Path(__file__).resolve().parents[1]
SCRIPT = Path(__file__).with_name("tex2mml.mjs")

# a formula as Sphinx writes it for MathJax, and the MathML twin an earlier
# pass gave it (replaced: a page an incremental build left as it was)
_MATH = re.compile(
    r'<(span|div) class="math notranslate nohighlight"([^>]*)>(.*?)</\1>'
    r'(<noscript>(?:<math\b|<div class="rhn-nojs-math">).*?</noscript>)?',
    re.DOTALL,
)
_OLD_STYLE = re.compile(r"<noscript><style>\.math\.notranslate .*?</noscript>")
_EQNO = re.compile(r'<span class="eqno">(.*?)</span>', re.DOTALL)
_TAG = re.compile(r"<[^>]+>")
# what MathJax's MathML holds for its own use: the TeX of every node
_DATA = re.compile(r'\sdata-[\w-]+="[^"]*"')
_GAP = re.compile(r">\s+<")

STYLE = (
    "<noscript><style>.math.notranslate { display: none !important; } "
    ".rhn-nojs-math { margin: 1em 0; display: flex; align-items: center; } "
    ".rhn-nojs-math math { flex: 1 1 auto; min-width: 0; overflow-x: auto; "
    "font-size: 1.1em; padding: 4px 0; "
    # a shadow at an edge with more beyond it: the white covers scroll with
    # the formula and hide a shadow at an end reached (the pages are light
    # without JavaScript)
    "background: linear-gradient(to right, #fff 40%, #fff0) left / 28px 100% "
    "no-repeat local, linear-gradient(to left, #fff 40%, #fff0) right / 28px "
    "100% no-repeat local, radial-gradient(farthest-side at 0 50%, #0005, #0000) "
    "left / 14px 100% no-repeat scroll, radial-gradient(farthest-side at 100% "
    "50%, #0005, #0000) right / 14px 100% no-repeat scroll; } "
    ".rhn-nojs-eqno { order: 1; flex: none; margin-left: 1em; }</style></noscript>"
)


def formula(tag: str, content: str) -> tuple[str, bool, str | None]:
    """The TeX, whether it is displayed, and its equation number (or None),
    of a formula element's inner HTML."""
    number = None
    eqno = _EQNO.search(content)
    if eqno:
        # "(4.1)" before the heading link's "#"
        number = html_lib.unescape(_TAG.sub("", eqno.group(1).split("<a", 1)[0]))
        content = content[: eqno.start()] + content[eqno.end() :]
    text = html_lib.unescape(_TAG.sub("", content)).strip()
    if text.startswith("\\(") and text.endswith("\\)"):
        return text[2:-2].strip(), False, number
    if text.startswith("\\[") and text.endswith("\\]"):
        return text[2:-2].strip(), True, number
    return text, tag == "div", number  # an amsmath environment: displayed


# Chromium draws MathML's mathvariant only as "normal": a double-struck or
# script letter is written as its own character (Unicode's mathematical
# alphanumeric symbols), which every browser draws
_LETTERS = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz"
_STYLED: dict[str, tuple[int, dict[str, str]]] = {
    # the first capital's code point, and the letters Unicode had before
    "double-struck": (
        0x1D538,
        {"C": "ℂ", "H": "ℍ", "N": "ℕ", "P": "ℙ", "Q": "ℚ", "R": "ℝ", "Z": "ℤ"},
    ),
    "script": (
        0x1D49C,
        {"B": "ℬ", "E": "ℰ", "F": "ℱ", "H": "ℋ", "I": "ℐ", "L": "ℒ", "M": "ℳ",
         "R": "ℛ", "e": "ℯ", "g": "ℊ", "o": "ℴ"},
    ),
}  # fmt: skip
_VARIANT = re.compile(
    r'<(mi|mn) mathvariant="(double-struck|script)">([^<]*)</\1>'
)


def styled(variant: str, text: str) -> str:
    """``text`` in a mathvariant's own characters (letters, and the digits
    of double-struck); anything else as it was."""
    first, special = _STYLED[variant]
    out = []
    for ch in text:
        if ch in special:
            out.append(special[ch])
        elif ch in _LETTERS:
            out.append(chr(first + _LETTERS.index(ch)))
        elif ch.isdigit() and variant == "double-struck":
            out.append(chr(0x1D7D8 + int(ch)))
        else:
            out.append(ch)
    return "".join(out)


def compact(mathml: str) -> str:
    """MathJax's MathML without its ``data-*`` attributes and indentation,
    its double-struck and script letters as characters."""
    mathml = _GAP.sub("><", _DATA.sub("", mathml)).strip()
    return _VARIANT.sub(
        lambda m: f"<{m.group(1)}>{styled(m.group(2), m.group(3))}</{m.group(1)}>",
        mathml,
    )


def formulas(page: str) -> list[tuple[str, bool]]:
    """The ``(tex, display)`` of every formula of ``page``."""
    found = []
    for m in _MATH.finditer(page):
        tex, display, _ = formula(m.group(1), m.group(3))
        found.append((tex, display))
    return found


def with_mathml(page: str, mathml: dict[tuple[str, bool], str | None]) -> str:
    """``page`` with a ``<noscript>`` MathML twin after every formula whose
    MathML is in ``mathml``, and :data:`STYLE` in its head if it has any."""

    def twin(m: re.Match[str]) -> str:
        source = m.group(0)[: m.start(4) - m.start(0)] if m.group(4) else m.group(0)
        tex, display, number = formula(m.group(1), m.group(3))
        converted = mathml.get((tex, display))
        if not converted:
            return source  # MathJax could not read it: the TeX stays
        if not display:
            return f"{source}<noscript>{converted}</noscript>"
        label = f'<span class="rhn-nojs-eqno">{number}</span>' if number else ""
        return (
            f'{source}<noscript><div class="rhn-nojs-math">{label}'
            f"{converted}</div></noscript>"
        )

    out = _OLD_STYLE.sub("", _MATH.sub(twin, page))
    if "<noscript><math" in out or 'class="rhn-nojs-math"' in out:
        out = out.replace("</head>", STYLE + "</head>", 1)
    return out


def to_mathml(items: list[tuple[str, bool]], tex: dict[str, Any]) -> list[str | None]:
    """MathML for each ``(tex, display)``, by MathJax under Node.js."""
    node = shutil.which("node")
    if node is None:
        raise ExtensionError(
            "node is not on PATH: the site's formulas are turned into MathML "
            "for readers without JavaScript by MathJax under Node.js"
        )
    request = json.dumps({"tex": tex, "items": items})
    done = subprocess.run(
        [node, str(SCRIPT)],
        input=request,
        capture_output=True,
        text=True,
        cwd=ROOT,
        check=False,
    )
    if done.returncode != 0:
        raise ExtensionError(f"{SCRIPT.name} failed: {done.stderr.strip()[-500:]}")
    return [None if m is None else compact(m) for m in json.loads(done.stdout)]


def _write_mathml(app: Any, exception: Exception | None) -> None:
    if exception is not None or app.builder.format != "html":
        return
    pages = {p: p.read_text(encoding="utf-8") for p in Path(app.outdir).rglob("*.html")}
    wanted = sorted({f for html in pages.values() for f in formulas(html)})
    if not wanted:
        return
    tex = dict((app.config.mathjax3_config or {}).get("tex", {}))
    mathml = dict(zip(wanted, to_mathml(wanted, tex), strict=True))
    for path, html in pages.items():
        out = with_mathml(html, mathml)
        if out != html:
            path.write_text(out, encoding="utf-8")


def setup(app: Any) -> dict[str, Any]:
    app.connect("build-finished", _write_mathml)
    return {"parallel_read_safe": True, "parallel_write_safe": True}
