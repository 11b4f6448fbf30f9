// Asking: the question box (its counter, Enter to send) and the answer streamed into the
// chat, which can be stopped, retried after a failure, or kept when it was done before the stop.

import { $, el } from "./dom.js";
import { FINAL, api, japanese, json, sse } from "./api.js";
import { addAnswer, addQuestion, finish } from "./answer.js";
import { current, loadConversations, setCurrent } from "./conversations.js";
import { markdown } from "./markdown.js";
import { chosen } from "./status.js";

export let limits = { question_chars: 2000, comment_chars: 2000 };
export let streaming = null;  // the AbortController of the answer being written

export function setLimits(value) {
  limits = value;
}

function busy(on) {
  $("ask-button").hidden = on;
  $("stop-button").hidden = !on;
  if (on) $("stop-button").focus(); else $("question").focus();
}

export async function ask(question, categories = [...chosen], again = null) {
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
    // a new chat's conversation is made by the server with its first answer: a stop before
    // it leaves no empty conversation behind
    const body = current ? { question, categories, conversation: current } : { question, categories, new_conversation: true };
    if (again) body.again = again;
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
      else if (event === "error") failed(node, "回答の作成に失敗しました。", question, categories, true, again);
      node.scrollIntoView({ block: "end" });
    }
    loadConversations();
  } catch (error) {
    if (error.code !== "unauthorized") failed(node, japanese(error), question, categories, !FINAL.has(error.code), again);
    if (error.code === "not_found" && current) { setCurrent(null); loadConversations(); }  // deleted elsewhere: the next question starts a new one
    if (error.name === "AbortError" && current) settle(node, current, question, categories);
    else if (error.name === "AbortError") loadConversations();  // a new chat's answer may be kept
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
