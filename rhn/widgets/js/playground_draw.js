// Drawing of the playground, on canvases redrawn whole at most once per
// animation frame: the loss of both nets against the memoryless baseline, the
// gradient-norm heatmap over time steps and micro-layers, and the mean
// transform gate per micro-layer. Okabe-Ito colours, with a second cue per
// series (the RNN dashed, the baseline dotted).

export const COLORS = { rhn: "#0072B2", rnn: "#D55E00", baseline: "#555555" };
// 16 px in a 600 px canvas: still 9 CSS px when a phone shrinks it to the
// 342 px column of a 390 px screen
const FONT = "16px system-ui, sans-serif";

/** A canvas of CSS size width x height, sharp on high-density screens. */
export function canvas(parent, width, height, label) {
  const c = document.createElement("canvas");
  const ratio = Math.max(1, Math.min(3, globalThis.devicePixelRatio || 1));
  c.width = Math.round(width * ratio);
  c.height = Math.round(height * ratio);
  c.style.width = "100%";
  c.style.maxWidth = `${width}px`;
  c.setAttribute("role", "img");
  c.setAttribute("aria-label", label);
  parent.appendChild(c);
  const ctx = c.getContext("2d");
  ctx.scale(ratio, ratio);
  return { c, ctx, width, height };
}

function clear({ ctx, width, height }) {
  ctx.clearRect(0, 0, width, height);
  ctx.font = FONT;
  ctx.fillStyle = "#222";
  ctx.textBaseline = "alphabetic";
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
 * Text with subscripts, drawn from (x, y) to the right: in `text`, "_X" is X
 * as a subscript ("b_T = −3": b with subscript T), lowered, at the same size
 * (it stays 9 CSS px on a phone). Returns the width drawn.
 */
export function fillWithSubscripts(ctx, text, x, y) {
  const align = ctx.textAlign;
  ctx.textAlign = "left";
  let at = x;
  for (const [i, part] of text.split(/_(\w)/).entries()) {
    ctx.fillText(part, at, i % 2 ? y + 5 : y);
    at += ctx.measureText(part).width + (i % 2 ? 1 : 0);
  }
  ctx.textAlign = align;
  return at - x;
}

/** Running means of the last `w` values of `a` at every index. */
function smooth(a, w) {
  const out = new Float64Array(a.length);
  let sum = 0;
  for (let i = 0; i < a.length; i++) {
    sum += a[i] - (i >= w ? a[i - w] : 0);
    out[i] = sum / Math.min(i + 1, w);
  }
  return out;
}

/** Loss (running mean over `window` steps, log scale) of both nets and the baseline. */
export function lossPlot(parent) {
  const cv = canvas(parent, 600, 300, "training loss of the RHN and the RNN against the memoryless baseline");
  // the bottom margin holds the step axis and, under it, the legend
  const m = { left: 56, right: 24, top: 26, bottom: 110 };
  return (losses, baseline, labels, window) => {
    const { ctx, width, height } = cv;
    clear(cv);
    const n = Math.max(losses[0].length, 1);
    const xmax = Math.max(100, 2 ** Math.ceil(Math.log2(n)));
    const smoothed = losses.map((data) => smooth(data, window));
    // log10 of the loss: a little room above 1/6, and down to the
    // lowest running mean (a long run of the RHN goes below 1e-3)
    let lowest = Infinity;
    for (const s of smoothed) for (const v of s) if (v > 0) lowest = Math.min(lowest, v);
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
      ctx.fillText(powerOfTen(e), m.left - 4, py(10 ** e) + 4);
    }
    ctx.textAlign = "center";
    for (let k = 0; k <= 4; k++) ctx.fillText(String((xmax * k) / 4), px((xmax * k) / 4), height - m.bottom + 16);
    ctx.fillText("training step", (m.left + width - m.right) / 2, height - m.bottom + 34);
    ctx.textAlign = "left";
    ctx.fillText(`loss (mean squared error, mean of the last ${window} steps)`, m.left, 14);
    ctx.strokeStyle = "#333";
    ctx.strokeRect(m.left, m.top, width - m.left - m.right, height - m.top - m.bottom);
    const series = [
      [COLORS.baseline, [2, 4], null],
      [COLORS.rhn, [], smoothed[0]],
      [COLORS.rnn, [8, 4], smoothed[1]],
    ];
    ctx.lineWidth = 2;
    for (const [colourName, dash, data] of series) {
      ctx.strokeStyle = colourName;
      ctx.setLineDash(dash);
      ctx.beginPath();
      if (!data) {
        ctx.moveTo(m.left, py(baseline));
        ctx.lineTo(width - m.right, py(baseline));
      } else {
        const s = data;
        const stride = Math.max(1, Math.floor(s.length / 600));
        for (let i = 0; i < s.length; i += stride) (i ? ctx.lineTo : ctx.moveTo).call(ctx, px(i + 1), py(s[i]));
        if (s.length) ctx.lineTo(px(s.length), py(s[s.length - 1]));
      }
      ctx.stroke();
    }
    ctx.setLineDash([]);
    ctx.lineWidth = 1;
    // legend under the frame, where no curve runs (inside it, it covered
    // the curves near the baseline)
    ctx.textAlign = "left";
    labels.forEach((text, i) => {
      const y = height - m.bottom + 58 + 20 * i;
      ctx.strokeStyle = series[i][0];
      ctx.setLineDash(series[i][1]);
      ctx.lineWidth = 2;
      ctx.beginPath();
      ctx.moveTo(m.left, y - 5);
      ctx.lineTo(m.left + 28, y - 5);
      ctx.stroke();
      ctx.setLineDash([]);
      ctx.lineWidth = 1;
      ctx.fillStyle = "#222";
      fillWithSubscripts(ctx, text, m.left + 34, y);
    });
  };
}

