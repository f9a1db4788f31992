"""Delivers notices as native notifications: desktop-notifier (with click and button callbacks)
where it works, plyer when it does not, and a fake for tests (``send`` returns at once on any
thread; desktop-notifier runs on an asyncio loop in its own thread, "agentbar-notify", where its
callbacks fire; plyer on a worker thread of its own).

A click on a notice or one of its buttons hands the notice's ``Action`` to ``on_action``, which
must return quickly (the tray posts it to its worker thread).
"""

from __future__ import annotations

import asyncio
import concurrent.futures
import functools
import importlib.util
import logging
import sys
import threading
import time
import warnings
from collections.abc import Callable
from pathlib import Path
from typing import Any, Protocol

import agentbar.assets
from agentbar.tray.actions import Action
from agentbar.tray.notices import Notice

log = logging.getLogger(__name__)

APP_NAME = "agentbar"
# After desktop-notifier failed to deliver, use the fallback alone for this long before trying
# it again (a notification server can start after agentbar, at login).
RETRY_SECONDS = 60.0
PLYER_TIMEOUT_SECONDS = 10

OnAction = Callable[[Action], None]


class Notifier(Protocol):
    name: str

    def send(self, notice: Notice) -> None:
        """Show ``notice``; returns at once (delivery happens on the notifier's own thread)."""
        ...

    def close(self) -> None: ...


def icon_path() -> Path:
    """agentbar's own icon, shipped in ``assets/icons``."""
    return Path(agentbar.assets.__file__).resolve().parent / "icons" / "agentbar-128.png"


class FakeNotifier:
    """Records what it was asked to show; ``click`` answers as a user's click would."""

    name = "fake"

    def __init__(self, on_action: OnAction | None = None) -> None:
        self.sent: list[Notice] = []
        self.on_action = on_action
        self.closed = False

    def send(self, notice: Notice) -> None:
        self.sent.append(notice)

    def click(self, index: int = -1, button: str | None = None) -> Action:
        notice = self.sent[index]
        action = (
            notice.click
            if button is None
            else next(b.action for b in notice.buttons if b.label == button)
        )
        if self.on_action is not None:
            self.on_action(action)
        return action

    def close(self) -> None:
        self.closed = True


class SilentNotifier:
    """No notification service at all: says so once, in the log."""

    name = "none"

    def __init__(self, why: str) -> None:
        self.why = why
        self._said = False

    def send(self, notice: Notice) -> None:
        if not self._said:
            log.warning("cannot show notifications: %s", self.why)
            self._said = True

    def close(self) -> None:
        pass


class PlyerNotifier:
    """plyer's notification facade (no callbacks: a click does nothing)."""

    name = "plyer"

    def __init__(self, icon: Path | None = None) -> None:
        self.icon = icon
        self._pool = concurrent.futures.ThreadPoolExecutor(1, thread_name_prefix="agentbar-plyer")

    def send(self, notice: Notice) -> None:
        self._pool.submit(self._notify, notice)

    def _notify(self, notice: Notice) -> None:
        try:
            with warnings.catch_warnings():
                # On Linux without dbus-python it says so, then uses notify-send: that is fine.
                warnings.simplefilter("ignore")
                from plyer import notification  # noqa: PLC0415  (loads a platform backend)

                notification.notify(
                    title=notice.title,
                    message=notice.body,
                    app_name=APP_NAME,
                    app_icon=str(self.icon) if self.icon else "",
                    timeout=PLYER_TIMEOUT_SECONDS,
                )
        except Exception:
            log.exception("plyer could not show a notification")

    def close(self) -> None:
        self._pool.shutdown(wait=False, cancel_futures=True)


