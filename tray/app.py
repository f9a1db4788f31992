"""Plain ``agentbar``: the tray app. One per user; it runs the engine and the loopback server
itself (like ``agentbar serve``, announced in ``server.json`` so ``agentbar window`` and a
browser use them), shows the icon, raises notifications and opens the window (main thread: the
icon's loop, or a wait without one; the worker, engine, watcher, server and notifier run on
threads of their own, the window in a child process).

Without a display (or without a session bus and an X display, on Linux) it says so in one line
and carries on without an icon: engine, server, and notifications where a notification service
exists.
"""

from __future__ import annotations

import logging
import signal
import sys
import threading
import time
from collections.abc import Callable
from typing import TextIO

import psutil

from ..core.app import Agentbar
from ..core.clock import SystemClock
from ..core.config import Settings
from ..core.launch.client import ApiError, Client, NoServer
from ..core.launch.manager import still_running
from ..core.server.runner import LoopbackServer
from . import autostart, host, instance, preferences, welcome, window
from .actions import KEEP_TASKS, OPEN, STOP_TASKS, Action
from .answers import TrayAnswers
from .icons import Icon, NoIcon, open_icon
from .launched import LaunchedAgents
from .memory import Trimmer
from .notify import Notifier, make_notifier
from .pause import FILE_NAME as PAUSE_FILE
from .pause import PauseStore
from .presenter import TrayState, present
from .view import TrayView
from .window_host import WindowHost
from .worker import TrayWorker

log = logging.getLogger(__name__)

TAKE_OVER_SECONDS = 30.0  # agentbar serve hands its agents to a keeper, then exits


def run(settings: Settings, *, err: TextIO | None = None) -> int:
    err = err or sys.stderr
    lock = instance.tray_lock(settings)
    if not lock.acquire():
        return instance.hand_over(settings, lock, err)
    try:
        return _run_owner(settings, err)
    finally:
        lock.release()


def _run_owner(settings: Settings, err: TextIO) -> int:
    prefs = preferences.PreferencesFile(preferences.settings_path())
    for problem in prefs.current.problems:
        print(f"agentbar: {problem}", file=err)
    no_icon = host.no_icon_reason() or ""
    can_open = window.display_problem() is None
    take_over_from_serve(settings, err)
    first = welcome.first_start(settings)  # before the engine makes its index
    app = Agentbar.open(settings)
    quit_app = _Quit()
    listening = False
    try:
        with app.serving(quit=quit_app) as server:
            listening = True
            return _serve(
                app, server, prefs=prefs, no_icon=no_icon, can_open=can_open, err=err,
                quit_app=quit_app, first=first,
            )  # fmt: skip
    except OSError as exc:
        if listening:
            raise  # not the socket: a bug to see, not to explain away
        print(f"agentbar: cannot listen on 127.0.0.1: {exc.strerror or exc}", file=err)
        return 1
    finally:
        # Kept unless the person chose to stop them: a quit never kills work silently.
        app.close(keep_tasks=quit_app.choice != STOP_TASKS)


def _serve(
    app: Agentbar,
    server: LoopbackServer,
    *,
    prefs: preferences.PreferencesFile,
    no_icon: str,
    can_open: bool,
    err: TextIO,
    quit_app: _Quit,
    first: bool = False,
) -> int:
    """Run the tray over ``app`` (serving as ``server``) until quit. ``no_icon``: why no icon
    can show here ("" when one may); ``first``: agentbar's first start here (it says what it
    found and what to do next)."""
    tasks = app.tasks
    assert tasks is not None  # the tray's app launches agents
    link = app.windows
    windows = (
        WindowHost(lambda path, seconds: server.open_url(path, seconds=seconds), server.token)
        if can_open
        else None
    )
    icon, no_icon = (None, no_icon) if no_icon else _try_icon(err)
    quit_app.attach(icon)

    def on_click(action: Action) -> None:
        worker.post(action)  # the worker is made just below; no click comes before it runs

    def tell(line: str) -> None:
        print(f"agentbar: {line}", file=err, flush=True)

    notifier: Notifier = make_notifier(on_click, tell=tell)
    launched = LaunchedAgents(
        tasks,
        app.sessions,
        lambda: prefs.current.pinned_projects,
        windows.open if windows is not None else None,
        names=app.settings.display_names(),
        launchable=[kit.agent for kit in app.settings.kits if kit.launch is not None],
        tell=lambda fault: worker.report(fault, lasting=False),
        asking=lambda task_id: bool(app.decisions.for_session(task_id)),
        hosts=app.hub,  # the remote hosts' tasks too (None: no remote configured)
    )
    starts_at_login = autostart.for_platform()
    welcomed = welcome.Welcome(
        app.settings.data_dir,
        first=first,
        sessions=app.engine.sessions,
        send=notifier.send,
        autostart=starts_at_login.status,
    )
    answers = TrayAnswers(
        app.decisions,
        lambda fault: worker.report(fault, lasting=False),
        app.settings.display_names(),
    )
    worker = TrayWorker(
        app.everywhere,  # this machine's sessions and the remote hosts'
        notifier,
        clock=SystemClock(),
        prefs=prefs,
        pauses=PauseStore(app.settings.data_dir / PAUSE_FILE),
        show=icon.show if icon is not None else _no_view,
        names=app.settings.display_names(),
        in_front=link.in_front,
        open_page=windows.open if windows is not None else None,
        autostart=starts_at_login,
        quit=quit_app,
        extra_entries=lambda: (*welcomed.entries(), *launched.entries()),
        buttons=launched.buttons,
        tasks_running=launched.tasks_running,
        decisions=app.decisions,
        hosts=app.hosts,
    )
    launched.register(worker.router)
    welcomed.register(worker.router)
    answers.register(worker.router)
    # A task that starts, binds, asks or exits changes the menu: have the worker look again.
    tasks.subscribe(lambda _info: worker.wake())
    # A remote host lost or back: its line in the menu at once.
    app.subscribe_hosts(lambda _status: worker.wake())
    # A folder that cannot be watched, an index rebuilt: a notice and a line in the menu.
    app.subscribe_faults(worker.report)
    if icon is not None:
        icon.on_action = worker.post
    if windows is not None:
        link.set_opener(lambda path: worker.post(Action(OPEN, path)))
    trimmer = Trimmer(app.engine.ready)
    try:
        app.start()  # the task manager takes back the agents an earlier agentbar kept running
        worker.start()
        welcomed.start(app.engine.ready, worker.post)
        trimmer.start()
        if icon is None:
            running = (
                "the engine and the server"
                if notifier.name == "none"  # no notification service: said just before
                else "the engine, notifications and the server"
            )
            print(
                f"agentbar: {no_icon}; running {running} at {server.url} ('agentbar window' opens"
                " it)",
                file=err,
                flush=True,
            )
            _wait_headless(quit_app.done)
        else:
            if not icon.has_menu:
                print(
                    f"agentbar: this system tray ({icon.backend}) has no menus: the icon shows "
                    "the badge and a click opens the window, which has everything",
                    file=err,
                    flush=True,
                )
            _run_icon(icon, quit_app)
    finally:
        trimmer.stop()
        link.set_opener(None)
        worker.stop()
        answers.close()
        if windows is not None:
            windows.close()
        notifier.close()
    return 0


