// The messages of the chat: a question, its answer with [n] markers and source chips, and
// the answer's actions (copy, ask again, move between its versions, feedback with an optional
// comment); a stored question can be edited and sent again (turns.js).

import { $, el, icon } from "./dom.js";
import { api, japanese, json } from "./api.js";
import { ask, limits, streaming } from "./ask.js";
import { current } from "./conversations.js";
import { markdown } from "./markdown.js";
import { offerEdit, versions } from "./turns.js";
import { openPassage, place } from "./viewer.js";

export function setQuestion(node, text, categories = []) {
  node.replaceChildren(text);
  if (categories.length) node.append(el("span", { class: "scope", title: "この質問の絞り込み" }, categories.join("・")));
}

export function addQuestion(text, categories = []) {
  if ($("messages").querySelector(".empty")) $("messages").replaceChildren();
  const node = el("div", { class: "msg q" });
  setQuestion(node, text, categories);
  $("messages").append(node);
  node.scrollIntoView({ block: "end" });
  return node;
}

// An answer being written: in a new message, or in place of a turn's answer (resetAnswer).
export function addAnswer() {
  const node = el("div", { class: "msg a" });
  resetAnswer(node);
  $("messages").append(node);
  node.scrollIntoView({ block: "end" });
  return node;
}

export function resetAnswer(node) {
  delete node.dataset.turn;
  node.className = "msg a";
  node.replaceChildren(el("div", { class: "progress", role: "status" }), el("div", { class: "text" }));
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

export function finish(node, data, question, categories) {
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
  const asked = node.previousElementSibling;  // the turn's question
  if (data.turn && current && asked?.classList.contains("q")) {
    asked.dataset.turn = data.turn;
    offerEdit(asked, node, question, categories);
  }
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
  const again = el("button", { type: "button", title: "この質問をもう一度回答させる（前の回答は ‹ › で見られます）" }, "再生成");
  // asked again after the turns before it, so that it is not read as a follow-up of itself;
  // in a stored conversation, the new answer is the turn's next version, written in place
  again.addEventListener("click", () => {
    if (!streaming) ask(question, categories, data.turn && current ? { kind: "again", turn: data.turn, node, versions: data.versions } : null);
  });
  bar.append(copy, again);
  const moves = versions(node, data, question, categories);
  if (moves) bar.prepend(moves);
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
