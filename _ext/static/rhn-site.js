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