/**
 * Heatmap of log10 ‖∂L/∂s‖ over time steps (x) and micro-layers (rows): the
 * RHN's D rows, then the RNN's single row. Colours span `decades` below the
 * largest norm shown.
 */
export function gradientHeatmap(parent) {
  const cv = canvas(parent, 600, 190, "gradient norm over time steps and micro-layers, RHN and RNN");
  // the row labels ("RHN k=0") end 4 px left of the map: room for them at a
  // phone's larger font, where "RHN k = 0" ran off the canvas's left edge
  const m = { left: 96, right: 80, top: 24, bottom: 36 };
  const decades = 8;
  return (rhn, rnn, T, D) => {
    const { ctx, width, height } = cv;
    clear(cv);
    ctx.textAlign = "left";
    // from the left edge: from m.left the title ran past the canvas ("(last batc")
    ctx.fillText("gradient norm ‖∂L/∂s‖ per step t and micro-layer k (last batch)", 4, 14);
    if (!rhn) {
      // before the first step there is no gradient to show: say so
      ctx.fillStyle = "#f3f3f3";
      ctx.fillRect(m.left, m.top, width - m.left - m.right, height - m.top - m.bottom);
      ctx.fillStyle = "#444";
      ctx.textAlign = "center";
      ctx.fillText("press play: drawn after the first step", (m.left + width - m.right) / 2, height / 2 + 4);
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
    for (let k = 0; k < D; k++) ctx.fillText(`RHN k=${k}`, m.left - 4, m.top + (k + 0.5) * h + 4);
    ctx.fillText("RNN", m.left - 4, m.top + D * h + gap + 0.5 * h + 4);
    ctx.textAlign = "center";
    for (const t of [0, Math.floor((T - 1) / 2), T - 1]) ctx.fillText(String(t), m.left + (t + 0.5) * w, height - m.bottom + 16);
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
    ctx.fillText(powerOfTen(Math.round(top)), x0 + 15, m.top + 10);
    ctx.fillText(powerOfTen(Math.round(top - decades)), x0 + 15, m.top + barH);
  };
}

/** Bars of the mean transform gate t_k per micro-layer (0: carry everything, 1: transform). */
export function gateBars(parent) {
  const cv = canvas(parent, 600, 120, "mean transform-gate activity per micro-layer of the RHN");
  const m = { left: 84, right: 80, top: 24, bottom: 8 };
  return (gates) => {
    const { ctx, width, height } = cv;
    clear(cv);
    ctx.textAlign = "left";
    fillWithSubscripts(ctx, "mean transform gate t_k (0: carry the state, 1: replace it)", 4, 14);
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
      ctx.fillText(`k = ${k}`, m.left - 4, y + h / 2 + 4);
      ctx.textAlign = "left";
      ctx.fillText(gates[k].toFixed(3), m.left + w + 6, y + h / 2 + 4);
    }
  };
}
