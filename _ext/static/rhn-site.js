// Site fixes that the theme needs (_ext/page_scripts.py adds this to every page).
//
// The navigation buttons: pydata-sphinx-theme binds the sidebar (☰) and
// page-contents buttons with document.querySelector, which finds the copy in
// the page header that sphinx-book-theme hides, so the visible buttons in the
// article header did nothing. Each visible copy now clicks the bound one, which
// runs the theme's own handlers (a dialog on a narrow screen, collapsing the
// sidebar on a wide one).
document.addEventListener("DOMContentLoaded", () => {
  for (const name of ["primary-toggle", "secondary-toggle"]) {
    const bound = document.querySelector(`.${name}`);
    if (!bound) continue;
    for (const button of document.querySelectorAll(`.${name}`)) {
      if (button === bound) continue;
      button.addEventListener("click", (event) => {
        event.preventDefault();
        event.stopPropagation();
        bound.click();
      });
    }
  }
});

// The contents panels on a phone (the theme's <dialog> sidebars): a tap on an
// entry closes the panel, so the page it scrolls to is not left covered, and
// Escape closes it wherever the focus is (the theme listens on the dialog
// only, and a tap leaves the focus outside it).
document.addEventListener("DOMContentLoaded", () => {
  const dialogs = [
    "pst-primary-sidebar-modal",
    "pst-secondary-sidebar-modal",
  ].map((id) => document.getElementById(id));
  for (const dialog of dialogs) {
    if (!dialog) continue;
    dialog.addEventListener("click", (event) => {
      const link = event.target.closest("a[href]");
      if (!link || !dialog.open) return;
      // an entry of this page: close first, then go to the section, so the
      // page scrolls with the panel gone (scrolled while the modal panel was
      // open, the section landed mid-screen)
      const url = new URL(link.href, location.href);
      const id = url.pathname === location.pathname && url.hash.slice(1);
      const target = id && document.getElementById(decodeURIComponent(id));
      if (target) event.preventDefault();
      dialog.close();
      if (!target) return;
      requestAnimationFrame(() => {
        if (location.hash === url.hash) target.scrollIntoView({ block: "start" });
        else location.hash = url.hash;
      });
    });
  }
  document.addEventListener("keydown", (event) => {
    if (event.key !== "Escape") return;
    for (const dialog of dialogs) {
      if (dialog?.open) dialog.close();
    }
  });
});

// Search result snippets from the article's text only: Sphinx takes the text
// of the whole [role=main] element, whose first words on this theme are the
// header buttons' ("Colab", "Repository") and whose next are the page's
// table of contents (searchtools.js is loaded on the search page only).
document.addEventListener("DOMContentLoaded", () => {
  if (typeof Search === "undefined" || !Search.htmlToText) return;
  const original = Search.htmlToText;
  const noise = [
    ".bd-header-article",
    ".bd-sidebar-secondary",
    ".prev-next-area",
    ".headerlink",
    "nav",
    "mjx-assistive-mml",
    ".tooltip",
    // code and printed output read badly as a snippet; the prose says it
    ".cell_input",
    ".cell_output pre",
    "details > summary",
    // a formula's MathML twin for readers without JavaScript (_ext/nojs_math.py):
    // DOMParser runs no scripts, so it would read the formula a second time
    "noscript",
  ];
  Search.htmlToText = (htmlString, anchor) => {
    const doc = new DOMParser().parseFromString(htmlString, "text/html");
    for (const el of doc.querySelectorAll(noise.join(","))) el.remove();
    const article = doc.querySelector('[role="main"] article');
    if (article) {
      // the article alone as [role=main], so anchors still resolve in it
      const main = doc.querySelector('[role="main"]');
      main.replaceChildren(article);
    }
    // maths as plain text: an inline formula's TeX without its commands
    // (\lVert J \rVert_\infty reads ‖ J ‖_∞), a display equation left out
    for (const el of doc.querySelectorAll("div.math")) el.remove();
    for (const el of doc.querySelectorAll("span.math")) {
      el.textContent = texToText(el.textContent);
    }
    return original(doc.documentElement.outerHTML, anchor);
  };
});

// TeX as plain text for a search snippet: symbols for the commands the book
// uses, no other commands, delimiters or braces
const TEX_SYMBOLS = {
  alpha: "α", beta: "β", gamma: "γ", delta: "δ", varepsilon: "ε", epsilon: "ε",
  eta: "η", lambda: "λ", mu: "μ", rho: "ρ", sigma: "σ", tau: "τ", odot: "⊙",
  ell: "ℓ", lVert: "‖", rVert: "‖", Vert: "‖", cdot: "·", cdots: "⋯",
  dots: "…", ldots: "…", times: "×", le: "≤", leq: "≤", ge: "≥", geq: "≥",
  ne: "≠", approx: "≈", infty: "∞", partial: "∂", nabla: "∇", sum: "Σ",
  prod: "Π", in: "∈", to: "→", top: "ᵀ", pm: "±", prime: "′", mathcal: "",
  mathbb: "",
};

