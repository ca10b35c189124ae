r"""Every number a sentence of the book states is checked, cited or structural.

The book promises that every number its prose states is asserted when the page
runs. This tool makes the promise mechanical. For each chapter (and the
notation and index pages) it reads the Markdown, splits it into sentences and
extracts every number a sentence states (``0.58``, ``5 of 5``, ``10^{-8}``,
``1e-4``, ``4,000``, ``97 %``). A number passes when

(a) **asserted**: its value appears as a numeric literal in the code of a
    *check cell* of the same chapter, a code cell that contains an ``assert``
    (or ``assert_close``); comments and strings do not count, only the code
    that runs. Hidden checks (``remove-cell``) and folded solutions
    (``hide-cell``) are both check cells. A number stated to a few digits
    matches a literal that rounds to it (``0.58`` matches ``0.58``, ``0.580``;
    ``10^{-8}`` matches ``1e-8``; below 0.01 or above 10^4 a literal within
    5 % matches); a percentage also matches its fraction (``61 %`` and
    ``0.61``); "``10^{15}`` times smaller" matches ``1e-15``; the sign is
    ignored (prose writes ``−3`` with a minus sign that can read as a dash).
    A stated "about X" is asserted by writing X in the check
    (``round(v, 2) == 0.03``, ``abs(v - 4e-5) < 0.5e-5``). A tolerance (the
    bound of ``abs(a - b) < tol``, an ``atol=``/``rtol=`` value, a margin
    added to a bound, ``x <= y + 1e-12``) asserts only a number the sentence
    states as a bound ("within 0.03", "less than 0.05", "agrees to 1e-12"),
    never a value. The tool matches values, not meanings: a number that a
    check of the chapter asserts for another sentence passes too;
(b) **quoted**: the sentence (or the list item) carries a citation, a
    ``{cite}``/``{cite:t}``/``{cite:p}`` role; a Markdown table is quoted
    when it, or the sentence just before it, cites;
(c) **structural**: a chapter, section, equation, figure, table, exercise,
    page, step, lag, seed, layer, audio or part number (the word before it
    says so; ``(13)`` is an equation), a year (1600-2099), a small integer
    (0 to 10: counts and formula constants, "two", "D = 2", "layer 1"), a
    number inside inline code, a role's target, a link or a label, a number
    inside display maths (formulas, whose constants are the derivation), and
    in inline maths every number but those the formula equates: in
    ``$1/12 \approx 0.083$`` only 0.083 is stated, and a power of a base
    other than 10 (``$0.88^{1000}$``) is a formula;
(d) **named in code**: a setting that any code cell of the chapter writes as
    a literal, such as ``T = 100``, ``H = 48`` or ``lr = 3e-3``.

The API reference, the appendix, the notation page, the README, RUNS.md and the
docstring of ``rhn/defaults.py`` (shown on the API page) have no code of
their own; they quote the chapters. A number there passes by (b) or (c), or when a
chapter that its paragraph names (``{ref}`ch-training``` or "chapter 11")
asserts it; a paragraph that names no chapter may quote any chapter, a test
or a tool (an exit status, the word limit).

Anything else fails, with the chapter, the sentence and the number. Run::

    python tools/prose_numbers.py            # every page; exit status 1 on a miss
    python tools/prose_numbers.py book/03_bptt.ipynb

``tests/test_prose_numbers.py`` runs it in the normal ``pytest`` (so CI does)
and plants an unasserted number to show that it fails.
"""

from __future__ import annotations

import ast
import io
import json
import math
import re
import sys
import tokenize
from dataclasses import dataclass
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
BOOK = ROOT / "book"

# Pages this check skips: none (a page added here must say why, and the unit
# test that the set is empty fails until it is emptied again)
EXEMPT: set[str] = set()

