// The anywidget front end of the training playground (rhn/widgets/playground.py):
// trains a coupled-gate RHN and a tanh RNN of matched size on the adding
// problem, in the browser, with playground_numerics.js, and redraws the loss,
// the gradient-norm heatmap and the mean transform gate as it trains.
//
// The training runs in chunks inside requestAnimationFrame: each frame trains
// for at most BUDGET_MS, then redraws once, so the page stays responsive
// (scrolling, sliders) while it trains. For the browser tests and the
// benchmark, the root element carries the state of the run as JSON in
// data-rhn-numbers ({steps, loss_rhn, loss_rnn, ...}: mean loss over the last
// WINDOW steps) and the measured steps per second in data-rhn-steps-per-s.

import { addStyle, buildControls } from "./controls.js";
import { gateBars, gradientHeatmap, lossPlot } from "./playground_draw.js";
import { Trainer } from "./playground_numerics.js";

const BUDGET_MS = 12; // of the ~16.7 ms of a frame, the rest for drawing
const WINDOW = 100; // steps averaged in the loss shown and reported
const MAX_STEPS = 20000; // then it pauses by itself, unless data-rhn-stop-at says otherwise

// the figures' .rhn-widget lays plot and controls side by side; the
// playground stacks its parts in one column instead
const CSS = `
.rhn-widget.rhn-playground-root { display: block; max-width: 640px; }
.rhn-playground-root .rhn-controls { max-width: 520px; }
.rhn-playground-buttons { display: flex; gap: 0.6em; flex-wrap: wrap; align-items: center; margin: 0.4em 0; }
.rhn-playground-status { font-variant-numeric: tabular-nums; min-height: 1.5em; margin: 0.3em 0; }
.rhn-playground-root canvas { display: block; margin: 0.3em 0; }
`;

function setting(v) {
  return { depth: v.depth, transform_bias: v.transform_bias, seq_len: v.seq_len, lr: 10 ** v.log_lr };
}

