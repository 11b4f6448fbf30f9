// The server: every request carries this browser's id, and the session cookie signs it in (the
// page keeps no token: one typed in is exchanged for a session); every change carries the
// session's CSRF token, held in memory only; errors are said in Japanese; a sign-in the server
// refuses brings back the sign-in view; a streamed answer or upload is read event by event.

import { $ } from "./dom.js";

// Who the page is signed in as (GET /auth/session): user, via, csrf, oidc.
export let session = null;

export function setSession(value) {
  session = value;
}

const CHANGES = new Set(["POST", "PUT", "PATCH", "DELETE"]);

localStorage.removeItem("shirabe-token");  // where an older page kept the token: gone

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

function headers(method, extra = {}) {
  const base = { ...extra, "X-Shirabe-Client": clientId() };
  return session && session.csrf && CHANGES.has(method) ? { ...base, "X-CSRF-Token": session.csrf } : base;
}

const MESSAGES = {
  unauthorized: "サインインが必要です。",
  forbidden: "この操作の権限がありません。",
  not_found: "見つかりませんでした（削除されたか、閲覧できません）。",
  conversation_full: "この会話は保存できる上限に達しました。新しい会話を始めてください。",
  too_many_versions: "この質問の回答は、保存できる数の上限に達しました。",
  invalid_request: "入力が正しくありません。",
  unsearchable: "検索できる言葉が含まれていません。質問を言い換えてください。",
  busy: "索引を更新中です。しばらくしてからもう一度お試しください。",
  sign_in_required: "アップロードにはサインインが必要です。管理者から受け取った API トークンでサインインしてください。",
  conflict: "同じ名前のファイルがあり、ほかの人がアップロードしたものなので置き換えられません。名前を変えてアップロードしてください。",
  model_error: "回答を作成するモデルに接続できません。しばらくしてからもう一度お試しください。",
  too_large: "送信するデータが大きすぎます。",
  too_many_sign_ins: "サインインの失敗が続いたため、しばらく受け付けません。1分ほど待ってからお試しください。",
  csrf: "ページを再読み込みしてから、もう一度お試しください。",
};

// Why the page is not signed in, as the server says it (401 or 429), for the sign-in view:
// a token typed in that is wrong or has expired, a session that is over, or nothing yet.
function refusal(status, message) {
  if (status === 429) return MESSAGES.too_many_sign_ins;
  if (message === "expired token") return "トークンの有効期限が切れています。管理者に新しいトークンを発行してもらってください。";
  if (message === "unknown or revoked token" || message.startsWith("use 'Authorization")) return "トークンが正しくありません";
  if (message.endsWith("sign in again")) return "サインインの有効期限が切れました。もう一度サインインしてください。";
  return "";
}

// Errors that come back the same when the same thing is sent again: no retry is offered.
export const FINAL = new Set(["unsearchable", "invalid_request", "forbidden", "conversation_full", "not_found", "too_many_versions"]);

class ApiError extends Error {
  constructor(code, message, status) { super(message); this.code = code; this.status = status; }
}

export function japanese(error) {
  if (error.name === "AbortError") return "停止しました。";
  if (error instanceof ApiError) {
    if (MESSAGES[error.code]) return MESSAGES[error.code];
    if (error.status >= 500) return "サーバーでエラーが発生しました。";
    return "エラーが発生しました（" + error.status + "）。";
  }
  return "サーバーに接続できません。ネットワークを確認してください。";
}

// Who the page is signed in as now, and the CSRF token its changes carry.
export async function refreshSession() {
  const response = await fetch("/auth/session", { headers: headers("GET") });
  setSession(response.ok ? await response.json() : null);
  return session;
}

export async function api(path, options = {}, again = true) {
  const method = (options.method || "GET").toUpperCase();
  const signingIn = Boolean((options.headers || {}).Authorization);
  const response = await fetch(path, { ...options, headers: headers(method, options.headers || {}) });
  if (response.status === 401 || (response.status === 429 && signingIn)) {
    let message = "";
    try { message = (await response.json()).error.message; } catch (_) {}
    showSignin(refusal(response.status, message));
    throw new ApiError("unauthorized", message || "unauthorized", response.status);
  }
  if (!response.ok) {
    let code = "error", message = "HTTP " + response.status;
    try { const body = await response.json(); code = body.error.code; message = body.error.message; } catch (_) {}
    // signed in anew in another tab: this page's CSRF token is the old session's
    if (code === "csrf" && again) { await refreshSession(); return api(path, options, false); }
    throw new ApiError(code, message, response.status);
  }
  return response;
}

export const json = (body) => ({ method: "POST", headers: { "Content-Type": "application/json" }, body: JSON.stringify(body) });

export function showSignin(message = "") {
  $("app").hidden = true; $("signin").hidden = false; $("signout").hidden = true;
  $("menu-toggle").hidden = true;  // the sidebar it opens is the app's
  $("signin-error").textContent = message; $("token").focus();
}

// A streamed response's server-sent events, one by one, each with its data read as JSON.
export async function* sse(response) {
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