# a word just before a number that makes the number a name, not a quantity
STRUCTURAL_WORDS = (
    r"chapters?|ch\.|sections?|sec\.|§|eqs?\.|equations?|figures?|figs?\.|tables?"
    r"|exercises?|pages?|pp?\.|steps?|lags?|seeds?|layers?|parts?|items?|rows?|columns?"
    r"|lines?|appendix|version|torch|python|numpy|node\.?js|chromium|PEP|cell"
    r"|micro-layers?|block|issue|round|no\.|number|audio|Riemenschneider"
)
STRUCTURAL = re.compile(rf"(?:{STRUCTURAL_WORDS})\s*$", re.IGNORECASE)

# a number as prose writes it: 4,000  0.58  1e-4  10^{-8}  10^-6  .5
NUMBER = re.compile(
    r"(?<![\w.])"
    r"(?P<mant>\d{1,3}(?:,\d{3})+|\d+(?:\.\d+)?|\.\d+)"
    r"(?:(?P<e>e[-−+]?\d+)|\s*(?:\\times|×)?\s*(?:10)?\^\{?(?P<pow>[-−]?\d+)\}?)?"
    r"(?![\w])"
)


@dataclass(frozen=True)
class Miss:
    page: str
    number: str
    sentence: str

    def __str__(self) -> str:
        return f"{self.page}: {self.number!r} in: {self.sentence}"


# ---------------------------------------------------------------- pages


def _cells(path: Path) -> tuple[list[str], list[str], list[str]]:
    """(Markdown sources, check-cell sources, all code sources) of a page."""
    if path.suffix == ".md":
        return [path.read_text()], [], []
    if path.suffix == ".py":  # a module whose docstring the API page shows
        return [ast.get_docstring(ast.parse(path.read_text())) or ""], [], []
    cells = json.loads(path.read_text())["cells"]
    markdown, checks, code = [], [], []
    for cell in cells:
        src = "".join(cell["source"])
        if cell["cell_type"] == "markdown":
            markdown.append(src)
        elif cell["cell_type"] == "code":
            code.append(src)
            if re.search(r"\bassert\b|assert_close\(", src):
                checks.append(src)
    return markdown, checks, code


_TOLERANCE_KEYWORDS = frozenset({"atol", "rtol", "rel_tol", "abs_tol", "tol"})


def _is_abs_difference(node: ast.AST) -> bool:
    """Whether ``node`` takes the absolute value of a difference: ``abs(a - b)``,
    ``(a - b).abs()``, ``(a - b).abs().max()``."""
    for sub in ast.walk(node):
        if not isinstance(sub, ast.Call):
            continue
        func = sub.func
        if isinstance(func, ast.Name) and func.id == "abs":
            inner: list[ast.AST] = list(sub.args)
        elif isinstance(func, ast.Attribute) and func.attr == "abs":
            inner = [func.value]
        else:
            continue
        if any(
            isinstance(n, ast.BinOp) and isinstance(n.op, ast.Sub)
            for arg in inner
            for n in ast.walk(arg)
        ):
            return True
    return False


def _tolerances(tree: ast.AST) -> set[tuple[int, int]]:
    """Where the tolerances of ``tree``'s comparisons stand (line, column):
    the bound of ``abs(a - b) < tol`` and the values of ``atol=``/``rtol=``.
    A tolerance is not a number the check asserts: ``abs(q - 0.93) < 0.05``
    asserts 0.93, and a sentence stating 0.05 must be checked elsewhere."""
    found: set[tuple[int, int]] = set()
    for node in ast.walk(tree):
        bounds: list[ast.AST] = []
        if isinstance(node, ast.keyword) and node.arg in _TOLERANCE_KEYWORDS:
            bounds = [node.value]
        elif isinstance(node, ast.Compare) and _is_abs_difference(node.left):
            bounds = list(node.comparators)
        elif isinstance(node, ast.Compare):
            # a margin added to a bound: "x < y + 0.05", "x <= bound + 1e-12"
            bounds = [
                side
                for c in node.comparators
                if isinstance(c, ast.BinOp) and isinstance(c.op, (ast.Add, ast.Sub))
                for side in (c.left, c.right)
                if isinstance(side, ast.Constant)
                and not isinstance(c.left if side is c.right else c.right, ast.Constant)
            ]
        for bound in bounds:
            for n in ast.walk(bound):
                if isinstance(n, ast.Constant) and isinstance(n.value, (int, float)):
                    found.add((n.lineno, n.col_offset))
    return found