class _Quit:
    """How the tray ends, from any thread (the menu's Quit, ``agentbar quit``, a signal): what
    becomes of the launched agents still running (the last choice; kept unless one says
    stop), and the main thread woken (the icon's loop, or the headless wait)."""

    def __init__(self) -> None:
        self.choice = KEEP_TASKS
        self.done = threading.Event()
        self.icon: Icon | None = None

    def __call__(self, choice: str = KEEP_TASKS) -> None:
        self.choice = choice
        self.done.set()
        if self.icon is not None:
            self.icon.stop()

    def attach(self, icon: Icon | None) -> None:
        """The icon whose loop a quit ends (a quit that came first ends it as it starts)."""
        self.icon = icon
        if icon is not None and self.done.is_set():
            icon.stop()


def take_over_from_serve(settings: Settings, err: TextIO) -> None:
    """``agentbar serve`` runs (``agentbar launch`` starts one when no tray does): ask it to quit
    keeping its agents and wait until it is gone, so this tray owns the index, the server's
    address and those agents (its task manager takes them back from the keeper at start)."""
    try:
        serve = Client.find(settings)
        process = psutil.Process(serve.pid)
    except (NoServer, psutil.Error):
        return
    try:
        reply = serve.request("POST", "/api/quit", {"tasks": "keep"}, timeout=10.0)
    except (ApiError, OSError) as exc:  # a window's own server (it quits with its window)
        log.info("the agentbar at pid %s stays (%s)", serve.pid, exc)
        return
    deadline = time.monotonic() + TAKE_OVER_SECONDS
    while still_running(process) and time.monotonic() < deadline:
        time.sleep(0.1)
    if still_running(process):
        print(f"agentbar: agentbar serve (pid {serve.pid}) did not quit in time", file=err)
        return
    running = int(reply.get("running", 0)) if isinstance(reply, dict) else 0
    agents = f", with its {running} launched agent{'s' * (running != 1)}" if running else ""
    print(f"agentbar: took over from agentbar serve (pid {serve.pid}){agents}", file=err)


def _no_view(_view: TrayView) -> None:
    pass


def _try_icon(err: TextIO) -> tuple[Icon | None, str]:
    """The tray icon, or None and why not."""
    try:
        return _make_icon(err), ""
    except NoIcon as exc:
        return None, str(exc)
    except Exception as exc:  # a bug: keep the engine, say it once, log the rest
        log.exception("cannot show a tray icon")
        return None, f"cannot show a tray icon ({exc})"


def _make_icon(err: TextIO) -> Icon:
    def say(line: str) -> None:
        print(f"agentbar: {line}", file=err, flush=True)

    first = present([], now=0.0, prefs=preferences.Preferences(), tray=TrayState())
    return open_icon(first, say)


def _run_icon(icon: Icon, quit_app: Callable[[], None]) -> None:
    for signum in (signal.SIGINT, signal.SIGTERM):
        signal.signal(signum, lambda *_: quit_app())
    try:
        icon.run()
    except Exception:
        log.warning("the tray icon's loop ended with an error", exc_info=True)


def _wait_headless(quitting: threading.Event) -> None:
    for signum in (signal.SIGINT, signal.SIGTERM):
        signal.signal(signum, lambda *_: quitting.set())
    while not quitting.wait(0.5):
        pass
