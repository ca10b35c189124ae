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
      if (link && dialog.open) dialog.close();
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
    // maths as its TeX source reads without MathJax's delimiters: k, not \(k\)
    const text = original(doc.documentElement.outerHTML, anchor);
    return text.replace(/\\[()[\]]/g, "");
  };
});

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

function markAllScrolls() {
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
