// The empty chat: what to do when there are no documents yet, or questions to try.

import { $, el } from "./dom.js";
import { api } from "./api.js";
import { ask, streaming } from "./ask.js";

export function showEmpty(status) {
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

export function forgetExamples() {
  examples = null;
}

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
