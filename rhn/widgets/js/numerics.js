// The numerics of the interactive figures, in float64, written to follow
// rhn.cells.RHNCell, rhn.analysis and rhn.gradflow line by line: the unit
// tests (under Node.js) compare the Jacobians, the disc centres and radii, the
// eigenvalues, the spectral radius and the gradient norms with the Python
// package; the browser tests compare all but the Jacobians and eigenvalues.
//
// Matrices are flat row-major Float64Arrays (or plain arrays) with their shape
// passed alongside; R[k] of an RHN cell is the (G*H, H) recurrent weight of
// micro-layer k, row blocks [R_H; R_T] (coupled) or [R_H; R_T; R_C].

import { EigenvalueDecomposition, Matrix } from "ml-matrix";

const sigmoid = (a) => 1 / (1 + Math.exp(-a));

// y = A x + b for A (rows, cols) row-major; b may be null
function matvec(A, rows, cols, x, b) {
  const y = new Float64Array(rows);
  for (let i = 0; i < rows; i++) {
    let acc = 0;
    const o = i * cols;
    for (let j = 0; j < cols; j++) acc += A[o + j] * x[j];
    y[i] = b ? acc + b[i] : acc;
  }
  return y;
}

// ---------------------------------------------------------------------------
// tanh RNN (rhn.analysis.rnn_temporal_jacobian), zero biases
// ---------------------------------------------------------------------------

/** J = diag(1 - tanh^2(W x + R s)) R after `warmup` steps from s = 0. */
export function rnnJacobian(d, scale, init) {
  const H = d.hidden_size, I = d.input_size, W = d.warmup;
  const R = new Float64Array(H * H);
  for (let i = 0; i < H; i++) {
    for (let j = 0; j < H; j++) {
      R[i * H + j] = scale * (init === "identity" ? (i === j ? 1 : 0) : d.r0[i * H + j]);
    }
  }
  let s = new Float64Array(H);
  let a = null;
  for (let t = 0; t <= W; t++) {
    const x = d.xs.slice(t * I, (t + 1) * I);
    const wx = matvec(d.w_ih, H, I, x, null);
    const rs = matvec(R, H, H, s, null);
    a = wx.map((v, i) => v + rs[i]);
    if (t < W) s = a.map(Math.tanh);
  }
  const J = new Float64Array(H * H);
  for (let i = 0; i < H; i++) {
    const th = Math.tanh(a[i]);
    const dv = 1 - th * th;
    for (let j = 0; j < H; j++) J[i * H + j] = dv * R[i * H + j];
  }
  return J;
}

// ---------------------------------------------------------------------------
// RHN cell (rhn.cells.RHNCell) and its temporal Jacobian (rhn.analysis)
// ---------------------------------------------------------------------------

/**
 * One RHN cell at a slider setting: the first `depth` micro-layers of the
 * exported cell, recurrent weights times `scale`, transform-gate biases `bias`
 * (carry-gate biases -bias when uncoupled), every other bias zero.
 */
export function rhnCell(cellData, H, I, depth, bias, scale, coupled) {
  const G = coupled ? 2 : 3;
  const R = [];
  const b = [];
  for (let k = 0; k < depth; k++) {
    R.push(cellData.w_hh[k].map((v) => v * scale));
    const bk = new Float64Array(G * H);
    for (let i = H; i < 2 * H; i++) bk[i] = bias;
    if (!coupled) for (let i = 2 * H; i < 3 * H; i++) bk[i] = -bias;
    b.push(bk);
  }
  return { H, I, G, depth, coupled, w_ih: cellData.w_ih, R, b };
}

// gates (h, t, c) of micro-layer k for the entering state s (RHNCell.gate_values)
function gates(cell, k, s, xProj) {
  const { H, G } = cell;
  const a = matvec(cell.R[k], G * H, H, s, cell.b[k]);
  if (xProj) for (let i = 0; i < G * H; i++) a[i] += xProj[i];
  const h = new Float64Array(H), t = new Float64Array(H), c = new Float64Array(H);
  for (let i = 0; i < H; i++) {
    h[i] = Math.tanh(a[i]);
    t[i] = sigmoid(a[H + i]);
    c[i] = cell.coupled ? 1 - t[i] : sigmoid(a[2 * H + i]);
  }
  return { h, t, c };
}

/**
 * One time step. Returns the new state and, per micro-layer, the entering
 * state and the gate values (what the Jacobian needs).
 */
export function rhnStep(cell, x, s) {
  const { H, I, G } = cell;
  const xProj = matvec(cell.w_ih, G * H, I, x, null);
  const layers = [];
  for (let k = 0; k < cell.depth; k++) {
    const g = gates(cell, k, s, k === 0 ? xProj : null);
    layers.push({ s, ...g });
    const next = new Float64Array(H);
    for (let i = 0; i < H; i++) next[i] = g.h[i] * g.t[i] + s[i] * g.c[i];
    s = next;
  }
  return { s, layers };
}

// row scalings of the blocks of R_k in J_k (rhn.analysis.micro_layer_jacobians)
function coefficients(cell, layer) {
  const { H } = cell;
  const { s, h, t, c } = layer;
  const coef = [new Float64Array(H), new Float64Array(H), new Float64Array(H)];
  for (let i = 0; i < H; i++) {
    const dt = t[i] * (1 - t[i]);
    coef[0][i] = t[i] * (1 - h[i] * h[i]);
    if (cell.coupled) {
      coef[1][i] = (h[i] - s[i]) * dt;
    } else {
      coef[1][i] = h[i] * dt;
      coef[2][i] = s[i] * c[i] * (1 - c[i]);
    }
  }
  return coef;
}

