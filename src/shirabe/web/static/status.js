// The index in the sidebar: its counts, the model and the folder watch, read again now and
// then while the server follows its folders; the category boxes that narrow a question.

import { $, el } from "./dom.js";
import { api } from "./api.js";
import { forgetExamples } from "./welcome.js";

export const chosen = new Set();

const STATUS_EVERY_MS = 15000;
let statusTimer = null;

// While the server follows its folders, the counts and the watch line are read again now and
// then, so that files changed on disk show without a reload.
async function refreshStatus() {
  try {
    renderStatus(await (await api("/api/status")).json());
  } catch (error) {  // signed out: start() reads the status again after signing in
    if (error.code !== "unauthorized") statusTimer = setTimeout(refreshStatus, STATUS_EVERY_MS);
  }
}

// The counts again now (an admin removed or re-read documents, or changed who reads them).
export function reloadStatus() {
  return refreshStatus();
}

function clock(iso) {
  return iso ? new Date(iso).toLocaleTimeString("ja-JP", { hour: "2-digit", minute: "2-digit" }) : "—";
}

function watching(watch) {
  if (!watch) return "";
  if (!watch.running) return "\nフォルダー監視: 停止中";
  const pending = watch.pending ? `・反映待ち ${watch.pending}` : "";
  const failures = watch.failures.length ? `・失敗 ${watch.failures.length}` : "";
  // when it last synced is for admins only: it moves for folders others may not read
  const synced = watch.last_sync_at ? `・最終反映 ${clock(watch.last_sync_at)}` : "";
  return `\nフォルダー監視中${synced}${pending}${failures}`;
}

export let lastStatus = null;
export function renderStatus(status) {
  if (lastStatus && (lastStatus.files !== status.files || lastStatus.user !== status.user)) forgetExamples();
  const same = lastStatus && JSON.stringify(lastStatus.categories) === JSON.stringify(status.categories);
  lastStatus = status;
  const llm = status.llm.configured ? "LLM: " + status.llm.model : "LLM なし（抜粋で回答）";
  $("status").textContent = `${status.files} ファイル・${status.chunks} チャンク` +
    (status.failed ? `・失敗 ${status.failed}` : "") + `\n${llm}` + watching(status.watch);
  clearTimeout(statusTimer);
  if (status.watch && status.watch.running) statusTimer = setTimeout(refreshStatus, STATUS_EVERY_MS);
  if (same) return;  // a refresh: the boxes stay as they are (and keep the focus)
  const list = $("categories");
  list.replaceChildren();
  for (const category of status.categories) {
    const box = el("input", { type: "checkbox", value: category.name, checked: chosen.has(category.name) });
    box.addEventListener("change", () => {
      box.checked ? chosen.add(category.name) : chosen.delete(category.name);
      showScope();
    });
    list.append(el("li", {}, el("label", {}, box, `${category.name}（${category.files}）`)));
  }
  if (!status.categories.length) list.textContent = "カテゴリはありません";
}

function showScope() {
  $("scope-note").textContent = chosen.size ? "絞り込み: " + [...chosen].join("・") : "";
}
