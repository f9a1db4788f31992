"""The engine's published view: one snapshot per visible session, replaced whole so readers on
other threads never see half an update (built on the engine thread; read on any thread)."""

from __future__ import annotations

from .clock import Clock
from .model import SessionKey, SessionSnapshot, SessionState, Source, State
from .session_record import SessionRecord, SessionTable
from .sources.base import StreamKind
from .streams import StreamTable
from .task_links import TaskLinks


class SnapshotBoard:
    def __init__(
        self, sessions: SessionTable, streams: StreamTable, tasks: TaskLinks, clock: Clock
    ) -> None:
        self._sessions = sessions
        self._streams = streams
        self._tasks = tasks
        self._clock = clock
        self._published: dict[SessionKey, SessionSnapshot] = {}

    def snapshots(self) -> list[SessionSnapshot]:
        """The latest published snapshot of every visible session (any thread)."""
        return list(self._published.values())

    def __len__(self) -> int:
        return len(self._published)

    def publish(self, *, everything: bool = False) -> None:
        """Publish the sessions that changed since the last time (``everything``: all of them,
        after a catch-up that reported nothing)."""
        if not self._sessions.unpublished and not everything:
            return
        published = dict(self._published)
        keys = self._sessions.keys() if everything else self._sessions.unpublished
        for key in keys:
            session = self._sessions.get(key)
            if session is None or not session.visible:
                published.pop(key, None)
            else:
                published[key] = self.snapshot(session)
        self._published = published  # one reference swap: readers never see a half update
        self._sessions.unpublished = set()

    def snapshot(self, session: SessionRecord) -> SessionSnapshot:
        facts = session.facts
        registry = session.registry
        state = session.state or SessionState(state=State.ENDED, source=Source.PROCESS)
        return SessionSnapshot(
            key=session.key,
            project=session.project,
            title=facts.title or (registry.name if registry else None),
            state=state,
            state_since=session.state_since or self._clock.time(),
            started_at=facts.started_at,
            last_activity=facts.last_activity,
            model=facts.model,
            usage=facts.usage,
            ledger=facts.ledger,
            transcript=session.transcript or session.hooks.transcript_path,
            process=session.process,
            task_id=self._tasks.task_of(session.key),
            threads=self._threads(session),
        )

    def _threads(self, session: SessionRecord) -> tuple[tuple[str, str], ...]:
        """The session's sub-agent files, by agent id (a sub-agent's own transcript, or a Codex
        sub-agent's rollout), for replay."""
        found = []
        for path in session.streams:
            stream = self._streams.get(path)
            if (
                stream is not None
                and stream.agent_id is not None
                and stream.spec.kind in (StreamKind.SUBAGENT, StreamKind.TRANSCRIPT)
            ):
                found.append((stream.agent_id, path))
        return tuple(sorted(found))