def _literals(sources: list[str], tolerances: bool = False) -> list[float]:
    """The numeric literals in the code (not in comments or strings), but not
    the tolerances of its comparisons (:func:`_tolerances`); with
    ``tolerances``, those tolerances alone."""
    values: list[float] = []
    for src in sources:
        # IPython magics and shell lines are not Python
        text = "\n".join(
            "" if line.lstrip().startswith(("%", "!")) else line
            for line in src.splitlines()
        )
        try:
            tokens = list(tokenize.generate_tokens(io.StringIO(text + "\n").readline))
        except (tokenize.TokenError, IndentationError, SyntaxError):
            continue
        try:
            skip = _tolerances(ast.parse(text))
        except SyntaxError:
            skip = set()
        for tok in tokens:
            if tok.type == tokenize.NUMBER and (tok.start in skip) != tolerances:
                continue
            if tok.type == tokenize.NUMBER:
                try:
                    values.append(abs(float(tok.string.replace("_", "").rstrip("jJ"))))
                except ValueError:
                    continue
    return values


# ---------------------------------------------------------------- prose


_ROLE = re.compile(r"\{[\w:-]+\}`[^`]*`")
_CODE = re.compile(r"``[^`]+``|`[^`]+`")
_LINK = re.compile(r"\]\([^)]*\)")
_LABEL = re.compile(r"^\s*\([\w:.-]+\)=\s*$", re.MULTILINE)
_DIRECTIVE_OPTION = re.compile(r"^\s*:[\w-]+:.*$", re.MULTILINE)
_FENCE = re.compile(r"^\s*(```+|~~~+|:::+)(.*)$")
_HTML = re.compile(r"<[^>]+>")


def _prose_blocks(markdown: str) -> list[str]:
    """Paragraphs, list items and tables, without fences, code or display maths."""
    blocks: list[str] = []
    current: list[str] = []
    fence: str | None = None
    prose: list[str] = []  # the fences of the prose directives now open
    math_block = False
    for line in markdown.splitlines():
        stripped = line.strip()
        if fence is not None:
            if stripped.startswith(fence):
                fence = None
            continue
        if math_block:
            if "$$" in stripped or stripped.startswith(r"\end{"):
                math_block = False
            continue
        m = _FENCE.match(line)
        if m:
            info = m.group(2).strip()
            if not info and prose and m.group(1) == prose[-1]:
                # the end of a prose directive (an admonition): the prose
                # after it is read again
                prose.pop()
                if current:
                    blocks.append("\n".join(current))
                    current = []
                continue
            # a directive whose body is prose stays; code, maths and figures'
            # option lines go
            if not info.startswith("{") or re.match(
                r"\{(code|code-block|code-cell|literalinclude|math|raw|"
                r"glue|bibliography)",
                info,
            ):
                if not (m.group(1).startswith(":") and not info):
                    fence = m.group(1)
            else:
                prose.append(m.group(1))
            if current:
                blocks.append("\n".join(current))
                current = []
            continue
        if stripped.startswith("$$") or stripped.startswith(r"\begin{"):
            if current:
                blocks.append("\n".join(current))
                current = []
            if not (stripped.count("$$") >= 2 and len(stripped) > 2):
                math_block = True
            continue
        if not stripped:
            if current:
                blocks.append("\n".join(current))
                current = []
            continue
        if re.match(r"^\s*(?:[-+*]|\d+[.)])\s", line) and current:
            if not current[0].lstrip().startswith("|"):
                blocks.append("\n".join(current))
                current = []
        current.append(line)
    if current:
        blocks.append("\n".join(current))
    return blocks


