// A launched task's live terminal: xterm.js over the task's WebSocket (docs/api.md), fitted to
// the window and resizing the task's PTY with it, with scrollback; above it, the task's state
// and Approve / Deny (when its screen shows an approval prompt) and Stop. Closing the page
// leaves the task running. `?host=NAME`: a task launched on that remote host, the same page
// through its channel (the API routes take the host); a host that drops is said, and tried again.

import { Terminal } from '../vendor/xterm/xterm.js';
import { FitAddon } from '../vendor/xterm/addon-fit.js';
import { ApiError, Events, getJSON, postJSON, taskPath } from './api.js';
import { append, clear, h } from './dom.js';
import { sessionHref, shortPath, stateLabel } from './format.js';

const SCROLLBACK_LINES = 10000;
const RESIZE_DEBOUNCE_MS = 120;
const ANSI_NAMES = [
  'black', 'red', 'green', 'yellow', 'blue', 'magenta', 'cyan', 'white', 'brightBlack', 'brightRed',
  'brightGreen', 'brightYellow', 'brightBlue', 'brightMagenta', 'brightCyan', 'brightWhite',
];
const DARK = window.matchMedia('(prefers-color-scheme: dark)');

// The terminal's colours from the page's design tokens (replay.css): light or dark with the page,
// the same 16 colours the replay gives tool output.
export function terminalTheme() {
  const style = getComputedStyle(document.documentElement);
  const token = (name, fallback) => style.getPropertyValue(name).trim() || fallback;
  const theme = {
    background: token('--rp-term-bg', '#000000'),
    foreground: token('--rp-term-fg', '#e6e6e6'),
    cursor: token('--rp-term-cursor', '#e6e6e6'),
    selectionBackground: token('--rp-term-selection', '#3a4a66'),
  };
  ANSI_NAMES.forEach((name, i) => {
    const colour = token(`--ansi-${i}`, '');
    if (colour) theme[name] = colour;
  });
  return theme;
}

function exitText(task) {
  const exit = task.exit;
  if (!exit) return task.status;
  if (exit.code !== null) return `exited (status ${exit.code})`;
  if (exit.signal !== null) return `ended by signal ${exit.signal}`;
  return 'exited';
}

class TerminalPage {
  constructor(taskId, host) {
    this.taskId = taskId;
    this.host = host; // a remote host's name, or null for this machine
    this.params = host ? { host } : null;
    this.lost = null; // what the server said when the host dropped, until it answers again
    this.task = null;
    this.socket = null;
    this.delay = 500;
    this.header = document.getElementById('task-header');
    this.waiting = document.getElementById('task-waiting');
    this.status = document.getElementById('live-status');
    this.box = document.getElementById('terminal');
    this.term = new Terminal({
      scrollback: SCROLLBACK_LINES,
      cursorBlink: true,
      fontFamily: 'ui-monospace, "DejaVu Sans Mono", Menlo, Consolas, monospace',
      fontSize: 14,
      theme: terminalTheme(),
    });
    DARK.addEventListener('change', () => {
      this.term.options.theme = terminalTheme();
    });
    this.fit = new FitAddon();
    this.term.loadAddon(this.fit);
  }

  async start() {
    this.term.open(this.box);
    this.fitNow();
    this.term.onData((data) => this.send({ type: 'input', data }));
    this.term.onBinary((data) => this.send({ type: 'input', data }));
    this.term.onResize(({ rows, cols }) => this.send({ type: 'resize', rows, cols }));
    // Fit whenever the box changes size: the window, the header above it, fonts loading.
    let timer = null;
    new ResizeObserver(() => {
      window.clearTimeout(timer);
      timer = window.setTimeout(() => this.fitNow(), RESIZE_DEBOUNCE_MS);
    }).observe(this.box);
    if (document.fonts) document.fonts.ready.then(() => this.fitNow());
    try {
      this.show((await getJSON(taskPath(this.taskId), this.params)).task);
    } catch (err) {
      this.fail(err);
      return;
    }
    this.events = new Events();
    this.events.on((message) => {
      // The stream's tasks are this machine's; a remote task's host is told by its state.
      if (message.type === 'task' && !this.host && message.task.task_id === this.taskId) this.show(message.task);
      if (message.type === 'host' && this.host && message.host.name === this.host) this.hostChanged(message.host);
    });
    this.events.start();
    this.connect();
    this.term.focus();
  }

