// Drawing of the playground, on canvases redrawn whole at most once per
// animation frame: the loss of both nets against the memoryless baseline, the
// gradient-norm heatmap over time steps and micro-layers, and the mean
// transform gate per micro-layer. Okabe-Ito colours, with a second cue per
// series (the RNN dashed, the baseline dotted).

export const COLORS = { rhn: "#0072B2", rnn: "#D55E00", baseline: "#555555" };
// each canvas is drawn in its own coordinates (600 px wide) scaled to the
// width it is shown at; its text is 16 of those px, and more where the
// canvas is narrower than that, so that it stays at least MIN_TEXT_PX CSS px
// (a 390 px phone shows it 342 px wide: 19 px of the canvas, 10.8 CSS px)
const BASE_FONT_PX = 16;
export const MIN_TEXT_PX = 10.8;

/**
 * A canvas drawn in coordinates `width` x `height`, shown as wide as its
 * parent allows (at most `width` CSS px), with a backing store of the pixels
 * it is shown at (not more: a phone shows a 600 px canvas 342 px wide, and
 * the pixels a frame paints and hands to the compositor are what cost a
 * phone's main thread). Call fit(cssWidth) when the width it is shown at is
 * known or changes; it returns whether anything changed. Where the text is
 * larger than 16 px (a narrow canvas), the canvas is `grow` px taller per
 * 16 px of text above 16 (room for its lines of text).
 */
export function canvas(parent, width, height, label, grow = 0) {
  const c = document.createElement("canvas");
  c.style.width = "100%";
  c.style.maxWidth = `${width}px`;
  c.setAttribute("role", "img");
  c.setAttribute("aria-label", label);
  parent.appendChild(c);
  const ctx = c.getContext("2d");
  const cv = { c, ctx, width, height, shown: 0, fontPx: BASE_FONT_PX, em: 1 };
  // the backing store keeps at most 2 device pixels per CSS pixel: on a 3x
  // phone, 3 would paint and hand over 2.25 times the pixels at every frame
  cv.fit = (cssWidth) => {
    const shown = Math.min(width, Math.max(1, Math.round(cssWidth || width)));
    if (shown === cv.shown) return false;
    const ratio = Math.max(1, Math.min(2, globalThis.devicePixelRatio || 1));
    const scale = shown / width;
    cv.shown = shown;
    cv.fontPx = Math.max(BASE_FONT_PX, Math.ceil(MIN_TEXT_PX / scale));
    cv.em = cv.fontPx / BASE_FONT_PX;
    cv.height = Math.round(height + grow * (cv.em - 1));
    c.width = Math.round(shown * ratio);
    c.height = Math.round(cv.height * scale * ratio);
    ctx.setTransform(scale * ratio, 0, 0, scale * ratio, 0, 0);
    c.dataset.rhnFontPx = (cv.fontPx * scale).toFixed(2); // CSS px, for the tests
    return true;
  };
  cv.fit(width);
  return cv;
}

function clear(cv) {
  const { ctx, width, height } = cv;
  ctx.clearRect(0, 0, width, height);
  ctx.font = `${cv.fontPx}px system-ui, sans-serif`;
  ctx.fillStyle = "#222";
  ctx.textBaseline = "alphabetic";
}

/** `text` drawn at (x, y), or `short` where `text` is wider than `room`. */
function fillFitting(ctx, text, short, x, y, room) {
  ctx.fillText(ctx.measureText(text).width <= room ? text : short, x, y);
}

// a cheap sequential colour map, dark blue to yellow (viridis' end points and
// three stops between), readable by colour-blind readers and in grey
const STOPS = [[68, 1, 84], [59, 82, 139], [33, 145, 140], [94, 201, 98], [253, 231, 37]];
export function colour(u) {
  const v = Math.min(1, Math.max(0, u)) * (STOPS.length - 1);
  const i = Math.min(STOPS.length - 2, Math.floor(v));
  const f = v - i;
  const c = STOPS[i].map((a, j) => Math.round(a + f * (STOPS[i + 1][j] - a)));
  return `rgb(${c[0]},${c[1]},${c[2]})`;
}

