// Runs the widgets' numerics (rhn/widgets/js/numerics.js) under node for
// tests/test_widgets.py: reads {"data", "settings": [values, ...]} as JSON on
// stdin, writes one result per setting as JSON on stdout.
import { readFileSync } from "node:fs";
import {
  rhnExampleJacobian,
  rhnGradientNorms,
  rnnJacobian,
  spectrum,
} from "../rhn/widgets/js/numerics.js";

const { data: d, settings } = JSON.parse(readFileSync(0, "utf8"));
const out = settings.map((v) => {
  if (d.kind === "gradient_flow") {
    return { gradient_norms: Array.from(rhnGradientNorms(d, v.transform_bias)) };
  }
  const J = d.kind === "rnn_discs"
    ? rnnJacobian(d, v.scale, v.init)
    : rhnExampleJacobian(d, v.transform_bias, v.scale, v.depth, v.coupled);
  const sp = spectrum(J, d.hidden_size);
  return {
    jacobian: Array.from(J),
    spectral_radius: sp.rho,
    eigenvalues_re: Array.from(sp.re),
    eigenvalues_im: Array.from(sp.im),
    centres: Array.from(sp.centres),
    radii: Array.from(sp.radii),
  };
});
process.stdout.write(JSON.stringify(out));
