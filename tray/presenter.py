"""Turns the engine's session snapshots into the tray's view: badge, tooltip and menu (pure; called
on the tray's worker thread).

The menu lists the sessions that need you first (what each waits for; choosing one opens its
replay at that point; one whose request the decision book holds gets a submenu that answers it:
Approve, Deny, Always allow with its rule, a question's options), then the running ones, then
the recently done or failed ones, then the tray's own entries. While the engine's first reading
of the history goes on, a line at the top says how far it has come, and the tooltip says it too
(a remote host's reading too, named by host). The usage windows are this machine's, then each
remote host's, each line naming its host.
Labels use only what changes when the session's state does (a running session shows its title,
not the tool it runs right now), so the menu is not rebuilt on every tool call.
"""

from __future__ import annotations

import os
from collections import Counter
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field

from ..core import limits_text
from ..core.decisions import PendingRequest
from ..core.engine_messages import IndexProgress
from ..core.limits import LimitWindow
from ..core.model import LOCAL_HOST, Agent, SessionKey, SessionSnapshot, State, WaitingFor
from ..core.progress_text import reading_line, tooltip_part
from ..core.remote.hosts import HostStatus, hosts_heard
from . import actions, pause
from .actions import Action
from .answer_entries import request_entries, request_heading
from .pause import Pause
from .preferences import Preferences
from .text import host_line, on_host, shorten
from .view import SEPARATOR, Badge, Entry, TrayView

# What a person calls each agent ("Claude Code"), from the kits the tray was given
# (``Settings.display_names()``); an agent missing there shows its wire name.
AgentNames = Mapping[Agent, str]
MAX_NEEDS = 10
MAX_RUNNING = 6
MAX_RECENT = 6
TOOLTIP_CHARS = 127  # Windows' notification-area tooltip holds 128 UTF-16 units, its end included


@dataclass(frozen=True, slots=True)
class TrayState:
    """What the tray itself contributes to its view."""

    pause: Pause = pause.NO_PAUSE
    autostart: bool | None = None  # None: this platform cannot start agentbar at login
    # Entries other features add above "Open window" (launching agents, pinned projects).
    extra: tuple[Entry, ...] = ()
    # Launched agents still running: quitting then asks whether they go on without agentbar.
    tasks_running: int = 0
    # The titles of the runtime faults that last (a folder not watched, an index rebuilt).
    problems: tuple[str, ...] = ()
    names: AgentNames = field(default_factory=dict)
    # The engine's first reading while it goes on (None: done, or not shown yet).
    reading: IndexProgress | None = None
    # The requests waiting on the person (the decision book), whatever session they are of.
    requests: tuple[PendingRequest, ...] = ()
    # The agents' usage windows (``Agentbar.limits()``: this machine's, then each host's): a
    # menu line each, and the tooltip's end.
    limits: tuple[LimitWindow, ...] = ()
    limits_heard: frozenset[str] = frozenset()  # sources that spoke without windows
    # The remote hosts (``Agentbar.hosts()``): a line each while one is unreachable, or while
    # its agentbar's first reading goes on.
    hosts: tuple[HostStatus, ...] = ()


