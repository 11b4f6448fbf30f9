// The chat page: conversations kept on the server, answers streamed with their sources,
// feedback, uploads and the document list. Text from documents is only ever set as text.
// Each part of the page is a module of its own; this one starts the page and holds the
// keyboard shortcuts that work anywhere on it.

import { $ } from "./dom.js";
import { streaming } from "./ask.js";
import { newChat } from "./conversations.js";
import { closeMenu, select } from "./layout.js";
import { start } from "./session.js";
import { closePassage, passageBeside } from "./viewer.js";
import "./uploads.js";

document.addEventListener("keydown", (event) => {
  const mod = event.ctrlKey || event.metaKey;
  if (mod && event.shiftKey && event.key.toLowerCase() === "o") { event.preventDefault(); newChat(); }
  else if (event.key === "/" && !/^(INPUT|TEXTAREA|SELECT)$/.test(document.activeElement.tagName)) {
    event.preventDefault(); select("chat"); $("question").focus();
  } else if (event.key === "Escape" && $("sidebar").classList.contains("open")) {
    closeMenu(); $("menu-toggle").focus();
  } else if (event.key === "Escape" && passageBeside() && !document.querySelector("dialog:modal")
      && (!streaming || $("passage").contains(document.activeElement))) {
    closePassage();  // the source beside the chat; while an answer is written, Esc stops it first
  } else if (event.key === "Escape" && streaming) streaming.abort();
});

// A dialog's キャンセル is a plain button, so that Enter in one of its boxes submits with 保存
// (a form submits with its first submit button) and a change typed in is never dropped.
document.addEventListener("click", (event) => {
  const cancel = event.target.closest("dialog button[data-close]");
  if (cancel) cancel.closest("dialog").close("cancel");
});

document.addEventListener("DOMContentLoaded", start);