// a true minus sign (U+2212), not a hyphen, in printed numbers
export const minus = (text) => String(text).replace(/-/g, "\u2212");
const SUPERSCRIPT = { "-": "\u207b", 0: "\u2070", 1: "\u00b9", 2: "\u00b2", 3: "\u00b3", 4: "\u2074", 5: "\u2075", 6: "\u2076", 7: "\u2077", 8: "\u2078", 9: "\u2079" };
/** 10 to the integer power `e` as it is printed: 1, 10, 10⁻³. */
export function powerOfTen(e) {
  if (e === 0) return "1";
  if (e === 1) return "10";
  return "10" + [...String(e)].map((c) => SUPERSCRIPT[c]).join("");
}

/**
 * 10 to the power `e` on a canvas at (x, y), aligned as ctx.textAlign says
 * ("left" or "right"): the exponent at the label's own size, raised (the
 * Unicode superscript digits of powerOfTen draw at about 0.6 of it, under
 * 9 CSS px on a phone). 1 and 10 are drawn as they are.
 */
export function fillPower(ctx, e, x, y) {
  if (e === 0 || e === 1) return ctx.fillText(powerOfTen(e), x, y);
  const px = parseFloat(/([\d.]+)px/.exec(ctx.font)?.[1] ?? "10");
  const exponent = minus(String(e));
  const align = ctx.textAlign;
  const width = ctx.measureText("10").width + ctx.measureText(exponent).width;
  const left = align === "right" ? x - width : x;
  ctx.textAlign = "left";
  ctx.fillText("10", left, y);
  ctx.fillText(exponent, left + ctx.measureText("10").width, y - 0.4 * px);
  ctx.textAlign = align;
}

/**
 * Text with subscripts, drawn from (x, y) to the right: in `text`, "_X" is X
 * as a subscript ("b_T = −3": b with subscript T), lowered by 5 px times
 * `em`, at the same size (it stays as large on a phone). Returns the width
 * drawn.
 */
export function fillWithSubscripts(ctx, text, x, y, em = 1) {
  const align = ctx.textAlign;
  ctx.textAlign = "left";
  let at = x;
  for (const [i, part] of text.split(/_(\w)/).entries()) {
    ctx.fillText(part, at, i % 2 ? y + 5 * em : y);
    at += ctx.measureText(part).width + (i % 2 ? 1 : 0);
  }
  ctx.textAlign = align;
  return at - x;
}

/**
 * Running means of the last `w` values of a growing series, kept as it
 * grows: add(values) appends, and `mean` (a Float64Array, valid up to
 * `length`) holds the running mean at every step; `lowest` is its smallest
 * positive value. Each value is added once, not at every redraw.
 */
export function runningMean(w) {
  const r = { raw: [], mean: new Float64Array(1024), length: 0, sum: 0, lowest: Infinity };
  r.add = (values) => {
    for (const v of values) {
      const i = r.raw.length;
      r.raw.push(v);
      r.sum += v - (i >= w ? r.raw[i - w] : 0);
      if (i >= r.mean.length) {
        const grown = new Float64Array(2 * r.mean.length);
        grown.set(r.mean);
        r.mean = grown;
      }
      const m = r.sum / Math.min(i + 1, w);
      r.mean[i] = m;
      r.length = i + 1;
      if (m > 0 && m < r.lowest) r.lowest = m;
    }
  };
  return r;
}

/**
 * Loss (running mean over `window` steps, log scale) of both nets and the
 * baseline. Each curve is drawn through at most one point per CSS pixel of
 * the plot's width: a run of 20000 steps is 20000 means, and a phone shows
 * the plot under 300 px wide.
 */
