// The sources: a cited passage with what the answer quotes from it marked (and its PDF
// page), and the whole document opened at a passage.

import { $, el } from "./dom.js";
import { api, japanese } from "./api.js";
import { markdown } from "./markdown.js";

// Where in its file a passage is: p.3, シート 売上, 12 行, スライド 4.
export function located(locator = {}) {
  return [locator.page && `p.${locator.page}`, locator.sheet && `シート ${locator.sheet}`,
    locator.row && `${locator.row} 行`, locator.slide && `スライド ${locator.slide}`].filter(Boolean);
}

export function place(citation) {
  if (citation.label) return citation.label;
  const parts = [citation.source];
  if (citation.heading_path.length) parts.push(citation.heading_path.join(" > "));
  return [...parts, ...located(citation.locator || {})].join(" › ");
}

export function openPassage(citation, answer = "") {
  $("passage-title").textContent = `出典 [${citation.number}]`;
  $("passage-where").textContent = place(citation);
  const body = $("passage-text");
  body.replaceChildren(markdown(citation.text));
  // mark the passage's sentences and table rows the answer quotes
  const plain = answer.replace(/\[\d+\]/g, "").replace(/\s+/g, "");
  let first = null;
  for (const node of body.querySelectorAll("p, li, tr")) {
    const sentences = node.textContent.split(/(?<=[。！？])/);
    const quoted = sentences.some((s) => { const core = s.replace(/\s+/g, "").replace(/[。！？]$/, ""); return core.length >= 6 && plain.includes(core); });
    const cells = node.tagName === "TR" && [...node.children].slice(1).some((c) => c.textContent.trim().length >= 3 && plain.includes(c.textContent.replace(/\s+/g, "")));
    if (quoted || cells) { node.classList.add("quoted"); first = first || node; }
  }
  const page = (citation.locator || {}).page;
  if (page && /\.pdf$/i.test(citation.source)) showPage(body, citation, page);
  $("passage-whole").onclick = () => { $("passage").close(); openDocument({ chunk: citation.chunk_id, source: citation.source }); };
  $("passage").showModal();
  $("passage-close").focus();
  first?.scrollIntoView({ block: "center" });
}

// The PDF page itself, with the passage marked, under the passage's text.
async function showPage(body, citation, page) {
  const figure = el("figure", { class: "page" }, el("figcaption", { class: "hint" }, `${page} ページ（該当箇所に色付け）`));
  body.append(figure);
  try {
    const response = await api(`/api/passages/${citation.chunk_id}/page.png`);
    const url = URL.createObjectURL(await response.blob());
    const image = el("img", { src: url, alt: `${citation.source} の ${page} ページ` });
    image.addEventListener("load", () => URL.revokeObjectURL(url));
    figure.append(image);
  } catch (error) {
    figure.append(el("p", { class: "hint" }, error.code === "changed"
      ? "文書が索引の後に変更されたため、ページを表示できません。" : "ページを表示できません: " + japanese(error)));
  }
}

// The whole document, passage by passage with its headings and pages, opened at one passage
// (a citation's) or at the top; the passage is marked and scrolled to.
let documentRequest = 0;
export async function openDocument({ chunk = null, id = null, source = null }) {
  const dialog = $("document"), body = $("document-text");
  const request = ++documentRequest;
  $("document-title").textContent = "文書";
  $("document-where").textContent = "読み込み中…";
  body.replaceChildren();
  if (!dialog.open) dialog.showModal();
  let data, moved = false;
  try {
    try {
      data = await (await api(chunk ? `/api/passages/${chunk}/document` : `/api/documents/${id}`)).json();
    } catch (error) {
      // the passage is gone (its document was changed since): open the document by its path
      if (!(error.code === "not_found" && chunk && source)) throw error;
      const found = await (await api("/api/documents?" + new URLSearchParams({ q: source, status: "ok", limit: "20" }))).json();
      const same = found.items.find((doc) => doc.path === source);
      if (!same) throw error;
      data = await (await api(`/api/documents/${same.id}`)).json();
      moved = true;
    }
  } catch (error) {
    if (request === documentRequest) $("document-where").textContent = "文書を開けません: " + japanese(error);
    return;
  }
  if (request !== documentRequest) return;  // another document was opened meanwhile
  body.replaceChildren();
  if (moved) body.append(el("p", { class: "hint", role: "status" }, "引用した箇所は、文書の更新により見つかりません。文書の先頭から表示します。"));
  $("document-title").textContent = data.path.split("/").pop();
  $("document-where").textContent = [data.path, data.category, `${data.passages.filter((p) => !p.is_summary).length} 節`].filter(Boolean).join(" › ");
  let target = null, heading = "";
  for (const passage of data.passages) {
    if (passage.is_summary) continue;
    const where = passage.heading_path.join(" > ");
    const section = el("section", { class: "passage", id: `passage-${passage.chunk_id}` });
    if (where && where !== heading) section.append(el("h3", {}, where));
    heading = where;
    const at = located(passage.locator || {}).join(" ");
    if (at) section.append(el("p", { class: "hint" }, at));
    section.append(markdown(passage.text));
    if (passage.chunk_id === chunk) { section.classList.add("cited"); target = section; }
    body.append(section);
  }
  (target || body).scrollIntoView({ block: "start" });
  $("document-close").focus();
}

$("passage-close").addEventListener("click", () => $("passage").close());
for (const dialog of [$("passage"), $("document")]) {  // a click on the backdrop closes it
  let pressed = null;  // not a text selection that started inside and ended outside
  dialog.addEventListener("mousedown", (event) => { pressed = event.target; });
  dialog.addEventListener("click", (event) => {
    if (event.target === dialog && pressed === dialog) dialog.close();
  });
}
$("document-close").addEventListener("click", () => $("document").close());
