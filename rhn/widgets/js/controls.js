// Sliders and toggles, built from the specification that Python sends
// (rhn.widgets.interactive._slider / _toggle). Native <input type="range"> elements:
// continuous (step "any") where the quantity is, keyboard and touch friendly
// (targets 48 px tall, above the 44 px that mobile guidelines ask), drawn by
// this CSS (a 26 px thumb; the browser's own is about 16 px, and dark in the
// site's dark mode on the widget's white card).
//
// Layout: the plot first, the controls beside it where the column is wide
// enough and below it on a phone, each label above its slider, so that plot
// and controls fit a phone's screen together. A vertical swipe that starts
// on a slider scrolls the page (touch-action: pan-y) and leaves the slider
// where it was (see keepOnScroll).

const CSS = `
.rhn-widget { font-family: system-ui, sans-serif; text-align: left; color: #222; }
.rhn-widget.rhn-figure { display: flex; flex-wrap: wrap; align-items: flex-start; gap: 0.5em 1.5em; }
.rhn-widget .rhn-plot-area { flex: 1 1 320px; min-width: 0; }
.rhn-widget[data-kind=gradient_flow] .rhn-plot-area { flex-basis: 100%; max-width: 620px; }
.rhn-widget:not([data-kind=gradient_flow]) .rhn-plot-area { max-width: 440px; }
.rhn-widget .rhn-controls { flex: 1 1 260px; max-width: 440px; }
.rhn-widget .rhn-control { display: flex; align-items: center; gap: 0 0.8em; flex-wrap: wrap; }
.rhn-widget .rhn-control label, .rhn-widget .rhn-control .rhn-label { flex: 1 0 100%; font-size: 0.9em; margin-top: 0.3em; min-height: 24px; line-height: 24px; }
.rhn-widget { color-scheme: light; }
.rhn-widget input[type=range] { flex: 1 1 10em; min-width: 8em; height: 48px; margin: 0; touch-action: pan-y; -webkit-appearance: none; appearance: none; background: transparent; cursor: pointer; }
.rhn-widget input[type=range]::-webkit-slider-runnable-track { height: 6px; border-radius: 3px; background: #bbb; }
.rhn-widget input[type=range]::-moz-range-track { height: 6px; border-radius: 3px; background: #bbb; }
.rhn-widget input[type=range]::-webkit-slider-thumb { -webkit-appearance: none; appearance: none; width: 26px; height: 26px; margin-top: -10px; border-radius: 50%; background: #0072b2; border: 2px solid #fff; box-shadow: 0 0 0 1px #0072b2; }
.rhn-widget input[type=range]::-moz-range-thumb { width: 26px; height: 26px; border-radius: 50%; background: #0072b2; border: 2px solid #fff; box-shadow: 0 0 0 1px #0072b2; }
.rhn-widget input[type=range]:focus-visible { outline: 3px solid #0072b2; outline-offset: 2px; }
.rhn-widget output { width: 4.5em; font-variant-numeric: tabular-nums; }
.rhn-widget button { min-height: 48px; min-width: 48px; padding: 0 1em; border: 1px solid #888; background: #fff; color: #222; cursor: pointer; }
.rhn-widget button[aria-pressed=true] { background: #0072b2; color: #fff; border-color: #0072b2; }
`;

export function addStyle(el) {
  const style = document.createElement("style");
  style.textContent = CSS;
  el.appendChild(style);
}

// the same three significant digits as the figure's title (index.js)
export const fmt = (v) => Number(Number(v).toPrecision(3)).toString();

// a printed number's minus is a true minus sign (U+2212), not a hyphen; the
// readout shows the value in the label's units (spec.shown_per_unit times it:
// the RHN figure's slider sets a multiple of the initialisation and reads g);
// a slider of log10 of a quantity (spec.power_of_ten) shows the quantity
export function readout(spec, value) {
  if (spec.power_of_ten) {
    // below a thousandth, two digits: 0.00032 fits the readout's box on a
    // phone, 0.000316 did not
    const q = 10 ** value;
    const digits = q < 1e-3 ? Number(q.toPrecision(2)).toString() : fmt(q);
    return digits.replace(/-/g, "\u2212");
  }
  let shown = value * (spec.shown_per_unit ?? 1);
  // a continuous slider reads to a 500th of its range: a tap near 0 reads
  // 0, not -0.000676 (the figure still gets the exact value)
  const span = Math.abs((spec.max - spec.min) * (spec.shown_per_unit ?? 1));
  if (!spec.integer && span > 0) {
    const grain = 10 ** Math.floor(Math.log10(span / 500));
    shown = Math.round(shown / grain) * grain + 0; // + 0: no "-0"
  }
  return (spec.integer ? String(value) : fmt(shown)).replace(/-/g, "\u2212");
}

