// The admin view: failed documents to read again or remove, users and their groups, tokens,
// groups, who reads each folder (the access map, changed after a preview), the ingest runs
// and the audit log. The server refuses all of it to anyone but an admin; the tab is only
// shown to admins. Each part is a module of its own; this one loads them and clears them.

import { $ } from "./dom.js";
import { select } from "./layout.js";
import { refused, rows } from "./admin-common.js";
import { clearAccess, loadAccess, onAccessChange } from "./admin-access.js";
import { clearDocuments, loadFailed, onDocumentsChange } from "./admin-documents.js";
import { clearLog, initAudit, loadAudit, loadIngests } from "./admin-log.js";
import { clearPeople, hideToken, loadPeople, onPeopleChange } from "./admin-people.js";
import { loadDocuments } from "./documents.js";
import { reloadStatus } from "./status.js";

let adminRequest = 0;

// Another user signed in: drop what was shown to the admin, and leave the view.
export function clearAdmin() {
  ++adminRequest;
  clearPeople(); clearDocuments(); clearAccess(); clearLog();
  if ($("view-admin").classList.contains("active")) select("chat");
}

const PARTS = [
  ["admin-failed", loadFailed, 3],
  ["admin-users", loadPeople, 6],
  ["admin-places", loadAccess, 3],
  ["admin-ingests", loadIngests, 7],
  ["admin-audit", loadAudit, 4],
];

export async function loadAdmin(parts = PARTS) {
  const request = ++adminRequest;
  const current = () => request === adminRequest;
  initAudit(current);
  $("view-admin").setAttribute("aria-busy", "true");
  await Promise.all(parts.map(async ([id, load, columns]) => {
    try {
      await load(current);
    } catch (error) {
      if (current()) rows($(id), [], () => "", "読み込めません: " + refused(error), columns);
    }
  }));
  if (current()) $("view-admin").removeAttribute("aria-busy");
}

// After a change: the view again (the token just shown stays), the document list and the
// counts in the sidebar, so that what readers are told agrees with what was done.
function changed() {
  loadAdmin();
  loadDocuments();
  reloadStatus();
}
onPeopleChange(changed);
onDocumentsChange(changed);
onAccessChange(changed);

$("admin-reload").addEventListener("click", () => { hideToken(); loadAdmin(); });
// The links to the view's parts move the focus there, leaving the address (the open
// conversation is kept in it) as it is.
document.querySelector(".admin-nav").addEventListener("click", (event) => {
  const link = event.target.closest("a");
  if (!link) return;
  event.preventDefault();
  const heading = $(link.getAttribute("href").slice(1));
  heading.scrollIntoView({ block: "start" });
  heading.focus();
});
