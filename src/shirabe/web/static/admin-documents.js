// The documents an ingest could not read, with why (the error the server keeps), to read
// again or remove; a document or a whole folder read again, file by file.

import { $, el } from "./dom.js";
import { api, sse } from "./api.js";
import { button, confirmAction, refused, rows, say, send } from "./admin-common.js";
import { failure } from "./failures.js";

let changed = () => {};
// What to load again after a change (the lists, the counts, the audit log): set by admin.js.
export function onDocumentsChange(reload) { changed = reload; }

let failedCount = 0;
const OUTCOMES = { added: "追加", updated: "更新", unchanged: "変更なし", failed: "失敗", removed: "削除" };

function failedRow(doc) {
  return el("tr", {}, el("td", {}, doc.path), el("td", { className: "failed" }, failure(doc.error || "")),
    el("td", { className: "actions-cell" },
      button("再読み込み", () => reread({ document: doc.id }, doc.path), "small"),
      button("削除", () => removeFailed(doc), "small danger")));
}

export async function loadFailed(current) {
  const data = await (await api("/api/documents?status=failed&limit=500")).json();
  if (!current()) return;
  rows($("admin-failed"), data.items, failedRow, "失敗した文書はありません", 3);
  failedCount = data.total;
  $("failed-remove-all").disabled = !data.total;
}

async function removeFailed(doc) {
  const text = doc.chunks
    ? `${doc.path} を索引から削除します。前に読み込めた本文も検索できなくなります。`
    : `${doc.path} を索引から削除します。`;
  if (!(await confirmAction(text + (doc.path.startsWith("uploads/") ? "アップロードされたファイルも削除されます。" : "")))) return;
  try {
    await send(`/api/admin/failed/${doc.id}`, "DELETE");
    say("reread-result", `${doc.path} を削除しました。`);
  } catch (error) {
    say("reread-result", `${doc.path} を削除できませんでした: ${refused(error)}`, true);
  }
  changed();
}

$("failed-remove-all").addEventListener("click", async () => {
  if (!(await confirmAction(`失敗した文書 ${failedCount} 件をすべて索引から削除します。アップロードされたものはファイルも削除されます。`, "すべて削除する"))) return;
  try {
    const done = await (await send("/api/admin/failed", "DELETE")).json();
    say("reread-result", `失敗した文書 ${done.removed.length} 件を削除しました。`);
  } catch (error) {
    say("reread-result", `削除できませんでした: ${refused(error)}`, true);
  }
  changed();
});

// Reads a document ({document: id}) or a folder ({folder: "人事"}) again, with its progress,
// told on the status line `line`.
export async function reread(target, name, line = "reread-result") {
  const bar = $("reread-progress");
  bar.hidden = line !== "reread-result"; bar.value = 0; bar.max = 1;
  say(line, `${name} を読み込み直しています…`);
  try {
    const streamed = await api("/api/admin/reread", {
      method: "POST",
      headers: { "Content-Type": "application/json", Accept: "text/event-stream" },
      body: JSON.stringify(target),
    });
    for await (const { event, data } of sse(streamed)) {
      if (event === "progress") { bar.max = data.total; bar.value = data.done; say(line, `${data.done} / ${data.total}: ${data.path}`); }
      if (event === "done") say(line, summary(name, data));
    }
  } catch (error) {
    say(line, `${name} を読み込み直せませんでした: ${error.code === "not_found" ? "見つかりません。文書一覧に表示される名前で指定してください。" : refused(error)}`, true);
  } finally {
    bar.hidden = true;
  }
  changed();
}

function summary(name, report) {
  const counts = Object.entries(report.counts).filter(([, n]) => n).map(([k, n]) => `${OUTCOMES[k] || k} ${n}`);
  const failed = report.files.filter((f) => f.outcome === "failed");
  const why = failed.length ? `（失敗: ${failed.map((f) => `${f.path} — ${failure(f.reason || "")}`).join("、")}）` : "";
  return `${name} を読み込み直しました: ${counts.join("・") || "対象のファイルはありません"}${why}`;
}

$("reread-folder-button").addEventListener("click", () => {
  const folder = $("reread-folder").value.trim();
  if (!folder) { say("reread-result", "フォルダーの名前を入力してください。", true); $("reread-folder").focus(); return; }
  reread({ folder }, folder);
});

export function clearDocuments() {
  $("admin-failed").replaceChildren();
  say("reread-result", "");
}