def present(
    snapshots: Sequence[SessionSnapshot],
    *,
    now: float,
    prefs: Preferences,
    tray: TrayState,
) -> TrayView:
    needs = sorted(
        (s for s in snapshots if s.state.state is State.INPUT_REQUIRED),
        key=lambda s: (_host_order(s), s.state_since, str(s.key)),
    )
    running = sorted(
        (s for s in snapshots if s.state.state is State.RUNNING),
        key=lambda s: (_host_order(s), -s.state_since, str(s.key)),
    )
    since = now - prefs.recent_hours * 3600.0
    recent = sorted(
        (
            s
            for s in snapshots
            if s.state.state in (State.DONE, State.FAILED) and s.state_since >= since
        ),
        key=lambda s: (_host_order(s), -s.state_since, str(s.key)),
    )
    failed = sum(1 for s in recent if s.state.state is State.FAILED)
    asking = _by_session(tray.requests)
    # A request of a session the engine does not show as waiting (yet) needs the person too.
    needing = {s.key for s in needs}
    unseen = [key for key in asking if key not in needing]
    badge = Badge(needs=len(needs) + len(unseen), failed=failed > 0)

    menu: list[Entry] = []
    reading = reading_line(tray.reading) if tray.reading is not None else None
    if reading is not None:
        menu.append(Entry(reading))
    host_readings = [text for text in (host.reading() for host in tray.hosts) if text]
    menu += [Entry(text) for text in host_readings]
    if prefs.problems:
        count = len(prefs.problems)
        menu.append(Entry(f"settings.toml: {count} problem{'s' * (count > 1)}, see the log"))
    menu += problem_entries(tray.problems)
    menu += [Entry(line) for line in map(host_line, tray.hosts) if line]
    menu += _needs_section(needs, unseen, asking, tray.names)
    menu += _section("Running", running, MAX_RUNNING, tray.names)
    menu += _section("Recently finished", recent, MAX_RECENT, tray.names)
    if not (needs or unseen or running or recent):
        menu.append(Entry("No agent session is active"))
    limit_lines = limits_text.lines(tray.limits, now, tray.limits_heard, hosts_heard(tray.hosts))
    menu += [
        SEPARATOR,
        *(Entry(text) for text in limit_lines),
    ]
    menu.append(SEPARATOR)
    menu += tray.extra
    menu.append(Entry("Open window", actions.BOARD, default=True))
    menu.append(_pause_entry(prefs, tray.pause, now))
    if tray.autostart is not None:
        choice = "disable" if tray.autostart else "enable"
        menu.append(Entry("Start at login", Action(actions.AUTOSTART, choice), tray.autostart))
    menu += [SEPARATOR, _quit_entry(tray.tasks_running)]
    local_reading = tooltip_part(tray.reading) if tray.reading is not None else None
    readings = "; ".join(text for text in (local_reading, *host_readings) if text)
    return TrayView(
        badge=badge,
        tooltip=tooltip(
            badge.needs,
            len(running),
            failed,
            tray.pause.describe(now),
            readings or None,
            limits=limits_part(tray.limits, now),
        ),
        menu=tuple(menu),
    )


def problem_entries(titles: Sequence[str]) -> list[Entry]:
    """One line per kind of problem (the same title for several folders counts them)."""
    counts = Counter(titles)
    return [Entry(f"Problem: {t}" + (f" ({n}×)" if n > 1 else "")) for t, n in counts.items()]


def tooltip(
    needs: int,
    running: int,
    failed: int,
    paused: str,
    reading: str | None = None,
    *,
    limits: str | None = None,
) -> str:
    """``agentbar: 1 needs you, 2 running`` (and the pause, and the first reading while it
    goes on: ``; reading history: 42 % (1.3 of 3.1 GB), live sessions are up to date``; and
    the usage windows left: ``; Codex 5 h 62 % left``)."""
    parts = [f"{needs} need{'s' * (needs == 1)} you" if needs else "nothing needs you"]
    if running:
        parts.append(f"{running} running")
    if failed:
        parts.append(f"{failed} failed")
    text = "agentbar: " + ", ".join(parts)
    text = f"{text} ({paused.lower()})" if paused else text
    text = f"{text}; {reading}" if reading else text
    return shorten(f"{text}; {limits}" if limits else text, TOOLTIP_CHARS)


def limits_part(windows: Sequence[LimitWindow], now: float) -> str | None:
    """The windows in a few words for the tooltip (its room is short): ``Codex 5 h 62 % left,
    the week 93 % left`` (none known: nothing; the menu says why); a remote host's apart:
    ``Codex on devbox 5 h 40 % left``."""
    parts: list[str] = []
    for host, agent in dict.fromkeys((w.host, w.agent) for w in windows):
        mine = [w.as_of(now) for w in windows if (w.host, w.agent) == (host, agent)]
        spans = ", ".join(
            f"{limits_text.window_words(w.window)} {w.left_percent:.0f} % left" for w in mine
        )
        parts.append(f"{limits_text.whose(mine[0])} {spans}")
    return "; ".join(parts) if parts else None


def _section(
    heading: str, rows: list[SessionSnapshot], most: int, names: AgentNames
) -> list[Entry]:
    if not rows:
        return []
    entries = [Entry(f"{heading} ({len(rows)})")]
    entries += [Entry(session_label(s, names), actions.open_session(s.key)) for s in rows[:most]]
    if len(rows) > most:
        entries.append(Entry(f"… {len(rows) - most} more in the window", actions.BOARD))
    return entries


def _host_order(snap: SessionSnapshot) -> tuple[bool, str]:
    """Each section groups its sessions by host: this machine's first, then each remote's."""
    return (snap.key.host != LOCAL_HOST, snap.key.host)


