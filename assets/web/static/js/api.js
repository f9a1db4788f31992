// The loopback API (docs/api.md): JSON over fetch with the page's cookie, and one WebSocket of
// state changes shared by every view (reconnects by itself).

import { sessionKey } from './format.js';

export class ApiError extends Error {
  constructor(status, code, message) {
    super(message || code);
    this.status = status;
    this.code = code;
  }
}

export function apiUrl(path, params) {
  const url = new URL(path, window.location.origin);
  if (params) {
    for (const [key, value] of Object.entries(params)) {
      if (value !== null && value !== undefined && value !== '') url.searchParams.set(key, value);
    }
  }
  return url;
}

// The JSON a response carries; its `error` as an ApiError when it is not a success.
async function replyOf(response) {
  let body = null;
  try {
    body = await response.json();
  } catch (err) {
    body = null;
  }
  if (!response.ok) {
    const error = (body && body.error) || {};
    throw new ApiError(response.status, error.code || `http_${response.status}`,
      error.message || response.statusText);
  }
  return body;
}

export async function getJSON(path, params, { signal } = {}) {
  return replyOf(await fetch(apiUrl(path, params), {
    credentials: 'same-origin',
    headers: { Accept: 'application/json' },
    signal,
  }));
}

// A request that changes something: JSON body, our own Origin (the browser sends it).
export async function postJSON(path, body, { method = 'POST', params } = {}) {
  return replyOf(await fetch(apiUrl(path, params), {
    method,
    credentials: 'same-origin',
    headers: { Accept: 'application/json', 'Content-Type': 'application/json' },
    body: JSON.stringify(body || {}),
  }));
}

export function taskPath(taskId, tail = '') {
  return `/api/tasks/${encodeURIComponent(taskId)}${tail}`;
}

// A task's terminal page; `host`: the remote host it was launched on (null or 'local': here).
export function terminalHref(taskId, host = null) {
  const base = `/terminal/${encodeURIComponent(taskId)}`;
  return host && host !== 'local' ? `${base}?host=${encodeURIComponent(host)}` : base;
}

export function sessionPath(sessionId, tail = '') {
  return `/api/sessions/${encodeURIComponent(sessionId)}${tail}`;
}

export function exportUrl(agent, sessionId, format, host = null) {
  const url = apiUrl(sessionPath(sessionId, '/export'), { format, agent, host });
  return url.pathname + url.search;
}

// -- the WebSocket ---------------------------------------------------------------------------

// The requests of one session waiting on the person (a launched task's too), oldest first.
export function requestsOf(events, agent, sessionId, host = null) {
  return [...events.decisions.values()]
    .filter((r) => r.agent === agent && (r.host || 'local') === (host || 'local')
      && (r.session_id === sessionId || r.task_id === sessionId))
    .sort((a, b) => a.opened_at - b.opened_at);
}

export class Events {
  constructor() {
    this.listeners = new Set();
    this.statusListeners = new Set();
    // sessionKey (host, agent, id) -> BOARD_SESSION (SESSION once a change or a fetch brings it),
    // kept current from the socket
    this.sessions = new Map();
    this.partial = false; // the first of the two messages is in, not the second yet
    this.backlog = null; // messages held until the first page is painted (arrive)
    this.progress = null; // the engine's first reading (docs/api.md PROGRESS), from the socket
    this.decisions = new Map(); // request id -> REQUEST waiting on the person (docs/api.md)
    this.status = 'connecting';
    this.delay = 500;
    this.socket = null;
    this.pollTimer = null;
    this.stopped = false;
    this.heard = false;
  }

  start() {
    this.connect();
  }

  on(listener) {
    this.listeners.add(listener);
    return () => this.listeners.delete(listener);
  }

  onStatus(listener) {
    this.statusListeners.add(listener);
    listener(this.status);
    return () => this.statusListeners.delete(listener);
  }

  setStatus(status) {
    if (this.status === status) return;
    this.status = status;
    for (const listener of this.statusListeners) listener(status);
  }

  emit(message) {
    for (const listener of [...this.listeners]) {
      try {
        listener(message);
      } catch (err) {
        console.error(err);
      }
    }
  }

  connect() {
    if (this.stopped) return;
    const scheme = window.location.protocol === 'https:' ? 'wss' : 'ws';
    let socket;
    try {
      // The board's slimmer sessions (BOARD_SESSION): what the cards and filters read, no more.
      socket = new WebSocket(`${scheme}://${window.location.host}/api/events?view=board`);
    } catch (err) {
      this.retry();
      return;
    }
    this.socket = socket;
    socket.addEventListener('open', () => {
      this.delay = 500;
      this.setStatus('live');
      this.stopPolling();
    });
    socket.addEventListener('message', (event) => this.arrive(event.data));
    socket.addEventListener('close', () => {
      if (this.socket === socket) this.socket = null;
      this.retry();
    });
    socket.addEventListener('error', () => socket.close());
  }

