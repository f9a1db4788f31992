// The board's hosts line: once any session comes from another computer (a remote, issue 13),
// each host with its state as GET /api/hosts has it ("unreachable since 14:02"); the board
// then groups its projects by host. Hidden while every session is this computer's. A server
// without /api/hosts (404) is one without remotes: the line stays away. A connected host whose
// agentbar still reads its history says how far (its `progress`, also in the socket's `host`
// messages).

import { ApiError, getJSON } from './api.js';
import { h } from './dom.js';
import { ago, readingText } from './format.js';

const REFRESH_MS = 15000;

function since(epochSeconds) {
  return typeof epochSeconds === 'number' ? ago(new Date(epochSeconds * 1000).toISOString()) : '';
}

function hostItem(host) {
  const words = { connecting: 'connecting…', connected: 'connected', unreachable: 'unreachable' };
  const when = host.state === 'unreachable' && host.since ? ` since ${since(host.since)}` : '';
  const reading = host.state === 'connected' ? readingText(host.progress) : null;
  return h('li', { class: `host host-${host.state}`, dataset: { host: host.name, state: host.state }, title: host.detail || '' },
    h('span', { class: 'host-dot', 'aria-hidden': 'true' }),
    h('strong', null, host.name), ' ',
    h('span', { class: 'host-state' }, `${words[host.state] || host.state}${when}`),
    typeof host.sessions === 'number' ? h('span', { class: 'muted' }, ` · ${host.sessions} sessions`) : null,
    reading ? h('span', { class: 'host-reading' }, ` · ${reading}`) : null);
}

export class HostsLine {
  constructor(onchange) {
    this.onchange = onchange;
    this.list = h('ul', { class: 'host-list' });
    this.el = h('section', { class: 'board-hosts', 'aria-label': 'Hosts', hidden: true }, this.list);
    this.hosts = [];
    this.multiHost = false;
    this.shown = '';
    this.timer = window.setInterval(() => this.refresh(), REFRESH_MS);
    this.refresh();
  }

  async refresh() {
    let body;
    try {
      body = await getJSON('/api/hosts');
    } catch (err) {
      // A server without /api/hosts has no remotes: asking again every few seconds is noise.
      if (err instanceof ApiError && err.status === 404) window.clearInterval(this.timer);
      return; // or it is away for now
    }
    this.hosts = Array.isArray(body.hosts) ? body.hosts : [];
    this.onchange();
  }

  // A host's new status from the board's socket (connected, unreachable, its reading's step).
  take(status) {
    if (!status || !status.name) return;
    const at = this.hosts.findIndex((known) => known.name === status.name);
    if (at < 0) return; // one not listed yet: the next refresh brings it
    this.hosts = this.hosts.map((known, i) => (i === at ? status : known));
    this.onchange();
  }

  // Whether the board groups by host: some session is not this computer's, or a remote exists.
  show(sessions) {
    let remote = this.hosts.length > 0;
    if (!remote) {
      for (const s of sessions) {
        if (s.host && s.host !== 'local') {
          remote = true;
          break;
        }
      }
    }
    this.multiHost = remote;
    this.el.hidden = !this.hosts.length;
    const key = JSON.stringify(this.hosts);
    if (key === this.shown) return;
    this.shown = key;
    this.list.replaceChildren(...this.hosts.map(hostItem));
  }

  destroy() {
    window.clearInterval(this.timer);
  }
}
