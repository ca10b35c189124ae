// Drawing shared by the three figures: one SVG per figure, made once and then
// updated in place (attributes of a fixed set of elements), so that a redraw
// costs far less than an animation frame. Colours and dashes are
// rhn.plots.COLORS and MODEL_STYLES (Okabe-Ito, a dash per model). Each SVG has
// an accessible name (aria-label) that follows the drawing.

const NS = "http://www.w3.org/2000/svg";
export const COLORS = {
  rhn: "#0072B2",
  lstm: "#E69F00",
  gru: "#009E73",
  rnn: "#D55E00",
  disc: "#0072B2",
  eigenvalue: "#D55E00",
  unit_circle: "#555555",
  baseline: "#7f7f7f",
};
const DASHES = { rhn: "", lstm: "7 4", gru: "7 3 2 3", rnn: "2 3" };

export function svgEl(name, attrs = {}, parent = null) {
  const el = document.createElementNS(NS, name);
  for (const [k, v] of Object.entries(attrs)) el.setAttribute(k, v);
  if (parent) parent.appendChild(el);
  return el;
}

/**
 * `value` as the text of an SVG <text>: "_X" as a subscript X (b_T: b with
 * subscript T, at the same size, so it reads on a phone) and the minus of a
 * number as a true minus sign (U+2212), not a hyphen.
 */
export function setText(el, value) {
  el.replaceChildren();
  const parts = String(value).replace(/-(?=[\d.])/g, "\u2212").split(/_(\w)/);
  for (const [i, part] of parts.entries()) {
    if (i % 2) svgEl("tspan", { "baseline-shift": "sub" }, el).textContent = part;
    else if (part) el.appendChild(document.createTextNode(part));
  }
  return el;
}

function fmt(v, digits = 3) {
  return Number(v.toPrecision(digits)).toString();
}

/** A plot area: an SVG with a frame, returning data -> pixel maps; its tick
 * labels are `tickPx` units tall. */
function frame(parent, { width, height, margin, x, y, logY = false, tickPx = 12 }) {
  const svg = svgEl("svg", {
    viewBox: `0 0 ${width} ${height}`,
    width: "100%",
    role: "img",
    class: "rhn-plot",
  }, parent);
  svg.style.maxWidth = `${width}px`;
  const inner = { x0: margin.left, x1: width - margin.right, y0: height - margin.bottom, y1: margin.top };
  const ty = logY ? (v) => Math.log10(v) : (v) => v;
  const px = (v) => inner.x0 + ((v - x[0]) / (x[1] - x[0])) * (inner.x1 - inner.x0);
  const py = (v) => inner.y0 + ((ty(v) - ty(y[0])) / (ty(y[1]) - ty(y[0]))) * (inner.y1 - inner.y0);
  const clipId = `rhn-clip-${Math.random().toString(36).slice(2)}`;
  const clip = svgEl("clipPath", { id: clipId }, svgEl("defs", {}, svg));
  svgEl("rect", { x: inner.x0, y: inner.y1, width: inner.x1 - inner.x0, height: inner.y0 - inner.y1 }, clip);
  const grid = svgEl("g", { class: "grid" }, svg);
  const plot = svgEl("g", { "clip-path": `url(#${clipId})` }, svg);
  svgEl("rect", {
    x: inner.x0, y: inner.y1, width: inner.x1 - inner.x0, height: inner.y0 - inner.y1,
    fill: "none", stroke: "#333", "stroke-width": 1,
  }, svg);
  return { svg, grid, plot, px, py, inner, tickPx };
}

function setLabel(el, label) {
  if (typeof label !== "object") return setText(el, label);
  el.replaceChildren(document.createTextNode(label.base));
  svgEl("tspan", { dy: "-0.4em", "font-size": "0.9em" }, el).textContent = label.exponent;
}

function tick(f, axis, value, label) {
  const { grid, px, py, inner, tickPx } = f;
  const attrs = { stroke: "#ddd", "stroke-width": 1 };
  if (axis === "x") {
    svgEl("line", { x1: px(value), x2: px(value), y1: inner.y0, y2: inner.y1, ...attrs }, grid);
    const t = svgEl("text", { x: px(value), y: inner.y0 + 4 + tickPx, "text-anchor": "middle", "font-size": tickPx }, grid);
    setLabel(t, label);
  } else {
    svgEl("line", { x1: inner.x0, x2: inner.x1, y1: py(value), y2: py(value), ...attrs }, grid);
    const t = svgEl("text", { x: inner.x0 - 6, y: py(value) + tickPx / 3, "text-anchor": "end", "font-size": tickPx }, grid);
    setLabel(t, label);
  }
}

