"""Liveness: which running process serves which session (the live registry's pid, the hook
events' pid, or a match of command lines and folders), and when it is gone (engine thread only).
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping

from . import liveness
from .clock import Clock
from .model import Agent, Process, SessionKey, State
from .procs import ProcessTable
from .session_record import SessionRecord, SessionTable
from .sources.base import AgentSource, ProcessInfo, RegistryEntry

# A session written to this recently, with no process found for it yet, is not declared ended:
# the process table is only refreshed now and then, and a new agent can write before we see it.
UNBOUND_GRACE_SECONDS = 10.0
FUTURE_SLACK_SECONDS = 60.0
REGISTRY_START_SLACK = 5.0  # a registry's startedAt comes a little after its process started


class ProcessBinder:
    def __init__(
        self,
        sessions: SessionTable,
        processes: ProcessTable,
        clients: Mapping[Agent, AgentSource],
        clock: Clock,
    ) -> None:
        """``clients``: the one adapter per agent that recognises its client processes."""
        self._sessions = sessions
        self.processes = processes
        self._clients = clients
        self._clock = clock
        self.exiting: set[Process] = set()  # agents that removed their registry, still exiting
        # Launched tasks' agents, each with the table's ``added`` count when it started: such a
        # process runs a session first seen after that, or the one its task names.
        self.reserved: dict[Process, int] = {}

    def check(self, *, full: bool, among: Iterable[SessionRecord] | None = None) -> None:
        """``full`` (on ticks): re-check every bound process and match the unbound sessions.
        Otherwise: only match sessions that just got records and have no process. ``among``:
        the sessions to look at (the engine's warm and touched ones: every session with a
        process, not known to be dead, fresh or undecided must be in it); None: all. A full
        check after a change in the process table matches every unbound session (a new
        process can resume an old one)."""
        now = self._clock.time()
        if full:
            changed = self.processes.refresh()
            self.exiting = {p for p in self.exiting if self.processes.is_alive(p)}
            self.reserved = {p: n for p, n in self.reserved.items() if self.processes.is_alive(p)}
            sessions = list(self._sessions if among is None else among)
            for session in sessions:
                if session.process is not None and not self.processes.is_alive(session.process):
                    if session.registry is not None:
                        self.unbind_registry(session.registry)
                    session.process = None
                    session.alive = False
                    self._sessions.changed(session)
            if changed:
                pool = self._changed_pool(None if among is None else sessions)
            else:
                pool = [
                    s
                    for s in sessions
                    if s.process is None and (s.alive is not False or self._fresh(s, now))
                ]
        else:
            pool = [
                s
                for s in (self._sessions if among is None else among)
                if s.process is None and s.undecided and (s.alive is None or self._fresh(s, now))
            ]
            if pool and any(s.alive is not True for s in pool):
                self.processes.refresh()  # a new agent may have started since the last tick
        pool = [s for s in pool if not self._bind_hook_pid(s)]
        if pool:
            self._bind_processes(pool, now)

    def _changed_pool(self, among: list[SessionRecord] | None) -> list[SessionRecord]:
        """Every session without a process, in the table's order, after a change in the
        process table (a new process can resume an old one), less those that cannot bind.
        Outside ``among`` a session is known dead and not fresh, so it stays as it is unless a
        hook named its pid or a client process of its agent can match it: one that names its
        id, or started before its last write (``liveness.match`` looks at no other). With
        2,000 sessions on disk, matching them all at each change was most of an idle tick."""
        if among is None:
            return [s for s in self._sessions if s.process is None]
        looked_at = {id(s) for s in among}
        reach = self._reach()
        return [
            s
            for s in self._sessions
            if s.process is None
            and (id(s) in looked_at or s.hooks.pid is not None or _reachable(s, reach))
        ]

    def _reach(self) -> dict[Agent, tuple[float, set[str]]]:
        """For each agent with a client process running: the earliest last write a client
        can match (the oldest one's start, less the slack) and the session ids they name."""
        reach: dict[Agent, tuple[float, set[str]]] = {}
        for source in self._clients.values():
            procs = [p for p in self.processes.candidates() if source.is_client_process(p)]
            if procs:
                hints = {source.process_session_hint(p) for p in procs}
                born = min(p.create_time for p in procs) - liveness.START_SLACK_SECONDS
                reach[source.agent] = (born, {h for h in hints if h is not None})
        return reach

    def registry_process(self, entry: RegistryEntry) -> Process | None:
        """The process a live registry entry names, if it is still that agent."""
        info = self.processes.lookup(entry.pid)
        if info is None:
            return None
        if entry.started_at is not None and (
            info.create_time > entry.started_at + REGISTRY_START_SLACK
        ):
            return None  # this pid was given to a process that started after the agent did
        return Process(pid=info.pid, create_time=info.create_time)

    def unbind_registry(self, entry: RegistryEntry) -> None:
        for session in self._sessions:
            if session.registry is not None and session.registry.pid == entry.pid:
                session.registry = None
                session.process = None
                session.alive = False  # that process is gone, or serves another session now
                self._sessions.changed(session)

    def process_exiting(self, process: Process) -> None:
        """``process`` is on its way out (its task exited): never bind it again."""
        self.exiting.add(process)

    def process_reserved(self, process: Process) -> None:
        """``process`` is the agent of a task agentbar launched: it runs a new session or the
        one its task names, so it is never matched by folder and start time to a session known
        before it started (a fork in the folder the original just ran in looked like the
        original resumed)."""
        self.reserved[process] = self._sessions.added

    def registry_removed(self, entry: RegistryEntry) -> None:
        """The agent removed its registry as it exits: never match its last moments to the
        session again by command line (that undid "ended" until a tick)."""
        self.exiting |= {
            s.process
            for s in self._sessions
            if s.registry is not None and s.registry.pid == entry.pid and s.process is not None
        }
        self.unbind_registry(entry)

    def _bind_hook_pid(self, session: SessionRecord) -> bool:
        """Bind the process the session's hook events came from, when nothing else has: it
        must still run, be the agent's own client process, and have started before the event
        (a pid given to a newer process is not the agent). A process serves one session at a
        time, so the session whose events are newer takes it from another."""
        pid, pid_at = session.hooks.pid, session.hooks.pid_at
        view = session.hooks.view
        if pid is None or pid_at is None or (view is not None and view.state is State.ENDED):
            return False
        source = self._clients.get(session.key.agent)
        info = self.processes.lookup(pid)
        if source is None or info is None or not source.is_client_process(info):
            return False
        if info.create_time > pid_at + REGISTRY_START_SLACK:
            return False
        for other in self._sessions:
            if other is session or other.process is None or other.process.pid != pid:
                continue
            said_ended = other.hooks.view is not None and other.hooks.view.state is State.ENDED
            if other.registry is not None or (
                not said_ended and (other.facts.last_activity or 0.0) > pid_at
            ):
                return False  # the registry names it, or it has been used since
            other.process, other.alive = None, False
            self._sessions.changed(other)
        session.process = Process(pid=info.pid, create_time=info.create_time)
        session.had_process = True
        session.alive = True
        self._sessions.changed(session)
        return True

    @staticmethod
    def _fresh(session: SessionRecord, now: float) -> bool:
        """Written to within the grace period, by the agent's own clock. A time far in the
        future (a wrong clock, a generated file) is not fresh: it would never stop being so."""
        last = session.facts.last_activity
        return last is not None and -FUTURE_SLACK_SECONDS < now - last < UNBOUND_GRACE_SECONDS

    def _bind_processes(self, unbound: list[SessionRecord], now: float) -> None:
        by_agent: dict[Agent, list[SessionRecord]] = {}
        for session in unbound:
            by_agent.setdefault(session.key.agent, []).append(session)
        running = {
            source.agent: [p for p in self.processes.candidates() if source.is_client_process(p)]
            for source in self._clients.values()
            if source.agent in by_agent
        }
        # (Taken before any is bound here, and only when some agent's client runs at all.)
        taken = self._taken_pids() if any(running.values()) else set()
        for source in self._clients.values():
            mine = by_agent.get(source.agent)
            if not mine:
                continue
            procs = running[source.agent]
            # A wrapper's agent (``node opencode`` starts the native binary) is its parent's.
            not_free = _with_children(dict.fromkeys(taken, 0), procs)
            clients = liveness.without_wrappers(
                liveness.Client(
                    proc=proc,
                    cwd=source.process_cwd(proc),
                    session_hint=source.process_session_hint(proc),
                )
                for proc in procs
                if proc.pid not in not_free
            )
            held = _with_children({p.pid: n for p, n in self.reserved.items()}, procs)
            matched = self._match(clients, mine, held)
            for session in mine:
                self._settle(session, matched.get(session.key), now)

    def _match(
        self, clients: list[liveness.Client], sessions: list[SessionRecord], held: dict[int, int]
    ) -> dict[SessionKey, liveness.Client]:
        """The sessions ``clients`` run. A launched task's agent (``held``: its pid, with the
        table's ``added`` count when it started) only among the sessions first seen after it
        started, once the others have had their pick."""
        free = [c for c in clients if c.proc.pid not in held]
        matched = liveness.match(free, map(_candidate, sessions)) if free else {}
        for client in clients:
            since = held.get(client.proc.pid)
            if since is None:
                continue
            newer = (
                s for s in sessions if s.key not in matched and self._sessions.order(s.key) > since
            )
            matched.update(liveness.match([client], map(_candidate, newer)))
        return matched

    def _taken_pids(self) -> set[int]:
        """The pids bound to a session, named by a registry or on their way out (a launched
        task's agent is not taken: ``_match`` keeps it for the sessions newer than it)."""
        taken = {s.process.pid for s in self._sessions if s.process is not None}
        taken |= {s.registry.pid for s in self._sessions if s.registry is not None}
        taken |= {p.pid for p in self.exiting}
        return taken

    def _settle(self, session: SessionRecord, client: liveness.Client | None, now: float) -> None:
        alive: bool | None
        if client is not None:
            session.process = Process(pid=client.proc.pid, create_time=client.proc.create_time)
            session.had_process = True
            alive = True
            session.mark()
        elif self._fresh(session, now) and not session.had_process:
            alive = None
        else:
            alive = False
        if alive != session.alive:
            session.alive = alive
            self._sessions.changed(session)


def _with_children(found: dict[int, int], procs: list[ProcessInfo]) -> dict[int, int]:
    """``found`` and the processes among ``procs`` that one of them started, each with its
    parent's value (parents first: they started first)."""
    found = dict(found)
    for proc in sorted(procs, key=lambda p: p.create_time):
        if proc.pid not in found and proc.ppid in found:
            found[proc.pid] = found[proc.ppid]
    return found


def _reachable(session: SessionRecord, reach: Mapping[Agent, tuple[float, set[str]]]) -> bool:
    """Whether a running client of its agent could match ``session`` (see ``_reach``)."""
    found = reach.get(session.key.agent)
    if found is None:
        return False
    born, hinted = found
    last = session.facts.last_activity
    return (last is not None and last >= born) or session.key.session_id in hinted


def _candidate(session: SessionRecord) -> liveness.Candidate:
    return liveness.Candidate(
        key=session.key,
        cwd=session.facts.project or session.hooks.cwd,
        started_at=session.facts.started_at,
        last_activity=session.facts.last_activity,
    )
