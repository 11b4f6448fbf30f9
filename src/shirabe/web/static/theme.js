// The colours: ライト, ダーク, or as the system says (自動, the default), kept in this browser.
// A classic script read in the head, before the page is first drawn, so that a dark page never
// flashes light; the style sheets key their colours on <html data-theme>.

(() => {
  const KEY = "shirabe-theme";
  const dark = matchMedia("(prefers-color-scheme: dark)");
  const valid = (value) => (value === "light" || value === "dark" ? value : "system");
  let choice = "system";
  try { choice = valid(localStorage.getItem(KEY)); } catch (_) { /* no storage: 自動 */ }

  function apply() {
    document.documentElement.dataset.theme = choice === "system" ? (dark.matches ? "dark" : "light") : choice;
  }
  apply();
  dark.addEventListener("change", apply);  // 自動 follows the system as it changes

  document.addEventListener("DOMContentLoaded", () => {
    const select = document.getElementById("theme");
    select.value = choice;
    select.addEventListener("change", () => {
      choice = valid(select.value);
      try {
        if (choice === "system") localStorage.removeItem(KEY); else localStorage.setItem(KEY, choice);
      } catch (_) { /* kept for this page only */ }
      apply();
    });
    window.addEventListener("storage", (event) => {  // chosen in another tab
      if (event.key !== KEY && event.key !== null) return;
      choice = valid(event.newValue);
      select.value = choice;
      apply();
    });
  });
})();
