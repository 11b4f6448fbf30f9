// Uploads: files chosen or dropped, sent with their category, their progress and each file's
// outcome.

import { $, el } from "./dom.js";
import { api, japanese, sse } from "./api.js";
import { failure } from "./documents.js";
import { start } from "./session.js";

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
    bar.hidden = true;  // the results say how it went
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