  fitNow() {
    try {
      this.fit.fit();
    } catch (err) {
      // not laid out yet (a hidden window): the next resize fits it
    }
  }

  send(message) {
    if (this.socket && this.socket.readyState === WebSocket.OPEN) {
      this.socket.send(JSON.stringify(message));
    }
  }

  connect() {
    const scheme = window.location.protocol === 'https:' ? 'wss' : 'ws';
    const query = this.host ? `?host=${encodeURIComponent(this.host)}` : '';
    const socket = new WebSocket(`${scheme}://${window.location.host}${taskPath(this.taskId, '/terminal')}${query}`);
    socket.binaryType = 'arraybuffer';
    this.socket = socket;
    let fresh = true;
    socket.addEventListener('open', () => {
      this.delay = 500;
      this.found();
      this.setStatus('live');
      // Our size, so the agent redraws for it (the first frame is the scrollback).
      this.send({ type: 'resize', rows: this.term.rows, cols: this.term.cols });
    });
    socket.addEventListener('message', (event) => {
      if (typeof event.data === 'string') {
        let message = null;
        try {
          message = JSON.parse(event.data);
        } catch (err) {
          return;
        }
        if (message && message.type === 'task') this.show(message.task);
        if (message && message.type === 'unreachable') this.hostLost(message.message);
        return;
      }
      if (fresh) {
        this.term.reset(); // a reconnect sends the scrollback again
        fresh = false;
      }
      this.term.write(new Uint8Array(event.data));
      document.body.dataset.output = 'true';
    });
    socket.addEventListener('close', () => {
      if (this.socket === socket) this.socket = null;
      if (this.task && (this.task.status === 'running' || this.task.status === 'stopping')) {
        this.setStatus('offline');
        const delay = this.delay;
        this.delay = Math.min(this.delay * 2, 10000);
        window.setTimeout(() => this.refreshThenConnect(), delay);
      } else {
        this.setStatus('ended');
      }
    });
  }

  async refreshThenConnect() {
    if (this.socket) return; // connected again already (the host came back)
    try {
      this.show((await getJSON(taskPath(this.taskId), this.params)).task);
      this.found();
    } catch (err) {
      if (err instanceof ApiError && err.status === 404) {
        this.fail(err);
        return;
      }
      if (err instanceof ApiError && err.code === 'host_unreachable') this.hostLost(err.message);
    }
    if (this.task && this.task.status === 'running') this.connect();
  }

  // The task's host dropped (the terminal's stream said so, or the API): said above the
  // terminal until it answers again; the page goes on trying.
  hostLost(message) {
    this.lost = message || `${this.host} is unreachable`;
    this.showLost();
    this.setStatus('unreachable');
  }

  found() {
    if (this.lost === null) return;
    this.lost = null;
    this.showLost();
  }

  hostChanged(host) {
    if (host.state === 'connected') {
      if (!this.socket && this.task && this.task.status === 'running') {
        this.delay = 500;
        this.refreshThenConnect();
      }
    } else if (host.state === 'unreachable') {
      this.hostLost(`${host.name} is unreachable${host.detail ? ` (${host.detail})` : ''}`);
    }
  }

  showLost() {
    const banner = document.getElementById('host-lost');
    if (this.lost === null) {
      banner.hidden = true;
      document.body.dataset.host = 'connected';
      return;
    }
    banner.textContent = `${this.lost}: the connection to the task's host is lost. `
      + 'Its terminal comes back here once the host answers again.';
    banner.hidden = false;
    document.body.dataset.host = 'unreachable';
  }

  setStatus(status) {
    const labels = { live: 'live', offline: 'reconnecting…', ended: 'ended', unreachable: 'host unreachable' };
    const shown = this.lost !== null && status === 'offline' ? 'unreachable' : status;
    this.status.textContent = labels[shown] || shown;
    this.status.dataset.status = shown === 'unreachable' ? 'offline' : shown;
  }

