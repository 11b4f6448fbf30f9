"""Keeping an index in step with folders: file changes are ingested within seconds.

A :class:`Watcher` follows the folders' file events (``watchfiles``: inotify, FSEvents or
ReadDirectoryChangesW; polling on request, for network shares that send none), waits until a
burst of events has settled (editors save by writing a temporary file and renaming it over
the original; Office writes ``~$`` lock files), and ingests the paths that changed: new and
changed files go in, deleted and renamed-away ones leave. A full scan of the folders every
``watch_rescan_seconds`` catches whatever no event reported.
"""

from __future__ import annotations

import logging
import threading
import time
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, field
from functools import partial
from pathlib import Path

from shirabe.engine import Shirabe
from shirabe.errors import IndexBusyError, ShirabeError
from shirabe.indexing.walk import is_ignored
from shirabe.loaders.registry import supported_extensions
from shirabe.records import IngestReport

logger = logging.getLogger(__name__)

ACTOR = "watch"
"""Who the audit log names for what a watcher ingests."""
KEPT_FAILURES = 50


@dataclass
class WatchState:
    """What a watcher has done, for ``/api/status`` and the terminal."""

    folders: list[str]
    running: bool = False
    started_at: float | None = None
    last_change_at: float | None = None
    """When the last file event arrived."""
    last_sync_at: float | None = None
    """When the index last caught up with the events (or a full scan)."""
    last_scan_at: float | None = None
    pending: int = 0
    """Paths seen changed and not yet ingested."""
    changed: int = 0
    """Files added, updated or removed since the watcher started."""
    failures: dict[str, str] = field(default_factory=dict)
    """The latest failures by document key, with the reason (the newest last)."""
    error: str | None = None
    """Why the last attempt to ingest failed as a whole (it is retried)."""


Report = Callable[[IngestReport, str], None]
"""Told of each ingest a watcher runs (``"changes"`` or ``"scan"``)."""


