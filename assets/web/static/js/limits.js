// The board header's usage line: how much of each agent's 5-hour and weekly windows is left and
// when they reset, as GET /api/limits has them, and a plain note for an agent whose limits are
// not known (Claude without the status-line link). This computer's windows first, then each
// remote host's (their text names the host; a host not connected shows its last known, dimmed). The windows move with the agents' work, not
// with a socket message of their own: fetched on start, after each state change (at most every
// few seconds), when the socket comes back, and every minute (a window resets on its own).

import { getJSON } from './api.js';
import { h } from './dom.js';

const REFRESH_MS = 60000;
const AFTER_CHANGE_MS = 5000;

function windowItem(limit) {
  const used = Math.min(100, Math.max(0, Number(limit.used_percent) || 0));
  return h('li', {
    class: 'limit', 'data-agent': limit.agent, 'data-window': limit.window,
    'data-host': limit.host || 'local', 'data-stale': limit.stale ? 'true' : null,
    'data-high': used >= 80 ? 'true' : null,
  },
  h('meter', { min: 0, max: 100, low: 50, high: 80, optimum: 0, value: used, 'aria-hidden': 'true' }),
  ' ', h('span', { class: 'limit-text' }, limit.text));
}

export class LimitsLine {
  constructor(app) {
    this.list = h('ul', { class: 'limit-list' });
    this.notes = h('p', { class: 'limit-notes' });
    this.el = h('section', { class: 'board-limits', 'aria-label': 'Usage limits' },
      this.list, this.notes);
    this.shown = '';
    this.pending = null;
    this.unsubscribe = app.events.on((message) => {
      if (message && message.type === 'progress') return;
      if (this.pending === null) {
        this.pending = window.setTimeout(() => { this.pending = null; this.refresh(); },
          AFTER_CHANGE_MS);
      }
    });
    this.unsubscribeStatus = app.events.onStatus((status) => {
      if (status === 'live') this.refresh();
    });
    this.timer = window.setInterval(() => this.refresh(), REFRESH_MS);
    this.refresh();
  }

  async refresh() {
    let got;
    try {
      got = await getJSON('/api/limits');
    } catch (err) {
      return; // the server is away: the live status says so; keep what was last known
    }
    this.show(got.limits || [], got.notes || []);
  }

  show(limits, notes) {
    const key = JSON.stringify([limits, notes]);
    if (key === this.shown) return;
    this.shown = key;
    this.list.replaceChildren(...limits.map(windowItem));
    this.list.hidden = limits.length === 0;
    this.notes.textContent = notes.join(' ');
    this.notes.hidden = notes.length === 0;
    this.el.dataset.ready = 'true';
  }

  destroy() {
    this.unsubscribe();
    this.unsubscribeStatus();
    window.clearInterval(this.timer);
    if (this.pending !== null) window.clearTimeout(this.pending);
  }
}
