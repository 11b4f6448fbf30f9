// Asking: the question box (its counter, Enter to send) and the answer streamed into the
// chat, which can be stopped, retried after a failure, or kept when it was done before the
// stop. A stored turn can be asked again or with its question edited: its answer is written
// again in place (a new version, or the edited turn with the turns after it removed).

import { $, el } from "./dom.js";
import { FINAL, api, japanese, json, sse } from "./api.js";
import { addAnswer, addQuestion, finish, resetAnswer, setQuestion } from "./answer.js";
import { current, loadConversations, openConversation, setCurrent } from "./conversations.js";
import { markdown } from "./markdown.js";
import { chosen } from "./status.js";

export let limits = { question_chars: 2000, comment_chars: 2000, search_chars: 100 };
export let streaming = null;  // the AbortController of the answer being written

export function setLimits(value) {
  limits = { ...limits, ...value };
}

function busy(on) {
  $("ask-button").hidden = on;
  $("stop-button").hidden = !on;
  if (on) $("stop-button").focus(); else $("question").focus();
}

// The answer node a question is written into: a new one, or the turn's own when it is asked
// again ({ kind: "again", turn, node }) or edited ({ kind: "edit", turn, node }).
function answerNode(question, categories, redo) {
  if (!redo) {
    addQuestion(question, categories);
    return addAnswer();
  }
  const node = redo.node;
  if (redo.kind === "edit") {
    setQuestion(node.previousElementSibling, question, categories);
    while (node.nextElementSibling) node.nextElementSibling.remove();  // removed on the server too
  }
  resetAnswer(node);
  return node;
}

export async function ask(question, categories = [...chosen], redo = null) {
  const node = answerNode(question, categories, redo);
  const progress = node.querySelector(".progress");
  const text = node.querySelector(".text");
  progress.textContent = "文書を検索しています…";
  node.setAttribute("aria-busy", "true");
  const controller = new AbortController();
  streaming = controller;
  busy(true);
  let restoring = null;  // a turn asked again or edited that did not finish: as the server has it
  try {
    // a new chat's conversation is made by the server with its first answer: a stop before
    // it leaves no empty conversation behind
    const body = current ? { question, categories, conversation: current } : { question, categories, new_conversation: true };
    if (redo) body[redo.kind] = redo.turn;
    const response = await api("/api/ask/stream", {
      ...json(body),
      headers: { "Content-Type": "application/json", Accept: "text/event-stream" },
      signal: controller.signal,
    });
    let written = "";
    for await (const { event, data } of sse(response)) {
      if (event === "hits") progress.textContent = "回答を作成しています…";
      else if (event === "token") { written += data.text; text.replaceChildren(markdown(written)); }
      else if (event === "done") {
        if (data.conversation && data.conversation !== current) setCurrent(data.conversation);
        finish(node, data, question, categories);
      }
      else if (event === "error") {
        if (redo) restoring = "回答の作成に失敗しました。";
        else failed(node, "回答の作成に失敗しました。", question, categories, true);
      }
      node.scrollIntoView({ block: "end" });
    }
    loadConversations();
  } catch (error) {
    if (redo && current && error.code !== "unauthorized") restoring = japanese(error);
    else if (error.code !== "unauthorized") failed(node, japanese(error), question, categories, !FINAL.has(error.code));
    if (error.code === "not_found" && current) { setCurrent(null); loadConversations(); restoring = null; }  // deleted elsewhere: the next question starts a new one
    if (error.name === "AbortError" && current && !redo) settle(node, current, question, categories);
    else if (error.name === "AbortError" && !current) loadConversations();  // a new chat's answer may be kept
  } finally {
    node.removeAttribute("aria-busy");
    node.querySelector(".progress")?.remove();
    streaming = null;
    busy(false);
  }
  if (restoring) await restore(redo, question, restoring);
}

// A turn asked again or edited whose answer did not come: the conversation as the server
// keeps it, that turn saying why, or that its new answer was kept after all (done before a
// stop reached the server).
async function restore(redo, question, message) {
  const conversation = current;
  await openConversation(conversation);
  const node = document.querySelector(`#messages .msg.a[data-turn="${redo.turn}"]`);
  if (!node || conversation !== current) return;
  const count = node.querySelector(".versions .count")?.textContent || "1/1";
  const kept = redo.kind === "edit"
    ? node.previousElementSibling.firstChild?.textContent === question
    : Number(count.split("/")[1]) > (redo.versions || 1);
  const said = kept ? "停止する前に回答ができあがっていたため、会話に記録されています。"
    : message + (redo.kind === "edit" ? "質問は書き換えていません。" : "前の回答を表示しています。");
  node.append(el("div", { class: "reason", role: "status" }, said));
  node.scrollIntoView({ block: "nearest" });
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

function failed(node, message, question, categories, retrying = true) {
  node.classList.add("error");
  node.querySelector(".text").textContent = message;
  if (!retrying) return;
  const retry = el("button", { type: "button" }, "再試行");
  retry.addEventListener("click", () => { if (!streaming) { node.remove(); ask(question, categories); } });
  node.append(el("div", { class: "actions" }, retry));
}

$("stop-button").addEventListener("click", () => streaming?.abort());

export function updateCounter() {
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
$("question").addEventListener("keydown", (event) => {
  // Enter sends; never while a Japanese IME is composing (isComposing, keyCode 229)
  if (event.key !== "Enter" || event.shiftKey || event.isComposing || event.keyCode === 229) return;
  event.preventDefault();
  if (!streaming) $("ask-form").requestSubmit();
});
