// A passage drawn as Markdown with the runs an answer quotes marked. The server gives each
// citation's marks as [start, end) offsets into its text, in code points; they are carried
// through the Markdown as two private-use characters, then turned into <mark>s, so that the
// text itself is only ever set as text.

import { markdown } from "./markdown.js";

const OPEN = "\uE000", CLOSE = "\uE001";
const SENTINELS = /[\uE000\uE001]/g;

export function marked(text, marks = []) {
  const chars = Array.from(text.replace(SENTINELS, "\uFFFD"));  // the document's own stay text
  const opens = new Set(), closes = new Set();
  for (const [start, end] of marks || []) {
    if (Number.isInteger(start) && Number.isInteger(end) && start >= 0 && start < end && end <= chars.length) {
      opens.add(start); closes.add(end);
    }
  }
  let carried = "";
  chars.forEach((char, i) => { carried += (closes.has(i) ? CLOSE : "") + (opens.has(i) ? OPEN : "") + char; });
  if (closes.has(chars.length)) carried += CLOSE;
  const fragment = markdown(carried);
  markRuns(fragment);
  return fragment;
}

// Every text node between an OPEN and its CLOSE (across cells, items and inline tags) wrapped
// in <mark>; the sentinels themselves removed.
function markRuns(root) {
  const walker = document.createTreeWalker(root, NodeFilter.SHOW_TEXT);
  const nodes = [];
  while (walker.nextNode()) nodes.push(walker.currentNode);
  let inside = false;
  for (const node of nodes) {
    if (!inside && !/[\uE000\uE001]/.test(node.data)) continue;
    const parts = [];
    let run = "";
    const flush = () => {
      if (run) parts.push(inside && run.trim() ? Object.assign(document.createElement("mark"), { textContent: run }) : document.createTextNode(run));
      run = "";
    };
    for (const char of node.data) {
      if (char === OPEN || char === CLOSE) { flush(); inside = char === OPEN; } else run += char;
    }
    flush();
    node.replaceWith(...parts);
  }
}