function text(parent, x, y, attrs = {}) {
  return svgEl("text", { x, y, "font-size": 13, ...attrs }, parent);
}

// the half-widths the disc plots may take, and the dot a radius-0 disc becomes
const VIEWS = [1.25, 1.5, 2, 2.5, 3];
const POINT_PX = 3;

/** The smallest of VIEWS (at most `most`) that shows `extent` with 5 % to spare. */
export function fitView(extent, most) {
  for (const v of VIEWS) if (v <= most && v >= 1.05 * extent) return v;
  return most;
}

/**
 * The complex plane with Geršgorin discs, eigenvalues and the unit circle,
 * the SVG counterpart of rhn.plots.plot_discs. Returns update(spec, title).
 */
export function spectrumPlot(parent, { view, n }) {
  const size = 440;
  // the SVG is shown about 390 px wide on a laptop and 342 on a phone: text
  // of 15 units (ticks 14) is 13 px and more on the laptop, 10.5 on the phone
  const label = 15;
  // the square shown: from ±MIN_VIEW up to ±view, the smallest of VIEWS (or
  // view) that holds the discs, the eigenvalues and the unit circle, so that
  // small content (the identity's radius-0 discs at g) is not lost in ±3
  const xs = [-view, view], ys = [-view, view];
  // the title's baseline at 20 and the frame at 40: room for a subscript
  // (the T of b_T drops about 0.35 em, to 26, then its descent)
  // and a row under the x label for the legend, outside the plot, where no
  // disc can cover it (inside, at the bottom right, discs ran under it)
  const legendRow = 26;
  const height = size + 20 + legendRow;
  const f = frame(parent, {
    width: size, height,
    margin: { left: 52, right: 12, top: 40, bottom: 50 + legendRow },
    x: xs, y: ys, tickPx: 14,
  });
  let shown = null;
  const setView = (v) => {
    if (v === shown) return;
    shown = v;
    f.svg.dataset.rhnView = String(v); // for the tests
    xs[0] = ys[0] = -v;
    xs[1] = ys[1] = v;
    f.grid.replaceChildren();
    const step = v > 2.5 ? 1 : v > 1.2 ? 0.5 : 0.25;
    for (let t = -Math.floor(v / step) * step; t <= v + 1e-9; t += step) {
      tick(f, "x", t, fmt(t));
      tick(f, "y", t, fmt(t));
    }
    unit.setAttribute("cx", f.px(0));
    unit.setAttribute("cy", f.py(0));
    unit.setAttribute("r", scale(1));
  };
  const scale = (r) => f.px(r) - f.px(0);
  const unit = svgEl("circle", {
    fill: "none", stroke: COLORS.unit_circle, "stroke-dasharray": "5 4", "stroke-width": 1.2,
  }, f.plot);
  setView(view);
  const discs = [], eigs = [];
  for (let i = 0; i < n; i++) {
    discs.push(svgEl("circle", {
      fill: COLORS.disc, "fill-opacity": 0.12, stroke: COLORS.disc, "stroke-width": 1, class: "disc",
    }, f.plot));
  }
  const eigGroup = svgEl("g", {}, f.plot);
  for (let i = 0; i < n; i++) {
    eigs.push(svgEl("path", { stroke: COLORS.eigenvalue, "stroke-width": 2, fill: "none", class: "eig" }, eigGroup));
  }
  const title = text(f.svg, size / 2, 20, { "text-anchor": "middle", "font-size": label + 1 });
  const xlabel = text(f.svg, (f.inner.x0 + f.inner.x1) / 2, height - 6 - legendRow, { "text-anchor": "middle", "font-size": label });
  xlabel.textContent = "Re λ";
  const ylabel = text(f.svg, 14, (f.inner.y0 + f.inner.y1) / 2, {
    "text-anchor": "middle", transform: `rotate(-90 14 ${(f.inner.y0 + f.inner.y1) / 2})`, "font-size": label,
  });
  ylabel.textContent = "Im λ";
  // legend, one row under the x label: the discs, the crosses, the dashed circle
  const legend = svgEl("g", { class: "legend" }, f.svg);
  const ly = height - 14; // the row's middle
  const at = [14, 166, 292]; // each entry's symbol, left to right
  svgEl("circle", { cx: at[0] + 8, cy: ly, r: 6, fill: COLORS.disc, "fill-opacity": 0.25, stroke: COLORS.disc }, legend);
  text(legend, at[0] + 22, ly + 5, { "font-size": label }).textContent = "Geršgorin discs";
  svgEl("path", { d: `M${at[1] + 4},${ly - 4}l8,8m-8,0l8,-8`, stroke: COLORS.eigenvalue, "stroke-width": 2 }, legend);
  text(legend, at[1] + 22, ly + 5, { "font-size": label }).textContent = "eigenvalues";
  svgEl("line", { x1: at[2], x2: at[2] + 16, y1: ly, y2: ly, stroke: COLORS.unit_circle, "stroke-dasharray": "5 4", "stroke-width": 1.2 }, legend);
  text(legend, at[2] + 22, ly + 5, { "font-size": label }).textContent = "unit circle";
  const rhoText = text(f.svg, f.inner.x0 + 8, f.inner.y1 + 19, { "font-weight": "bold", "font-size": label });
  const note = text(f.svg, f.inner.x0 + 8, f.inner.y0 - 10, { "font-size": label, fill: "#444" });

  return function update(sp, titleText) {
    let extent = 1; // the unit circle
    for (let i = 0; i < n; i++) {
      extent = Math.max(extent, Math.abs(sp.centres[i]) + sp.radii[i], Math.hypot(sp.re[i], sp.im[i]));
    }
    setView(fitView(extent, view));
    for (let i = 0; i < n; i++) {
      discs[i].setAttribute("cx", f.px(sp.centres[i]));
      discs[i].setAttribute("cy", f.py(0));
      // an enormous radius would overflow the SVG number range: cap it far
      // outside the view (the clip path cuts it anyway); a disc of radius 0
      // (a diagonal matrix) is drawn as a dot of POINT_PX, so it stays visible
      const r = scale(sp.radii[i]);
      discs[i].setAttribute("r", Math.max(POINT_PX, Math.min(r, 1e5)));
      discs[i].setAttribute("fill-opacity", r < POINT_PX ? 0.9 : 0.12);
      const x = f.px(Math.max(-2 * view, Math.min(2 * view, sp.re[i])));
      const y = f.py(Math.max(-2 * view, Math.min(2 * view, sp.im[i])));
      eigs[i].setAttribute("d", `M${x - 5},${y - 5}L${x + 5},${y + 5}M${x - 5},${y + 5}L${x + 5},${y - 5}`);
    }
    setText(title, titleText);
    rhoText.textContent = `ρ = ${sp.rho.toFixed(3)}`;
    let reach = 0;
    for (let i = 0; i < n; i++) reach = Math.max(reach, Math.abs(sp.centres[i]) + sp.radii[i]);
    note.textContent = reach > view ? `discs reach |z| = ${fmt(reach)} (cut)` : "";
    f.svg.setAttribute(
      "aria-label",
      `${titleText}: Geršgorin discs and eigenvalues in the complex plane; ` +
        `spectral radius ${sp.rho.toFixed(3)}, discs reach |z| = ${fmt(reach)}`,
    );
  };
}

