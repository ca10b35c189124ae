// The anywidget front end of the training playground (rhn/widgets/playground.py):
// trains a coupled-gate RHN and a tanh RNN of matched size on the adding
// problem, in the browser, with playground_numerics.js, and redraws the loss,
// the gradient-norm heatmap and the mean transform gate as it trains.
//
// The training runs in a Web Worker (playground_worker.js, bundled into this
// module as a string by rhn.widgets.build and started from a blob: URL), so
// the page's main thread only draws: scrolling and sliders never wait for a
// training step. Where no worker can be made, the same loop
// (playground_engine.js) runs in the page in chunks of BUDGET_MS. The page
// keeps a copy of the run (steps, losses, the last gradients) from the
// worker's snapshots and redraws at most once per animation frame. For the
// browser tests and the benchmark, the root element carries the state of the
// run as JSON in data-rhn-numbers ({steps, loss_rhn, loss_rnn, ...}: mean
// loss over the last WINDOW steps) and the measured steps per second in
// data-rhn-steps-per-s.
//
// Layout: play, the status line and the loss chart first, then the sliders,
// then the heatmap and the gate bars. The first three stick to the top of
// the screen while the rest of the widget scrolls under them, so the loss
// stays in view while a slider moves, on a phone too.

/* global RHN_PLAYGROUND_WORKER */
import { addStyle, buildControls } from "./controls.js";
import { gateBars, gradientHeatmap, lossPlot, minus, runningMean } from "./playground_draw.js";
import { createEngine } from "./playground_engine.js";

const BUDGET_MS = 12; // in the page (no worker): of the ~16.7 ms of a frame
const WINDOW = 100; // steps averaged in the loss shown and reported
const MAX_STEPS = 20000; // then it pauses by itself, unless data-rhn-stop-at says otherwise
// while it plays, the page redraws at most every DRAW_EVERY_MS: each redraw
// costs the main thread a frame of the whole page (paint, layerize, commit of
// the canvases), tens of ms on a slow phone, whatever little changed. Where a
// frame costs more than DRAW_EVERY_MS / FRAME_SHARE, the redraws space out to
// FRAME_SHARE times the frame's cost (at most MAX_DRAW_EVERY_MS): a slow phone
// gives at most a fifth of its main thread to the playing charts, and a frame
// that takes over 50 ms (a long task) comes at most every 250 ms
const DRAW_EVERY_MS = 100;
const FRAME_SHARE = 5;
const MAX_DRAW_EVERY_MS = 1000;

// the figures' .rhn-widget lays plot and controls side by side; the
// playground stacks its parts in one column instead
const CSS = `
/* its own composited layer, painted apart from the page: a redraw of the
   canvases while it plays repaints the playground, not the chapter */
.rhn-widget.rhn-playground-root { display: block; max-width: 640px; contain: paint; will-change: transform; }
.rhn-playground-root .rhn-controls { max-width: 520px; }
.rhn-playground-buttons { display: flex; gap: 0.6em; flex-wrap: wrap; align-items: center; margin: 0.4em 0; }
/* two lines, whatever they say: a status that grew would move the page below
   it, and laying out a long chapter again takes a phone tens of ms */
.rhn-playground-status { font-variant-numeric: tabular-nums; font-size: 0.9em; line-height: 1.35; height: 2.7em; margin: 0.3em 0; overflow: hidden; contain: strict; }
.rhn-playground-root canvas { display: block; margin: 0.3em 0; }
.rhn-playground-root .rhn-control { scroll-margin-top: calc(var(--rhn-sticky-top, 0px) + var(--rhn-head-height, 0px) + 8px); }
.rhn-playground-head { position: sticky; top: var(--rhn-sticky-top, 0px); z-index: 2; background: #fff; padding-bottom: 0.2em; box-shadow: 0 6px 6px -6px rgba(0, 0, 0, 0.35); }
`;

/**
 * A worker that runs playground_engine.js, made from the bundled source; or,
 * where that fails (no Worker, a page that forbids blob: workers), an object
 * with the same postMessage / onmessage that runs the loop in the page.
 */
function startWorker(inPageOnly = false) {
  if (!inPageOnly && typeof RHN_PLAYGROUND_WORKER === "string" && typeof Worker === "function") {
    try {
      const url = URL.createObjectURL(new Blob([RHN_PLAYGROUND_WORKER], { type: "text/javascript" }));
      const worker = new Worker(url);
      // the worker has read its source once it answers; the URL can go
      worker.addEventListener("message", () => URL.revokeObjectURL(url), { once: true });
      return { worker, inPage: false };
    } catch (err) {
      // fall through to the page's own loop
    }
  }
  const local = { onmessage: null, terminate() {} };
  const handle = createEngine((snapshot) => {
    // asynchronous like a worker's messages
    queueMicrotask(() => local.onmessage && local.onmessage({ data: snapshot }));
  }, BUDGET_MS);
  local.postMessage = (msg) => handle(structuredClone(msg));
  return { worker: local, inPage: true };
}

