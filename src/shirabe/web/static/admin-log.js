// The ingest runs (those under way with how far they have gone, read again every few seconds
// while the view is open) and the audit log, filtered by the server.

import { $, el } from "./dom.js";
import { api } from "./api.js";
import { refused, rows, when } from "./admin-common.js";

export const ACTIONS = {
  upload: "アップロード", replace: "差し替え", delete: "削除", readers: "閲覧者の変更", root: "文書ルートの設定",
  sign_in_failed: "サインイン失敗", user_add: "利用者の追加", user_change: "利用者の変更", user_remove: "利用者の削除",
  token_create: "トークンの発行", token_revoke: "トークンの失効", access_map: "閲覧の設定の変更",
  reread: "再読み込み",
};
const OUTCOMES = { added: "追加", updated: "更新", removed: "削除", unchanged: "変更なし", failed: "失敗" };
const STAGES = { waiting: "順番待ち", starting: "開始", scan: "ファイルを確認中", file: "読み込み中", index: "検索索引を更新中", done: "完了" };
const RUNNING_EVERY_MS = 2000;  // while a run is under way
const IDLE_EVERY_MS = 15000;  // else: a run started elsewhere shows within this
const PAGE = 50;

// What the server writes in an entry's detail, in Japanese (the words it wrote stay in the
// row's title); groups written as JSON lists (["hr","public"] → hr・public; [] → 管理者のみ).
const DETAILS = [
  [/^token (\d+)(?: \((.*)\))?, (?:expires (\S+)|never expires)$/,
    (_, id, label, at) => `トークン ${id}${label ? `（${label}）` : ""}、${at ? `期限 ${when(at)}` : "無期限"}`],
  [/^token (\d+)$/, (_, id) => `トークン ${id}`],
  [/^(\d+) token\(s\) ended$/, (_, n) => `トークン ${n} 件が使えなくなりました`],
  [/^failed entry removed$/, () => "失敗した文書を削除"],
  [/^no files$/, () => "対象のファイルなし"],
  [/^((?:added|updated|removed|unchanged|failed) \d+(?:, )?)+$/,
    (text) => text.split(", ").map((part) => part.replace(/^(\w+) (\d+)$/, (_, o, n) => `${OUTCOMES[o]} ${n}`)).join("・")],
  [/^(\d+) document\(s\) change readers(.*)$/, (_, n, rest) =>
    `${n} 件の文書の閲覧者を変更` + (rest ? `（${rest.slice(2).replace(/ \+(\d+) -(\d+)/g, " +$1 −$2").replace(/, /g, "、")}）` : "")],
];
function groupList(text) {
  return text === "-" ? "なし" : text.split(",").join("・");
}
function readable(detail) {
  const found = DETAILS.find(([pattern]) => pattern.test(detail));
  if (found) return detail.replace(found[0], found[1]);
  return detail
    .replace(/groups (\S+?)(,? admin)?(?= ->|$)/g, (_, groups, admin) => `グループ ${groupList(groups)}${admin ? "・管理者" : ""}`)
    .replace(/ -> /g, " → ")
    .replace(/\[([^\]]*)\]/g, (_, inner) => inner.replace(/"/g, "").split(",").map((g) => g.trim()).filter(Boolean).join("・") || "管理者のみ");
}

function runRow(r) {
  const failed = el("td", {}, String(r.failed));
  if (r.failed) failed.className = "failed";
  return el("tr", {}, el("td", {}, when(r.finished_at)), el("td", {}, Number(r.seconds).toFixed(1)),
    el("td", {}, String(r.added)), el("td", {}, String(r.updated)), el("td", {}, String(r.removed)),
    el("td", {}, String(r.unchanged)), failed);
}

function running(run) {
  const bar = el("progress", { value: run.done, max: Math.max(run.total, 1), ariaLabel: `${run.actor} の取り込みの進み具合` });
  const where = run.current ? `・${run.current}` : "";
  return el("div", { className: "running" }, el("p", {},
    `取り込み中（${run.actor}、${when(run.started_at)} 開始）: ${STAGES[run.stage] || run.stage} ${run.done} / ${run.total}${where}`), bar);
}

let timer = null;
export async function loadIngests(current) {
  clearTimeout(timer);
  const data = await (await api("/api/admin/ingests?limit=20")).json();
  if (!current()) return;
  rows($("admin-ingests"), data.items, runRow, "まだ取り込みは行われていません");
  $("admin-running").replaceChildren(...data.running.map(running));
  const again = data.running.length ? RUNNING_EVERY_MS : IDLE_EVERY_MS;
  timer = setTimeout(() => {
    if ($("view-admin").classList.contains("active") && current()) loadIngests(current).catch(() => {});
  }, again);
}

function auditRow(a) {
  return el("tr", {}, el("td", {}, when(a.at)), el("td", {}, a.actor), el("td", {}, ACTIONS[a.action] || a.action),
    el("td", { title: a.detail ? `${a.path}: ${a.detail}` : a.path }, (a.shown || a.path) + (a.detail ? `（${readable(a.detail)}）` : "")));
}

// A day chosen in the page starts at this browser's midnight; the end day is included.
function day(value, after = 0) {
  if (!value) return null;
  const [y, m, d] = value.split("-").map(Number);
  return new Date(y, m - 1, d + after).toISOString();
}

function filters() {
  const query = new URLSearchParams();
  for (const [key, id] of [["actor", "audit-actor"], ["action", "audit-action"], ["path", "audit-path"]]) {
    const value = $(id).value.trim();
    if (value) query.set(key, value);
  }
  const since = day($("audit-since").value), until = day($("audit-until").value, 1);
  if (since) query.set("since", since);
  if (until) query.set("until", until);
  return query;
}

let shown = 0;
export async function loadAudit(current, more = false) {
  const query = filters();
  query.set("limit", String(PAGE));
  query.set("offset", String(more ? shown : 0));
  const data = await (await api("/api/audit?" + query)).json();
  if (!current()) return;
  const body = $("admin-audit");
  if (more) body.append(...data.items.map(auditRow));
  else rows(body, data.items, auditRow, "記録はありません", 4);
  shown = (more ? shown : 0) + data.items.length;
  $("audit-more").hidden = data.items.length < PAGE;
}

export function initAudit(current) {
  const select = $("audit-action");
  if (select.options.length === 1) {
    select.append(...Object.entries(ACTIONS).map(([value, label]) => el("option", { value }, label)));
  }
  $("audit-form").onsubmit = (event) => {
    event.preventDefault();
    loadAudit(current).catch((error) => rows($("admin-audit"), [], auditRow, "読み込めません: " + refused(error), 4));
  };
  $("audit-more").onclick = () => loadAudit(current, true).catch(() => {});
}

export function clearLog() {
  clearTimeout(timer);
  $("admin-ingests").replaceChildren(); $("admin-running").replaceChildren(); $("admin-audit").replaceChildren();
  $("audit-more").hidden = true;
}