def _clean_lines(block: str) -> str:
    """Labels, directive options, heading and list markers go."""
    block = _LABEL.sub(" ", block)
    block = _DIRECTIVE_OPTION.sub(" ", block)
    block = re.sub(r"^\s*#+\s*", "", block, flags=re.MULTILINE)
    return re.sub(r"^\s*(?:[-+*]|\d+[.)])\s", " ", block, flags=re.MULTILINE)


def _clean_inline(sentence: str) -> str:
    """Links' targets, roles, inline code and HTML go; inline maths stays."""
    sentence = _LINK.sub("]", sentence)
    sentence = _ROLE.sub(" ", sentence)
    sentence = _CODE.sub(" ", sentence)
    return _HTML.sub(" ", sentence)


def _sentences(block: str) -> list[str]:
    """A table is one sentence; so is a list item; otherwise split at '. '."""
    if block.lstrip().startswith("|"):
        return [block]
    text = " ".join(block.split())
    # split after . ! ? followed by a space and a capital, not after "e.g." etc.
    parts = re.split(
        r"(?<!e\.g)(?<!i\.e)(?<!\bet al)(?<!\bvs)(?<!\bcf)"
        r"(?<=[.!?])\s+(?=[A-Z(*$])",
        text,
    )
    return [p for p in parts if p.strip()]


def _value(m: re.Match) -> tuple[float, int]:
    """(value, significant decimals) of a matched number."""
    mant = m.group("mant").replace(",", "")
    decimals = len(mant.split(".")[1]) if "." in mant else 0
    value = float(mant)
    if m.group("e"):
        exp = int(m.group("e")[1:].replace("−", "-"))
        value *= 10.0**exp
        decimals = max(decimals - exp, 0)
    elif m.group("pow"):
        exp = int(m.group("pow").replace("−", "-"))
        base = float(mant)
        if base == 10 and m.group(0).lstrip().startswith("10") and "^" in m.group(0):
            value = 10.0**exp
        else:  # 3^{10}? keep as a power
            value = base**exp
        decimals = max(-exp, 0)
    return value, decimals


def _matches(value: float, decimals: int, literals: list[float]) -> bool:
    if value == 0:
        return any(lit == 0 for lit in literals)
    for lit in literals:
        if lit == 0:
            continue
        if math.isclose(lit, value, rel_tol=1e-9):
            return True
        # the prose rounds: 0.58 stands for a literal that rounds to it
        if (
            decimals
            and round(lit, decimals) == round(value, decimals)
            and abs(lit - value) <= 0.5 * 10.0**-decimals
        ):
            return True
        if value < 1e-2 or value > 1e4:  # 4e-5 vs 3.6e-5: same order, 2 digits
            if math.isclose(lit, value, rel_tol=0.05):
                return True
    return False


_RELATION = re.compile(
    r"=|\\approx|\\simeq|\\sim|\\le(?:q)?\b|\\ge(?:q)?\b|<|>|\\lesssim|\\gtrsim"
)
_PLAIN = re.compile(rf"^[-−+]?\s*(?:{NUMBER.pattern})\s*(?:\\?%|\\,\\%)?$")


def _math_numbers(expr: str) -> list[str]:
    r"""The numbers an inline formula states: the plain numbers it equates.

    In ``$1/12 \approx 0.083$`` the formula states 0.083; 1 and 12 are the
    formula. A formula that is one number (``$10^{-3}$``) states it.
    """
    expr = expr.replace("{,}", ",").replace("\\!", "").replace("\\,", " ")
    expr = re.sub(r"(\d)\s*(?:\\cdot|\\times)\s*10\^\{?([-−+]?\d+)\}?", r"\1e\2", expr)
    stated = []
    for part in _RELATION.split(expr):
        part = part.strip().strip("()").strip()
        if _PLAIN.match(part):
            stated.append(part)
    return stated


def _numbers(sentence: str):
    """Yield (text, value, decimals, percent) of the numbers a sentence states."""
    pieces: list[str] = []

    def keep_math(m: re.Match) -> str:
        pieces.extend(_math_numbers(m.group(1)))
        return " ; "

    text = re.sub(r"\$([^$]+)\$", keep_math, sentence)
    text = re.sub(r"(\d) (?=\d{3}\b)", r"\1,", text)  # 40 000
    yield from _chunk_numbers(text, in_math=False)
    for piece in pieces:
        yield from _chunk_numbers(piece, in_math=True)


