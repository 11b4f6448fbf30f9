// Users, their groups and tokens, managed from the admin view with the same rules as the
// users and tokens commands (the server keeps them: the last admin stays, a token lasts no
// longer than the site allows). A new token is shown here once, and never again.

import { $, el } from "./dom.js";
import { api } from "./api.js";
import { button, confirmAction, groupNames, groupsOf, refused, rows, say, send, when } from "./admin-common.js";

let changed = () => {};
// What to load again after a change (the audit log, the groups' counts): set by admin.js.
export function onPeopleChange(reload) { changed = reload; }

function userRow(u) {
  const tokens = String(u.tokens) + (u.tokens_expire_at ? `（期限 ${when(u.tokens_expire_at)}）` : "");
  return el("tr", {},
    el("td", {}, u.name), el("td", {}, u.groups.join("・") || "—"),
    el("td", {}, u.admin ? "管理者" : "利用者"), el("td", {}, tokens), el("td", {}, when(u.last_used_at)),
    el("td", { className: "actions-cell" },
      button("変更", () => editUser(u), "small"),
      button("トークン発行", () => { $("token-user").value = u.name; $("token-label").focus(); }, "small"),
      button("削除", () => removeUser(u), "small danger")));
}

async function editUser(user) {
  const dialog = $("user-edit");
  $("user-edit-title").textContent = `利用者の変更: ${user.name}`;
  $("user-edit-groups").value = user.groups.join(", ");
  $("user-edit-admin").checked = user.admin;
  dialog.returnValue = "";
  dialog.showModal();
  const answer = await new Promise((resolve) => dialog.addEventListener("close", () => resolve(dialog.returnValue), { once: true }));
  if (answer !== "ok") return;
  const admin = $("user-edit-admin").checked;
  if (user.admin && !admin && !(await confirmAction(`${user.name} を管理者から外します。管理の画面が使えなくなります。`, "管理者から外す"))) return;
  try {
    await send(`/api/admin/users/${encodeURIComponent(user.name)}`, "PATCH", { groups: groupsOf($("user-edit-groups").value), admin });
    say("user-message", `${user.name} を変更しました。`);
  } catch (error) {
    say("user-message", `${user.name} を変更できませんでした: ${lastAdmin(error)}`, true);
  }
  changed();
}

function lastAdmin(error) {
  return error.code === "last_admin" ? "最後の管理者は削除することも、管理者から外すこともできません。先にほかの利用者を管理者にしてください。" : refused(error);
}

async function removeUser(user) {
  if (!(await confirmAction(`利用者 ${user.name} を削除します。この利用者のトークンとサインイン中の画面は、すぐに使えなくなります。`))) return;
  try {
    await send(`/api/admin/users/${encodeURIComponent(user.name)}`, "DELETE");
    say("user-message", `${user.name} を削除しました。`);
  } catch (error) {
    say("user-message", `${user.name} を削除できませんでした: ${lastAdmin(error)}`, true);
  }
  changed();
}

$("user-form").addEventListener("submit", async (event) => {
  event.preventDefault();
  const name = $("user-name").value.trim();
  try {
    await send("/api/admin/users", "POST", { name, groups: groupsOf($("user-groups").value), admin: $("user-admin").checked });
    say("user-message", `${name} を追加しました。トークンを発行するとサインインできます。`);
    $("user-form").reset();
    $("token-user").dataset.wanted = name;
  } catch (error) {
    say("user-message", `${name} を追加できませんでした: ${error.code === "conflict" ? "同じ名前の利用者がいます。" : refused(error)}`, true);
  }
  changed();
});

function tokenRow(t) {
  const state = t.revoked ? "失効" : t.expired ? "期限切れ" : "有効";
  const cell = el("td", { className: "actions-cell" });
  if (state === "有効") cell.append(button("失効", () => revoke(t), "small danger"));
  return el("tr", {}, el("td", {}, String(t.id)), el("td", {}, t.user), el("td", {}, t.label || "—"),
    el("td", {}, when(t.created_at)), el("td", {}, t.expires_at ? when(t.expires_at) : "無期限"),
    el("td", {}, when(t.last_used_at)), el("td", { className: state === "有効" ? "" : "hint" }, state), cell);
}

