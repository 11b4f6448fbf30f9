// The document list, with why a file failed to be read in Japanese; for admins, each
// document's readers and uploader, and a document read again or deleted (after asking).

import { $, el } from "./dom.js";
import { api, japanese } from "./api.js";
import { button, confirmAction, refused, say, send } from "./admin-common.js";
import { reread } from "./admin-documents.js";
import { failure } from "./failures.js";
import { openDocument } from "./viewer.js";

export { failure };

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
    if (!data.items.length) body.replaceChildren(el("tr", {}, el("td", { colSpan: 6 }, "文書はありません")));
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
  const actions = el("td", { class: "admin-only actions-cell" });
  if (doc.groups) {  // an admin's list
    actions.append(button("再読み込み", () => reread({ document: doc.id }, doc.path, "docs-action"), "small"),
      button("削除", () => remove(doc), "small danger"));
  }
  return el("tr", {}, el("td", {}, name), el("td", {}, doc.category || ""), state, el("td", {}, String(doc.chunks)), readers, actions);
}

async function remove(doc) {
  const upload = doc.path.startsWith("uploads/") ? "アップロードされたファイルも削除されます。" : "フォルダーのファイルは残り、次の取り込みでまた読み込まれます。";
  if (!(await confirmAction(`${doc.path} を索引から削除します。${upload}`))) return;
  try {
    await send(`/api/documents/${doc.id}`, "DELETE");
    say("docs-action", `${doc.path} を削除しました。`);
  } catch (error) {
    say("docs-action", `${doc.path} を削除できませんでした: ${refused(error)}`, true);
  }
  loadDocuments();
}
$("doc-filter").addEventListener("change", loadDocuments);
$("docs-reload").addEventListener("click", loadDocuments);