/** `text` into `el`, each "_X" as a subscript X ("bias b_T": b with subscript T). */
function setLabel(el, text) {
  for (const [i, part] of text.split(/_(\w)/).entries()) {
    if (i % 2) el.appendChild(document.createElement("sub")).textContent = part;
    else if (part) el.appendChild(document.createTextNode(part));
  }
}

/**
 * A touch that starts on a slider and turns into a vertical scroll: the
 * browser scrolls the page (touch-action: pan-y) and cancels the pointer, but
 * the slider may already have jumped to the finger. Put it back.
 */
function keepOnScroll(input) {
  let start = null;
  input.addEventListener("pointerdown", (e) => {
    start = e.pointerType === "touch" ? input.value : null;
  });
  input.addEventListener("pointerup", () => {
    start = null;
  });
  input.addEventListener("pointercancel", () => {
    if (start !== null && input.value !== start) {
      input.value = start;
      input.dispatchEvent(new Event("input"));
    }
    start = null;
  });
}

/**
 * Builds the controls under `parent`. `values` is the current setting;
 * `onChange(name, value)` is called on every movement.
 * Returns set(values), which moves the controls to a new setting.
 */
export function buildControls(parent, specs, values, onChange) {
  const setters = {};
  for (const spec of specs) {
    const row = document.createElement("div");
    row.className = "rhn-control";
    row.dataset.name = spec.name;
    const label = document.createElement(spec.type === "slider" ? "label" : "span");
    label.className = "rhn-label";
    setLabel(label, spec.label);
    row.appendChild(label);
    if (spec.type === "slider") {
      const input = document.createElement("input");
      input.type = "range";
      input.min = spec.min;
      input.max = spec.max;
      input.step = spec.integer ? 1 : "any";
      input.value = values[spec.name];
      input.name = spec.name;
      input.setAttribute("aria-label", spec.label.replace(/_(\w)/g, " $1"));
      const id = `rhn-${spec.name}-${Math.random().toString(36).slice(2)}`;
      input.id = id;
      label.htmlFor = id;
      const out = document.createElement("output");
      // a screen reader announces what the readout shows (g, not the factor
      // the slider moves; 0.01, not its log10 -2), as it moves
      const show = (v) => {
        const text = readout(spec, v);
        out.textContent = text;
        input.setAttribute("aria-valuetext", text);
      };
      show(values[spec.name]);
      keepOnScroll(input);
      input.addEventListener("input", () => {
        const v = spec.integer ? Math.round(Number(input.value)) : Number(input.value);
        show(v);
        onChange(spec.name, v);
      });
      row.append(input, out);
      setters[spec.name] = (v) => {
        input.value = v;
        show(v);
      };
    } else {
      const group = document.createElement("div");
      group.setAttribute("role", "group");
      group.setAttribute("aria-label", spec.label);
      const buttons = spec.options.map((opt) => {
        const b = document.createElement("button");
        b.type = "button";
        b.textContent = opt.label;
        b.dataset.value = JSON.stringify(opt.value);
        b.addEventListener("click", () => {
          press(opt.value);
          onChange(spec.name, opt.value);
        });
        group.appendChild(b);
        return b;
      });
      const press = (v) => {
        spec.options.forEach((opt, i) => buttons[i].setAttribute("aria-pressed", String(opt.value === v)));
      };
      press(values[spec.name]);
      row.appendChild(group);
      setters[spec.name] = press;
    }
    parent.appendChild(row);
  }
  return (newValues) => {
    for (const [name, v] of Object.entries(newValues)) if (setters[name]) setters[name](v);
  };
}
