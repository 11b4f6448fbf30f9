// The conversations kept on the server: the list in the sidebar (pinned ones first, then by
// day), searching it, pinning, renaming, saving as Markdown and deleting one, opening one (its
// id in the address, #c=) and starting a new one.

import { $, askText, confirmAction, el, icon } from "./dom.js";
import { api, japanese, json } from "./api.js";
import { addAnswer, addQuestion, finish } from "./answer.js";
import { limits, streaming } from "./ask.js";
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

// The list as it stands, or the chats the search box finds (on the server: the words may be in
// a title, a question or an answer the user may still read).
export async function loadConversations() {
  const box = $("conversations");
  const mine = ++reading;
  $("conv-search").maxLength = limits.search_chars;
  const query = $("conv-search").value.trim();
  try {
    const path = query ? "/api/conversations?limit=50&q=" + encodeURIComponent(query) : "/api/conversations";
    const data = await (await api(path)).json();
    if (mine !== reading) return;  // read before a later one that has already been shown
    box.replaceChildren();
    if (query) showFound(box, data.conversations);
    else showListed(box, data.conversations);
  } catch (error) {
    if (mine !== reading) return;
    box.replaceChildren(el("p", { class: "hint" }, "履歴を読み込めません: " + japanese(error)));
  }
}

function showListed(box, conversations) {
  let group = null, list = null;
  for (const c of conversations) {
    const label = c.pinned ? "ピン留め" : day(c.updated_at);
    if (label !== group) { group = label; list = el("ul"); box.append(el("h3", {}, label), list); }
    list.append(conversationItem(c));
  }
  if (!conversations.length) box.append(el("p", { class: "hint" }, "まだ会話はありません"));
  $("conv-found").textContent = "";
}

function showFound(box, conversations) {
  const list = el("ul");
  for (const c of conversations) list.append(conversationItem(c));
  box.append(list);
  $("conv-found").textContent = conversations.length ? `${conversations.length}件見つかりました` : "見つかりませんでした";
}

function conversationItem(c) {
  const title = c.title || "無題の会話";
  const open = el("button", { type: "button", class: "open", title },
    title, el("span", { class: "when" }, c.match || shortTime(c.updated_at)));
  open.addEventListener("click", () => { openConversation(c.id); closeMenu(); });
  const tool = (name, label, action, pressed = null) => {
    const button = el("button", { type: "button", class: `tool ${name}`, ariaLabel: label, title: label }, icon(name));
    if (pressed !== null) button.setAttribute("aria-pressed", String(pressed));
    button.addEventListener("click", () => action(c));
    return button;
  };
  const tools = el("span", { class: "tools" },
    tool("pin", `「${title}」をピン留め`, pinConversation, Boolean(c.pinned)),
    tool("edit", `「${title}」の名前を変更`, renameConversation),
    tool("download", `「${title}」を Markdown で保存`, exportConversation),
    tool("trash", `「${title}」を削除`, deleteConversation));
  const item = el("li", { class: c.id === current ? "current" : "" }, open, tools);
  item.dataset.id = c.id;
  return item;
}

function focusTool(id, name) {
  document.querySelector(`#conversations li[data-id="${CSS.escape(id)}"] button.${name}`)?.focus();
}

async function pinConversation(c) {
  try {
    await api(`/api/conversations/${encodeURIComponent(c.id)}`, { ...json({ pinned: !c.pinned }), method: "PATCH" });
  } catch (error) { alert(japanese(error)); }
  await loadConversations();
  focusTool(c.id, "pin");
}

async function renameConversation(c) {
  const title = await askText("会話の名前を変更", c.title);
  if (title === null || !title.trim()) return;
  try {
    await api(`/api/conversations/${encodeURIComponent(c.id)}`, { ...json({ title }), method: "PATCH" });
  } catch (error) { alert(japanese(error)); }
  await loadConversations();
  focusTool(c.id, "edit");
}

// The conversation as a Markdown file (questions, answers and their sources), downloaded.
async function exportConversation(c) {
  try {
    const response = await api(`/api/conversations/${encodeURIComponent(c.id)}/export`);
    const named = /filename\*=UTF-8''([^;]+)/.exec(response.headers.get("Content-Disposition") || "");
    const link = el("a", { href: URL.createObjectURL(await response.blob()), download: named ? decodeURIComponent(named[1]) : "shirabe.md" });
    document.body.append(link);
    link.click();
    link.remove();
    setTimeout(() => URL.revokeObjectURL(link.href), 10000);
  } catch (error) { alert(japanese(error)); }
}

async function deleteConversation(c) {
  if (!await confirmAction(`「${c.title || "無題の会話"}」を削除しますか？この操作は元に戻せません。`)) return;
  try {
    await api(`/api/conversations/${encodeURIComponent(c.id)}`, { method: "DELETE" });
  } catch (error) { alert(japanese(error)); }
  if (c.id === current) newChat();
  loadConversations();
}

let searching = null;  // the search waits for a pause in typing
$("conv-search").addEventListener("input", () => {
  clearTimeout(searching);
  searching = setTimeout(loadConversations, 250);
});
$("conv-search").addEventListener("keydown", (event) => {
  if (event.key === "Escape" && $("conv-search").value) {
    event.preventDefault(); event.stopPropagation();
    $("conv-search").value = ""; loadConversations();
  }
});

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
