// The conversations kept on the server: the list in the sidebar by day, renaming and
// deleting one, opening one (its id in the address, #c=) and starting a new one.

import { $, el, icon } from "./dom.js";
import { api, japanese, json } from "./api.js";
import { addAnswer, addQuestion, finish } from "./answer.js";
import { streaming } from "./ask.js";
import { closeMenu } from "./layout.js";
import { lastStatus } from "./status.js";
import { showEmpty } from "./welcome.js";

export let current = null;  // the open conversation's id
let reading = 0;  // the latest reading of the list: an earlier one that comes later is stale

function day(iso) {
  const when = new Date(iso), now = new Date();
  const days = Math.floor((new Date(now.toDateString()) - new Date(when.toDateString())) / 86400000);
  if (days === 0) return "今日";
  if (days === 1) return "昨日";
  if (days < 7) return "この1週間";
  return `${when.getFullYear()}年${when.getMonth() + 1}月`;
}

function shortTime(iso) {
  return new Date(iso).toLocaleString("ja-JP", { month: "numeric", day: "numeric", hour: "2-digit", minute: "2-digit" });
}

export async function loadConversations() {
  const box = $("conversations");
  const mine = ++reading;
  try {
    const data = await (await api("/api/conversations")).json();
    if (mine !== reading) return;  // read before a later one that has already been shown
    box.replaceChildren();
    let group = null, list = null;
    for (const c of data.conversations) {
      const label = day(c.updated_at);
      if (label !== group) { group = label; list = el("ul"); box.append(el("h3", {}, label), list); }
      list.append(conversationItem(c));
    }
    if (!data.conversations.length) box.append(el("p", { class: "hint" }, "まだ会話はありません"));
  } catch (error) {
    if (mine !== reading) return;
    box.replaceChildren(el("p", { class: "hint" }, "履歴を読み込めません: " + japanese(error)));
  }
}

function conversationItem(c) {
  const open = el("button", { type: "button", class: "open", title: c.title || "無題の会話" },
    c.title || "無題の会話", el("span", { class: "when" }, shortTime(c.updated_at)));
  open.addEventListener("click", () => { openConversation(c.id); closeMenu(); });
  const rename = el("button", { type: "button", class: "tool", ariaLabel: `「${c.title}」の名前を変更`, title: "名前を変更" }, icon("edit"));
  rename.addEventListener("click", () => renameConversation(c));
  const remove = el("button", { type: "button", class: "tool", ariaLabel: `「${c.title}」を削除`, title: "削除" }, icon("trash"));
  remove.addEventListener("click", () => deleteConversation(c));
  const item = el("li", { class: c.id === current ? "current" : "" }, open, rename, remove);
  item.dataset.id = c.id;
  return item;
}

async function renameConversation(c) {
  const title = prompt("会話の名前", c.title);
  if (title === null || !title.trim()) return;
  try {
    await api(`/api/conversations/${encodeURIComponent(c.id)}`, { ...json({ title }), method: "PATCH" });
  } catch (error) { alert(japanese(error)); }
  await loadConversations();
  document.querySelector(`#conversations li[data-id="${CSS.escape(c.id)}"] button.tool`)?.focus();
}

async function deleteConversation(c) {
  if (!confirm(`「${c.title || "無題の会話"}」を削除しますか？この操作は元に戻せません。`)) return;
  try {
    await api(`/api/conversations/${encodeURIComponent(c.id)}`, { method: "DELETE" });
  } catch (error) { alert(japanese(error)); }
  if (c.id === current) newChat();
  loadConversations();
}

export function setCurrent(id) {
  current = id;
  history.replaceState(null, "", id ? "#c=" + encodeURIComponent(id) : location.pathname);
  for (const item of document.querySelectorAll("#conversations li")) {
    item.classList.toggle("current", item.dataset.id === id);
  }
}

export async function openConversation(id) {
  if (streaming) return;
  try {
    const data = await (await api(`/api/conversations/${encodeURIComponent(id)}`)).json();
    setCurrent(data.id);
    $("messages").replaceChildren();
    for (const turn of data.history) {
      addQuestion(turn.question, turn.categories);
      const node = addAnswer();
      finish(node, { ...turn, answer: turn.answer, turn: turn.position }, turn.question, turn.categories);
    }
    if (!data.history.length) showEmpty(lastStatus);
    else $("messages").lastElementChild.scrollIntoView({ block: "end" });
  } catch (error) {
    setCurrent(null);
    showEmpty(lastStatus);
    addAnswer().querySelector(".text").textContent = "会話を開けません: " + japanese(error);
  }
}

export function newChat() {
  if (streaming) streaming.abort();
  setCurrent(null);
  showEmpty(lastStatus);
  $("question").focus();
}
$("new-chat").addEventListener("click", () => { newChat(); closeMenu(); });
