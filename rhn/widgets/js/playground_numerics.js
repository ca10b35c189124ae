// The playground's numerics (no DOM): the adding problem, a coupled-gate RHN
// and a tanh RNN with a linear read-out of the last state, their forward pass,
// backpropagation through time, global gradient-norm clipping and the Adam step.
// Everything in float64, with the formulas of rhn.RHN, torch.nn.RNN,
// torch.nn.utils.clip_grad_norm_ and torch.optim.Adam; tests/test_playground.py
// runs this file under node (tests/playground_numerics.mjs) and compares it with
// torch.autograd and torch.optim.Adam to 1e-9 relative.
//
// A net is { kind, H, I, D, names, params: {name: Float64Array} } with torch's
// names and row-major layouts:
//   RHN: weight_ih (2H, I), weight_hh_d{k} (2H, H), bias_hh_d{k} (2H,) for
//        k < D, rows [H-block; T-block]; out.weight (1, H), out.bias (1,)
//   RNN: weight_ih_l0 (H, I), weight_hh_l0 (H, H), bias_ih_l0 (H,),
//        bias_hh_l0 (H,), out.weight (1, H), out.bias (1,)
// A batch is { T, B, x: Float64Array (T, B, 2), y: Float64Array (B,) }.

/** mulberry32: a small seeded 32-bit generator; returns () => u in [0, 1). */
export function rng(seed) {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

/**
 * One batch of the adding problem, drawn like rhn.tasks.adding_problem (values
 * U[0, 1), one marker uniform in [0, T/2) and one in [T/2, T), target the sum
 * of the two marked values) but from `next`, not from torch's generator.
 */
export function addingBatch(next, T, B) {
  const x = new Float64Array(T * B * 2);
  const y = new Float64Array(B);
  for (let t = 0; t < T; t++) for (let b = 0; b < B; b++) x[(t * B + b) * 2] = next();
  const half = Math.floor(T / 2);
  for (const [lo, hi] of [[0, half], [half, T]]) {
    for (let b = 0; b < B; b++) {
      const t = lo + Math.floor(next() * (hi - lo));
      x[(t * B + b) * 2 + 1] = 1;
      y[b] += x[(t * B + b) * 2];
    }
  }
  return { T, B, x, y };
}

/** The parameter names of a net, in torch's order (model, then read-out). */
export function paramNames(kind, D) {
  const names = kind === "rhn" ? ["weight_ih"] : ["weight_ih_l0", "weight_hh_l0", "bias_ih_l0", "bias_hh_l0"];
  if (kind === "rhn") for (let k = 0; k < D; k++) names.push(`weight_hh_d${k}`, `bias_hh_d${k}`);
  return [...names, "out.weight", "out.bias"];
}

/** A net from plain arrays {name: number[]} (copied into Float64Arrays). */
export function makeNet(kind, H, I, D, arrays) {
  const names = paramNames(kind, kind === "rhn" ? D : 1);
  const params = {};
  for (const n of names) {
    if (!(n in arrays)) throw new Error(`${kind} parameter ${n} is missing`);
    params[n] = Float64Array.from(arrays[n]);
  }
  return { kind, H, I, D: kind === "rhn" ? D : 1, names, params };
}

const sigmoid = (v) => 1 / (1 + Math.exp(-v));

// out[b, r] += sum_j A[r, j] * v[b, j]: A (R, C) row-major, v (B, C), out (B, R)
function matvecAdd(out, A, v, B, R, C) {
  for (let b = 0; b < B; b++) {
    const vo = b * C;
    const oo = b * R;
    for (let r = 0; r < R; r++) {
      let acc = 0;
      const ao = r * C;
      for (let j = 0; j < C; j++) acc += A[ao + j] * v[vo + j];
      out[oo + r] += acc;
    }
  }
}

// out[b, j] += sum_r g[b, r] * A[r, j]  (the transpose product of matvecAdd)
function matTvecAdd(out, A, g, B, R, C) {
  for (let b = 0; b < B; b++) {
    const go = b * R;
    const oo = b * C;
    for (let r = 0; r < R; r++) {
      const gr = g[go + r];
      if (gr === 0) continue;
      const ao = r * C;
      for (let j = 0; j < C; j++) out[oo + j] += gr * A[ao + j];
    }
  }
}

// dA[r, j] += sum_b g[b, r] * v[b, j]
function outerAdd(dA, g, v, B, R, C) {
  for (let b = 0; b < B; b++) {
    const go = b * R;
    const vo = b * C;
    for (let r = 0; r < R; r++) {
      const gr = g[go + r];
      if (gr === 0) continue;
      const ao = r * C;
      for (let j = 0; j < C; j++) dA[ao + j] += gr * v[vo + j];
    }
  }
}

function zerosLike(params, names) {
  const out = {};
  for (const n of names) out[n] = new Float64Array(params[n].length);
  return out;
}

/**
 * Loss (mean squared error of the read-out of the last state) and, unless
 * `withGrad` is false, its gradient by backpropagation through time.
 * Returns { loss, pred (B,), grads {name: Float64Array}, gradNorms (T*D,
 * ‖∂L/∂s‖ over the batch at the output of micro-layer k of step t, index t*D+k),
 * gateMean (D,), mean transform gate t_k over steps, batch and units (RHN) }.
 */
export function lossAndGrad(net, batch, withGrad = true) {
  const { H, I, D, params: p } = net;
  const { T, B, x, y } = batch;
  const rhn = net.kind === "rhn";
  const G = rhn ? 2 : 1;
  const GH = G * H;
  // saved per (t, k): the state entering, the candidate h and the gate t
  const sIn = new Array(T * D);
  const hs = new Array(T * D);
  const ts = rhn ? new Array(T * D) : null;
  const xt = new Float64Array(B * I);
  let s = new Float64Array(B * H);
  const gateMean = new Float64Array(D);
  for (let t = 0; t < T; t++) {
    xt.set(x.subarray(t * B * I, (t + 1) * B * I));
    for (let k = 0; k < D; k++) {
      const a = new Float64Array(B * GH);
      const W = rhn ? p[`weight_hh_d${k}`] : p.weight_hh_l0;
      for (let b = 0; b < B; b++) {
        if (rhn) a.set(p[`bias_hh_d${k}`], b * GH);
        else for (let r = 0; r < H; r++) a[b * H + r] = p.bias_ih_l0[r] + p.bias_hh_l0[r];
      }
      if (k === 0) matvecAdd(a, rhn ? p.weight_ih : p.weight_ih_l0, xt, B, GH, I);
      matvecAdd(a, W, s, B, GH, H);
      const h = new Float64Array(B * H);
      const sNew = new Float64Array(B * H);
      sIn[t * D + k] = s;
      hs[t * D + k] = h;
      if (rhn) {
        const g = new Float64Array(B * H);
        ts[t * D + k] = g;
        let sum = 0;
        for (let b = 0; b < B; b++) {
          for (let j = 0; j < H; j++) {
            const i = b * H + j;
            h[i] = Math.tanh(a[b * GH + j]);
            g[i] = sigmoid(a[b * GH + H + j]);
            sNew[i] = h[i] * g[i] + s[i] * (1 - g[i]);
            sum += g[i];
          }
        }
        gateMean[k] += sum / (T * B * H);
      } else {
        for (let i = 0; i < B * H; i++) sNew[i] = h[i] = Math.tanh(a[i]);
      }
      s = sNew;
    }
  }
  const wo = p["out.weight"];
  const pred = new Float64Array(B);
  let loss = 0;
  for (let b = 0; b < B; b++) {
    let v = p["out.bias"][0];
    for (let j = 0; j < H; j++) v += wo[j] * s[b * H + j];
    pred[b] = v;
    loss += (v - y[b]) ** 2 / B;
  }
  if (!withGrad) return { loss, pred, gateMean };

  const grads = zerosLike(p, net.names);
  const gradNorms = new Float64Array(T * D);
  let ds = new Float64Array(B * H);
  for (let b = 0; b < B; b++) {
    const dp = (2 * (pred[b] - y[b])) / B;
    grads["out.bias"][0] += dp;
    for (let j = 0; j < H; j++) {
      grads["out.weight"][j] += dp * s[b * H + j];
      ds[b * H + j] = dp * wo[j];
    }
  }
  const da = new Float64Array(B * GH);
  for (let t = T - 1; t >= 0; t--) {
    xt.set(x.subarray(t * B * I, (t + 1) * B * I));
    for (let k = D - 1; k >= 0; k--) {
      let n2 = 0;
      for (let i = 0; i < B * H; i++) n2 += ds[i] * ds[i];
      gradNorms[t * D + k] = Math.sqrt(n2);
      const sp = sIn[t * D + k];
      const h = hs[t * D + k];
      const dsPrev = new Float64Array(B * H);
      if (rhn) {
        const g = ts[t * D + k];
        for (let b = 0; b < B; b++) {
          for (let j = 0; j < H; j++) {
            const i = b * H + j;
            dsPrev[i] = ds[i] * (1 - g[i]); // the carry path
            da[b * GH + j] = ds[i] * g[i] * (1 - h[i] * h[i]);
            da[b * GH + H + j] = ds[i] * (h[i] - sp[i]) * g[i] * (1 - g[i]);
          }
        }
      } else {
        for (let i = 0; i < B * H; i++) da[i] = ds[i] * (1 - h[i] * h[i]);
      }
      const W = rhn ? `weight_hh_d${k}` : "weight_hh_l0";
      outerAdd(grads[W], da, sp, B, GH, H);
      const bias = rhn ? [grads[`bias_hh_d${k}`]] : [grads.bias_ih_l0, grads.bias_hh_l0];
      for (const db of bias) for (let b = 0; b < B; b++) for (let r = 0; r < GH; r++) db[r] += da[b * GH + r];
      if (k === 0) outerAdd(grads[rhn ? "weight_ih" : "weight_ih_l0"], da, xt, B, GH, I);
      matTvecAdd(dsPrev, p[W], da, B, GH, H);
      ds = dsPrev;
    }
  }
  return { loss, pred, grads, gradNorms, gateMean };
}

/** Global L2 norm of the gradients; scales them to `maxNorm` as clip_grad_norm_ does (0: off). */
export function clipGradNorm(grads, names, maxNorm) {
  let n2 = 0;
  for (const n of names) for (const v of grads[n]) n2 += v * v;
  const norm = Math.sqrt(n2);
  if (maxNorm > 0) {
    const coef = Math.min(maxNorm / (norm + 1e-6), 1);
    for (const n of names) {
      const g = grads[n];
      for (let i = 0; i < g.length; i++) g[i] *= coef;
    }
  }
  return norm;
}

/** Adam's state for a net: torch.optim.Adam's defaults (betas 0.9, 0.999, eps 1e-8). */
export function adamState(net) {
  return { step: 0, m: zerosLike(net.params, net.names), v: zerosLike(net.params, net.names) };
}

/** One Adam step in place, in torch.optim.Adam's order of operations. */
export function adamStep(net, grads, state, lr, beta1 = 0.9, beta2 = 0.999, eps = 1e-8) {
  state.step += 1;
  const bc1 = 1 - beta1 ** state.step;
  const bc2sqrt = Math.sqrt(1 - beta2 ** state.step);
  const stepSize = lr / bc1;
  for (const n of net.names) {
    const p = net.params[n];
    const g = grads[n];
    const m = state.m[n];
    const v = state.v[n];
    for (let i = 0; i < p.length; i++) {
      m[i] += (g[i] - m[i]) * (1 - beta1);
      v[i] = v[i] * beta2 + (1 - beta2) * g[i] * g[i];
      p[i] -= (stepSize * m[i]) / (Math.sqrt(v[i]) / bc2sqrt + eps);
    }
  }
}

/** One training step on `batch`: gradient, clipping, Adam. Returns lossAndGrad's result plus gradNorm. */
export function trainStep(net, state, batch, lr, clip) {
  const out = lossAndGrad(net, batch, true);
  out.gradNorm = clipGradNorm(out.grads, net.names, clip);
  adamStep(net, out.grads, state, lr);
  return out;
}

/** Float64Array from little-endian float64 in base64 (rhn.widgets.playground._b64). */
export function fromBase64(text) {
  const bytes = Uint8Array.from(atob(text), (c) => c.charCodeAt(0));
  const view = new DataView(bytes.buffer);
  const out = new Float64Array(bytes.length / 8);
  for (let i = 0; i < out.length; i++) out[i] = view.getFloat64(8 * i, true);
  return out;
}

/**
 * The RHN and RNN at depth D from the data Python sends (playground_data): the
 * first D micro-layers of the RHN, transform-gate biases bT and other biases 0
 * (as rhn.RHN(transform_bias=bT) initialises them), and the RNN matched to D.
 */
export function initialNets(d, D, bT) {
  const H = d.hidden_size;
  const I = d.input_size;
  const rhnArrays = {
    weight_ih: fromBase64(d.rhn.weight_ih),
    "out.weight": fromBase64(d.rhn["out.weight"]),
    "out.bias": fromBase64(d.rhn["out.bias"]),
  };
  for (let k = 0; k < D; k++) {
    rhnArrays[`weight_hh_d${k}`] = fromBase64(d.rhn[`weight_hh_d${k}`]);
    const bias = new Float64Array(2 * H);
    bias.fill(bT, H, 2 * H);
    rhnArrays[`bias_hh_d${k}`] = bias;
  }
  const r = d.rnn[D - 1];
  const rnnArrays = {};
  for (const n of paramNames("rnn", 1)) rnnArrays[n] = fromBase64(r[n]);
  return {
    rhn: makeNet("rhn", H, I, D, rhnArrays),
    rnn: makeNet("rnn", r.hidden_size, I, 1, rnnArrays),
  };
}

/**
 * The playground's training run: both nets from their initial weights, each
 * with its own Adam state, trained on the same fresh batch at every step.
 * `setting` is { depth, transform_bias, seq_len, lr }; lr may change between steps.
 */
export class Trainer {
  constructor(d, setting) {
    this.d = d;
    this.setting = { ...setting };
    const nets = initialNets(d, setting.depth, setting.transform_bias);
    this.nets = [nets.rhn, nets.rnn];
    this.states = this.nets.map(adamState);
    this.next = rng(d.data_seed);
    this.steps = 0;
    this.losses = [[], []]; // per step, the batch's loss before the update
    this.last = [null, null]; // the last step's lossAndGrad result per net
  }

  step() {
    const { seq_len: T, lr } = this.setting;
    const batch = addingBatch(this.next, T, this.d.batch);
    this.nets.forEach((net, i) => {
      const out = trainStep(net, this.states[i], batch, lr, this.d.clip);
      if (!Number.isFinite(out.loss)) throw new Error(`${net.kind} loss is ${out.loss}`);
      this.losses[i].push(out.loss);
      this.last[i] = out;
    });
    this.steps += 1;
  }

  /** Mean loss of net i over the last n steps (fresh batches: an estimate of its expected loss). */
  recentLoss(i, n) {
    const l = this.losses[i];
    const tail = l.slice(Math.max(0, l.length - n));
    return tail.reduce((a, b) => a + b, 0) / tail.length;
  }
}
