// The playground's Web Worker: the training loop of playground_engine.js.
// rhn.widgets.build bundles this file on its own (an IIFE) and puts the
// bundle into playground.js as a string, from which the page makes the
// worker through a blob: URL: nothing to fetch, so it works offline, from
// file:// and inside a notebook.

import { createEngine } from "./playground_engine.js";

// a chunk of 50 ms between two snapshots (the page redraws at most every
// 100 ms while it plays); the snapshot's arrays are transferred, not copied
const handle = createEngine((snapshot, buffers) => self.postMessage(snapshot, buffers), 50);
self.onmessage = (e) => handle(e.data);
