// The playground's Web Worker: the training loop of playground_engine.js.
// rhn.widgets.build bundles this file on its own (an IIFE) and puts the
// bundle into playground.js as a string, from which the page makes the
// worker through a blob: URL: nothing to fetch, so it works offline, from
// file:// and inside a notebook.

import { createEngine } from "./playground_engine.js";

// a chunk of 25 ms between two snapshots: about 40 redraws a second
const handle = createEngine((snapshot) => self.postMessage(snapshot), 25);
self.onmessage = (e) => handle(e.data);