  fail(err) {
    clear(this.header);
    append(this.header, [
      h('h1', null, err instanceof ApiError && err.status === 404 ? 'No such task' : 'Could not load the task'),
      h('p', { class: 'error-text' }, err.message),
      h('p', null, h('a', { href: '/' }, 'Back to the board'))]);
    this.box.hidden = true;
    document.body.dataset.ready = 'true';
  }

  async act(path, body, button) {
    button.disabled = true;
    try {
      const reply = await postJSON(taskPath(this.taskId, path), body, { params: this.params });
      if (reply && reply.task) this.show(reply.task);
      return reply;
    } catch (err) {
      this.note(err.message);
      return null;
    } finally {
      button.disabled = false;
      this.term.focus();
    }
  }

  note(text) {
    const el = this.header.querySelector('.task-note');
    if (el) el.textContent = text;
  }

  show(task) {
    this.task = task;
    const session = task.session;
    const alive = task.status === 'running' || task.status === 'stopping';
    const stop = h('button', {
      type: 'button', class: 'button stop', disabled: !alive,
      onclick: (event) => this.act('/stop', {}, event.currentTarget),
    }, task.status === 'stopping' ? 'Stopping…' : 'Stop');
    clear(this.header);
    append(this.header, [
      h('nav', { class: 'crumbs' }, h('a', { href: '/' }, '← Board')),
      h('h1', { class: 'task-title' }, task.prompt || `${task.agent} in ${shortPath(task.project)}`),
      h('p', { class: 'facts' },
        h('span', { class: `agent agent-${task.agent}` }, task.agent),
        h('span', { class: 'project', title: task.project }, shortPath(task.project)),
        h('span', { class: `task-status status-${task.status}` }, alive ? task.status : exitText(task)),
        session ? h('span', { class: `state-badge state-${session.state}` }, stateLabel(session)) : null,
        session && session.detail ? h('span', { class: 'detail' }, session.detail) : null,
        this.host ? h('span', { class: 'task-host' }, `on ${this.host}`) : null,
        task.session_id
          ? h('a', { class: 'session-link', href: sessionHref(task.agent, task.session_id, this.params) }, 'Replay')
          : h('span', { class: 'session-id' }, 'session not known yet'),
        h('span', { class: 'task-id' }, `task ${task.task_id}`)),
      h('p', { class: 'task-actions' }, stop, h('span', { class: 'task-note', 'aria-live': 'polite' })),
    ]);
    this.showWaiting(task);
    document.title = `${task.waiting ? '(1) ' : ''}${task.agent} — ${shortPath(task.project)} — agentbar`;
    document.body.dataset.ready = 'true';
    document.body.dataset.status = task.status;
  }

  showWaiting(task) {
    clear(this.waiting);
    if (!task.waiting || task.status !== 'running') {
      this.waiting.hidden = true;
      return;
    }
    const detail = task.session && task.session.detail ? task.session.detail : task.waiting.question;
    // A remote task's too: answered by its host's manager (the routes take ?host=), its
    // prompt heard of through its terminal's stream (a `task` message) as it changes.
    const approve = h('button', {
      type: 'button', class: 'button approve',
      onclick: (event) => this.act('/approve', {}, event.currentTarget),
    }, 'Approve');
    const deny = h('button', {
      type: 'button', class: 'button deny',
      onclick: (event) => this.act('/deny', {}, event.currentTarget),
    }, 'Deny');
    append(this.waiting, [h('strong', null, 'Waiting for your approval: '), h('code', null, detail), ' ', approve, ' ', deny]);
    this.waiting.hidden = false;
  }
}

const match = window.location.pathname.match(/^\/terminal\/([0-9a-f]{1,32})\/?$/);
if (match) {
  const host = new URLSearchParams(window.location.search).get('host');
  const page = new TerminalPage(match[1], host && host !== 'local' ? host : null);
  window.agentbarTerminal = page; // for the browser tests: the terminal's own buffer
  page.start();
} else {
  document.getElementById('task-header').textContent = 'No such task.';
}
