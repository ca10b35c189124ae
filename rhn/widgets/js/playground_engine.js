// The playground's training loop, without a DOM: it lives in a Web Worker
// (playground_worker.js), so that training never holds up the page's main
// thread (scrolling, sliders, drawing), or, where a worker cannot be made,
// in the page itself with the same messages (playground.js).
//
// Messages in (each answered with a snapshot):
//   {type: "init", d}                  the data of rhn.widgets.playground_data
//   {type: "reset", gen, setting}      new nets ({depth, transform_bias,
//                                      seq_len, lr, log_lr}); keeps playing
//   {type: "play", stopAt} / {type: "pause"}
//   {type: "step"}                     one step, then paused
//   {type: "lr", lr, log_lr}           a new learning rate, no restart
// Snapshots out: {gen, steps, from, losses: [rhn, rnn] (Float64Arrays: the losses of steps
// from + 1 .. steps, those not sent yet), last: [{gradNorms, gateMean} | null
// per net], playing, error, log_lr}. Messages are handled in order, so a
// snapshot reflects every message sent before it.

import { Trainer } from "./playground_numerics.js";

/** The message handler of a training loop that trains in chunks of about
 * `budgetMs` and calls `post(snapshot, buffers)` after each chunk and each
 * message (`buffers`: the snapshot's array buffers, which may be transferred). */
export function createEngine(post, budgetMs) {
  let d = null;
  let trainer = null;
  let gen = 0;
  let logLr = null;
  let playing = false;
  let stopAt = Infinity;
  let error = null;
  let sent = 0; // steps whose losses have been posted
  let scheduled = false;
  // a macrotask queue without setTimeout's 4 ms clamp: other messages
  // (pause, reset) are handled between two chunks
  const channel = new MessageChannel();

  // the arrays of a snapshot are fresh copies, so that a worker can hand
  // their memory over (transfer) instead of having them copied again
  const snapshot = () => {
    const from = sent;
    sent = trainer.steps;
    const last = trainer.last.map((out) =>
      out ? { gradNorms: Float64Array.from(out.gradNorms), gateMean: Float64Array.from(out.gateMean) } : null,
    );
    const losses = trainer.losses.map((l) => Float64Array.from(l.slice(from)));
    const buffers = [...losses, ...last.flatMap((o) => (o ? [o.gradNorms, o.gateMean] : []))].map((a) => a.buffer);
    post({ gen, steps: trainer.steps, from, losses, last, playing, error, log_lr: logLr }, buffers);
  };

  const trainOne = () => {
    try {
      trainer.step();
      return true;
    } catch (err) {
      error = String(err.message || err);
      playing = false;
      return false;
    }
  };

  const run = () => {
    scheduled = false;
    if (!playing || !trainer) return;
    const t0 = performance.now();
    while (playing && trainer.steps < stopAt && trainOne() && performance.now() - t0 < budgetMs);
    if (trainer.steps >= stopAt) playing = false;
    snapshot();
    schedule();
  };
  const schedule = () => {
    if (playing && !scheduled) {
      scheduled = true;
      channel.port2.postMessage(null);
    }
  };
  channel.port1.onmessage = run;

  return (msg) => {
    if (msg.type === "init") {
      d = msg.d;
      return;
    }
    if (msg.type === "reset") {
      gen = msg.gen;
      trainer = new Trainer(d, msg.setting);
      logLr = msg.setting.log_lr;
      error = null;
      sent = 0;
    } else if (!trainer) {
      return;
    } else if (msg.type === "play") {
      playing = error === null;
      stopAt = msg.stopAt;
    } else if (msg.type === "pause") {
      playing = false;
    } else if (msg.type === "step") {
      playing = false;
      if (error === null) trainOne();
    } else if (msg.type === "lr") {
      trainer.setting.lr = msg.lr;
      logLr = msg.log_lr;
    }
    snapshot();
    schedule();
  };
}
