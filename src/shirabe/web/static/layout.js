// The page's frame: the menu that opens the sidebar on a narrow screen, the tabs, and the
// skip link to the question box.

import { $ } from "./dom.js";
import { loadAdmin } from "./admin.js";
import { loadDocuments } from "./documents.js";

export function closeMenu() {
  $("sidebar").classList.remove("open");
  $("menu-toggle").setAttribute("aria-expanded", "false");
  $("menu-toggle").textContent = "メニュー";
}
$("menu-toggle").addEventListener("click", () => {
  const open = $("sidebar").classList.toggle("open");
  $("menu-toggle").setAttribute("aria-expanded", String(open));
  $("menu-toggle").textContent = open ? "閉じる" : "メニュー";
});

const tabs = ["chat", "upload", "docs", "admin"];
export function select(name) {
  for (const tab of tabs) {
    const on = tab === name;
    $("tab-" + tab).setAttribute("aria-selected", String(on));
    $("tab-" + tab).tabIndex = on ? 0 : -1;
    $("view-" + tab).classList.toggle("active", on);
  }
  if (name === "docs") loadDocuments();
  if (name === "admin") loadAdmin();
}
tabs.forEach((tab, i) => {
  const button = $("tab-" + tab);
  button.addEventListener("click", () => select(tab));
  button.addEventListener("keydown", (event) => {
    const step = event.key === "ArrowRight" ? 1 : event.key === "ArrowLeft" ? -1 : 0;
    if (!step) return;
    let next = tabs[i];
    do next = tabs[(tabs.indexOf(next) + step + tabs.length) % tabs.length]; while ($("tab-" + next).hidden);
    select(next); $("tab-" + next).focus();
  });
});

// the skip link focuses the question box without touching the address (#c= is the conversation)
document.querySelector(".skip").addEventListener("click", (event) => {
  event.preventDefault();
  if ($("app").hidden) { $("token").focus(); return; }  // signed out: the token comes first
  select("chat"); closeMenu(); $("question").focus();
});