def _chunk_numbers(text: str, in_math: bool):
    for m in NUMBER.finditer(text):
        before = text[: m.start()]
        after = text[m.end() :]
        if not in_math:
            if before.endswith("(") and after.startswith(")"):
                continue  # (13): an equation's number
            if STRUCTURAL.search(before.rstrip(" ~(")):
                continue
            # a list of names: "chapters 6-8", "eqs. 10-15", "pp. 749-754",
            # "chapters 10, 11, 13 and 14"
            if re.search(
                rf"(?:{STRUCTURAL_WORDS})\s*(?:[\d.]+\s*(?:[-–—]|and|to|or|,)\s*)+$",
                before,
                re.IGNORECASE,
            ):
                continue
        if m.group("pow") and not re.match(r"10\s*\^", m.group(0).strip()):
            continue  # 2^{100}, 0.88^{1000}: a formula, not a number stated
        value, decimals = _value(m)
        # "97 %", and "21 to 26 %": the first number of a range is a percentage too
        percent = bool(re.match(r"\s*(?:(?:to|and|or|-|–)\s*[\d.]+\s*)?\\?%", after))
        if not m.group("pow") and not m.group("e") and "." not in m.group("mant"):
            if value <= 10:
                continue
            if (
                1600 <= value <= 2099
                and not percent
                and not re.match(r"\s*(?:Hz|kB|steps|parameters|units)", after)
            ):
                continue
        yield m.group(0).strip(), value, decimals, percent


# Pages without code of their own that quote the chapters' results: the API
# reference, the appendix, the notation page, the README and RUNS.md. A number
# there passes when a chapter that its paragraph (or list item) names, by a
# {ref} role or as "chapter N", asserts it; a paragraph that names no chapter may
# quote any chapter, and a test or a tool (an exit status, the word limit).
# CONTRIBUTING.md, notes for whoever changes the book (versions, timings with
# their machine and date), is not read.
QUOTING = ("api.md", "checks.md", "notation.md", "README.md", "RUNS.md", "defaults.py")
_CHAPTER_NUMBER = re.compile(r"\b[Cc]hapters?\s+((?:\d+(?:\s*(?:,|and|to|-|–)\s*)?)+)")


def _chapter_checks() -> dict[str, tuple[list[float], list[float], list[float]]]:
    """{chapter file name: (its check literals, all its code literals, its
    checks' tolerances)}."""
    out = {}
    for chapter in sorted(BOOK.glob("[0-9][0-9]_*.ipynb")):
        _, checks, code = _cells(chapter)
        out[chapter.name] = (
            _literals(checks),
            _literals(code),
            _literals(checks, tolerances=True),
        )
    tests = [f.read_text() for f in sorted((ROOT / "tests").glob("*.py"))]
    tools = [f.read_text() for f in sorted((ROOT / "tools").glob("*.py"))]
    out["tests and tools"] = (
        _literals(tests),
        _literals(tools),
        _literals(tests, tolerances=True),
    )
    return out


def _chapters_named(block: str) -> set[str]:
    """The chapter files a block of prose names ({ref}`label` or chapter N)."""
    labels = {}
    for chapter in BOOK.glob("[0-9][0-9]_*.ipynb"):
        first = "".join(json.loads(chapter.read_text())["cells"][0]["source"])
        for label in re.findall(r"^\(([\w:.-]+)\)=", first, re.MULTILINE):
            labels[label] = chapter.name
    by_number = {c.name[:2]: c.name for c in BOOK.glob("[0-9][0-9]_*.ipynb")}
    named = {
        labels[m]
        for m in re.findall(r"\{ref\}`(?:[^`<]*<)?([\w:.-]+)>?`", block)
        if m in labels
    }
    for m in _CHAPTER_NUMBER.finditer(block):
        for n in re.findall(r"\d+", m.group(1)):
            if f"{int(n):02d}" in by_number:
                named.add(by_number[f"{int(n):02d}"])
    return named


