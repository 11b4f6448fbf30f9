// The server: every request carries this browser's id and the token; errors are said in
// Japanese; a token the server refuses brings back the sign-in view; a streamed answer or
// upload is read event by event.

import { $ } from "./dom.js";

export let token = localStorage.getItem("shirabe-token") || "";

export function setToken(value) {
  token = value;
  localStorage.setItem("shirabe-token", value);
}

export function forgetToken() {
  token = "";
  localStorage.removeItem("shirabe-token");
}

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
  too_many_versions: "この質問の回答は、保存できる数の上限に達しました。",
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

export async function api(path, options = {}) {
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

export const json = (body) => ({ method: "POST", headers: { "Content-Type": "application/json" }, body: JSON.stringify(body) });

export function showSignin(message = "") {
  $("app").hidden = true; $("signin").hidden = false; $("signout").hidden = !token;
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