/** J_k = diag(c) + sum_g diag(coef_g) R_{g,k}, (H, H) row-major. */
export function microLayerJacobian(cell, k, layer) {
  const { H, G } = cell;
  const coef = coefficients(cell, layer);
  const R = cell.R[k];
  const J = new Float64Array(H * H);
  for (let i = 0; i < H; i++) {
    for (let j = 0; j < H; j++) {
      let v = 0;
      for (let g = 0; g < G; g++) v += coef[g][i] * R[(g * H + i) * H + j];
      J[i * H + j] = v;
    }
    J[i * H + i] += layer.c[i];
  }
  return J;
}

function matmul(A, B, n) {
  const C = new Float64Array(n * n);
  for (let i = 0; i < n; i++) {
    for (let k = 0; k < n; k++) {
      const a = A[i * n + k];
      if (a === 0) continue;
      for (let j = 0; j < n; j++) C[i * n + j] += a * B[k * n + j];
    }
  }
  return C;
}

/** The temporal Jacobian J_{D-1} ... J_0 of one step (rhn.analysis.temporal_jacobian). */
export function rhnTemporalJacobian(cell, x, s) {
  const { layers } = rhnStep(cell, x, s);
  let J = microLayerJacobian(cell, 0, layers[0]);
  for (let k = 1; k < cell.depth; k++) {
    J = matmul(microLayerJacobian(cell, k, layers[k]), J, cell.H);
  }
  return J;
}

/** The Jacobian drawn in chapter 7: after `warmup` steps on the inputs from 0. */
export function rhnExampleJacobian(d, bias, scale, depth, coupled) {
  const H = d.hidden_size, I = d.input_size, W = d.warmup;
  const cell = rhnCell(d.cells[coupled ? "coupled" : "uncoupled"], H, I, depth, bias, scale, coupled);
  let s = new Float64Array(H);
  for (let t = 0; t < W; t++) s = rhnStep(cell, d.xs.slice(t * I, (t + 1) * I), s).s;
  return rhnTemporalJacobian(cell, d.xs.slice(W * I, (W + 1) * I), s);
}

// g J_k for a row vector g: the backward pass of one micro-layer
function vjpMicroLayer(cell, k, layer, g) {
  const { H, G } = cell;
  const coef = coefficients(cell, layer);
  const R = cell.R[k];
  const out = new Float64Array(H);
  for (let i = 0; i < H; i++) out[i] = g[i] * layer.c[i];
  for (let gi = 0; gi < G; gi++) {
    for (let i = 0; i < H; i++) {
      const w = g[i] * coef[gi][i];
      if (w === 0) continue;
      const o = (gi * H + i) * H;
      for (let j = 0; j < H; j++) out[j] += w * R[o + j];
    }
  }
  return out;
}

/**
 * Gradient norm versus lag (rhn.gradflow.gradient_norms, default loss
 * <v, s^[T-1]> summed over the batch): entry k is the mean over the batch of
 * |dL/ds^[T-2-k]|, the gradient after k + 1 backward steps.
 */
export function rhnGradientNorms(d, bias) {
  const H = d.hidden_size, I = d.input_size, T = d.steps, B = d.batch;
  const cell = rhnCell(d.cell, H, I, d.depth, bias, 1, true);
  const norms = new Float64Array(T);
  for (let b = 0; b < B; b++) {
    let s = new Float64Array(H);
    const tape = [];
    for (let t = 0; t < T; t++) {
      const o = (t * B + b) * I;
      const step = rhnStep(cell, d.xs.slice(o, o + I), s);
      tape.push(step.layers);
      s = step.s;
    }
    let g = Float64Array.from(d.v);
    for (let t = T - 1; t >= 0; t--) {
      for (let k = cell.depth - 1; k >= 0; k--) g = vjpMicroLayer(cell, k, tape[t][k], g);
      let sq = 0;
      for (let i = 0; i < H; i++) sq += g[i] * g[i];
      norms[T - 1 - t] += Math.sqrt(sq) / B;
    }
  }
  return norms;
}

// ---------------------------------------------------------------------------
// Geršgorin discs and eigenvalues (rhn.analysis)
// ---------------------------------------------------------------------------

/** Row discs: centres J_ii and radii sum_{j != i} |J_ij|. */
export function gershgorinDiscs(J, n) {
  const centres = new Float64Array(n), radii = new Float64Array(n);
  for (let i = 0; i < n; i++) {
    centres[i] = J[i * n + i];
    let r = 0;
    for (let j = 0; j < n; j++) if (j !== i) r += Math.abs(J[i * n + j]);
    radii[i] = r;
  }
  return { centres, radii };
}

/** Eigenvalues of a real non-symmetric matrix (ml-matrix's EVD: Hessenberg QR). */
export function eigenvalues(J, n) {
  const rows = [];
  for (let i = 0; i < n; i++) rows.push(Array.from(J.subarray(i * n, (i + 1) * n)));
  const evd = new EigenvalueDecomposition(new Matrix(rows));
  return { re: evd.realEigenvalues, im: evd.imaginaryEigenvalues };
}

/** Discs, eigenvalues and the spectral radius of J. */
export function spectrum(J, n) {
  const { centres, radii } = gershgorinDiscs(J, n);
  const { re, im } = eigenvalues(J, n);
  let rho = 0;
  for (let i = 0; i < n; i++) rho = Math.max(rho, Math.hypot(re[i], im[i]));
  return { centres, radii, re, im, rho };
}
