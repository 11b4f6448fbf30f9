"use strict";
// The chat page: conversations kept on the server, answers streamed with their sources,
// feedback, uploads and the document list. Text from documents is only ever set as text.

const $ = (id) => document.getElementById(id);
let token = localStorage.getItem("shirabe-token") || "";
const chosen = new Set();
let limits = { question_chars: 2000, comment_chars: 2000 };
let current = null;      // the open conversation's id
let streaming = null;    // the AbortController of the answer being written

// An anonymous browser keeps its conversations under a random id of its own.
function clientId() {
  let id = localStorage.getItem("shirabe-client");
  if (!id) {
    const bytes = crypto.getRandomValues(new Uint8Array(18));
    id = btoa(String.fromCharCode(...bytes)).replace(/\+/g, "-").replace(/\//g, "_");
    localStorage.setItem("shirabe-client", id);
  }
  return id;
}

function headers(extra = {}) {
  const base = { ...extra, "X-Shirabe-Client": clientId() };
  return token ? { ...base, Authorization: "Bearer " + token } : base;
}

const MESSAGES = {
  unauthorized: "サインインが必要です。",
  forbidden: "この操作の権限がありません。",
  not_found: "見つかりませんでした（削除されたか、閲覧できません）。",
  conversation_full: "この会話は保存できる上限に達しました。新しい会話を始めてください。",
  invalid_request: "入力が正しくありません。",
  unsearchable: "検索できる言葉が含まれていません。質問を言い換えてください。",
  busy: "索引を更新中です。しばらくしてからもう一度お試しください。",
  sign_in_required: "アップロードにはサインインが必要です。管理者から受け取った API トークンでサインインしてください。",
  conflict: "同じ名前のファイルがあり、ほかの人がアップロードしたものなので置き換えられません。名前を変えてアップロードしてください。",
  model_error: "回答を作成するモデルに接続できません。しばらくしてからもう一度お試しください。",
  too_large: "送信するデータが大きすぎます。",
  too_many_sign_ins: "サインインの失敗が続いたため、しばらく受け付けません。1分ほど待ってからお試しください。",
};

// Why a token did not sign in, as the server says it (401 or 429), for the sign-in view.
function refusal(status, message) {
  if (status === 429) return MESSAGES.too_many_sign_ins;
  if (!token) return "";
  return message === "expired token" ? "トークンの有効期限が切れています。管理者に新しいトークンを発行してもらってください。" : "トークンが正しくありません";
}

// Errors that come back the same when the same thing is sent again: no retry is offered.
const FINAL = new Set(["unsearchable", "invalid_request", "forbidden", "conversation_full", "not_found"]);

class ApiError extends Error {
  constructor(code, message, status) { super(message); this.code = code; this.status = status; }
}

function japanese(error) {
  if (error.name === "AbortError") return "停止しました。";
  if (error instanceof ApiError) {
    if (MESSAGES[error.code]) return MESSAGES[error.code];
    if (error.status >= 500) return "サーバーでエラーが発生しました。";
    return "エラーが発生しました（" + error.status + "）。";
  }
  return "サーバーに接続できません。ネットワークを確認してください。";
}

async function api(path, options = {}) {
  const response = await fetch(path, { ...options, headers: headers(options.headers || {}) });
  if (response.status === 401 || (response.status === 429 && token)) {
    let message = "";
    try { message = (await response.json()).error.message; } catch (_) {}
    showSignin(refusal(response.status, message));
    throw new ApiError("unauthorized", message || "unauthorized", response.status);
  }
  if (!response.ok) {
    let code = "error", message = "HTTP " + response.status;
    try { const body = await response.json(); code = body.error.code; message = body.error.message; } catch (_) {}
    throw new ApiError(code, message, response.status);
  }
  return response;
}

const json = (body) => ({ method: "POST", headers: { "Content-Type": "application/json" }, body: JSON.stringify(body) });

function el(tag, props = {}, ...children) {
  const node = document.createElement(tag);
  for (const [key, value] of Object.entries(props)) {
    if (key === "class") node.className = value;
    else if (key.startsWith("aria") || key === "role" || key === "title") node.setAttribute(key.replace(/[A-Z]/g, (c) => "-" + c.toLowerCase()), value);
    else node[key] = value;
  }
  node.append(...children);
  return node;
}

// Icons drawn as SVG (the shapes of Feather icons, MIT licence), so that no emoji font is needed.
const ICONS = {
  up: "M14 9V5a3 3 0 0 0-3-3l-4 9v11h11.28a2 2 0 0 0 2-1.7l1.38-9a2 2 0 0 0-2-2.3zM7 22H4a2 2 0 0 1-2-2v-7a2 2 0 0 1 2-2h3",
  down: "M10 15v4a3 3 0 0 0 3 3l4-9V2H5.72a2 2 0 0 0-2 1.7l-1.38 9a2 2 0 0 0 2 2.3zm7-13h2.67A2.31 2.31 0 0 1 22 4v7a2.31 2.31 0 0 1-2.33 2H17",
  trash: "M3 6h18M19 6l-1 14a2 2 0 0 1-2 2H8a2 2 0 0 1-2-2L5 6m3 0V4a2 2 0 0 1 2-2h4a2 2 0 0 1 2 2v2",
  edit: "M12 20h9M16.5 3.5a2.12 2.12 0 0 1 3 3L7 19l-4 1 1-4z",
};
function icon(name) {
  const svg = document.createElementNS("http://www.w3.org/2000/svg", "svg");
  svg.setAttribute("viewBox", "0 0 24 24"); svg.setAttribute("width", "16"); svg.setAttribute("height", "16");
  svg.setAttribute("aria-hidden", "true"); svg.setAttribute("class", "icon");
  const path = document.createElementNS("http://www.w3.org/2000/svg", "path");
  path.setAttribute("d", ICONS[name]);
  svg.append(path);
  return svg;
}

function showSignin(message = "") {
  $("app").hidden = true; $("signin").hidden = false; $("signout").hidden = !token;
  $("signin-error").textContent = message; $("token").focus();
}

async function start() {
  try {
    const status = await (await api("/api/status")).json();
    $("signin").hidden = true; $("app").hidden = false; $("signout").hidden = !token;
    $("who").textContent = status.user ? status.user + (status.admin ? "（管理者）" : "") : "ゲスト";
    $("tab-admin").hidden = !status.admin;
    document.body.classList.toggle("admin", Boolean(status.admin));
    if (!status.admin) clearAdmin();  // another user signed in: nothing of the admin's stays
    limits = status.limits || limits;
    if (status.file_types) {
      $("files").accept = status.file_types.join(",");
      $("file-types").textContent = "取り込めるファイル: " + status.file_types.join(" ");
    }
    renderStatus(status);
    updateCounter();
    await loadConversations();
    const wanted = new URLSearchParams(location.hash.slice(1)).get("c");
    if (wanted && wanted !== current) await openConversation(wanted);
    else if (!current) showEmpty(status);
    $("question").focus();
  } catch (error) {
    if (error.code !== "unauthorized") $("status").textContent = japanese(error);
  }
}

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

let lastStatus = null;
function renderStatus(status) {
  if (lastStatus && (lastStatus.files !== status.files || lastStatus.user !== status.user)) examples = null;
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

function showEmpty(status) {
  const box = el("div", { class: "empty" });
  if (status && status.files === 0) {
    box.append(el("p", {}, "まだ文書がありません。"),
      el("p", { class: "hint" }, status.admin
        ? "「アップロード」タブからファイルを追加するか、サーバーで shirabe ingest フォルダ を実行してください。"
        : "管理者に文書の追加を依頼してください。"));
  } else {
    box.append(el("p", {}, "社内文書について質問してください。回答には出典が付きます。"));
    const examples = el("div", { class: "examples", role: "group", ariaLabel: "質問の例" });
    box.append(examples);
    showExamples(examples);
  }
  $("messages").replaceChildren(box);
}

// Questions about documents the user may read, offered on an empty chat: a click asks one.
let examples = null;  // asked once per sign-in and index change
async function showExamples(box) {
  try {
    examples = examples || api("/api/examples?n=4").then((r) => r.json());
    const data = await examples;
    for (const question of data.items) {
      const button = el("button", { type: "button", class: "chip example" }, question);
      button.addEventListener("click", () => { if (!streaming) ask(question); });
      box.append(button);
    }
  } catch (_) { examples = null; /* a convenience: the chat works without them */ }
}

// ---------------------------------------------------------------- conversations

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

async function loadConversations() {
  const box = $("conversations");
  try {
    const data = await (await api("/api/conversations")).json();
    box.replaceChildren();
    let group = null, list = null;
    for (const c of data.conversations) {
      const label = day(c.updated_at);
      if (label !== group) { group = label; list = el("ul"); box.append(el("h3", {}, label), list); }
      list.append(conversationItem(c));
    }
    if (!data.conversations.length) box.append(el("p", { class: "hint" }, "まだ会話はありません"));
  } catch (error) {
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

function setCurrent(id) {
  current = id;
  history.replaceState(null, "", id ? "#c=" + encodeURIComponent(id) : location.pathname);
  for (const item of document.querySelectorAll("#conversations li")) {
    item.classList.toggle("current", item.dataset.id === id);
  }
}

async function openConversation(id) {
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

function newChat() {
  if (streaming) streaming.abort();
  setCurrent(null);
  showEmpty(lastStatus);
  $("question").focus();
}
$("new-chat").addEventListener("click", () => { newChat(); closeMenu(); });

// ---------------------------------------------------------------- asking

function addQuestion(text, categories = []) {
  if ($("messages").querySelector(".empty")) $("messages").replaceChildren();
  const node = el("div", { class: "msg q" }, text);
  if (categories.length) node.append(el("span", { class: "scope", title: "この質問の絞り込み" }, categories.join("・")));
  $("messages").append(node);
  node.scrollIntoView({ block: "end" });
  return node;
}

function addAnswer() {
  const node = el("div", { class: "msg a" }, el("div", { class: "progress", role: "status" }), el("div", { class: "text" }));
  $("messages").append(node);
  node.scrollIntoView({ block: "end" });
  return node;
}

// Where in its file a passage is: p.3, シート 売上, 12 行, スライド 4.
function located(locator = {}) {
  return [locator.page && `p.${locator.page}`, locator.sheet && `シート ${locator.sheet}`,
    locator.row && `${locator.row} 行`, locator.slide && `スライド ${locator.slide}`].filter(Boolean);
}

function place(citation) {
  if (citation.label) return citation.label;
  const parts = [citation.source];
  if (citation.heading_path.length) parts.push(citation.heading_path.join(" > "));
  return [...parts, ...located(citation.locator || {})].join(" › ");
}

// Markdown as DOM nodes, never as HTML: paragraphs, lists, tables, code blocks, **bold**
// and `code`; [n] markers become buttons opening source n (when ``cite`` knows n).
function inline(parent, text, cite) {
  const pattern = /\*\*([^*]+)\*\*|`([^`]+)`|\[(\d{1,3})\]/g;
  let last = 0;
  for (const match of text.matchAll(pattern)) {
    parent.append(text.slice(last, match.index));
    if (match[1] !== undefined) parent.append(el("strong", {}, match[1]));
    else if (match[2] !== undefined) parent.append(el("code", {}, match[2]));
    else {
      const link = cite ? cite(Number(match[3])) : null;
      parent.append(link || match[0]);
    }
    last = match.index + match[0].length;
  }
  parent.append(text.slice(last));
  return parent;
}

const CELLS = (line) => line.trim().replace(/^\|/, "").replace(/\|$/, "").split("|").map((c) => c.trim());

function markdown(text, cite = null) {
  const out = document.createDocumentFragment();
  const lines = text.replace(/\r\n/g, "\n").split("\n");
  for (let i = 0; i < lines.length;) {
    const line = lines[i];
    if (/^```/.test(line)) {
      const code = [];
      for (i++; i < lines.length && !/^```/.test(lines[i]); i++) code.push(lines[i]);
      i++;
      out.append(el("pre", {}, el("code", {}, code.join("\n"))));
    } else if (/^\s*\|.*\|\s*$/.test(line)) {
      const rows = [];
      for (; i < lines.length && /^\s*\|.*\|\s*$/.test(lines[i]); i++) rows.push(lines[i]);
      const table = el("table", { class: "md" });
      const rule = rows.length > 1 && /^[\s|:-]+$/.test(rows[1]);
      if (rule) table.append(el("thead", {}, el("tr", {}, ...CELLS(rows[0]).map((c) => inline(el("th"), c, cite)))));
      const body = el("tbody");
      for (const row of rows.slice(rule ? 2 : 0)) body.append(el("tr", {}, ...CELLS(row).map((c) => inline(el("td"), c, cite))));
      table.append(body);
      out.append(el("div", { class: "table-wrap" }, table));
    } else if (/^\s*(?:[-*・]|\d{1,2}[.)．])\s+/.test(line)) {
      const ordered = /^\s*\d/.test(line);
      const list = el(ordered ? "ol" : "ul");
      for (; i < lines.length && /^\s*(?:[-*・]|\d{1,2}[.)．])\s+/.test(lines[i]); i++) {
        list.append(inline(el("li"), lines[i].replace(/^\s*(?:[-*・]|\d{1,2}[.)．])\s+/, ""), cite));
      }
      out.append(list);
    } else if (/^#{1,6}\s/.test(line)) {
      out.append(inline(el("p", { class: "md-heading" }), line.replace(/^#{1,6}\s+/, ""), cite));
      i++;
    } else if (!line.trim()) {
      i++;
    } else {
      out.append(inline(el("p"), line, cite));
      i++;
    }
  }
  return out;
}

// The answer rendered, its [n] markers as buttons opening source n.
function renderAnswer(box, text, citations) {
  const byNumber = new Map(citations.map((c) => [c.number, c]));
  const cite = (n) => {
    const citation = byNumber.get(n);
    if (!citation) return null;
    const link = el("button", { type: "button", class: "cite", ariaLabel: `出典 ${n}: ${place(citation)}` }, `[${n}]`);
    link.addEventListener("click", () => openPassage(citation, text));
    return link;
  };
  box.replaceChildren(markdown(text, cite));
}

function finish(node, data, question, categories) {
  node.querySelector(".progress")?.remove();
  if (data.turn) node.dataset.turn = data.turn;
  const text = node.querySelector(".text");
  const citations = data.citations || [];
  renderAnswer(text, data.answer, citations);
  if (data.refused) {
    node.classList.add("refused");
    if (categories.length) text.append(`（絞り込み: ${categories.join("・")} の文書のみ）`);
  }
  if (data.withheld) node.classList.add("refused");
  if (data.standalone) node.prepend(el("div", { class: "reason" }, "検索した質問: " + data.standalone));
  if (data.refused && data.refusal_reason) node.append(el("div", { class: "reason" }, "理由: " + data.refusal_reason));
  if (typeof data.confidence === "number") {
    const percent = Math.round(data.confidence * 100);
    node.append(el("div", { class: "confidence", title: "文書がこの質問に答えている確率（学習した判定による）" }, `答えが文書にある確率: ${percent}%`));
  }
  if (citations.length) {
    const chips = el("div", { class: "chips" });
    for (const citation of citations) {
      const chip = el("button", { type: "button", class: "chip" }, `[${citation.number}] ${place(citation)}`);
      chip.addEventListener("click", () => openPassage(citation, data.answer));
      chips.append(chip);
    }
    node.append(chips);
  }
  node.append(actions(node, data, question, categories));
}

function actions(node, data, question, categories) {
  const bar = el("div", { class: "actions" });
  const copy = el("button", { type: "button" }, "コピー");
  copy.addEventListener("click", async () => {
    const sources = (data.citations || []).map((c) => `[${c.number}] ${place(c)}`).join("\n");
    try { await navigator.clipboard.writeText(data.answer + (sources ? "\n\n" + sources : "")); copy.textContent = "コピーしました"; }
    catch (_) { copy.textContent = "コピーできません"; }
    setTimeout(() => { copy.textContent = "コピー"; }, 2000);
  });
  const again = el("button", { type: "button", title: "この質問をもう一度回答させる（前の回答も残ります）" }, "再生成");
  // asked again after the turns before it, so that it is not read as a follow-up of itself
  again.addEventListener("click", () => { if (!streaming) ask(question, categories, data.turn && current ? data.turn : null); });
  bar.append(copy, again);
  if (data.turn && current) {
    const up = el("button", { type: "button", ariaPressed: "false", ariaLabel: "役に立った", title: "役に立った" }, icon("up"));
    const down = el("button", { type: "button", ariaPressed: "false", ariaLabel: "役に立たなかった", title: "役に立たなかった" }, icon("down"));
    up.addEventListener("click", () => rate(node, data.turn, "up", up, down));
    down.addEventListener("click", () => rate(node, data.turn, "down", down, up));
    bar.append(up, down);
    const given = data.feedback;  // as given before a reload
    if (given) {
      (given.rating === "up" ? up : down).setAttribute("aria-pressed", "true");
      if (given.comment) bar.append(el("span", { class: "given" }, "コメント: " + given.comment));
    }
  }
  return bar;
}

async function rate(node, position, rating, pressed, other, comment = "") {
  const conversation = current;
  try {
    await api(`/api/conversations/${encodeURIComponent(conversation)}/turns/${position}/feedback`, json({ rating, comment }));
    pressed.setAttribute("aria-pressed", "true"); other.setAttribute("aria-pressed", "false");
  } catch (error) { alert(japanese(error)); return; }
  node.querySelector(".feedback-form")?.remove();
  node.querySelector(".thanks")?.remove();
  node.querySelector(".given")?.remove();  // the comment given before is replaced
  if (comment) { node.append(el("div", { class: "thanks", role: "status" }, "ご意見ありがとうございました。")); return; }
  const input = el("input", { type: "text", maxLength: limits.comment_chars, placeholder: rating === "down" ? "どこが違いましたか（任意）" : "コメント（任意）", ariaLabel: "コメント" });
  const send = el("button", { type: "submit" }, "送る");
  const form = el("form", { class: "feedback-form" }, input, send);
  form.addEventListener("submit", (event) => {
    event.preventDefault();
    if (input.value.trim()) rate(node, position, rating, pressed, other, input.value.trim());
    else form.remove();
  });
  node.append(form);
}

function openPassage(citation, answer = "") {
  $("passage-title").textContent = `出典 [${citation.number}]`;
  $("passage-where").textContent = place(citation);
  const body = $("passage-text");
  body.replaceChildren(markdown(citation.text));
  // mark the passage's sentences and table rows the answer quotes
  const plain = answer.replace(/\[\d+\]/g, "").replace(/\s+/g, "");
  let first = null;
  for (const node of body.querySelectorAll("p, li, tr")) {
    const sentences = node.textContent.split(/(?<=[。！？])/);
    const quoted = sentences.some((s) => { const core = s.replace(/\s+/g, "").replace(/[。！？]$/, ""); return core.length >= 6 && plain.includes(core); });
    const cells = node.tagName === "TR" && [...node.children].slice(1).some((c) => c.textContent.trim().length >= 3 && plain.includes(c.textContent.replace(/\s+/g, "")));
    if (quoted || cells) { node.classList.add("quoted"); first = first || node; }
  }
  const page = (citation.locator || {}).page;
  if (page && /\.pdf$/i.test(citation.source)) showPage(body, citation, page);
  $("passage-whole").onclick = () => { $("passage").close(); openDocument({ chunk: citation.chunk_id, source: citation.source }); };
  $("passage").showModal();
  $("passage-close").focus();
  first?.scrollIntoView({ block: "center" });
}

// The PDF page itself, with the passage marked, under the passage's text.
async function showPage(body, citation, page) {
  const figure = el("figure", { class: "page" }, el("figcaption", { class: "hint" }, `${page} ページ（該当箇所に色付け）`));
  body.append(figure);
  try {
    const response = await api(`/api/passages/${citation.chunk_id}/page.png`);
    const url = URL.createObjectURL(await response.blob());
    const image = el("img", { src: url, alt: `${citation.source} の ${page} ページ` });
    image.addEventListener("load", () => URL.revokeObjectURL(url));
    figure.append(image);
  } catch (error) {
    figure.append(el("p", { class: "hint" }, error.code === "changed"
      ? "文書が索引の後に変更されたため、ページを表示できません。" : "ページを表示できません: " + japanese(error)));
  }
}

// The whole document, passage by passage with its headings and pages, opened at one passage
// (a citation's) or at the top; the passage is marked and scrolled to.
let documentRequest = 0;
async function openDocument({ chunk = null, id = null, source = null }) {
  const dialog = $("document"), body = $("document-text");
  const request = ++documentRequest;
  $("document-title").textContent = "文書";
  $("document-where").textContent = "読み込み中…";
  body.replaceChildren();
  if (!dialog.open) dialog.showModal();
  let data, moved = false;
  try {
    try {
      data = await (await api(chunk ? `/api/passages/${chunk}/document` : `/api/documents/${id}`)).json();
    } catch (error) {
      // the passage is gone (its document was changed since): open the document by its path
      if (!(error.code === "not_found" && chunk && source)) throw error;
      const found = await (await api("/api/documents?" + new URLSearchParams({ q: source, status: "ok", limit: "20" }))).json();
      const same = found.items.find((doc) => doc.path === source);
      if (!same) throw error;
      data = await (await api(`/api/documents/${same.id}`)).json();
      moved = true;
    }
  } catch (error) {
    if (request === documentRequest) $("document-where").textContent = "文書を開けません: " + japanese(error);
    return;
  }
  if (request !== documentRequest) return;  // another document was opened meanwhile
  body.replaceChildren();
  if (moved) body.append(el("p", { class: "hint", role: "status" }, "引用した箇所は、文書の更新により見つかりません。文書の先頭から表示します。"));
  $("document-title").textContent = data.path.split("/").pop();
  $("document-where").textContent = [data.path, data.category, `${data.passages.filter((p) => !p.is_summary).length} 節`].filter(Boolean).join(" › ");
  let target = null, heading = "";
  for (const passage of data.passages) {
    if (passage.is_summary) continue;
    const where = passage.heading_path.join(" > ");
    const section = el("section", { class: "passage", id: `passage-${passage.chunk_id}` });
    if (where && where !== heading) section.append(el("h3", {}, where));
    heading = where;
    const at = located(passage.locator || {}).join(" ");
    if (at) section.append(el("p", { class: "hint" }, at));
    section.append(markdown(passage.text));
    if (passage.chunk_id === chunk) { section.classList.add("cited"); target = section; }
    body.append(section);
  }
  (target || body).scrollIntoView({ block: "start" });
  $("document-close").focus();
}

async function* sse(response) {
  const reader = response.body.getReader();
  const decoder = new TextDecoder();
  let buffer = "";
  for (;;) {
    const { value, done } = await reader.read();
    if (done) break;
    buffer += decoder.decode(value, { stream: true }).replace(/\r\n/g, "\n");
    let cut;
    while ((cut = buffer.indexOf("\n\n")) >= 0) {
      const block = buffer.slice(0, cut); buffer = buffer.slice(cut + 2);
      let event = "message", data = "";
      for (const line of block.split("\n")) {
        if (line.startsWith("event:")) event = line.slice(6).trim();
        else if (line.startsWith("data:")) data += line.slice(5).trim();
      }
      if (data) yield { event, data: JSON.parse(data) };
    }
  }
}

function busy(on) {
  $("ask-button").hidden = on;
  $("stop-button").hidden = !on;
  if (on) $("stop-button").focus(); else $("question").focus();
}

async function ask(question, categories = [...chosen], again = null) {
  addQuestion(question, categories);
  const node = addAnswer();
  const progress = node.querySelector(".progress");
  const text = node.querySelector(".text");
  progress.textContent = "文書を検索しています…";
  node.setAttribute("aria-busy", "true");
  const controller = new AbortController();
  streaming = controller;
  busy(true);
  try {
    if (!current) {
      const made = await (await api("/api/conversations", { ...json({}), signal: controller.signal })).json();
      setCurrent(made.id);
    }
    const response = await api("/api/ask/stream", {
      ...json(again ? { question, categories, conversation: current, again } : { question, categories, conversation: current }),
      headers: { "Content-Type": "application/json", Accept: "text/event-stream" },
      signal: controller.signal,
    });
    let written = "";
    for await (const { event, data } of sse(response)) {
      if (event === "hits") progress.textContent = "回答を作成しています…";
      else if (event === "token") { written += data.text; text.replaceChildren(markdown(written)); }
      else if (event === "done") finish(node, data, question, categories);
      else if (event === "error") failed(node, "回答の作成に失敗しました。", question, categories, true, again);
      node.scrollIntoView({ block: "end" });
    }
    loadConversations();
  } catch (error) {
    if (error.code !== "unauthorized") failed(node, japanese(error), question, categories, !FINAL.has(error.code), again);
    if (error.code === "not_found" && current) { setCurrent(null); loadConversations(); }  // deleted elsewhere: the next question starts a new one
    if (error.name === "AbortError" && current) settle(node, current, question, categories);
  } finally {
    node.removeAttribute("aria-busy");
    node.querySelector(".progress")?.remove();
    streaming = null;
    busy(false);
  }
}

// A stop that reached the server after it had finished the answer: the answer was kept in the
// conversation, so it is shown here too, saying so, instead of 停止しました.
async function settle(node, conversation, question, categories) {
  try {
    const data = await (await api(`/api/conversations/${encodeURIComponent(conversation)}`)).json();
    if (conversation !== current || !node.isConnected) return;
    const shown = new Set([...document.querySelectorAll(".msg.a[data-turn]")].map((n) => Number(n.dataset.turn)));
    const kept = data.history.filter((t) => !shown.has(t.position) && t.question === question).pop();
    if (!kept) return;
    node.classList.remove("error");
    node.querySelector(".actions")?.remove();
    finish(node, { ...kept, turn: kept.position }, question, categories);
    node.append(el("div", { class: "reason" }, "停止する前に回答ができあがっていたため、会話に記録されています。"));
  } catch (_) { /* the stop stands as shown */ }
}

function failed(node, message, question, categories, retrying = true, again = null) {
  node.classList.add("error");
  node.querySelector(".text").textContent = message;
  if (!retrying) return;
  const retry = el("button", { type: "button" }, "再試行");
  retry.addEventListener("click", () => { if (!streaming) { node.remove(); ask(question, categories, again); } });
  node.append(el("div", { class: "actions" }, retry));
}

$("stop-button").addEventListener("click", () => streaming?.abort());

function updateCounter() {
  const length = $("question").value.length;
  const max = limits.question_chars;
  $("counter").textContent = `${length} / ${max}`;
  $("counter").classList.toggle("over", length > max);
  $("limit-note").textContent = length > max ? `質問は ${max} 文字までです（${length - max} 文字多い）` : "";
}
// the box grows with what is typed, up to a third of the window, then scrolls
function fitQuestion() {
  const box = $("question");
  box.style.height = "auto";
  box.style.height = Math.min(box.scrollHeight + 2, Math.max(window.innerHeight / 3, 60)) + "px";
}
$("question").addEventListener("input", () => { updateCounter(); fitQuestion(); });

$("ask-form").addEventListener("submit", (event) => {
  event.preventDefault();
  const question = $("question").value.trim();
  if (!question || streaming) return;
  if (question.length > limits.question_chars) { updateCounter(); return; }  // the text stays
  $("question").value = "";
  updateCounter();
  fitQuestion();
  ask(question);
});
// the skip link focuses the question box without touching the address (#c= is the conversation)
document.querySelector(".skip").addEventListener("click", (event) => {
  event.preventDefault();
  if ($("app").hidden) { $("token").focus(); return; }  // signed out: the token comes first
  select("chat"); closeMenu(); $("question").focus();
});
$("question").addEventListener("keydown", (event) => {
  // Enter sends; never while a Japanese IME is composing (isComposing, keyCode 229)
  if (event.key !== "Enter" || event.shiftKey || event.isComposing || event.keyCode === 229) return;
  event.preventDefault();
  if (!streaming) $("ask-form").requestSubmit();
});
document.addEventListener("keydown", (event) => {
  const mod = event.ctrlKey || event.metaKey;
  if (mod && event.shiftKey && event.key.toLowerCase() === "o") { event.preventDefault(); newChat(); }
  else if (event.key === "/" && !/^(INPUT|TEXTAREA|SELECT)$/.test(document.activeElement.tagName)) {
    event.preventDefault(); select("chat"); $("question").focus();
  } else if (event.key === "Escape" && $("sidebar").classList.contains("open")) {
    closeMenu(); $("menu-toggle").focus();
  } else if (event.key === "Escape" && streaming) streaming.abort();
});

// ---------------------------------------------------------------- sign-in, menu, tabs

$("signin-form").addEventListener("submit", async (event) => {
  event.preventDefault();
  token = $("token").value.trim();
  localStorage.setItem("shirabe-token", token);
  $("token").value = "";
  await start();  // a refused token is said so by api(); anything else here:
  if (!$("signin").hidden && !$("signin-error").textContent) showSignin("サインインできませんでした。しばらくしてからもう一度お試しください。");
});
$("signout").addEventListener("click", () => {
  token = ""; localStorage.removeItem("shirabe-token"); location.hash = ""; location.reload();
});
$("passage-close").addEventListener("click", () => $("passage").close());
for (const dialog of [$("passage"), $("document")]) {  // a click on the backdrop closes it
  let pressed = null;  // not a text selection that started inside and ended outside
  dialog.addEventListener("mousedown", (event) => { pressed = event.target; });
  dialog.addEventListener("click", (event) => {
    if (event.target === dialog && pressed === dialog) dialog.close();
  });
}
$("document-close").addEventListener("click", () => $("document").close());

function closeMenu() {
  $("sidebar").classList.remove("open");
  $("menu-toggle").setAttribute("aria-expanded", "false");
  $("menu-toggle").textContent = "メニュー";
}
$("menu-toggle").addEventListener("click", () => {
  const open = $("sidebar").classList.toggle("open");
  $("menu-toggle").setAttribute("aria-expanded", String(open));
  $("menu-toggle").textContent = open ? "閉じる" : "メニュー";
});

const tabs = ["chat", "upload", "docs", "admin"];
function select(name) {
  for (const tab of tabs) {
    const on = tab === name;
    $("tab-" + tab).setAttribute("aria-selected", String(on));
    $("tab-" + tab).tabIndex = on ? 0 : -1;
    $("view-" + tab).classList.toggle("active", on);
  }
  if (name === "docs") loadDocuments();
  if (name === "admin") loadAdmin();
}
tabs.forEach((tab, i) => {
  const button = $("tab-" + tab);
  button.addEventListener("click", () => select(tab));
  button.addEventListener("keydown", (event) => {
    const step = event.key === "ArrowRight" ? 1 : event.key === "ArrowLeft" ? -1 : 0;
    if (!step) return;
    let next = tabs[i];
    do next = tabs[(tabs.indexOf(next) + step + tabs.length) % tabs.length]; while ($("tab-" + next).hidden);
    select(next); $("tab-" + next).focus();
  });
});

// ---------------------------------------------------------------- uploads and documents

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
  [/time limit|SHIRABE_MAX_LOAD_SECONDS/, "読み込みに時間がかかりすぎました"],
  [/memory/, "読み込みに必要なメモリが上限を超えました"],
  [/^needs /, "サーバーに必要な部品が入っていません（管理者に連絡してください）"],
];
function failure(reason = "") {
  const found = FAILURES.find(([pattern]) => pattern.test(reason));
  return (found ? found[1] : "読み込めませんでした") + (reason ? `（${reason}）` : "");
}

const OUTCOMES = { added: "追加", updated: "更新", unchanged: "変更なし", failed: "失敗", removed: "削除" };

function resultRow(file) {
  const why = file.outcome === "failed" ? failure(file.reason) : file.reason;
  const outcome = el("td", {}, (OUTCOMES[file.outcome] || file.outcome) + (why ? `: ${why}` : ""));
  if (file.outcome === "failed") outcome.className = "failed";
  return el("tr", {}, el("td", {}, file.path), outcome);
}

async function upload(files) {
  if (!files.length) {
    $("upload-results").replaceChildren(el("tr", {}, el("td", { colSpan: 2, className: "failed" }, "ファイルが選ばれていません。ドロップするか、「ファイルを選択」から選んでください。")));
    return;
  }
  const form = new FormData();
  for (const file of files) form.append("files", file);
  form.append("category", $("upload-category").value || "アップロード");
  const results = $("upload-results");
  results.replaceChildren();
  const bar = $("upload-progress");
  bar.hidden = false; bar.value = 0; bar.max = files.length;
  $("upload-button").disabled = true;
  try {
    const response = await api("/api/documents", { method: "POST", body: form, headers: { Accept: "text/event-stream" } });
    for await (const { event, data } of sse(response)) {
      if (event === "progress") { bar.max = data.total; bar.value = data.done; }
      if (event === "done") {
        results.replaceChildren(...data.files.map(resultRow));
        $("files").value = "";  // done: the next upload starts from nothing chosen
        start();
      }
    }
  } catch (error) {
    const shown = error.code === "forbidden"
      ? "このカテゴリにはアップロードできません（閲覧できるグループに、あなたの入っていないグループがあります）。"
      : japanese(error);
    results.append(el("tr", {}, el("td", { colSpan: 2, className: "failed", title: error.message || "" }, "アップロードできませんでした: " + shown)));
  } finally {
    $("upload-button").disabled = false;
  }
}
$("upload-button").addEventListener("click", () => upload([...$("files").files]));
const drop = $("drop");
drop.addEventListener("dragover", (event) => { event.preventDefault(); drop.classList.add("over"); });
drop.addEventListener("dragleave", () => drop.classList.remove("over"));
drop.addEventListener("drop", (event) => {
  event.preventDefault(); drop.classList.remove("over"); upload([...event.dataTransfer.files]);
});

let documentsRequest = 0;
async function loadDocuments() {
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

document.addEventListener("DOMContentLoaded", start);  // after admin.js, which start() may use
