// The board's filter bar: state chips, and menus of the projects, agents and hosts the sessions
// have, and of time spans; each change hands a new BoardFilter to the board (which puts it in
// the address). Redrawn in place: the menus' options only change when the sessions' do.

import { h } from './dom.js';
import { BoardFilter, SPANS, STATES } from './filters.js';
import { activityOf, count, shortPath } from './format.js';

function menu(name, label, onchange) {
  const select = h('select', { name, class: 'select', 'aria-label': label, onchange });
  return { select, key: '' };
}

function fill(entry, options, value) {
  const key = JSON.stringify(options);
  if (key !== entry.key) {
    entry.key = key;
    entry.select.replaceChildren(...options.map(([v, text]) => h('option', { value: v }, text)));
  }
  if (value && !options.some(([v]) => v === value)) {
    entry.select.append(h('option', { value }, value)); // named in the address, not seen (yet)
    entry.key = '';
  }
  entry.select.value = value;
}

export class FilterBar {
  constructor(onchange) {
    this.filter = new BoardFilter();
    const change = (fields) => onchange(this.filter.with(fields));
    this.chips = STATES.map(([state, label]) => h('button', {
      type: 'button', class: 'chip', 'aria-pressed': 'false', dataset: { state },
      onclick: () => {
        const states = this.filter.states.includes(state)
          ? this.filter.states.filter((s) => s !== state) : [...this.filter.states, state];
        change({ states });
      },
    }, h('span', { class: `chip-dot state-${state}`, 'aria-hidden': 'true' }), label));
    this.project = menu('project', 'Project', (e) => change({ project: e.target.value }));
    this.agent = menu('agent', 'Agent', (e) => change({ agent: e.target.value }));
    this.since = menu('since', 'Time', (e) => change({ since: e.target.value }));
    this.host = menu('host', 'Host', (e) => change({ host: e.target.value }));
    this.clear = h('button', {
      type: 'button', class: 'link-button clear-filters', onclick: () => onchange(new BoardFilter()),
    }, 'Clear');
    this.count = h('span', { class: 'filter-count', 'aria-live': 'polite' });
    this.el = h('div', { class: 'filter-bar', role: 'search', 'aria-label': 'Filter sessions' },
      h('div', { class: 'chips', role: 'group', 'aria-label': 'State' }, this.chips),
      h('div', { class: 'menus' },
        this.project.select, this.agent.select, this.since.select, this.host.select,
        this.clear, this.count));
  }

  // `partial`: only the first of the sessions are in (the socket's first message): not counted.
  update(filter, sessions, { kept, total, partial = false }) {
    this.filter = filter;
    for (const chip of this.chips) {
      chip.setAttribute('aria-pressed', filter.states.includes(chip.dataset.state) ? 'true' : 'false');
    }
    const projects = new Map();
    const agents = new Set();
    const hosts = new Set();
    for (const s of sessions) {
      if (s.project) {
        const t = activityOf(s) || 0;
        if (!projects.has(s.project) || projects.get(s.project) < t) projects.set(s.project, t);
      }
      agents.add(s.agent);
      hosts.add(s.host || 'local');
    }
    const byRecent = [...projects.entries()].sort((a, b) => b[1] - a[1]).map(([p]) => p);
    fill(this.project, [['', 'All projects'], ...byRecent.map((p) => [p, shortPath(p, 48)])], filter.project);
    fill(this.agent, [['', 'All agents'], ...[...agents].sort().map((a) => [a, a])], filter.agent);
    fill(this.since, SPANS, filter.since);
    fill(this.host, [['', 'All hosts'], ...[...hosts].sort().map((x) => [x, x === 'local' ? 'this computer' : x])], filter.host);
    this.host.select.hidden = hosts.size < 2 && !filter.host;
    this.clear.hidden = !filter.active;
    if (partial) this.count.textContent = '…';
    else {
      this.count.textContent = filter.active
        ? `${count(kept)} of ${count(total)}` : `${count(total)} session${total === 1 ? '' : 's'}`;
    }
  }
}
