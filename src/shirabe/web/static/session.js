// Signing in and out, and what the page loads for whoever is signed in. The page keeps no
// token: a token typed in is exchanged for a session cookie, and the company's accounts sign
// in through the provider (/auth/login) into the same kind of session.

import { $ } from "./dom.js";
import { api, japanese, refreshSession, session, setSession, showSignin } from "./api.js";
import { clearAdmin } from "./admin.js";
import { limits, setLimits, streaming, updateCounter } from "./ask.js";
import { current, loadConversations, openConversation } from "./conversations.js";
import { renderStatus } from "./status.js";
import { showEmpty } from "./welcome.js";

const PROVIDER_FAILED = "会社のアカウントでサインインできませんでした。もう一度お試しください。";

// A sign-in with the provider that failed comes back as /?signin=failed: said once, then dropped.
const providerFailed = new URLSearchParams(location.search).get("signin") === "failed";
if (providerFailed) history.replaceState(null, "", location.pathname + location.hash);

export async function start() {
  try { await refreshSession(); } catch (_) { setSession(null); }
  $("oidc-signin").hidden = !(session && session.oidc);
  try {
    const status = await (await api("/api/status")).json();
    $("signin").hidden = true; $("app").hidden = false; $("menu-toggle").hidden = false;
    $("signout").hidden = !(session && session.via === "session");
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
    else if (providerFailed && !$("signin-error").textContent) $("signin-error").textContent = PROVIDER_FAILED;
  }
}

$("signin-form").addEventListener("submit", async (event) => {
  event.preventDefault();
  const typed = $("token").value.trim();
  $("token").value = "";
  try {  // the token signs in once, for a session cookie; it is not kept
    const response = await api("/api/session", { method: "POST", headers: { Authorization: "Bearer " + typed } });
    setSession(await response.json());
  } catch (error) {  // a refused token is said so by api(); anything else here:
    if (error.code !== "unauthorized") showSignin("サインインできませんでした。しばらくしてからもう一度お試しください。");
    return;
  }
  await start();
});
$("signout").addEventListener("click", async () => {
  try { await api("/api/session", { method: "DELETE" }); } catch (_) {}  // over already: signed out
  setSession(null); location.hash = ""; location.reload();
});
