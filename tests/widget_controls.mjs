// Builds the widgets' controls (rhn/widgets/js/controls.js) under node, on a
// small stand-in for the DOM, for tests/test_widgets.py: reads {"controls",
// "values", "moves", "set"} as JSON on stdin, moves each slider of "moves" as a
// reader would (its value, then an input event), then sets "set" as Python
// would, and writes what each slider shows and tells a screen reader after
// each step as JSON on stdout.
import { readFileSync } from "node:fs";

class Element {
  constructor(tag) {
    this.tagName = tag.toUpperCase();
    this.children = [];
    this.attributes = {};
    this.listeners = {};
    this.dataset = {};
    this.style = {};
    this.text = "";
  }
  appendChild(child) {
    this.children.push(child);
    return child;
  }
  append(...children) {
    for (const child of children) this.appendChild(child);
  }
  setAttribute(name, value) {
    this.attributes[name] = String(value);
  }
  getAttribute(name) {
    return name in this.attributes ? this.attributes[name] : null;
  }
  addEventListener(type, callback) {
    (this.listeners[type] ||= []).push(callback);
  }
  dispatchEvent(event) {
    for (const callback of this.listeners[event.type] || []) callback(event);
  }
  set textContent(value) {
    this.text = String(value);
    this.children = [];
  }
  get textContent() {
    return this.text + this.children.map((c) => c.textContent).join("");
  }
  *walk() {
    yield this;
    for (const child of this.children) if (child instanceof Element) yield* child.walk();
  }
}

globalThis.document = {
  createElement: (tag) => new Element(tag),
  createTextNode: (text) => ({ textContent: String(text) }),
};

const { buildControls } = await import("../rhn/widgets/js/controls.js");
const { controls, values, moves, set } = JSON.parse(readFileSync(0, "utf8"));
const parent = new Element("div");
const setControls = buildControls(parent, controls, values, () => {});
const sliders = {};
for (const el of parent.walk()) {
  if (el.tagName === "INPUT") {
    const output = parent.children
      .find((row) => row.dataset.name === el.name)
      .children.find((c) => c.tagName === "OUTPUT");
    sliders[el.name] = { input: el, output };
  }
}
const state = () =>
  Object.fromEntries(
    Object.entries(sliders).map(([name, { input, output }]) => [
      name,
      {
        value: String(input.value),
        shown: output.textContent,
        valuetext: input.getAttribute("aria-valuetext"),
      },
    ]),
  );
const steps = [{ step: "built", sliders: state() }];
for (const [name, value] of Object.entries(moves)) {
  sliders[name].input.value = String(value);
  sliders[name].input.dispatchEvent({ type: "input" });
  steps.push({ step: `moved ${name}`, sliders: state() });
}
setControls(set);
steps.push({ step: "set", sliders: state() });
process.stdout.write(JSON.stringify(steps));
