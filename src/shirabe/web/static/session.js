// Signing in and out, and what the page loads for whoever is signed in.

import { $ } from "./dom.js";
import { api, forgetToken, japanese, setToken, showSignin, token } from "./api.js";
import { clearAdmin } from "./admin.js";
import { limits, setLimits, streaming, updateCounter } from "./ask.js";
import { current, loadConversations, openConversation } from "./conversations.js";
import { renderStatus } from "./status.js";
import { showEmpty } from "./welcome.js";

export async function start() {
  try {
    const status = await (await api("/api/status")).json();
    $("signin").hidden = true; $("app").hidden = false; $("signout").hidden = !token;
    $("who").textContent = status.user ? status.user + (status.admin ? "（管理者）" : "") : "ゲスト";
    $("tab-admin").hidden = !status.admin;
    document.body.classList.toggle("admin", Boolean(status.admin));
    if (!status.admin) clearAdmin();  // another user signed in: nothing of the admin's stays
    setLimits(status.limits || limits);
    if (status.file_types) {
      $("files").accept = status.file_types.join(",");
      $("file-types").textContent = "取り込めるファイル: " + status.file_types.join(" ");
    }
    renderStatus(status);
    updateCounter();
    await loadConversations();
    // A chat the user has begun stays as it is: a question sent while the page was starting
    // (its conversation is marked in the list once made), or the one open when the page
    // starts again after an upload or signing in.
    if (!$("messages").querySelector(".msg.q")) {
      const wanted = new URLSearchParams(location.hash.slice(1)).get("c");
      if (wanted && wanted !== current) await openConversation(wanted);
      else if (!current) showEmpty(status);
    }
    if (!streaming) $("question").focus();  // while an answer is written the stop button has it
  } catch (error) {
    if (error.code !== "unauthorized") $("status").textContent = japanese(error);
  }
}

$("signin-form").addEventListener("submit", async (event) => {
  event.preventDefault();
  setToken($("token").value.trim());
  $("token").value = "";
  await start();  // a refused token is said so by api(); anything else here:
  if (!$("signin").hidden && !$("signin-error").textContent) showSignin("サインインできませんでした。しばらくしてからもう一度お試しください。");
});
$("signout").addEventListener("click", () => {
  forgetToken(); location.hash = ""; location.reload();
});
