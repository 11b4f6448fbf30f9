// The document list, with why a file failed to be read in Japanese.

import { $, el } from "./dom.js";
import { api, japanese } from "./api.js";
import { openDocument } from "./viewer.js";

// A file's failure in Japanese first; the reader's own words (English, for whoever fixes the
// file or the server) after it.
const FAILURES = [
  [/^file too large|too large when unzipped/, "ファイルが大きすぎます"],
  [/^encrypted|password/, "パスワードで保護されているか、古い形式の Office ファイルです"],
  [/^corrupt|^not a valid Office file|^malformed|^cannot parse/, "ファイルが壊れているか、形式が正しくありません"],
  [/^unsupported file type/, "この種類のファイルは取り込めません"],
  [/^empty file|^no text found/, "文字が含まれていません"],
  [/^permission denied/, "読み取る権限がありません"],
  [/^file not found/, "ファイルが見つかりません"],
  [/time limit|MAX_LOAD_SECONDS/, "読み込みに時間がかかりすぎました"],
  [/memory/, "読み込みに必要なメモリが上限を超えました"],
  [/^needs /, "サーバーに必要な部品が入っていません（管理者に連絡してください）"],
];
export function failure(reason = "") {
  const found = FAILURES.find(([pattern]) => pattern.test(reason));
  return (found ? found[1] : "読み込めませんでした") + (reason ? `（${reason}）` : "");
}

let documentsRequest = 0;
export async function loadDocuments() {
  const status = $("doc-filter").value;
  const body = $("docs");
  const request = ++documentsRequest;
  try {
    const query = new URLSearchParams({ limit: "500" });
    if (status) query.set("status", status);
    const data = await (await api("/api/documents?" + query)).json();
    if (request !== documentsRequest) return;  // a later request (another filter) answers instead
    body.replaceChildren(...data.items.map(documentRow));
    let failed = data.items.filter((doc) => doc.status !== "ok").length;
    if (data.total > data.items.length && !status) {  // not all listed: ask for the count
      failed = (await (await api("/api/documents?status=failed&limit=1")).json()).total;
      if (request !== documentsRequest) return;
    }
    $("docs-count").textContent = `${data.total} 件` + (failed ? `（うち失敗 ${failed} 件）` : "") +
      (data.total > data.items.length ? `・先頭の ${data.items.length} 件を表示` : "");
    if (!data.items.length) body.replaceChildren(el("tr", {}, el("td", { colSpan: 5 }, "文書はありません")));
  } catch (error) {
    if (request === documentsRequest) body.textContent = "一覧を読み込めません: " + japanese(error);
  }
}
function documentRow(doc) {
  const state = el("td", {}, doc.status === "ok" ? "取り込み済み" : "失敗: " + failure(doc.error || ""));
  if (doc.status !== "ok") state.className = "failed";
  let name = doc.path;
  if (doc.status === "ok") {
    name = el("button", { type: "button", class: "link" }, doc.path);
    name.addEventListener("click", () => openDocument({ id: doc.id }));
  }
  const readers = el("td", { class: "admin-only" }, doc.groups ? (doc.groups.length ? doc.groups.join("・") : "管理者のみ") : "");
  if (doc.uploaded_by) readers.append(el("span", { class: "hint" }, `（アップロード: ${doc.uploaded_by}）`));
  return el("tr", {}, el("td", {}, name), el("td", {}, doc.category || ""), state, el("td", {}, String(doc.chunks)), readers);
}
$("doc-filter").addEventListener("change", loadDocuments);
$("docs-reload").addEventListener("click", loadDocuments);
