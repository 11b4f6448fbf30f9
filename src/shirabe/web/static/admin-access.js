// The access map: who reads each top-level folder now, the rules, and a change shown before it
// is saved (which documents change readers; per group, how many it gains and loses). Saving
// asks first, then the server gives those documents their new readers, file by file.

import { $, el } from "./dom.js";
import { api, sse } from "./api.js";
import { confirmAction, groupNames, refused, rows, say } from "./admin-common.js";

let changed = () => {};
// What to load again after saving (the groups' counts, the audit log): set by admin.js.
export function onAccessChange(reload) { changed = reload; }

let previewed = null;  // the text the last preview was of: only that may be saved
let changes = 0;  // how many documents that preview changes
let editable = false;

function placeRow(place) {
  const readers = place.readers.map((r) => `${groupNames(r.groups)}（${r.documents}）`).join("、");
  return el("tr", {}, el("td", {}, place.place === "." ? "（ルート直下）" : place.place),
    el("td", {}, String(place.documents)), el("td", {}, readers));
}

export async function loadAccess(current) {
  const data = await (await api("/api/admin/access")).json();
  if (!current()) return;
  editable = data.editable;
  rows($("admin-places"), data.places, placeRow, "文書はありません", 3);
  const rules = data.default.length ? `どの規則にも当てはまらない文書: ${groupNames(data.default)}` : "";
  $("access-note").textContent = data.editable
    ? `規則のファイル: ${data.file}。${rules}`
    : `規則のファイルが設定されていないため、保存できません（SHIRABE_INGEST__ACCESS_MAP）。変更の確認はできます。${rules}`;
  if (previewed === null) $("access-text").value = data.text;  // an edit under way stays
  $("access-text").readOnly = false;
  $("access-save").disabled = true;
}

function changeTable(data) {
  const groups = el("table", { className: "preview" },
    el("caption", {}, "グループごとの変化"),
    el("thead", {}, el("tr", {}, el("th", {}, "グループ"), el("th", {}, "読めるようになる文書"), el("th", {}, "読めなくなる文書"))),
    el("tbody", {}, ...data.groups.map((g) => el("tr", {},
      el("td", {}, g.group), el("td", {}, g.gains ? `+${g.gains}` : "0"),
      el("td", { className: g.loses ? "failed" : "" }, g.loses ? `−${g.loses}` : "0")))));
  const documents = el("ul", { className: "changes" }, ...data.changes.map((c) =>
    el("li", {}, `${c.path}: ${groupNames(c.before)} → ${groupNames(c.after)}`)));
  const more = data.changed > data.changes.length ? el("p", { className: "hint" }, `ほか ${data.changed - data.changes.length} 件`) : "";
  return [groups, el("h3", {}, "閲覧できるグループが変わる文書"), documents, more];
}

$("access-preview").addEventListener("click", async () => {
  const text = $("access-text").value;
  try {
    const response = await api("/api/admin/access/preview", {
      method: "POST", headers: { "Content-Type": "application/json" }, body: JSON.stringify({ text }),
    });
    const data = await response.json();
    previewed = text;
    changes = data.changed;
    const head = el("p", {}, data.changed
      ? `${data.documents} 件の文書のうち ${data.changed} 件で、閲覧できるグループが変わります。`
      : `閲覧できるグループが変わる文書はありません（${data.documents} 件）。`);
    $("access-result").replaceChildren(head, ...(data.changed ? changeTable(data) : []));
    $("access-result").classList.remove("failed");
    $("access-save").disabled = !editable;
  } catch (error) {
    previewed = null;
    $("access-save").disabled = true;
    const why = error.code === "invalid_access_map" ? `規則が正しくありません（${error.message}）` : refused(error);
    $("access-result").replaceChildren(el("p", { className: "failed" }, why));
  }
});
$("access-text").addEventListener("input", () => { $("access-save").disabled = true; });

$("access-save").addEventListener("click", async () => {
  const text = $("access-text").value;
  if (text !== previewed) return;
  if (!(await confirmAction(`規則を保存して反映します。${changes} 件の文書で閲覧できるグループが変わります。`, "保存して反映する"))) return;
  const bar = $("access-progress");
  bar.hidden = false; bar.value = 0; bar.max = 1;
  $("access-save").disabled = true;
  try {
    const response = await api("/api/admin/access", {
      method: "PUT", headers: { "Content-Type": "application/json", Accept: "text/event-stream" }, body: JSON.stringify({ text }),
    });
    for await (const { event, data } of sse(response)) {
      if (event === "progress") { bar.max = data.total; bar.value = data.done; }
      if (event === "done") {
        previewed = null;
        $("access-result").replaceChildren(el("p", {}, `保存しました。${data.changed} 件の文書に新しい閲覧者を反映しました。`));
      }
    }
  } catch (error) {
    $("access-result").replaceChildren(el("p", { className: "failed" }, `保存できませんでした: ${refused(error)}`));
  } finally {
    bar.hidden = true;
  }
  changed();
});

export function clearAccess() {
  previewed = null;
  $("admin-places").replaceChildren();
  $("access-text").value = "";
  $("access-result").replaceChildren();
  say("access-note", "");
}
