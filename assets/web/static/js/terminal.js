// A launched task's live terminal: xterm.js over the task's WebSocket (docs/api.md), fitted to
// the window and resizing the task's PTY with it, with scrollback; above it, the task's state
// and Approve / Deny (when its screen shows an approval prompt) and Stop. Closing the page
// leaves the task running.

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
  constructor(taskId) {
    this.taskId = taskId;
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
      this.show((await getJSON(taskPath(this.taskId))).task);
    } catch (err) {
      this.fail(err);
      return;
    }
    this.events = new Events();
    this.events.on((message) => {
      if (message.type === 'task' && message.task.task_id === this.taskId) this.show(message.task);
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
    const socket = new WebSocket(`${scheme}://${window.location.host}${taskPath(this.taskId, '/terminal')}`);
    socket.binaryType = 'arraybuffer';
    this.socket = socket;
    let fresh = true;
    socket.addEventListener('open', () => {
      this.delay = 500;
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
    try {
      this.show((await getJSON(taskPath(this.taskId))).task);
    } catch (err) {
      if (err instanceof ApiError && err.status === 404) {
        this.fail(err);
        return;
      }
    }
    if (this.task && this.task.status === 'running') this.connect();
  }

  setStatus(status) {
    const labels = { live: 'live', offline: 'reconnecting…', ended: 'ended' };
    this.status.textContent = labels[status] || status;
    this.status.dataset.status = status;
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
      return await postJSON(taskPath(this.taskId, path), body);
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
        task.session_id
          ? h('a', { class: 'session-link', href: sessionHref(task.agent, task.session_id) }, 'Replay')
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
    const approve = h('button', {
      type: 'button', class: 'button approve',
      onclick: (event) => this.act('/approve', {}, event.currentTarget),
    }, 'Approve');
    const deny = h('button', {
      type: 'button', class: 'button deny',
      onclick: (event) => this.act('/deny', {}, event.currentTarget),
    }, 'Deny');
    const detail = task.session && task.session.detail ? task.session.detail : task.waiting.question;
    append(this.waiting, [h('strong', null, 'Waiting for your approval: '), h('code', null, detail), ' ', approve, ' ', deny]);
    this.waiting.hidden = false;
  }
}

const match = window.location.pathname.match(/^\/terminal\/([0-9a-f]{1,32})\/?$/);
if (match) {
  const page = new TerminalPage(match[1]);
  window.agentbarTerminal = page; // for the browser tests: the terminal's own buffer
  page.start();
} else {
  document.getElementById('task-header').textContent = 'No such task.';
}
