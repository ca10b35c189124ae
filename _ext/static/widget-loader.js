// The website's widget loader (_ext/widget_scripts.py): draws the anywidget
// figures saved in a page without the Jupyter widget manager.
//
// A page with widgets carries the widget state (one JSON script of type
// application/vnd.jupyter.widget-state+json) and, where each figure goes, a
// view script (application/vnd.jupyter.widget-view+json) naming its model,
// followed by the figure's PNG (class rhn-widget-fallback), which is what a
// reader without JavaScript sees. anywidget models carry their front end as
// an ES module (the _esm trait); this loader imports that module from a blob
// URL and calls its render({model, el}) with a small model object: get, set,
// on, off and save_changes on the saved state. There is no kernel, so
// changes stay in the page. Models of other kinds are left alone (the page
// has none: the browser tests check that every figure is drawn).

const STATE = "application/vnd.jupyter.widget-state+json";
const VIEW = "application/vnd.jupyter.widget-view+json";

function readState() {
  const script = document.querySelector(`script[type="${STATE}"]`);
  if (!script) return {};
  return JSON.parse(script.textContent).state || {};
}

function makeModel(state) {
  const values = { ...state };
  const listeners = new Map();
  const fire = (name, ...args) => {
    for (const cb of listeners.get(name) || []) cb(...args);
  };
  return {
    get: (key) => values[key],
    set(key, value) {
      values[key] = value;
      fire(`change:${key}`, value);
      fire("change");
    },
    on(name, cb) {
      if (!listeners.has(name)) listeners.set(name, new Set());
      listeners.get(name).add(cb);
    },
    off(name, cb) {
      if (!name) listeners.clear();
      else if (!cb) listeners.delete(name);
      else listeners.get(name)?.delete(cb);
    },
    save_changes() {},
    send() {},
    widget_manager: {},
  };
}

const modules = new Map(); // one import per distinct ES module source

function importModule(source) {
  if (!modules.has(source)) {
    const url = URL.createObjectURL(new Blob([source], { type: "text/javascript" }));
    modules.set(source, import(url).finally(() => URL.revokeObjectURL(url)));
  }
  return modules.get(source);
}

async function renderView(script, state) {
  const { model_id: id } = JSON.parse(script.textContent);
  const saved = state[id];
  if (!saved || saved.model_module !== "anywidget" || !saved.state._esm) return;
  const s = saved.state;
  const el = document.createElement("div");
  el.className = ["rhn-widget-view", ...(s._dom_classes || [])].join(" ");
  const fallback = script.nextElementSibling;
  script.after(el);
  if (s._css) {
    const style = document.createElement("style");
    style.textContent = s._css;
    el.appendChild(style);
  }
  try {
    const mod = await importModule(s._esm);
    let widget = mod.default ?? mod;
    if (typeof widget === "function") widget = await widget();
    const model = makeModel(s);
    if (widget.initialize) await widget.initialize({ model });
    await widget.render({ model, el });
    // drawn: the PNG of the starting setting is no longer needed
    // (in a phone's scroll box, rhn-wide-figure, when its text needs one)
    if (
      fallback?.classList.contains("rhn-widget-fallback") ||
      fallback?.querySelector(":scope > img.rhn-widget-fallback")
    )
      fallback.remove();
  } catch (err) {
    el.remove(); // keep the PNG, say why in the console
    console.error(`widget ${id} could not be drawn`, err);
  }
}

// Draw first, typeset later: the figures do not wait for MathJax. MathJax is
// a deferred script (1.2 MB), and deferred scripts run before
// DOMContentLoaded, so a loader that waited for that event drew nothing until
// MathJax had been read and run (1.7-2.6 s on a phone). Instead the modules
// are imported at once (the widget state comes before this script in the
// page), and the figures are drawn as soon as the page is parsed
// (readyState "interactive"), before the deferred scripts run.
let state = readState();
for (const saved of Object.values(state)) {
  if (saved.model_module === "anywidget" && saved.state?._esm) {
    importModule(saved.state._esm).catch(() => {}); // renderView reports it
  }
}

function renderAll() {
  if (!Object.keys(state).length) state = readState();
  for (const script of document.querySelectorAll(`script[type="${VIEW}"]`)) {
    renderView(script, state);
  }
}

if (document.readyState === "loading") {
  const parsed = () => {
    if (document.readyState === "loading") return;
    document.removeEventListener("readystatechange", parsed);
    renderAll();
  };
  document.addEventListener("readystatechange", parsed);
} else {
  renderAll();
}