function texToText(tex) {
  return tex
    .replace(/\\[()[\]]/g, "")
    .replace(/\\([A-Za-z]+)/g, (_, name) => TEX_SYMBOLS[name] ?? "")
    .replace(/\\[,;:! ]/g, " ")
    .replace(/[{}]/g, "")
    .replace(/-/g, "−")
    .replace(/\s+/g, " ")
    .trim();
}

// One result a page for each title: Sphinx lists a chapter twice when its
// heading matches ("6. The RHN cell > The RHN cell", the page's own heading as
// if it were a section) and its text matches too ("6. The RHN cell"); the
// result with the higher score stays, where it was, under the page's title.
const plainTitle = (html) =>
  html.replace(/<[^>]+>/g, "").replace(/^[\d.]+\s*/, "").trim();

document.addEventListener("DOMContentLoaded", () => {
  if (typeof Search === "undefined" || !Search._performSearch) return;
  const original = Search._performSearch;
  Search._performSearch = (...args) => {
    const results = original(...args);
    for (const result of results) {
      const parts = result[1].split(" > ");
      if (parts.length === 2 && plainTitle(parts[0]) === plainTitle(parts[1])) {
        result[1] = parts[0];
      }
    }
    // results are shown from the end: the last of equal results ranks first
    const seen = new Set();
    const kept = [];
    for (let i = results.length - 1; i >= 0; i--) {
      const [docName, title, , descr] = results[i];
      const key = `${docName}\u0000${title}\u0000${descr ?? ""}`;
      if (seen.has(key)) continue;
      seen.add(key);
      kept.push(results[i]);
    }
    return kept.reverse();
  };
});

// the page runs this script: the CSS's scroll cues that assume no script
// (a wide figure's shaded right edge, always shown) give way to the marks below
document.documentElement.classList.add("rhn-js");

// A box that scrolls sideways (a wide equation, table or signature) says so:
// classes rhn-more-left / rhn-more-right while there is more to see on that
// side (rhn-site.css draws a shadow inside that edge).
const SCROLL_BOXES =
  "div.math, .rhn-table-wrap, .pst-scrollable-table-container, dl.py > dt.sig, " +
  "div.highlight > pre, .rhn-wide-figure";

function markScroll(box) {
  const more = box.scrollWidth > box.clientWidth + 1;
  box.classList.toggle("rhn-more-left", more && box.scrollLeft > 1);
  box.classList.toggle(
    "rhn-more-right",
    more && box.scrollLeft + box.clientWidth < box.scrollWidth - 1,
  );
}

// A wide figure (_ext/narrow_figures.py: no phone drawing, text under
// 10.5 px in a phone's column) fits the column when its smallest text is
// still WIDE_FIT_TEXT_PX there: a scrolling figure never shows its axis and
// its legend together. --rhn-read-width is the width at which that text is
// WIDE_READ_TEXT_PX (narrow_figures.MIN_TEXT_PX), so at the column's width
// it is WIDE_READ_TEXT_PX * column / read width. Below that it scrolls.
const WIDE_READ_TEXT_PX = 10.7;
const WIDE_FIT_TEXT_PX = 9.5;

function fitWideFigures() {
  for (const box of document.querySelectorAll(".rhn-wide-figure")) {
    const read = parseFloat(box.style.getPropertyValue("--rhn-read-width"));
    // the box is as wide as the column whether or not its image fits it
    const text = (WIDE_READ_TEXT_PX * box.clientWidth) / read;
    box.classList.toggle("rhn-wide-fits", read > 0 && text >= WIDE_FIT_TEXT_PX);
  }
}

function markAllScrolls() {
  fitWideFigures();
  for (const box of document.querySelectorAll(SCROLL_BOXES)) {
    markScroll(box);
    if (!box.dataset.rhnScrollWatched) {
      box.dataset.rhnScrollWatched = "1";
      box.addEventListener("scroll", () => markScroll(box), { passive: true });
    }
  }
}

document.addEventListener("DOMContentLoaded", () => {
  markAllScrolls();
  window.addEventListener("resize", markAllScrolls, { passive: true });
  // equations change size once MathJax has typeset them
  const typeset = window.MathJax?.startup?.promise;
  if (typeset) typeset.then(markAllScrolls);
  else window.addEventListener("load", () => {
    window.MathJax?.startup?.promise?.then(markAllScrolls);
    markAllScrolls();
  });
});