class DesktopNotifier:
    """desktop-notifier on an asyncio loop of its own; ``fallback`` gets what it fails to
    deliver (no notification server on the bus, a platform it cannot serve)."""

    name = "desktop-notifier"

    def __init__(
        self,
        on_action: OnAction,
        *,
        icon: Path | None = None,
        fallback: Notifier | None = None,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        import desktop_notifier  # noqa: PLC0415  (imported by the notifier that uses it)

        self._dn = desktop_notifier
        self.on_action = on_action
        self.fallback = fallback
        self.clock = clock
        self._failed_at: float | None = None
        self._loop = asyncio.new_event_loop()
        self._ready = threading.Event()
        self._thread = threading.Thread(target=self._run, name="agentbar-notify", daemon=True)
        self._thread.start()
        self._ready.wait(5)
        app_icon = desktop_notifier.Icon(path=icon) if icon is not None and icon.exists() else None
        self._notifier: Any = desktop_notifier.DesktopNotifier(app_name=APP_NAME, app_icon=app_icon)

    def _run(self) -> None:
        asyncio.set_event_loop(self._loop)
        self._loop.call_soon(self._ready.set)
        self._loop.run_forever()
        self._loop.close()

    def send(self, notice: Notice) -> None:
        failed_at = self._failed_at
        if failed_at is not None and self.clock() - failed_at < RETRY_SECONDS:
            self._fall_back(notice)
            return
        future = asyncio.run_coroutine_threadsafe(self._send(notice), self._loop)
        future.add_done_callback(self._log_failure)

    async def _send(self, notice: Notice) -> None:
        dn = self._dn
        delivered = threading.Event()
        act = self._act
        notification = dn.Notification(
            title=notice.title,
            message=notice.body,
            urgency=dn.Urgency.Normal if notice.urgent else dn.Urgency.Low,
            buttons=tuple(
                dn.Button(title=b.label, on_pressed=functools.partial(act, b.action))
                for b in notice.buttons
            ),
            on_clicked=functools.partial(act, notice.click),
            on_dispatched=delivered.set,
            sound=dn.DEFAULT_SOUND if notice.sound else None,
        )
        # It logs and swallows a failure; ``on_dispatched`` runs only once the server has it.
        await self._notifier.send_notification(notification)
        if delivered.is_set():
            self._failed_at = None
            return
        self._failed_at = self.clock()
        log.warning("desktop-notifier could not deliver a notification; trying the fallback")
        self._fall_back(notice)

    def _act(self, action: Action) -> None:
        """A click or a button, on the notifier's loop: hand it over and return."""
        try:
            self.on_action(action)
        except Exception:
            log.exception("the notification's action %r failed", action)

    def _fall_back(self, notice: Notice) -> None:
        if self.fallback is not None:
            self.fallback.send(notice)

    @staticmethod
    def _log_failure(future: concurrent.futures.Future[None]) -> None:
        if not future.cancelled() and future.exception() is not None:
            log.error("sending a notification failed", exc_info=future.exception())

    def close(self) -> None:
        if self._loop.is_running():
            self._loop.call_soon_threadsafe(self._loop.stop)
        self._thread.join(5)
        if self.fallback is not None:
            self.fallback.close()


def make_notifier(on_action: OnAction, icon: Path | None = None) -> Notifier:
    """The best notifier this machine has."""
    if sys.platform.startswith("linux"):
        from agentbar.tray.sni.bus import NoBus, session_address  # noqa: PLC0415

        try:
            session_address()
        except NoBus as exc:
            # Both libraries would try to autolaunch a bus through X11 and fail on every
            # notice with a traceback: say it once, in words, instead.
            return SilentNotifier(str(exc))
    icon = icon if icon is not None else icon_path()
    fallback: Notifier | None = (
        PlyerNotifier(icon) if importlib.util.find_spec("plyer") is not None else None
    )
    if importlib.util.find_spec("desktop_notifier") is not None:
        try:
            return DesktopNotifier(on_action, icon=icon, fallback=fallback)
        except Exception:
            log.exception("desktop-notifier cannot start; using the fallback")
    return fallback or SilentNotifier("neither desktop-notifier nor plyer is installed")