// 10 to the power e as a tick label: the exponent a raised tspan at 0.9 of
// the label's size (Unicode superscript digits drew at about 0.6 of it, under
// 9 CSS px on a phone)
const powerOfTen = (e) => ({ base: "10", exponent: String(e).replace("-", "\u2212") });

/**
 * Curves on a log y axis (gradient norm versus lag), the SVG counterpart of
 * rhn.widgets.figures.gradient_flow_figure. Returns update(curves, labels).
 */
export function logCurvesPlot(parent, { names, xmax, ylim, xlabel, ylabel, title, x0 = 0 }) {
  // point k of a curve is drawn at x = x0 + k (x0 = 1: the lag n counts from 1).
  // A phone's column (about 342 px) would show 620 units at 0.55 px each and
  // the 13-unit labels at 7.2 px: there the plot is drawn 400 units wide
  // (labels at 11 px and more), for the laptop's column 620 (at 13 px)
  const phone = typeof window !== "undefined" && window.matchMedia?.("(max-width: 600px)").matches;
  // the legend goes under the x label, outside the plot, where no curve can
  // cross it (inside, the RHN's curve ran through it at most settings of
  // b_T from 0 up): one row on a laptop, the RHN on a row of its own on a phone
  const rows = phone ? [names.slice(0, -1), names.slice(-1)] : [names];
  const legendHeight = 8 + 18 * rows.length;
  const width = phone ? 400 : 620, height = (phone ? 360 : 400) + legendHeight;
  const f = frame(parent, {
    width, height, margin: { left: 64, right: 14, top: 30, bottom: 46 + legendHeight },
    x: [x0, xmax], y: ylim, logY: true, tickPx: 13,
  });
  const lo = Math.ceil(Math.log10(ylim[0])), hi = Math.floor(Math.log10(ylim[1]));
  const every = Math.max(1, Math.floor((hi - lo + 1) / 5));
  for (let e = lo; e <= hi; e += every) tick(f, "y", 10 ** e, powerOfTen(e));
  const xstep = xmax > 20 ? 10 : 5;
  tick(f, "x", x0, String(x0));
  for (let v = xstep; v <= xmax; v += xstep) tick(f, "x", v, String(v));
  svgEl("line", {
    x1: f.inner.x0, x2: f.inner.x1, y1: f.py(1), y2: f.py(1),
    stroke: COLORS.baseline, "stroke-dasharray": "2 3",
  }, f.plot);
  // the dotted line says what it is: a norm of 1, the gradient at the last step
  text(f.plot, f.inner.x1 - 4, f.py(1) - 4, { "text-anchor": "end", "font-size": 13, fill: "#555" })
    .textContent = "norm 1";
  const lines = {};
  for (const name of names) {
    lines[name] = svgEl("polyline", {
      fill: "none", stroke: COLORS[name], "stroke-width": name === "rhn" ? 2.6 : 1.6,
      "stroke-dasharray": DASHES[name] || "", class: `curve-${name}`,
    }, f.plot);
  }
  setText(text(f.svg, width / 2, 20, { "text-anchor": "middle", "font-size": 14 }), title);
  text(f.svg, (f.inner.x0 + f.inner.x1) / 2, f.inner.y0 + 40, { "text-anchor": "middle" }).textContent = xlabel;
  const cy = (f.inner.y0 + f.inner.y1) / 2;
  text(f.svg, 14, cy, { "text-anchor": "middle", transform: `rotate(-90 14 ${cy})` }).textContent = ylabel;
  const legend = svgEl("g", { class: "legend" }, f.svg);
  const legendLine = {}, legendText = {};
  rows.forEach((row, r) => {
    const y = f.inner.y0 + 64 + 18 * r;
    for (const name of row) {
      legendLine[name] = svgEl("line", {
        y1: y - 4, y2: y - 4,
        stroke: COLORS[name], "stroke-width": 2.5, "stroke-dasharray": DASHES[name] || "",
      }, legend);
      legendText[name] = text(legend, 0, y, { "font-size": 13 });
    }
  });
  // each entry of a row after the label before it: 8 units a character, more
  // than 13-unit text takes
  const placeLegend = (labels) => {
    for (const row of rows) {
      let x = f.inner.x0;
      for (const name of row) {
        legendLine[name].setAttribute("x1", x);
        legendLine[name].setAttribute("x2", x + 24);
        legendText[name].setAttribute("x", x + 30);
        x += 30 + 8 * String(labels[name]).length + 18;
      }
    }
  };

  return function update(curves, labels) {
    for (const name of names) {
      const ys = curves[name];
      const pts = [];
      for (let k = 0; k < ys.length; k++) {
        // non-finite and out-of-range values are drawn at the edges
        let v = Number.isFinite(ys[k]) ? ys[k] : ylim[1];
        v = Math.min(ylim[1], Math.max(ylim[0], v));
        pts.push(`${f.px(x0 + k).toFixed(2)},${f.py(v).toFixed(2)}`);
      }
      lines[name].setAttribute("points", pts.join(" "));
      setText(legendText[name], labels[name]);
    }
    placeLegend(labels);
    f.svg.setAttribute(
      "aria-label",
      `${title}: ${names.map((name) => labels[name]).join(", ")}; ${ylabel} on a log scale against ${xlabel}`,
    );
  };
}
