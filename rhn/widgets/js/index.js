// The anywidget front end of rhn.widgets: one ES module for the three
// interactive figures of the book. Python (rhn/widgets/interactive.py) sends the
// model's numbers (`data`) and the slider setting (`values`); everything
// drawn is computed here, in the browser, by numerics.js.
//
// For the browser tests, the root element carries the numbers behind the
// current drawing as JSON in data-rhn-numbers (full float64 precision) and
// the time of the last redraw in data-rhn-redraw-ms.

import { addStyle, buildControls, fmt } from "./controls.js";
import { logCurvesPlot, spectrumPlot } from "./draw.js";
import { rhnExampleJacobian, rhnGradientNorms, rnnJacobian, spectrum } from "./numerics.js";


function spectrumNumbers(sp) {
  return {
    spectral_radius: sp.rho,
    centres: Array.from(sp.centres),
    radii: Array.from(sp.radii),
    eigenvalues_re: Array.from(sp.re),
    eigenvalues_im: Array.from(sp.im),
  };
}

const FIGURES = {
  // chapter 4: tanh RNN, recurrent matrix scale * R0 or scale * I
  rnn_discs(d, el) {
    const update = spectrumPlot(el, { view: d.view, n: d.hidden_size });
    return (v) => {
      const J = rnnJacobian(d, v.scale, v.init);
      const sp = spectrum(J, d.hidden_size);
      update(sp, `tanh RNN, ${v.init} R, g = ${fmt(v.scale)}  (H = ${d.hidden_size})`);
      return spectrumNumbers(sp);
    };
  },
  // chapter 7: one RHN step
  rhn_jacobian(d, el) {
    const update = spectrumPlot(el, { view: d.view, n: d.hidden_size });
    return (v) => {
      const J = rhnExampleJacobian(d, v.transform_bias, v.scale, v.depth, v.coupled);
      const sp = spectrum(J, d.hidden_size);
      const kind = v.coupled ? "coupled" : "uncoupled";
      const g = v.scale * d.g_package; // the weights' scale g, as the slider reads it
      update(sp, `RHN, D = ${v.depth}, b_T = ${fmt(v.transform_bias)}, g = ${fmt(g)}, ${kind}`);
      return spectrumNumbers(sp);
    };
  },
  // chapter 9: gradient norm versus lag; the RNN and LSTM curves come from Python
  gradient_flow(d, el) {
    const update = logCurvesPlot(el, {
      names: ["rnn", "lstm", "rhn"],
      x0: 1,
      xmax: d.steps,
      ylim: d.ylim,
      xlabel: "lag n (steps back from the last step)",
      ylabel: "gradient norm ‖∂L/∂s‖ at lag n",
      title: `Gradient norm versus lag at initialisation (H = ${d.hidden_size})`,
    });
    return (v) => {
      const rhn = rhnGradientNorms(d, v.transform_bias);
      update(
        { rnn: d.baselines.rnn, lstm: d.baselines.lstm, rhn },
        { rnn: "RNN", lstm: "LSTM", rhn: `RHN (D = ${d.depth}, b_T = ${fmt(v.transform_bias)})` },
      );
      return { gradient_norms: Array.from(rhn) };
    };
  },
};

function render({ model, el }) {
  const d = model.get("data");
  const root = document.createElement("div");
  root.className = "rhn-widget rhn-figure";
  root.dataset.kind = d.kind;
  addStyle(root);
  let values = { ...model.get("values") };
  const controls = document.createElement("div");
  controls.className = "rhn-controls";
  const plot = document.createElement("div");
  plot.className = "rhn-plot-area";
  const numbers = (FIGURES[d.kind] || (() => { throw new Error(`unknown figure ${d.kind}`); }))(d, plot);

  // at most one redraw, and one message to the kernel, per animation frame,
  // however fast the slider moves
  let pending = false;
  let unsent = false;
  const redraw = () => {
    pending = false;
    const t0 = performance.now();
    const out = numbers(values);
    const ms = performance.now() - t0;
    root.dataset.rhnNumbers = JSON.stringify({ values, ...out });
    root.dataset.rhnRedrawMs = ms.toFixed(3);
    root.dataset.rhnRedraws = String(Number(root.dataset.rhnRedraws || 0) + 1);
    if (unsent) {
      unsent = false;
      model.set("values", values);
      try {
        model.save_changes();
      } catch (err) {
        // a static page has no kernel to tell
      }
    }
  };
  const schedule = () => {
    if (!pending) {
      pending = true;
      requestAnimationFrame(redraw);
    }
  };

  const setControls = buildControls(controls, d.controls, values, (name, value) => {
    values = { ...values, [name]: value };
    unsent = true;
    schedule();
  });
  const onModel = () => {
    const now = model.get("values");
    if (JSON.stringify(now) === JSON.stringify(values)) return; // our own echo
    values = { ...now };
    setControls(values);
    schedule();
  };
  model.on("change:values", onModel);
  root.append(plot, controls);
  el.appendChild(root);
  redraw(); // the first drawing at once, so the page never shows an empty frame
  return () => model.off("change:values", onModel);
}

export default { render };