function render({ model, el }) {
  const d = model.get("data");
  const root = document.createElement("div");
  root.className = "rhn-widget rhn-playground-root";
  root.dataset.kind = "playground";
  addStyle(root);
  const style = document.createElement("style");
  style.textContent = CSS;
  root.appendChild(style);
  let values = { ...model.get("values") };

  const buttons = document.createElement("div");
  buttons.className = "rhn-playground-buttons";
  const button = (name, text) => {
    const b = document.createElement("button");
    b.type = "button";
    b.name = name;
    b.textContent = text;
    buttons.appendChild(b);
    return b;
  };
  const play = button("play", "▶ play");
  const stepButton = button("step", "step");
  const reset = button("reset", "reset");
  const controls = document.createElement("div");
  controls.className = "rhn-controls";
  const status = document.createElement("div");
  status.className = "rhn-playground-status";
  status.setAttribute("aria-live", "off");
  const plots = document.createElement("div");
  const drawLoss = lossPlot(plots);
  const drawHeat = gradientHeatmap(plots);
  const drawGates = gateBars(plots);

  let trainer = null;
  let playing = false;
  let error = null;
  // since play was last pressed: its time, the step count then, the time
  // passed and the steps trained since
  let timed = { start: null, steps: 0, ms: 0, done: 0 };
  let pending = false;

  const restart = () => {
    trainer = new Trainer(d, setting(values));
    error = null;
    timed = { start: null, steps: 0, ms: 0, done: 0 };
  };

  const trainOne = () => {
    try {
      trainer.step();
    } catch (err) {
      error = String(err.message || err);
      setPlaying(false);
    }
  };

  const draw = () => {
    const { depth: D, seq_len: T } = trainer.setting;
    const [rhnOut, rnnOut] = trainer.last;
    const lossRhn = trainer.steps ? trainer.recentLoss(0, WINDOW) : null;
    const lossRnn = trainer.steps ? trainer.recentLoss(1, WINDOW) : null;
    drawLoss(trainer.losses, d.baseline, [
      "memoryless baseline 1/6",
      `RHN (D = ${D}, H = ${d.hidden_size}, b_T = ${values.transform_bias.toFixed(2)})`,
      `tanh RNN (H = ${trainer.nets[1].H}, same size)`,
    ], WINDOW);
    drawHeat(rhnOut && rhnOut.gradNorms, rnnOut && rnnOut.gradNorms, T, D);
    drawGates(rhnOut ? Array.from(rhnOut.gateMean) : new Array(D).fill(0));
    const rate = timed.ms > 0 ? (1000 * timed.done) / timed.ms : 0;
    const f = (v) => (v === null ? "–" : v.toFixed(4));
    status.textContent = error
      ? `stopped: ${error}; lower the learning rate and reset`
      : `step ${trainer.steps}   loss RHN ${f(lossRhn)}   RNN ${f(lossRnn)}   (baseline ${d.baseline.toFixed(4)})` +
        (rate ? `   ${rate.toFixed(0)} steps/s` : "");
    root.dataset.rhnStepsPerS = rate.toFixed(2);
    root.dataset.rhnNumbers = JSON.stringify({
      values,
      steps: trainer.steps,
      playing,
      error,
      window: WINDOW,
      loss_rhn: lossRhn,
      loss_rnn: lossRnn,
      baseline: d.baseline,
      gate_mean: rhnOut ? Array.from(rhnOut.gateMean) : null,
      grad_norms_rhn: rhnOut ? Array.from(rhnOut.gradNorms) : null,
      grad_norms_rnn: rnnOut ? Array.from(rnnOut.gradNorms) : null,
    });
  };

  const frame = () => {
    pending = false;
    if (playing) {
      const t0 = performance.now();
      if (timed.start === null) timed = { start: t0, steps: trainer.steps, ms: 0, done: 0 };
      // data-rhn-stop-at (set by the browser tests) pauses at an exact step
      const stopAt = Number(root.dataset.rhnStopAt || MAX_STEPS);
      do trainOne(); while (playing && trainer.steps < stopAt && performance.now() - t0 < BUDGET_MS);
      if (trainer.steps >= stopAt) setPlaying(false);
      // wall time since play was pressed, drawing included: the rate a reader sees
      timed.ms = performance.now() - timed.start;
      timed.done = trainer.steps - timed.steps;
    }
    draw();
    if (playing) schedule();
  };
  const schedule = () => {
    if (!pending) {
      pending = true;
      requestAnimationFrame(frame);
    }
  };

  function setPlaying(on) {
    playing = on;
    play.textContent = on ? "❚❚ pause" : "▶ play";
    play.setAttribute("aria-pressed", String(on));
    if (on) {
      timed = { start: null, steps: 0, ms: 0, done: 0 };
      schedule();
    }
  }

  play.addEventListener("click", () => {
    setPlaying(!playing);
    draw();
  });
  stepButton.addEventListener("click", () => {
    setPlaying(false);
    trainOne();
    schedule();
  });
  reset.addEventListener("click", () => {
    restart();
    draw(); // at once: the numbers on the page never lag a press
  });

  const apply = (next) => {
    const old = values;
    values = { ...next };
    if (old.depth !== values.depth || old.transform_bias !== values.transform_bias || old.seq_len !== values.seq_len) {
      restart();
    } else {
      trainer.setting.lr = 10 ** values.log_lr;
    }
    schedule();
  };
  const setControls = buildControls(controls, d.controls, values, (name, value) => {
    apply({ ...values, [name]: value });
    model.set("values", values);
    try {
      model.save_changes();
    } catch (err) {
      // a static page has no kernel to tell
    }
  });
  const onModel = () => {
    const now = model.get("values");
    if (JSON.stringify(now) === JSON.stringify(values)) return; // our own echo
    setControls(now);
    apply(now);
  };
  model.on("change:values", onModel);

  restart();
  // play and the plots first: on a phone the sliders (about 370 px) would
  // push the plots below the screen; they follow the plots
  root.append(buttons, status, plots, controls);
  el.appendChild(root);
  draw();
  return () => {
    playing = false;
    model.off("change:values", onModel);
  };
}

export default { render };
