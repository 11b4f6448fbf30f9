// Markdown as DOM nodes, never as HTML: paragraphs, lists, tables, code blocks, **bold**
// and `code`; [n] markers become buttons opening source n (when ``cite`` knows n).

import { el } from "./dom.js";

function inline(parent, text, cite) {
  const pattern = /\*\*([^*]+)\*\*|`([^`]+)`|\[(\d{1,3})\]/g;
  let last = 0;
  for (const match of text.matchAll(pattern)) {
    parent.append(text.slice(last, match.index));
    if (match[1] !== undefined) parent.append(el("strong", {}, match[1]));
    else if (match[2] !== undefined) parent.append(el("code", {}, match[2]));
    else {
      const link = cite ? cite(Number(match[3])) : null;
      parent.append(link || match[0]);
    }
    last = match.index + match[0].length;
  }
  parent.append(text.slice(last));
  return parent;
}

const CELLS = (line) => line.trim().replace(/^\|/, "").replace(/\|$/, "").split("|").map((c) => c.trim());

export function markdown(text, cite = null) {
  const out = document.createDocumentFragment();
  const lines = text.replace(/\r\n/g, "\n").split("\n");
  for (let i = 0; i < lines.length;) {
    const line = lines[i];
    if (/^```/.test(line)) {
      const code = [];
      for (i++; i < lines.length && !/^```/.test(lines[i]); i++) code.push(lines[i]);
      i++;
      out.append(el("pre", {}, el("code", {}, code.join("\n"))));
    } else if (/^\s*\|.*\|\s*$/.test(line)) {
      const rows = [];
      for (; i < lines.length && /^\s*\|.*\|\s*$/.test(lines[i]); i++) rows.push(lines[i]);
      const table = el("table", { class: "md" });
      const rule = rows.length > 1 && /^[\s|:-]+$/.test(rows[1]);
      if (rule) table.append(el("thead", {}, el("tr", {}, ...CELLS(rows[0]).map((c) => inline(el("th"), c, cite)))));
      const body = el("tbody");
      for (const row of rows.slice(rule ? 2 : 0)) body.append(el("tr", {}, ...CELLS(row).map((c) => inline(el("td"), c, cite))));
      table.append(body);
      out.append(el("div", { class: "table-wrap" }, table));
    } else if (/^\s*(?:[-*・]|\d{1,2}[.)．])\s+/.test(line)) {
      const ordered = /^\s*\d/.test(line);
      const list = el(ordered ? "ol" : "ul");
      for (; i < lines.length && /^\s*(?:[-*・]|\d{1,2}[.)．])\s+/.test(lines[i]); i++) {
        list.append(inline(el("li"), lines[i].replace(/^\s*(?:[-*・]|\d{1,2}[.)．])\s+/, ""), cite));
      }
      out.append(list);
    } else if (/^#{1,6}\s/.test(line)) {
      out.append(inline(el("p", { class: "md-heading" }), line.replace(/^#{1,6}\s+/, ""), cite));
      i++;
    } else if (!line.trim()) {
      i++;
    } else {
      out.append(inline(el("p"), line, cite));
      i++;
    }
  }
  return out;
}