# the words that make a number a bound ("within 0.03", "differ by less than
# 0.05", "agrees to 1e-12"): such a number is asserted by a tolerance,
# abs(a - b) < 0.03; any other number must be asserted as a value
_BOUND = re.compile(
    r"(within|less than|at most|no more than|below|under|agrees? to|up to|"
    r"down to)"
    r"\s*(about\s*)?\$?\s*$",
    re.IGNORECASE,
)


def _states_a_bound(sentence: str, text: str) -> bool:
    """Whether ``text`` stands in ``sentence`` as a bound (:data:`_BOUND`)."""
    at = sentence.find(text)
    return at >= 0 and bool(_BOUND.search(sentence[max(0, at - 30) : at]))


def misses(path: Path) -> list[Miss]:
    """The numbers of ``path``'s prose that no check, citation or rule covers."""
    markdown, checks, code = _cells(path)
    checked = _literals(checks)
    bounds = _literals(checks, tolerances=True)
    named = _literals(code)
    quoting = path.name in QUOTING
    chapters = _chapter_checks() if quoting else {}
    found: list[Miss] = []
    for md in markdown:
        raw_blocks = _prose_blocks(md)
        blocks = [_clean_lines(b) for b in raw_blocks]
        for i, block in enumerate(blocks):
            if quoting:  # what the chapters this block names assert
                sources = _chapters_named(raw_blocks[i]) or set(chapters)
                checked = [v for c in sorted(sources) for v in chapters[c][0]]
                named = [v for c in sorted(sources) for v in chapters[c][1]]
                bounds = [v for c in sorted(sources) for v in chapters[c][2]]
            if block.lstrip().startswith("|"):
                # a table is quoted when it, or the sentence that introduces
                # it, cites its source
                before = _sentences(blocks[i - 1]) if i else [""]
                if "{cite" in block or "{cite" in before[-1]:
                    continue
            for raw in _sentences(block):
                if "{cite" in raw:
                    continue
                sentence = _clean_inline(raw)
                for text, value, decimals, percent in _numbers(sentence):
                    # "10^15 times smaller" is checked as "< 1e-15 * last"
                    tenth = m_is_power_of_ten(text)
                    if tenth and _matches(1 / value, 0, checked):
                        continue
                    if _matches(value, decimals, checked) or (
                        percent and _matches(value / 100, decimals + 2, checked)
                    ):
                        continue
                    if _matches(value, decimals, named):
                        continue
                    if _states_a_bound(sentence, text) and (
                        _matches(value, decimals, bounds)
                        or (percent and _matches(value / 100, decimals + 2, bounds))
                    ):
                        continue
                    found.append(Miss(path.name, text, " ".join(raw.split())[:200]))
    return found


def m_is_power_of_ten(text: str) -> bool:
    """Whether a stated number is a bare power of ten (10^{-8}, 1e-5)."""
    return bool(re.fullmatch(r"10\s*\^\s*\{?[-−]?\d+\}?|1e[-−+]?\d+", text.strip()))


def pages() -> list[Path]:
    return sorted(BOOK.glob("[0-9][0-9]_*.ipynb")) + [
        BOOK / "notation.md",
        BOOK / "index.md",
        BOOK / "api.md",
        BOOK / "checks.md",
        ROOT / "README.md",
        ROOT / "RUNS.md",
        ROOT / "rhn" / "defaults.py",  # its docstring: the measured defaults
    ]


def main(argv: list[str]) -> int:
    paths = [Path(a) for a in argv] or pages()
    total = 0
    for path in paths:
        if path.name in EXEMPT:
            print(f"{path.name}: skipped (exempt)")
            continue
        found = misses(path)
        total += len(found)
        for miss in found:
            print(miss)
    print(f"{total} number(s) in prose neither asserted, cited nor structural")
    return 1 if total else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