  retry() {
    if (this.stopped) return;
    this.setStatus('offline');
    this.startPolling();
    const delay = this.delay;
    this.delay = Math.min(this.delay * 2, 10000);
    window.setTimeout(() => this.connect(), delay);
  }

  // The rest of the board's sessions (megabytes at 10,000) waits until the first page they
  // follow is on the screen; what comes after it waits behind it, so the order holds.
  arrive(data) {
    if (this.backlog) {
      this.backlog.push(data);
    } else if (data.startsWith('{"type":"sessions_rest"')) {
      const backlog = [data];
      this.backlog = backlog;
      const flush = () => {
        if (this.backlog !== backlog) return; // flushed already
        this.backlog = null;
        for (const waiting of backlog) this.receive(waiting);
      };
      window.requestAnimationFrame(() => window.setTimeout(flush, 0));
      window.setTimeout(flush, 250); // a hidden page draws no frames: it waits no longer
    } else {
      this.receive(data);
    }
  }

  receive(data) {
    let message;
    try {
      message = JSON.parse(data);
    } catch (err) {
      return;
    }
    if (message.type === 'sessions') {
      if (!this.heard) {
        this.heard = true;
        // The first list is in (bench/bench_board.py: the server's part ends here).
        window.performance.mark('agentbar:sessions-received');
      }
      this.sessions = new Map(message.sessions.map((s) => [sessionKey(s.agent, s.session_id, s.host), s]));
      // The board's socket sends what it draws first, then the rest (`sessions_rest`) at once:
      // until that is in, the list is partial (counts are not known yet).
      this.partial = message.rest === true;
      if (message.progress) this.progress = message.progress;
      if (Array.isArray(message.decisions)) {
        this.decisions = new Map(message.decisions.map((r) => [r.request_id, r]));
      }
    } else if (message.type === 'sessions_rest') {
      for (const s of message.sessions) this.sessions.set(sessionKey(s.agent, s.session_id, s.host), s);
      this.partial = false;
    } else if (message.type === 'decision' && message.request) {
      // A request opened or closed (answered anywhere, or withdrawn): its buttons follow.
      if (message.opened) this.decisions.set(message.request.request_id, message.request);
      else this.decisions.delete(message.request.request_id);
    } else if (message.type === 'progress' && message.progress) {
      this.followReading(message.progress);
    } else if (message.type === 'change' && message.session) {
      const s = message.session;
      this.sessions.set(sessionKey(s.agent, s.session_id, s.host), s);
    } else if (message.type !== 'task' && message.type !== 'host') {
      // (a launched task or a remote host changed: its listeners look)
      return;
    }
    this.emit(message);
  }

  // A step of the first reading. The sessions it settles are not pushed one by one (a change
  // that happened while nobody watched is not news): once the live ones are read, and again
  // once everything is, the list is fetched anew.
  followReading(progress) {
    const before = this.progress;
    this.progress = progress;
    const settled = (before && !before.live_ready && progress.live_ready)
      || (before && !before.done && progress.done);
    if (settled) this.refetch();
  }

  async refetch() {
    try {
      const body = await getJSON('/api/sessions', { all: 1 });
      this.receive(JSON.stringify({ type: 'sessions', sessions: body.sessions }));
    } catch (err) {
      // the server is away: the socket's retries bring it back
    }
  }

  // Without the socket (a proxy in the way, a server restarting) the sessions are polled.
  startPolling() {
    if (this.pollTimer !== null) return;
    const poll = async () => {
      try {
        const [body, health, pending] = await Promise.all([
          getJSON('/api/sessions', { all: 1 }), getJSON('/api/health'),
          getJSON('/api/decisions').catch(() => ({ requests: [] })),
        ]);
        if (this.status === 'live') return;
        this.receive(JSON.stringify({
          type: 'sessions', sessions: body.sessions, progress: health.progress, polled: true,
          decisions: pending.requests,
        }));
      } catch (err) {
        // the server is away: the socket's retries bring it back
      }
    };
    poll();
    this.pollTimer = window.setInterval(poll, 5000);
  }

  stopPolling() {
    if (this.pollTimer !== null) window.clearInterval(this.pollTimer);
    this.pollTimer = null;
  }
}
