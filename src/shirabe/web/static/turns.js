// A stored turn's own actions: moving between its answers (‹1/2›; the one chosen is kept on
// the server, shown after a reload and read by the follow-ups), and editing its question to
// send it again (the turns after it are removed). ↑ in an empty question box edits the last
// question.

import { $, el, icon } from "./dom.js";
import { api, japanese, json } from "./api.js";
import { finish, resetAnswer } from "./answer.js";
import { ask, limits, streaming } from "./ask.js";
import { current } from "./conversations.js";

// ‹ n/m › for an answer that has several versions; null when it has one.
export function versions(node, data, question, categories) {
  if (!(data.versions > 1) || !data.turn || !current) return null;
  const box = el("span", { class: "versions", role: "group", ariaLabel: `回答 ${data.version}/${data.versions}` });
  const previous = el("button", { type: "button", class: "previous", ariaLabel: "前の回答", title: "前の回答" }, "‹");
  const next = el("button", { type: "button", class: "next", ariaLabel: "次の回答", title: "次の回答" }, "›");
  previous.disabled = data.version <= 1;
  next.disabled = data.version >= data.versions;
  previous.addEventListener("click", () => choose(node, data, data.version - 1, question, categories, "previous"));
  next.addEventListener("click", () => choose(node, data, data.version + 1, question, categories, "next"));
  box.append(previous, el("span", { class: "count" }, `${data.version}/${data.versions}`), next);
  return box;
}

async function choose(node, data, version, question, categories, pressed) {
  if (streaming) return;
  const conversation = current;
  try {
    const path = `/api/conversations/${encodeURIComponent(conversation)}/turns/${data.turn}`;
    const turn = await (await api(path, { ...json({ version }), method: "PATCH" })).json();
    if (conversation !== current || !node.isConnected) return;
    resetAnswer(node);
    finish(node, { ...turn, turn: turn.position }, question, categories);
    // the keyboard stays on the arrows: on the one pressed, or the other once it is the last
    const arrows = [...node.querySelectorAll(".versions button")];
    const same = arrows.find((b) => b.classList.contains(pressed));
    (same && !same.disabled ? same : arrows.find((b) => !b.disabled))?.focus();
  } catch (error) { alert(japanese(error)); }
}

export function offerEdit(asked, node, question, categories) {
  asked.querySelector(".edit-q")?.remove();
  const button = el("button", { type: "button", class: "edit-q", ariaLabel: "質問を編集して送り直す", title: "質問を編集して送り直す（↑）" }, icon("edit"));
  button.addEventListener("click", () => editQuestion(asked, node, question, categories));
  asked.append(button);
}

// The question as a box to edit in place: Enter sends (never while an IME is composing),
// Shift+Enter breaks the line, Escape puts the question back.
function editQuestion(asked, node, question, categories) {
  if (streaming || asked.querySelector("form")) return;
  const box = el("textarea", { rows: 2, maxLength: limits.question_chars, ariaLabel: "質問を編集" });
  box.value = question;
  const send = el("button", { type: "submit", class: "primary" }, "送信");
  const cancel = el("button", { type: "button" }, "キャンセル");
  const later = asked.nextElementSibling?.nextElementSibling;
  const note = later ? el("p", { class: "hint" }, "送信すると、この質問より後の会話は削除されます。") : "";
  const form = el("form", { class: "edit-form" }, box, el("div", { class: "row" }, send, cancel), note);
  const before = [...asked.childNodes];
  asked.classList.add("editing");
  asked.replaceChildren(form);
  const close = () => {
    asked.classList.remove("editing");
    asked.replaceChildren(...before);
    asked.querySelector(".edit-q")?.focus();
  };
  cancel.addEventListener("click", close);
  form.addEventListener("submit", (event) => {
    event.preventDefault();
    const text = box.value.trim();
    if (!text || streaming || text.length > limits.question_chars) return;
    asked.classList.remove("editing");
    ask(text, categories, { kind: "edit", turn: Number(asked.dataset.turn), node });
  });
  box.addEventListener("keydown", (event) => {
    if (event.key === "Escape") { event.preventDefault(); event.stopPropagation(); close(); return; }
    if (event.key !== "Enter" || event.shiftKey || event.isComposing || event.keyCode === 229) return;
    event.preventDefault();
    form.requestSubmit();
  });
  box.focus();
  box.setSelectionRange(box.value.length, box.value.length);
  asked.scrollIntoView({ block: "nearest" });
}

$("question").addEventListener("keydown", (event) => {
  if (event.key !== "ArrowUp" || $("question").value || event.isComposing || streaming) return;
  const last = [...document.querySelectorAll("#messages .msg.q[data-turn]")].pop();
  if (!last?.querySelector(".edit-q")) return;
  event.preventDefault();
  last.querySelector(".edit-q").click();
});