export function lossPlot(parent) {
  // taller by its margins' growth where its text is larger (a phone)
  const cv = canvas(parent, 600, 300, "training loss of the RHN and the RNN against the memoryless baseline", 136);
  const draw = (runs, baseline, labels, window) => {
    const { ctx, width, height, em } = cv;
    // the bottom margin holds the step axis and, under it, the legend
    const m = { left: 56, right: 24 * em + 6, top: 26, bottom: 110 * em };
    clear(cv);
    const n = Math.max(runs[0].length, 1);
    const xmax = Math.max(100, 2 ** Math.ceil(Math.log2(n)));
    // log10 of the loss: a little room above 1/6, and down to the
    // lowest running mean (a long run of the RHN goes below 1e-3)
    const lowest = Math.min(...runs.map((r) => r.lowest));
    const ylo = Math.max(-8, Math.min(-3, Math.floor(Math.log10(lowest))));
    const yhi = 0.5;
    const px = (i) => m.left + (i / xmax) * (width - m.left - m.right);
    const py = (v) => {
      const l = Math.min(yhi, Math.max(ylo, Math.log10(Math.max(v, 1e-12))));
      return m.top + ((yhi - l) / (yhi - ylo)) * (height - m.top - m.bottom);
    };
    ctx.strokeStyle = "#ddd";
    ctx.textAlign = "right";
    const every = Math.ceil((Math.floor(yhi) - ylo + 1) / 5);
    for (let e = ylo; e <= Math.floor(yhi); e += every) {
      ctx.beginPath();
      ctx.moveTo(m.left, py(10 ** e));
      ctx.lineTo(width - m.right, py(10 ** e));
      ctx.stroke();
      fillPower(ctx, e, m.left - 4, py(10 ** e) + 4 * em);
    }
    ctx.textAlign = "center";
    for (let k = 0; k <= 4; k++) ctx.fillText(String((xmax * k) / 4), px((xmax * k) / 4), height - m.bottom + 16 * em);
    ctx.fillText("training step", (m.left + width - m.right) / 2, height - m.bottom + 34 * em);
    ctx.textAlign = "left";
    fillFitting(ctx, `loss (mean squared error, mean of the last ${window} steps)`,
      `loss (MSE, mean of the last ${window} steps)`, 4, 14 * em, width - 8);
    ctx.strokeStyle = "#333";
    ctx.strokeRect(m.left, m.top, width - m.left - m.right, height - m.top - m.bottom);
    const series = [
      [COLORS.baseline, [2, 4], null],
      [COLORS.rhn, [], runs[0]],
      [COLORS.rnn, [8, 4], runs[1]],
    ];
    // one point per CSS pixel of the plot at most
    const points = Math.max(50, Math.round(((width - m.left - m.right) * cv.shown) / width));
    ctx.lineWidth = 2;
    for (const [colourName, dash, run] of series) {
      ctx.strokeStyle = colourName;
      ctx.setLineDash(dash);
      ctx.beginPath();
      if (!run) {
        ctx.moveTo(m.left, py(baseline));
        ctx.lineTo(width - m.right, py(baseline));
      } else {
        const s = run.mean;
        const len = run.length;
        const stride = Math.max(1, Math.ceil(len / points));
        for (let i = 0; i < len; i += stride) (i ? ctx.lineTo : ctx.moveTo).call(ctx, px(i + 1), py(s[i]));
        if (len) ctx.lineTo(px(len), py(s[len - 1]));
      }
      ctx.stroke();
    }
    ctx.setLineDash([]);
    ctx.lineWidth = 1;
    // legend under the frame, where no curve runs (inside it, it covered
    // the curves near the baseline)
    ctx.textAlign = "left";
    labels.forEach((text, i) => {
      const y = height - m.bottom + (58 + 20 * i) * em;
      ctx.strokeStyle = series[i][0];
      ctx.setLineDash(series[i][1]);
      ctx.lineWidth = 2;
      ctx.beginPath();
      ctx.moveTo(m.left, y - 5 * em);
      ctx.lineTo(m.left + 28, y - 5 * em);
      ctx.stroke();
      ctx.setLineDash([]);
      ctx.lineWidth = 1;
      ctx.fillStyle = "#222";
      fillWithSubscripts(ctx, text, m.left + 34, y, em);
    });
  };
  draw.canvas = cv;
  return draw;
}

/**
 * Heatmap of log10 ‖∂L/∂s‖ over time steps (x) and micro-layers (rows): the
 * RHN's D rows, then the RNN's single row. Colours span `decades` below the
 * largest norm shown.
 */