class Watcher:
    """Follows ``folders`` and ingests what changes in them into ``shirabe``."""

    def __init__(
        self,
        shirabe: Shirabe,
        folders: Sequence[Path],
        *,
        on_report: Report | None = None,
    ) -> None:
        self._shirabe = shirabe
        self._folders = [f.resolve() for f in folders]
        settings = shirabe.settings
        self._debounce_ms = settings.ingest.watch_debounce_ms
        self._rescan = settings.ingest.watch_rescan_seconds
        self._polling = settings.ingest.watch_polling
        self._on_report = on_report or (lambda _report, _why: None)
        self._stop = threading.Event()
        self._thread: threading.Thread | None = None
        self._pending: set[Path] = set()
        self._lock = threading.Lock()
        self.state = WatchState([str(f) for f in self._folders])
        self._own = [settings.home.resolve(), shirabe.uploads.resolve()]

    def start(self) -> None:
        """Watch on a thread of its own (a server's), beginning with a full scan for what
        changed since the folders were last ingested; :meth:`stop` ends it."""
        self._thread = threading.Thread(
            target=self.run, kwargs={"scan_first": True}, name="shirabe-watch", daemon=True
        )
        self._thread.start()

    def stop(self, timeout: float | None = None) -> None:
        """Stop watching; by default wait for an ingest under way to finish (the index is
        closed after this)."""
        self._stop.set()
        if self._thread is not None:
            self._thread.join(timeout)
            self._thread = None

    def failures(self) -> dict[str, str]:
        """The latest failures by document key (a copy, safe to read from another thread)."""
        with self._lock:
            return dict(self.state.failures)

    def run(self, *, scan_first: bool = False) -> None:
        """Watch until :meth:`stop` (or Ctrl-C, when run in the foreground)."""
        self.state.running, self.state.started_at = True, time.time()
        self.state.last_scan_at = self.state.last_sync_at = time.time()
        try:
            if scan_first:
                self._guarded(self.scan)
            self._follow()
        finally:
            self.state.running = False

    def _follow(self) -> None:
        """Ingest what the file events name, as they come. Once the events are followed (the
        first time the watch yields, after at most ``rust_timeout``), the folders are scanned:
        a file written between the last ingest and the start of watching sent no event the
        watch could see."""
        import watchfiles

        caught_up = False
        for changes in watchfiles.watch(
            *self._folders,
            debounce=self._debounce_ms,
            step=50,
            stop_event=self._stop,
            rust_timeout=1000,
            yield_on_timeout=True,
            force_polling=self._polling,
            ignore_permission_denied=True,
            raise_interrupt=False,
        ):
            if not caught_up:
                caught_up = True
                self._guarded(self.scan)
            if changes:
                self.state.last_change_at = time.time()
                self._guarded(partial(self._add, [Path(path) for _change, path in changes]))
            self._guarded(self._sync)
            if time.time() - (self.state.last_scan_at or 0) >= self._rescan:
                self._guarded(self.scan)

    def _guarded(self, work: Callable[[], object]) -> None:
        """Run ``work``; an error is logged and shown, and the watch goes on (what was pending
        is kept for the next try)."""
        try:
            work()
        except Exception as exc:
            logger.exception("watch: %s", exc)
            self.state.error = f"{type(exc).__name__}: {exc}"

    def scan(self) -> None:
        """Ingest the whole folders (unchanged files cost a hash each)."""
        self._ingest(self._folders, "scan")
        self.state.last_scan_at = time.time()

    def _add(self, paths: Iterable[Path]) -> None:
        wanted = [p for p in paths if self._wanted(p)]
        with self._lock:
            self._pending.update(wanted)
            self.state.pending = len(self._pending)

    def _wanted(self, path: Path) -> bool:
        """A path worth ingesting: not hidden, not a lock or temporary file, and a file a
        loader reads, a folder, or something already indexed (a deleted file or folder)."""
        root = next((f for f in self._folders if path.is_relative_to(f)), None)
        if root is None or any(is_ignored(part) for part in path.relative_to(root).parts):
            return False
        if any(path.is_relative_to(own) and not root.is_relative_to(own) for own in self._own):
            return False  # the index's own files, kept inside a watched folder
        try:
            if path.is_dir():
                return True
            if path.is_file():
                return path.suffix.lower() in supported_extensions()
        except OSError:  # unreadable: the ingest reports it
            return True
        store, key = self._shirabe.store, self._shirabe.root.key_of(path)
        return store.get_source(key) is not None or bool(store.list_sources(under=key))

    def _sync(self) -> None:
        with self._lock:
            paths = sorted(self._pending)
            self._pending.clear()
        self.state.pending = len(paths)  # being ingested
        if not paths:
            return
        try:
            done = self._ingest(paths, "changes")
        except BaseException:
            self._restore(paths)
            raise
        if not done:
            self._restore(paths)  # retried after the next event or timeout
            return
        self.state.pending = len(self._pending)

    def _restore(self, paths: Sequence[Path]) -> None:
        with self._lock:
            self._pending.update(paths)
            self.state.pending = len(self._pending)

    def _ingest(self, paths: Sequence[Path], why: str) -> bool:
        try:
            report = self._shirabe.ingest(list(paths), actor=ACTOR)
        except IndexBusyError as exc:  # another ingest is running: try again shortly
            self.state.error = str(exc)
            return False
        except (ShirabeError, OSError) as exc:  # not retried: the next scan tries them again
            logger.warning("watch: ingest of %d paths failed: %s", len(paths), exc)
            self.state.error = str(exc)
            return True
        self.state.error = None
        self.state.last_sync_at = time.time()
        counts = report.counts
        self.state.changed += counts["added"] + counts["updated"] + counts["removed"]
        with self._lock:
            failures = self.state.failures
            for result in report.files:
                failures.pop(result.path, None)
                if result.outcome == "failed":
                    failures[result.path] = result.reason or ""
            while len(failures) > KEPT_FAILURES:
                failures.pop(next(iter(failures)))
        self._on_report(report, why)
        return True


__all__ = ["ACTOR", "WatchState", "Watcher"]
