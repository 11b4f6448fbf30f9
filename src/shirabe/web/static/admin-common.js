// What the admin view's parts share: dates and rows shown alike, a question before anything
// is removed or changed for good, a request with a JSON body, and a line that says how an
// action went.

import { $, el } from "./dom.js";
import { api, japanese } from "./api.js";

export function when(iso) {
  if (!iso) return "—";
  const date = new Date(iso);
  return Number.isNaN(date.getTime()) ? iso : date.toLocaleString("ja-JP");
}

export function rows(body, items, row, empty, columns = 8) {
  body.replaceChildren(...items.map(row));
  if (!items.length) body.replaceChildren(el("tr", {}, el("td", { colSpan: columns, className: "hint" }, empty)));
}

export function groupsOf(text) {
  return text.split(/[,、，\s]+/).map((g) => g.trim()).filter(Boolean);
}

export function groupNames(groups) {
  return groups.length ? groups.join("・") : "管理者のみ";
}

// A request with a JSON body (every request goes through api(): its headers, its errors).
export function send(path, method, body) {
  const options = { method, headers: { "Content-Type": "application/json" } };
  if (body !== undefined) options.body = JSON.stringify(body);
  return api(path, options);
}

// Why the server refused, in Japanese, with its own words after it where they say more.
export function refused(error) {
  const said = japanese(error);
  return error.message && error.code !== "unauthorized" ? `${said}（${error.message}）` : said;
}

export function say(id, text, failed = false) {
  const line = $(id);
  line.textContent = text;
  line.classList.toggle("failed", failed);
}

// Asks before something is removed or changed for good (the page's own dialog).
export { confirmAction } from "./dom.js";

export function button(text, action, className = "") {
  const node = el("button", { type: "button", className }, text);
  node.addEventListener("click", action);
  return node;
}
