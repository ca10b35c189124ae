// TeX to MathML at build time, for readers without JavaScript
// (_ext/nojs_math.py). Reads {"tex": {...MathJax tex options}, "items":
// [[tex, display], ...]} as JSON on stdin and writes the MathML of each item,
// in order, as a JSON list on stdout. The conversion is MathJax's own (the
// version the site serves), so the MathML says what the typeset page shows.
import { createRequire } from "node:module";
import { readFileSync } from "node:fs";

const require = createRequire(process.cwd() + "/");
const { tex, items } = JSON.parse(readFileSync(0, "utf8"));
const MathJax = await require("mathjax").init({
  loader: { load: ["input/tex"] },
  tex: tex || {},
});
const out = items.map(([source, display]) => {
  try {
    return MathJax.tex2mml(source, { display });
  } catch (error) {
    return null; // left as TeX source (the caller keeps it)
  }
});
process.stdout.write(JSON.stringify(out));
