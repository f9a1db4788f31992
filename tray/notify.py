"""Delivers notices as native notifications: desktop-notifier (with click and button callbacks)
where it works, plyer when it does not, and a fake for tests (``send`` returns at once on any
thread; desktop-notifier runs on an asyncio loop in its own thread, "agentbar-notify", where its
callbacks fire; plyer on a worker thread of its own).

A click on a notice or one of its buttons hands the notice's ``Action`` to ``on_action``, which
must return quickly (the tray posts it to its worker thread); an inline reply (where the server
offers "inline-reply") hands the notice's reply action with the typed words in ``Action.text``.
``withdraw(tag)`` takes a tagged notice off the screen (CloseNotification): a request it
answered has closed.

On Linux without a session bus nothing can show a notification: ``make_notifier`` says so once,
in words, and returns a notifier that looks for a bus again at each notice (a user bus can start
after agentbar) and hands over to the real one once there is one. desktop-notifier's own
tracebacks (it logs one per failed delivery) become one line in the log.
"""

from __future__ import annotations

import asyncio
import concurrent.futures
import contextlib
import dataclasses
import functools
import importlib.util
import logging
import os
import sys
import threading
import time
import warnings
from collections.abc import Callable, MutableMapping
from pathlib import Path
from typing import Any, Protocol

from .. import assets
from .actions import Action
from .bus_address import session_bus_address
from .notices import Notice

log = logging.getLogger(__name__)

APP_NAME = "agentbar"
# After desktop-notifier failed to deliver, use the fallback alone for this long before trying
# it again (a notification server can start after agentbar, at login).
RETRY_SECONDS = 60.0
PLYER_TIMEOUT_SECONDS = 10

OnAction = Callable[[Action], None]
Tell = Callable[[str], None]  # one line for the person running agentbar
NO_BUS = (
    "no notification service: no session bus (DBUS_SESSION_BUS_ADDRESS is unset and there is "
    "no $XDG_RUNTIME_DIR/bus)"
)


class Notifier(Protocol):
    name: str

    def send(self, notice: Notice) -> None:
        """Show ``notice``; returns at once (delivery happens on the notifier's own thread)."""
        ...

    def withdraw(self, tag: str) -> None:
        """Take the notice tagged ``tag`` off the screen, if it is still there (returns at
        once)."""
        ...

    def close(self) -> None: ...


def icon_path() -> Path:
    """agentbar's own icon, shipped in ``assets/icons``."""
    return Path(assets.__file__).resolve().parent / "icons" / "agentbar-128.png"


class FakeNotifier:
    """Records what it was asked to show; ``click`` answers as a user's click would."""

    name = "fake"

    def __init__(self, on_action: OnAction | None = None) -> None:
        self.sent: list[Notice] = []
        self.withdrawn: list[str] = []
        self.on_action = on_action
        self.closed = False

    def send(self, notice: Notice) -> None:
        self.sent.append(notice)

    def withdraw(self, tag: str) -> None:
        self.withdrawn.append(tag)

    def reply(self, index: int, text: str) -> Action:
        """Answer the notice's inline reply as a person typing ``text`` would."""
        reply = self.sent[index].reply
        assert reply is not None, "this notice has no reply field"
        action = dataclasses.replace(reply.action, text=text)
        if self.on_action is not None:
            self.on_action(action)
        return action

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

    def withdraw(self, tag: str) -> None:
        pass

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

    def withdraw(self, tag: str) -> None:
        """plyer cannot take a notice back: it times out by itself."""

    def close(self) -> None:
        self._pool.shutdown(wait=False, cancel_futures=True)


class AwaitingBus:
    """Linux with no session bus yet: drops notices (a line in the log for each), and at each
    one looks for a bus again;
    once there is one, the notifier ``make`` builds delivers from then on."""

    name = "none"

    def __init__(
        self, make: Callable[[], Notifier], env: MutableMapping[str, str], tell: Tell
    ) -> None:
        self._make = make
        self._env = env
        self._tell = tell
        self._real: Notifier | None = None

    def send(self, notice: Notice) -> None:
        if self._real is None:
            address = session_bus_address(self._env)
            if address is None:
                # The log only: the person was told once that there is no bus.
                log.info("not shown, no session bus: %s", notice.title)
                return
            # desktop-notifier's D-Bus library reads the address from the environment alone.
            self._env.setdefault("DBUS_SESSION_BUS_ADDRESS", address)
            self._real = self._make()
            self._tell(f"a session bus is there now ({address}): notifications are on")
        self._real.send(notice)

    def withdraw(self, tag: str) -> None:
        if self._real is not None:
            self._real.withdraw(tag)

    def close(self) -> None:
        if self._real is not None:
            self._real.close()


class _OneLine(logging.Filter):
    """desktop-notifier logs a traceback for each failed delivery: keep its words and the
    exception's, on one line."""

    def filter(self, record: logging.LogRecord) -> bool:
        if record.exc_info and record.exc_info[1] is not None:
            exc = record.exc_info[1]
            record.msg = f"{record.getMessage()}: {type(exc).__name__}: {exc}"
            record.args = None
            record.exc_info = None
            record.exc_text = None
        return True


