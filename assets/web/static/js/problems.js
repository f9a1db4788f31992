// The board's problems line: the runtime faults agentbar lives with (a folder it cannot watch or
// read, a damaged index being rebuilt), as GET /api/health lists them, each with its message,
// which says what it means and what to do. Hidden while there are none. Faults come and go
// without a socket message of their own, so the list is fetched on start, after each step of
// the first reading (an index found damaged shows then), when the socket comes back, and every
// half minute.

import { getJSON } from './api.js';
import { h } from './dom.js';

const REFRESH_MS = 30000;

function problemItem(problem) {
  return h('li', { class: 'problem', 'data-kind': problem.kind, title: problem.subject || '' },
    h('strong', { class: 'problem-title' }, problem.title), ' ',
    h('span', { class: 'problem-message' }, problem.message));
}

export class ProblemsLine {
  constructor(app) {
    this.heading = h('span', { class: 'problems-heading' });
    this.list = h('ul', { class: 'problem-list' });
    this.el = h('section', {
      class: 'board-problems', role: 'status', hidden: true, 'aria-label': 'Problems',
    }, this.heading, this.list);
    this.shown = '';
    this.unsubscribe = app.events.on((message) => {
      if (message && message.type === 'progress') this.refresh();
    });
    this.unsubscribeStatus = app.events.onStatus((status) => {
      if (status === 'live') this.refresh();
    });
    this.timer = window.setInterval(() => this.refresh(), REFRESH_MS);
    this.refresh();
  }

  async refresh() {
    let problems;
    try {
      problems = (await getJSON('/api/health')).problems || [];
    } catch (err) {
      return; // the server is away: the live status says so; keep what was last known
    }
    this.show(problems);
  }

  show(problems) {
    const key = JSON.stringify(problems);
    if (key === this.shown) return; // unchanged: do not announce it again
    this.shown = key;
    this.el.hidden = problems.length === 0;
    this.heading.textContent = problems.length === 1
      ? 'agentbar has a problem:' : `agentbar has ${problems.length} problems:`;
    this.list.replaceChildren(...problems.map(problemItem));
  }

  destroy() {
    this.unsubscribe();
    this.unsubscribeStatus();
    window.clearInterval(this.timer);
  }
}