async function revoke(token) {
  if (!(await confirmAction(`${token.user} のトークン ${token.id} を失効させます。このトークンはすぐに使えなくなります。`, "失効させる"))) return;
  try {
    await send(`/api/admin/tokens/${token.id}`, "DELETE");
    say("token-message", `トークン ${token.id} を失効させました。`);
  } catch (error) {
    say("token-message", `失効させられませんでした: ${refused(error)}`, true);
  }
  changed();
}

const LIFETIMES = [["30d", "30日", 30], ["90d", "90日", 90], ["52w", "1年", 364]];
function days(lifetime) {
  const found = /^(\d+)([hdw])$/.exec(lifetime || "");
  return found ? Number(found[1]) * { h: 1 / 24, d: 1, w: 7 }[found[2]] : Infinity;
}
function expiryChoices(longest) {
  const select = $("token-expires");
  const kept = select.value;
  const choices = [["", longest ? `既定（${longest}）` : "無期限"],
    ...LIFETIMES.filter(([, , n]) => n < days(longest)).map(([value, label]) => [value, label])];
  select.replaceChildren(...choices.map(([value, label]) => el("option", { value }, label)));
  if (choices.some(([value]) => value === kept)) select.value = kept;
}

$("token-form").addEventListener("submit", async (event) => {
  event.preventDefault();
  const user = $("token-user").value;
  const body = { user, label: $("token-label").value.trim(), expires: $("token-expires").value || null };
  try {
    const made = await (await send("/api/admin/tokens", "POST", body)).json();
    $("token-shown-title").textContent = `${made.user} のトークン（ID ${made.id}${made.expires_at ? `、期限 ${when(made.expires_at)}` : "、無期限"}）`;
    $("token-secret").value = made.token;
    $("token-copied").textContent = "";
    $("token-shown").hidden = false;
    $("token-secret").focus(); $("token-secret").select();
    say("token-message", "");
    $("token-label").value = "";
  } catch (error) {
    say("token-message", `発行できませんでした: ${refused(error)}`, true);
  }
  changed();
});
$("token-copy").addEventListener("click", async () => {
  try {
    await navigator.clipboard.writeText($("token-secret").value);
    $("token-copied").textContent = "コピーしました。";
  } catch (_) {
    $("token-secret").select();
    $("token-copied").textContent = "コピーできませんでした。選択された文字をコピーしてください。";
  }
});
// The secret leaves the page: it cannot be shown again.
export function hideToken() {
  $("token-secret").value = ""; $("token-shown").hidden = true; $("token-copied").textContent = "";
}
$("token-hide").addEventListener("click", hideToken);

function groupRow(g) {
  return el("tr", {}, el("td", {}, g.everyone ? `${g.name}（全員）` : g.name),
    el("td", {}, g.everyone ? "全員" : g.members.join("・") || "—"), el("td", {}, String(g.documents)));
}

export async function loadPeople(current) {
  const [users, tokens, groups] = await Promise.all(
    ["/api/admin/users", "/api/admin/tokens", "/api/admin/groups"].map(async (path) => (await api(path)).json()));
  if (!current()) return;
  rows($("admin-users"), users.items, userRow, "利用者はいません。上の欄から追加できます。");
  rows($("admin-tokens"), tokens.items.slice().reverse(), tokenRow, "トークンはありません");
  rows($("admin-groups"), groups.items, groupRow, "グループはありません");
  $("groups-note").textContent = groups.admins_only ? `閲覧できるグループのない文書（管理者のみ）: ${groups.admins_only} 件` : "";
  const select = $("token-user");
  const wanted = select.dataset.wanted || select.value;
  select.replaceChildren(...users.items.map((u) => el("option", { value: u.name }, u.name)));
  if (users.items.some((u) => u.name === wanted)) select.value = wanted;
  delete select.dataset.wanted;
  expiryChoices(tokens.longest);
}

export function clearPeople() {
  for (const id of ["admin-users", "admin-tokens", "admin-groups", "token-user"]) $(id).replaceChildren();
  $("groups-note").textContent = "";
  hideToken();
  say("user-message", ""); say("token-message", "");
}