_ONE_LINE = _OneLine()


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
        self._sending: dict[str, concurrent.futures.Future[None]] = {}  # by tag, until withdrawn
        self._platform_ids: dict[str, int] = {}  # the server's id of each tagged notice shown
        self._loop = asyncio.new_event_loop()
        self._ready = threading.Event()
        self._thread = threading.Thread(target=self._run, name="agentbar-notify", daemon=True)
        self._thread.start()
        self._ready.wait(5)
        app_icon = desktop_notifier.Icon(path=icon) if icon is not None and icon.exists() else None
        self._notifier: Any = desktop_notifier.DesktopNotifier(app_name=APP_NAME, app_icon=app_icon)
        # Its loggers exist once its backend is loaded; a filter acts on its own logger's records.
        for name in [*logging.Logger.manager.loggerDict, "desktop_notifier"]:
            if name.partition(".")[0] == "desktop_notifier":
                logging.getLogger(name).addFilter(_ONE_LINE)
        # Connect now, not on the first notice: the bus, the server's introspection and its
        # capabilities took 0.4-5.5 s on a busy machine, all of it added to the first notice.
        self._warming = asyncio.run_coroutine_threadsafe(self._warm_up(), self._loop)

    async def _warm_up(self) -> None:
        try:
            await self._notifier.get_capabilities()
        except Exception as exc:  # no server yet: the first notice tries again, and says so
            log.debug("desktop-notifier could not reach a notification server yet: %s", exc)

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
        if notice.tag:
            self._sending[notice.tag] = future

    def withdraw(self, tag: str) -> None:
        future = asyncio.run_coroutine_threadsafe(self._withdraw(tag), self._loop)
        future.add_done_callback(self._log_failure)

    async def _withdraw(self, tag: str) -> None:
        sending = self._sending.pop(tag, None)
        if sending is not None:  # withdrawn while still on its way: once it is there
            with contextlib.suppress(Exception):
                await asyncio.wrap_future(sending)
        platform_id = self._platform_ids.pop(tag, None)
        close = getattr(
            getattr(self._backend(), "interface", None), "call_close_notification", None
        )
        if platform_id is not None and close is not None:
            # CloseNotification by the server's own id: desktop-notifier forgets a notice once a
            # button was pressed, yet a server may keep showing it (dunst does).
            with contextlib.suppress(Exception):  # closed already: nothing to do
                await close(platform_id)
            return
        # Unknown to it (clicked or dismissed already, or never delivered): nothing to close.
        with contextlib.suppress(KeyError):
            await self._notifier.clear(tag)

    def _backend(self) -> Any:
        return getattr(self._notifier, "_backend", None)

    def _remember_platform_id(self, tag: str) -> None:
        """The server's id of the notice just sent (Linux: the D-Bus backend's map)."""
        ids = getattr(self._backend(), "_platform_to_interface_notification_identifier", None)
        inverse = getattr(ids, "inverse", None)
        if inverse is not None and tag in inverse:
            self._platform_ids[tag] = int(inverse[tag])

    async def _send(self, notice: Notice) -> None:
        await asyncio.wrap_future(self._warming)  # one connection: the warm-up's, once it is up
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
            reply_field=self._reply_field(notice),
            **({"identifier": notice.tag} if notice.tag else {}),
        )
        # It logs and swallows a failure; ``on_dispatched`` runs only once the server has it.
        await self._notifier.send_notification(notification)
        if delivered.is_set():
            self._failed_at = None
            if notice.tag:
                self._remember_platform_id(notice.tag)
            return
        self._failed_at = self.clock()
        log.warning("desktop-notifier could not deliver a notification; trying the fallback")
        self._fall_back(notice)

    def _reply_field(self, notice: Notice) -> Any:
        """The inline reply (the server shows it only where it offers "inline-reply")."""
        if notice.reply is None:
            return None
        reply = notice.reply.action

        def replied(text: str) -> None:
            self._act(dataclasses.replace(reply, text=text))

        return self._dn.ReplyField(
            title=notice.reply.label, button_title="Send", on_replied=replied
        )

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


def make_notifier(
    on_action: OnAction,
    icon: Path | None = None,
    *,
    env: MutableMapping[str, str] | None = None,
    tell: Tell | None = None,
) -> Notifier:
    """The best notifier this machine has. ``tell`` gets the one line said when there is no
    notification service (the log gets it too)."""
    icon = icon if icon is not None else icon_path()
    env = os.environ if env is None else env

    def say(line: str) -> None:
        log.warning("%s", line)
        if tell is not None:
            tell(line)

    def best() -> Notifier:
        fallback: Notifier | None = (
            PlyerNotifier(icon) if importlib.util.find_spec("plyer") is not None else None
        )
        if importlib.util.find_spec("desktop_notifier") is not None:
            try:
                return DesktopNotifier(on_action, icon=icon, fallback=fallback)
            except Exception:
                log.exception("desktop-notifier cannot start; using the fallback")
        return fallback or SilentNotifier("neither desktop-notifier nor plyer is installed")

    if sys.platform == "linux" and session_bus_address(env) is None:
        say(f"{NO_BUS}; notifications start when one appears")
        return AwaitingBus(best, env, say)
    return best()