def _by_session(
    requests: Sequence[PendingRequest],
) -> dict[SessionKey, list[PendingRequest]]:
    found: dict[SessionKey, list[PendingRequest]] = {}
    for request in requests:
        key = SessionKey(Agent(request.agent), request.session_id, request.host)
        found.setdefault(key, []).append(request)
    return found


def _needs_section(
    needs: list[SessionSnapshot],
    unseen: list[SessionKey],
    asking: Mapping[SessionKey, list[PendingRequest]],
    names: AgentNames,
) -> list[Entry]:
    """ "Needs you": each waiting session (its replay; with what answers its requests, when
    the decision book holds any), then the requests of sessions the engine does not show as
    waiting yet."""
    rows = [(session_label(s, names), s.key) for s in needs]
    rows += [(request_label(asking[key][0], names), key) for key in unseen]
    if not rows:
        return []
    entries = [Entry(f"Needs you ({len(rows)})")]
    for label, key in rows[:MAX_NEEDS]:
        requests = asking.get(key, [])
        if not requests:
            entries.append(Entry(label, actions.open_session(key)))
            continue
        answers: list[Entry] = [Entry("Open replay", actions.open_session(key))]
        for request in requests:
            answers.append(SEPARATOR)
            if len(requests) > 1:
                answers.append(Entry(request_heading(request)))
            answers += request_entries(request)
        entries.append(Entry(label, submenu=tuple(answers)))
    if len(rows) > MAX_NEEDS:
        entries.append(Entry(f"… {len(rows) - MAX_NEEDS} more in the window", actions.BOARD))
    return entries


def request_label(request: PendingRequest, names: AgentNames) -> str:
    """A request's entry when the engine does not list its session as waiting."""
    who = agent_name(names, Agent(request.agent)) + on_host(request.host)
    return shorten(f"{who} — {request_heading(request)}")


def agent_name(names: AgentNames, agent: Agent) -> str:
    return names.get(agent) or str(agent)


def session_label(snap: SessionSnapshot, names: AgentNames) -> str:
    """``Claude Code · api — approve Bash: rm -rf build``: agent, project, what it is about."""
    state = snap.state
    what = {
        State.INPUT_REQUIRED: (
            f"asks: {state.detail or snap.title or 'a question'}"
            if state.waiting_for is WaitingFor.QUESTION
            else f"approve {state.detail or 'a tool call'}"
        ),
        State.FAILED: f"failed: {state.detail or snap.title or 'the turn'}",
        State.DONE: f"done: {snap.title or state.detail or 'the turn'}",
    }.get(state.state, snap.title or "working")
    who = agent_name(names, snap.key.agent)
    where = project_name(snap.project) + on_host(snap.key.host)
    return shorten(f"{who} · {where} — {what}")


def project_name(project: str | None) -> str:
    """The project's folder name (the whole path is long and the menu is narrow)."""
    if not project:
        return "unknown folder"
    path = os.path.normpath(project)
    if path == os.path.normpath(os.path.expanduser("~")):
        return "~"
    return os.path.basename(path) or path


def _quit_entry(tasks_running: int) -> Entry:
    if not tasks_running:
        return Entry("Quit agentbar", Action(actions.QUIT))
    agents = f"{tasks_running} launched agent{'s' * (tasks_running > 1)}"
    return Entry(
        "Quit agentbar",
        submenu=(
            Entry(f"Quit, keep {agents} running", Action(actions.QUIT, actions.KEEP_TASKS)),
            Entry(f"Quit and stop {agents}", Action(actions.QUIT, actions.STOP_TASKS)),
        ),
    )


def _pause_entry(prefs: Preferences, current: Pause, now: float) -> Entry:
    if not prefs.enabled:
        return Entry("Notifications are off in settings.toml")
    paused = current.active(now)
    choices = (
        Entry("For 1 hour", Action(actions.PAUSE, pause.HOUR)),
        Entry("Until tomorrow", Action(actions.PAUSE, pause.TOMORROW)),
        Entry("Off", Action(actions.PAUSE, pause.OFF), checked=current.off, radio=True),
    )
    if paused:
        resume = Entry("Resume notifications", Action(actions.PAUSE, pause.RESUME))
        return Entry(current.describe(now), submenu=(resume, SEPARATOR, *choices))
    return Entry("Pause notifications", submenu=choices)
