// Runs the playground's numerics (rhn/widgets/js/playground_numerics.js) under
// node for tests/test_playground.py: reads one request as JSON on stdin, writes
// the answer as JSON on stdout.
//   {op: "init", data, depth, transform_bias}: both nets' initial parameters
//   {op: "train", data, depth, transform_bias, batches, lr, clip}: per batch the
//       loss, gradients (before clipping), gradient norms over (t, k), gate means,
//       the total gradient norm; then the parameters after the Adam steps
//   {op: "batches", seed, T, B, n}: n batches from the browser's generator
//   {op: "runs", data, settings: [{depth, transform_bias, seq_len, lr, steps}], window}:
//       trains the playground (Trainer) and reports each net's mean recent loss
import { readFileSync } from "node:fs";
import {
  Trainer,
  addingBatch,
  adamState,
  clipGradNorm,
  adamStep,
  initialNets,
  lossAndGrad,
  rng,
} from "../rhn/widgets/js/playground_numerics.js";

const req = JSON.parse(readFileSync(0, "utf8"));
const plain = (net) => Object.fromEntries(net.names.map((n) => [n, Array.from(net.params[n])]));
const toBatch = (b) => ({ T: b.T, B: b.B, x: Float64Array.from(b.x), y: Float64Array.from(b.y) });
let out;
if (req.op === "init") {
  const nets = initialNets(req.data, req.depth, req.transform_bias);
  out = { rhn: plain(nets.rhn), rnn: plain(nets.rnn) };
} else if (req.op === "train") {
  const nets = initialNets(req.data, req.depth, req.transform_bias);
  out = {};
  for (const kind of ["rhn", "rnn"]) {
    const net = nets[kind];
    const state = adamState(net);
    const steps = req.batches.map((b) => {
      const r = lossAndGrad(net, toBatch(b));
      const grads = Object.fromEntries(net.names.map((n) => [n, Array.from(r.grads[n])]));
      const norm = clipGradNorm(r.grads, net.names, req.clip);
      adamStep(net, r.grads, state, req.lr);
      return {
        loss: r.loss,
        grads,
        grad_norm: norm,
        grad_norms: Array.from(r.gradNorms),
        gate_mean: Array.from(r.gateMean),
      };
    });
    out[kind] = { steps, params: plain(net) };
  }
} else if (req.op === "batches") {
  const next = rng(req.seed);
  out = Array.from({ length: req.n }, () => {
    const b = addingBatch(next, req.T, req.B);
    return { x: Array.from(b.x), y: Array.from(b.y) };
  });
} else if (req.op === "runs") {
  out = req.settings.map((s) => {
    const tr = new Trainer({ ...req.data, data_seed: s.data_seed ?? req.data.data_seed }, s);
    const t0 = performance.now();
    const trace = [];
    for (let i = 1; i <= s.steps; i++) {
      tr.step();
      if (req.every && i % req.every === 0) {
        // the gradient norm after micro-layer 0 of step 0 over the one after
        // micro-layer 0 of step T - 1, in the last batch: how much of it
        // reaches the start of the sequence
        const reach = tr.last.map((o, j) => {
          const g = o.gradNorms;
          const D = tr.nets[j].D;
          return g[0] / g[g.length - 1 - (D - 1)];
        });
        trace.push([i, tr.recentLoss(0, req.window), tr.recentLoss(1, req.window), ...reach]);
      }
    }
    const ms = performance.now() - t0;
    return { ...s, rhn: tr.recentLoss(0, req.window), rnn: tr.recentLoss(1, req.window), ms, trace };
  });
} else {
  throw new Error(`unknown op ${req.op}`);
}
process.stdout.write(JSON.stringify(out));