export function gradientHeatmap(parent) {
  const cv = canvas(parent, 600, 190, "gradient norm over time steps and micro-layers, RHN and RNN", 60);
  // the row labels ("RHN k=0") end 4 px left of the map: room for them at a
  // phone's larger font, where "RHN k = 0" ran off the canvas's left edge
  const decades = 8;
  const draw = (rhn, rnn, T, D) => {
    const { ctx, width, height, em } = cv;
    const m = { left: 96, right: 80, top: 24 * em, bottom: 36 * em };
    clear(cv);
    ctx.textAlign = "left";
    // from the left edge: from m.left the title ran past the canvas ("(last batc")
    fillFitting(ctx, "gradient norm ‖∂L/∂s‖ per step t and micro-layer k (last batch)",
      "‖∂L/∂s‖ per step t and micro-layer k (last batch)", 4, 14 * em, width - 8);
    if (!rhn) {
      // before the first step there is no gradient to show: say so
      ctx.fillStyle = "#f3f3f3";
      ctx.fillRect(m.left, m.top, width - m.left - m.right, height - m.top - m.bottom);
      ctx.fillStyle = "#444";
      ctx.textAlign = "center";
      ctx.fillText("press play: drawn after the first step", (m.left + width - m.right) / 2, height / 2 + 4 * em);
      return;
    }
    let top = -Infinity;
    for (const v of [...rhn, ...rnn]) if (v > 0) top = Math.max(top, Math.log10(v));
    const rows = D + 1;
    const gap = 8;
    const w = (width - m.left - m.right) / T;
    const h = (height - m.top - m.bottom - gap) / rows;
    const cell = (t, row, v) => {
      ctx.fillStyle = colour(v > 0 ? 1 + (Math.log10(v) - top) / decades : 0);
      const y = m.top + row * h + (row === D ? gap : 0);
      ctx.fillRect(m.left + t * w, y, Math.ceil(w), Math.ceil(h));
    };
    for (let t = 0; t < T; t++) {
      for (let k = 0; k < D; k++) cell(t, k, rhn[t * D + k]);
      cell(t, D, rnn[t]);
    }
    ctx.fillStyle = "#222";
    ctx.textAlign = "right";
    for (let k = 0; k < D; k++) ctx.fillText(`RHN k=${k}`, m.left - 4, m.top + (k + 0.5) * h + 4 * em);
    ctx.fillText("RNN", m.left - 4, m.top + D * h + gap + 0.5 * h + 4 * em);
    ctx.textAlign = "center";
    for (const t of [0, Math.floor((T - 1) / 2), T - 1]) ctx.fillText(String(t), m.left + (t + 0.5) * w, height - m.bottom + 16 * em);
    ctx.fillText("time step t", (m.left + width - m.right) / 2, height - 4);
    // colour bar
    const x0 = width - m.right + 10;
    const barH = height - m.top - m.bottom;
    for (let i = 0; i < 40; i++) {
      ctx.fillStyle = colour(1 - i / 39);
      ctx.fillRect(x0, m.top + (i * barH) / 40, 12, barH / 40 + 1);
    }
    ctx.fillStyle = "#222";
    ctx.textAlign = "left";
    fillPower(ctx, Math.round(top), x0 + 15, m.top + 10 * em);
    fillPower(ctx, Math.round(top - decades), x0 + 15, m.top + barH);
  };
  draw.canvas = cv;
  return draw;
}

/** Bars of the mean transform gate t_k per micro-layer (0: carry everything, 1: transform). */
export function gateBars(parent) {
  const cv = canvas(parent, 600, 120, "mean transform-gate activity per micro-layer of the RHN", 60);
  const draw = (gates) => {
    const { ctx, width, height, em } = cv;
    const m = { left: 84, right: 80, top: 24 * em, bottom: 8 };
    clear(cv);
    ctx.textAlign = "left";
    const title = "mean transform gate t_k (0: carry the state, 1: replace it)";
    const room = ctx.measureText(title.replace("_", "")).width <= width - 8;
    fillWithSubscripts(ctx, room ? title : "mean transform gate t_k (0: carry, 1: replace)", 4, 14 * em, em);
    const D = gates.length;
    const h = (height - m.top - m.bottom) / Math.max(D, 1);
    const w = width - m.left - m.right;
    for (let k = 0; k < D; k++) {
      const y = m.top + k * h;
      ctx.fillStyle = "#eee";
      ctx.fillRect(m.left, y + 2, w, h - 4);
      ctx.fillStyle = COLORS.rhn;
      ctx.fillRect(m.left, y + 2, w * gates[k], h - 4);
      ctx.fillStyle = "#222";
      ctx.textAlign = "right";
      ctx.fillText(`k = ${k}`, m.left - 4, y + h / 2 + 4 * em);
      ctx.textAlign = "left";
      ctx.fillText(gates[k].toFixed(3), m.left + w + 6, y + h / 2 + 4 * em);
    }
  };
  draw.canvas = cv;
  return draw;
}