function setting(v) {
  return { depth: v.depth, transform_bias: v.transform_bias, seq_len: v.seq_len, lr: 10 ** v.log_lr, log_lr: v.log_lr };
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

  const head = document.createElement("div");
  head.className = "rhn-playground-head";
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
  const drawLoss = lossPlot(head);
  const drawHeat = gradientHeatmap(plots);
  const drawGates = gateBars(plots);

  // the run as the page knows it, from the worker's snapshots: gen numbers
  // the runs, so that a snapshot of a run already reset is dropped
  let run = null;
  let gen = 0;
  let playing = false;
  // since play was last pressed: its time and the step count then
  let timed = { start: null, steps: 0 };
  let rate = 0;
  let pending = false;
  let closed = false;

  let engine = null;
  let answered = false;
  const send = (msg) => engine.worker.postMessage(msg);
  const onSnapshot = (e) => {
    answered = true;
    const s = e.data;
    if (s.gen !== gen || closed) return;
    if (s.from !== run.curves[0].length) return; // cannot happen: messages keep their order
    s.losses.forEach((l, i) => run.curves[i].add(l));
    run.steps = s.steps;
    if (s.last !== run.last) run.version += 1;
    run.last = s.last;
    run.error = s.error;
    run.log_lr = s.log_lr;
    if (playing && !s.playing) setPlaying(false, false);
    if (timed.start !== null) {
      const ms = performance.now() - timed.start;
      // wall time since play was pressed, drawing included: the rate a reader sees
      rate = ms > 0 ? (1000 * (run.steps - timed.steps)) / ms : 0;
    }
    schedule();
  };
  const connect = () => {
    engine = startWorker();
    engine.worker.onmessage = onSnapshot;
    if (!engine.inPage) {
      // a worker that cannot start (a page that forbids blob: workers) says
      // so with an error event: train in the page instead, from the start
      engine.worker.onerror = (e) => {
        if (answered) return;
        e.preventDefault?.();
        engine.worker.terminate();
        engine = startWorker(true);
        engine.worker.onmessage = onSnapshot;
        send({ type: "init", d });
        restart();
      };
    }
    send({ type: "init", d });
  };

  const restart = () => {
    gen += 1;
    const D = values.depth;
    // curves: the running mean of each net's loss, kept as the steps come;
    // version: counts the snapshots of the last gradients (heatmap, gates)
    run = {
      steps: 0, curves: [runningMean(WINDOW), runningMean(WINDOW)], last: [null, null], version: 0,
      error: null, log_lr: values.log_lr, H: d.rnn[D - 1].hidden_size,
    };
    drawn = { version: -1, key: "" };
    // a run reset while playing is timed from now
    timed = { start: playing ? performance.now() : null, steps: 0 };
    rate = 0;
    send({ type: "reset", gen, setting: setting(values) });
    if (playing) send({ type: "play", stopAt: stopAt() });
  };
  // data-rhn-stop-at (set by the browser tests) pauses at an exact step
  const stopAt = () => Number(root.dataset.rhnStopAt || MAX_STEPS);

  // the mean loss of the last WINDOW steps
  const recentLoss = (i) => run.curves[i].mean[run.curves[i].length - 1];
  // what the heatmap and the gates were last drawn from: they are drawn
  // again only when a new snapshot or another setting changes them
  let drawn = { version: -1, key: "" };
  let lastDraw = -Infinity;

  const draw = () => {
    const { depth: D, seq_len: T } = values;
    const [rhnOut, rnnOut] = run.last;
    const lossRhn = run.steps ? recentLoss(0) : null;
    const lossRnn = run.steps ? recentLoss(1) : null;
    drawLoss(run.curves, d.baseline, [
      "memoryless baseline 1/6",
      `RHN (D = ${D}, H = ${d.hidden_size}, b_T = ${minus(values.transform_bias.toFixed(2))})`,
      `tanh RNN (H = ${run.H}, same size)`,
    ], WINDOW);
    const key = `${T} ${D} ${drawHeat.canvas.shown} ${drawGates.canvas.shown}`;
    if (drawn.version !== run.version || drawn.key !== key) {
      drawHeat(rhnOut && rhnOut.gradNorms, rnnOut && rnnOut.gradNorms, T, D);
      drawGates(rhnOut ? Array.from(rhnOut.gateMean) : new Array(D).fill(0));
      drawn = { version: run.version, key };
    }
    const f = (v) => (v === null ? "–" : v.toFixed(4));
    const said = run.error
      ? `stopped: ${run.error}; lower the learning rate and reset`
      : // separators, not runs of spaces (HTML shows a run as one space)
        `step ${run.steps} · loss: RHN ${f(lossRhn)}, RNN ${f(lossRnn)}, baseline ${d.baseline.toFixed(4)}` +
        (rate ? ` · ${rate.toFixed(0)} steps/s` : "");
    if (status.textContent !== said) status.textContent = said;
    root.dataset.rhnStepsPerS = rate.toFixed(2);
    root.dataset.rhnWorker = String(!engine.inPage);
    root.dataset.rhnNumbers = JSON.stringify({
      // the learning rate the run trains with (the worker's word for it)
      values: { ...values, log_lr: run.log_lr },
      steps: run.steps,
      playing,
      error: run.error,
      window: WINDOW,
      loss_rhn: lossRhn,
      loss_rnn: lossRnn,
      baseline: d.baseline,
      gate_mean: rhnOut ? Array.from(rhnOut.gateMean) : null,
      grad_norms_rhn: rhnOut ? Array.from(rhnOut.gradNorms) : null,
      grad_norms_rnn: rnnOut ? Array.from(rnnOut.gradNorms) : null,
    });
  };

  // the main thread's cost of a frame: from its animation-frame callback to
  // the first task after it, which runs once the frame's style, layout, paint
  // and commit are done; smoothed over the last few frames
  let frameMs = 0;
  let drawEvery = DRAW_EVERY_MS;
  const timer = new MessageChannel();
  let frameStart = null;
  timer.port1.onmessage = () => {
    if (frameStart === null) return;
    const ms = performance.now() - frameStart;
    frameStart = null;
    frameMs = frameMs ? 0.7 * frameMs + 0.3 * ms : ms;
    drawEvery = Math.min(MAX_DRAW_EVERY_MS, Math.max(DRAW_EVERY_MS, FRAME_SHARE * frameMs));
    root.dataset.rhnDrawEveryMs = drawEvery.toFixed(0);
  };
  const frame = () => {
    pending = false;
    lastDraw = performance.now();
    if (closed) return;
    draw();
    if (playing && frameStart === null) {
      frameStart = lastDraw;
      timer.port2.postMessage(null);
    }
  };
  // at most one redraw per animation frame, and while it plays at most one
  // every drawEvery ms (a press or a slider is drawn at the next frame)
  const schedule = (soon = false) => {
    if (pending) return;
    pending = true;
    const wait = playing && !soon ? lastDraw + drawEvery - performance.now() : 0;
    if (wait > 0) setTimeout(() => requestAnimationFrame(frame), wait);
    else requestAnimationFrame(frame);
  };

  function setPlaying(on, tell = true) {
    playing = on;
    play.textContent = on ? "❚❚ pause" : "▶ play";
    play.setAttribute("aria-pressed", String(on));
    if (on) {
      timed = { start: performance.now(), steps: run.steps };
      rate = 0;
    }
    if (tell) send(on ? { type: "play", stopAt: stopAt() } : { type: "pause" });
  }

  play.addEventListener("click", () => {
    setPlaying(!playing);
    draw();
  });
  stepButton.addEventListener("click", () => {
    if (playing) setPlaying(false);
    send({ type: "step" });
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
      send({ type: "lr", lr: 10 ** values.log_lr, log_lr: values.log_lr });
    }
    schedule(true);
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

  connect();
  restart();
  // play, the status and the loss first, sticking to the top of the screen
  // while the sliders under them scroll past; the heatmap and the gates last,
  // outside the part the head sticks in, so that it never covers them
  head.prepend(buttons, status);
  const top = document.createElement("div");
  top.className = "rhn-playground-top";
  top.append(head, controls);
  root.append(top, plots);
  el.appendChild(root);
  // a slider that takes the focus scrolls to below the sticky part, not under
  // it; each canvas gets a backing store of the width it is shown at. Both
  // from the sizes a ResizeObserver hands over, without reading the layout
  const canvases = [drawLoss.canvas, drawHeat.canvas, drawGates.canvas];
  const resized = typeof ResizeObserver === "function"
    ? new ResizeObserver((entries) => {
        let changed = false;
        for (const e of entries) {
          if (e.target === head) {
            const box = e.borderBoxSize && e.borderBoxSize[0];
            const h = box ? box.blockSize : e.contentRect.height;
            root.style.setProperty("--rhn-head-height", `${h}px`);
          }
          const cv = canvases.find((c) => c.c === e.target);
          if (cv && cv.fit(e.contentRect.width)) changed = true;
        }
        if (changed) {
          drawn = { version: -1, key: "" };
          schedule(true);
        }
      })
    : null;
  if (resized) {
    resized.observe(head);
    for (const cv of canvases) resized.observe(cv.c);
  } else {
    root.style.setProperty("--rhn-head-height", `${head.offsetHeight}px`);
  }
  draw();
  return () => {
    closed = true;
    timer.port1.close();
    if (resized) resized.disconnect();
    playing = false;
    engine.worker.terminate();
    model.off("change:values", onModel);
  };
}

export default { render };
