// Sliders and toggles, built from the specification that Python sends
// (rhn.widgets.interactive._slider / _toggle). Native <input type="range"> elements:
// continuous (step "any") where the quantity is, keyboard and touch friendly
// (targets 48 px tall, above the 44 px that mobile guidelines ask).

const CSS = `
.rhn-widget { font-family: system-ui, sans-serif; max-width: 640px; }
.rhn-widget .rhn-control { display: flex; align-items: center; gap: 0.8em; min-height: 44px; flex-wrap: wrap; }
.rhn-widget .rhn-control label { width: 13em; }
.rhn-widget input[type=range] { flex: 1 1 14em; min-width: 12em; height: 48px; margin: 0; touch-action: pan-y; }
.rhn-widget input[type=range]::-webkit-slider-thumb { width: 26px; height: 26px; }
.rhn-widget input[type=range]::-moz-range-thumb { width: 26px; height: 26px; }
.rhn-widget output { width: 4.5em; font-variant-numeric: tabular-nums; }
.rhn-widget button { min-height: 48px; min-width: 48px; padding: 0 1em; border: 1px solid #888; background: #fff; cursor: pointer; }
.rhn-widget button[aria-pressed=true] { background: #1f77b4; color: #fff; border-color: #1f77b4; }
`;

export function addStyle(el) {
  const style = document.createElement("style");
  style.textContent = CSS;
  el.appendChild(style);
}

function readout(spec, value) {
  return spec.integer ? String(value) : Number(value).toFixed(spec.decimals ?? 2);
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
    const label = document.createElement("label");
    label.textContent = spec.label;
    row.appendChild(label);
    if (spec.type === "slider") {
      const input = document.createElement("input");
      input.type = "range";
      input.min = spec.min;
      input.max = spec.max;
      input.step = spec.integer ? 1 : "any";
      input.value = values[spec.name];
      input.name = spec.name;
      input.setAttribute("aria-label", spec.label);
      const id = `rhn-${spec.name}-${Math.random().toString(36).slice(2)}`;
      input.id = id;
      label.htmlFor = id;
      const out = document.createElement("output");
      out.textContent = readout(spec, values[spec.name]);
      input.addEventListener("input", () => {
        const v = spec.integer ? Math.round(Number(input.value)) : Number(input.value);
        out.textContent = readout(spec, v);
        onChange(spec.name, v);
      });
      row.append(input, out);
      setters[spec.name] = (v) => {
        input.value = v;
        out.textContent = readout(spec, v);
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
