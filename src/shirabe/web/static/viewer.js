// The sources: a cited passage with what the answer quotes marked (and its PDF page), beside
// the chat on a wide screen, over it on a narrow one; and the whole document opened at a
// passage.

import { $, el } from "./dom.js";
import { api, japanese } from "./api.js";
import { markdown } from "./markdown.js";
import { marked } from "./marks.js";

// Wide enough for the chat and a source side by side (sources.css lays them out from here).
const WIDE = matchMedia("(min-width: 1100px)");

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

let shown = null;  // the citation open in the source view, and what opened it
let opener = null;
let reading = 0;  // the latest document read for the side panel

// A citation's source: its passage with the quoted runs marked. Beside the chat (wide) the
// whole document follows, scrolled to the passage; over it (narrow) 文書全体を開く opens it.
export function openPassage(citation) {
  const dialog = $("passage"), body = $("passage-text");
  if (!dialog.open || document.activeElement?.closest("#messages")) opener = document.activeElement;
  shown = citation;
  $("passage-title").textContent = `出典 [${citation.number}]`;
  $("passage-where").textContent = place(citation);
  const cited = el("section", { class: "passage cited" }, marked(citation.text, citation.marks));
  const page = (citation.locator || {}).page;
  if (page && /\.pdf$/i.test(citation.source)) cited.append(pageImage(citation, page));
  body.replaceChildren(cited);
  const beside = WIDE.matches;
  $("passage-whole").hidden = beside;
  $("passage-whole").onclick = () => {
    dialog.close();
    openDocument({ chunk: citation.chunk_id, source: citation.source, text: citation.text, marks: citation.marks });
  };
  if (dialog.open && dialog.matches(":modal") === beside) dialog.close();
  if (!dialog.open) beside ? dialog.show() : dialog.showModal();
  $("app").classList.toggle("with-sources", beside);
  $("passage-close").focus();
  showAt(body, cited);
  if (beside) besideDocument(citation, cited);
}

// The whole document around the passage in the side panel, scrolled to it; the passage
// alone stays when the document cannot be read.
async function besideDocument(citation, cited) {
  const request = ++reading;
  let data;
  try {
    data = await (await api(`/api/passages/${citation.chunk_id}/document`)).json();
  } catch (error) {
    if (request === reading && shown === citation) {
      cited.before(el("p", { class: "hint" }, "文書全体を読み込めません: " + japanese(error)));
    }
    return;
  }
  if (request !== reading || shown !== citation || !$("passage").open) return;
  const body = $("passage-text");
  const target = sections(body, data, { chunk: citation.chunk_id, cited });
  if (target) showAt(body, target);
}

export function closePassage() {
  $("passage").close();
}

export function passageBeside() {
  return $("passage").open && !$("passage").matches(":modal");
}

// The source view closed (閉じる, Esc, the backdrop): the chat gets the whole width again, and
// the focus goes back to what opened it. (Closed to be shown again the other way, it is open
// once more by the time this runs.)
$("passage").addEventListener("close", () => {
  if ($("passage").open) return;
  $("app").classList.remove("with-sources");
  shown = null;
  reading++;
  if (opener?.isConnected && !document.querySelector("dialog:modal")) opener.focus();
  opener = null;
});

// a source open when the window crosses the width is shown again the other way
WIDE.addEventListener("change", () => { if (shown && $("passage").open) openPassage(shown); });

// Scrolls ``container`` (not the page) so that ``target`` is at its top, or its first mark is
// in view.
function showAt(container, target) {
  const mark = target.querySelector("mark") || target;
  const top = target.getBoundingClientRect().top - container.getBoundingClientRect().top;
  const markTop = mark.getBoundingClientRect().top - container.getBoundingClientRect().top;
  const room = container.clientHeight;
  container.scrollTop += markTop - top < room * 0.6 ? top - 8 : markTop - room / 3;
}

// The PDF page itself, with the passage marked.
function pageImage(citation, page) {
  const figure = el("figure", { class: "page" }, el("figcaption", { class: "hint" }, `${page} ページ（該当箇所に色付け）`));
  (async () => {
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
  })();
  return figure;
}

// A document's passages as sections under their headings and pages, into ``body``; the cited
// one (``chunk``) is ``cited`` when given (already drawn, with its marks and page), else drawn
// with ``marks`` when its text is still ``text``. The cited section, if it is there.
function sections(body, data, { chunk = null, cited = null, text = null, marks = [] } = {}) {
  const out = [];
  let target = null, heading = "";
  for (const passage of data.passages) {
    if (passage.is_summary) continue;
    const where = passage.heading_path.join(" > ");
    const section = el("section", { class: "passage", id: `passage-${passage.chunk_id}` });
    if (where && where !== heading) section.append(el("h3", {}, where));
    heading = where;
    const at = located(passage.locator || {}).join(" ");
    if (at) section.append(el("p", { class: "hint" }, at));
    if (passage.chunk_id === chunk && cited) {
      cited.prepend(...section.childNodes);
      out.push(cited); target = cited;
      continue;
    }
    const quoted = passage.chunk_id === chunk && passage.text === text;
    section.append(quoted ? marked(passage.text, marks) : markdown(passage.text));
    if (passage.chunk_id === chunk) { section.classList.add("cited"); target = section; }
    out.push(section);
  }
  body.replaceChildren(...out);
  return target;
}

// The whole document, passage by passage with its headings and pages, opened at one passage
// (a citation's, its quoted runs marked) or at the top; the passage is marked and scrolled to.
let documentRequest = 0;
export async function openDocument({ chunk = null, id = null, source = null, text = null, marks = [] }) {
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
  $("document-title").textContent = data.path.split("/").pop();
  $("document-where").textContent = [data.path, data.category, `${data.passages.filter((p) => !p.is_summary).length} 節`].filter(Boolean).join(" › ");
  const target = sections(body, data, { chunk, text, marks });
  if (moved) body.prepend(el("p", { class: "hint", role: "status" }, "引用した箇所は、文書の更新により見つかりません。文書の先頭から表示します。"));
  (target || body).scrollIntoView({ block: "start" });
  $("document-close").focus();
}

$("passage-close").addEventListener("click", closePassage);
for (const dialog of [$("passage"), $("document")]) {  // a click on the backdrop closes it
  let pressed = null;  // not a text selection that started inside and ended outside
  dialog.addEventListener("mousedown", (event) => { pressed = event.target; });
  dialog.addEventListener("click", (event) => {
    if (event.target === dialog && pressed === dialog && dialog.matches(":modal")) dialog.close();
  });
}
$("document-close").addEventListener("click", () => $("document").close());
