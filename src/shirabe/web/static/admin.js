// The admin view: users and their groups, groups with their members and documents, the ingest
// runs and the audit log. The server refuses these lists to anyone but an admin; the tab is
// only shown to admins.

import { $, el } from "./dom.js";
import { api, japanese } from "./api.js";
import { select } from "./layout.js";

const ACTIONS = { upload: "アップロード", replace: "差し替え", delete: "削除", readers: "閲覧者の変更", root: "文書ルートの設定", sign_in_failed: "サインイン失敗" };

function when(iso) {
  if (!iso) return "—";
  const date = new Date(iso);
  return Number.isNaN(date.getTime()) ? iso : date.toLocaleString("ja-JP");
}

// Groups written as JSON lists (["hr","public"] → hr・public; [] → 管理者のみ), the rest as it is.
function readable(detail) {
  return detail.replace(/\[([^\]]*)\]/g, (_, inner) => inner.replace(/"/g, "").split(",").map((g) => g.trim()).filter(Boolean).join("・") || "管理者のみ");
}

function rows(body, items, row, empty) {
  body.replaceChildren(...items.map(row));
  if (!items.length) body.replaceChildren(el("tr", {}, el("td", { colSpan: 8, className: "hint" }, empty)));
}

const ADMIN_TABLES = ["admin-users", "admin-groups", "admin-ingests", "admin-audit"];

// Another user signed in: drop what was shown to the admin, and leave the view.
export function clearAdmin() {
  ++adminRequest;
  for (const id of ADMIN_TABLES) $(id).replaceChildren();
  $("groups-note").textContent = "";
  if ($("view-admin").classList.contains("active")) select("chat");
}

let adminRequest = 0;
export async function loadAdmin() {
  const request = ++adminRequest;
  $("view-admin").setAttribute("aria-busy", "true");
  const parts = [
    ["admin-users", "/api/admin/users", (u) => el("tr", {},
      el("td", {}, u.name), el("td", {}, u.groups.join("・") || "—"),
      el("td", {}, u.admin ? "管理者" : "利用者"), el("td", {}, String(u.tokens) + (u.tokens_expire_at ? `（期限 ${when(u.tokens_expire_at)}）` : "")),
      el("td", {}, when(u.last_used_at))),
    "利用者はいません（shirabe user add で追加します）"],
    ["admin-groups", "/api/admin/groups", (g) => el("tr", {},
      el("td", {}, g.everyone ? `${g.name}（全員）` : g.name),
      el("td", {}, g.everyone ? "全員" : g.members.join("・") || "—"), el("td", {}, String(g.documents))),
    "グループはありません"],
    ["admin-ingests", "/api/admin/ingests?limit=20", (r) => {
      const failed = el("td", {}, String(r.failed));
      if (r.failed) failed.className = "failed";
      return el("tr", {}, el("td", {}, when(r.finished_at)), el("td", {}, Number(r.seconds).toFixed(1)),
        el("td", {}, String(r.added)), el("td", {}, String(r.updated)), el("td", {}, String(r.removed)),
        el("td", {}, String(r.unchanged)), failed);
    }, "まだ取り込みは行われていません"],
    ["admin-audit", "/api/audit?limit=20", (a) => el("tr", {},
      el("td", {}, when(a.at)), el("td", {}, a.actor), el("td", {}, ACTIONS[a.action] || a.action),
      el("td", { title: a.path }, (a.shown || a.path) + (a.detail ? `（${readable(a.detail)}）` : ""))),
    "記録はありません"],
  ];
  await Promise.all(parts.map(async ([id, path, row, empty]) => {
    const body = $(id);
    try {
      const data = await (await api(path)).json();
      if (request !== adminRequest) return;
      rows(body, data.items, row, empty);
      if (id === "admin-groups") {
        $("groups-note").textContent = data.admins_only
          ? `閲覧できるグループのない文書（管理者のみ）: ${data.admins_only} 件` : "";
      }
    } catch (error) {
      if (request === adminRequest) rows(body, [], row, "読み込めません: " + japanese(error));
    }
  }));
  if (request === adminRequest) $("view-admin").removeAttribute("aria-busy");
}
$("admin-reload").addEventListener("click", loadAdmin);
