// The board: every live and recent session, those that need you first, grouped by project, kept
// current by the WebSocket (a state change moves its card without a reload). A session with a
// request waiting on the person (the decision book) is among those that need you, and its card
// carries the buttons that answer it; they come and go with the events stream's decisions.

import { TasksPanel } from './actions.js';
import { requestsOf } from './api.js';
import { DecisionBoxes, placeBoxes } from './decisions.js';
import { h, clear } from './dom.js';
import {
  ago, dollars, epoch, sessionHref, sessionKey, shortPath, stateLabel, number, plural,
  readingText,
} from './format.js';
import { LimitsLine } from './limits.js';
import { ProblemsLine } from './problems.js';

const RECENT_MS = 24 * 3600 * 1000;

export const GROUPS = [
  { id: 'needs', title: 'Needs you', test: (s) => s.state === 'input_required' },
  { id: 'running', title: 'Running', test: (s) => s.state === 'running' },
  { id: 'failed', title: 'Failed', test: (s) => s.state === 'failed' },
  { id: 'done', title: 'Done', test: (s) => s.state === 'done' },
  { id: 'ended', title: 'Ended recently', test: (s) => s.state === 'ended' },
];

// The sessions that wait on the person: input_required, or with a request the book holds.
export function needsCount(sessions, decisions = new Map()) {
  const asking = new Set([...decisions.values()].map((r) => `${r.agent}:${r.session_id}`));
  let n = 0;
  for (const s of sessions) {
    if (s.state === 'input_required' || asking.has(`${s.agent}:${s.session_id}`)) n += 1;
  }
  return n;
}

function visible(session, showAll, now) {
  if (showAll || session.state !== 'ended') return true;
  const t = epoch(session.last_activity);
  return t !== null && t >= now - RECENT_MS;
}

function byActivity(a, b) {
  return (epoch(b.last_activity) || 0) - (epoch(a.last_activity) || 0);
}

export class BoardView {
  constructor(root, app) {
    this.app = app;
    this.showAll = new URLSearchParams(window.location.search).get('all') === '1';
    this.cards = new Map();
    this.root = root;
    this.sections = h('div', { class: 'board-sections' });
    this.empty = h('p', { class: 'empty', hidden: true },
      'No agent sessions yet. Start one of the agents agentbar knows and its sessions appear here.');
    this.toggle = h('button', {
      type: 'button', class: 'link-button', onclick: () => this.toggleAll(),
    });
    this.summary = h('p', { class: 'board-summary', 'aria-live': 'polite' });
    // While the engine's first reading goes on: how far it is (gone once done).
    this.readingText = h('span', { class: 'reading-text' });
    this.readingBar = h('progress', { max: 1, 'aria-hidden': 'true' });
    this.reading = h('p', { class: 'board-progress', role: 'status', hidden: true },
      this.readingBar, this.readingText);
    this.tasks = new TasksPanel(app);
    this.problems = new ProblemsLine(app);
    this.limits = new LimitsLine(app);
    this.decisionBoxes = new DecisionBoxes();
    root.append(
      h('header', { class: 'view-header' },
        h('h1', null, 'Sessions'),
        this.summary,
        this.toggle,
        this.limits.el),
      this.problems.el,
      this.reading,
      this.tasks.el,
      this.empty,
      this.sections,
    );
    this.unsubscribe = app.events.on((message) => (
      message && message.type === 'progress' ? this.renderReading() : this.render()));
    this.timer = window.setInterval(() => this.refreshTimes(), 30000);
    this.render();
  }

  destroy() {
    this.unsubscribe();
    this.problems.destroy();
    this.limits.destroy();
    this.tasks.destroy();
    window.clearInterval(this.timer);
  }

  toggleAll() {
    this.showAll = !this.showAll;
    const url = new URL(window.location.href);
    if (this.showAll) url.searchParams.set('all', '1');
    else url.searchParams.delete('all');
    window.history.replaceState(window.history.state, '', url);
    this.render();
  }

  renderReading() {
    const progress = this.app.events.progress;
    const text = readingText(progress);
    this.reading.hidden = text === null;
    if (text === null) return;
    this.readingText.textContent = text;
    if (progress.live_ready && progress.bytes_total > 0) this.readingBar.value = progress.fraction;
    else this.readingBar.removeAttribute('value'); // indeterminate: the total is not known yet
  }

  render() {
    this.renderReading();
    const now = Date.now();
    const events = this.app.events;
    // A session whose request waits on the person needs you, whatever the engine said last.
    const all = [...events.sessions.values()].map((s) => (
      s.state !== 'input_required' && requestsOf(events, s.agent, s.session_id).length
        ? { ...s, state: 'input_required' } : s));
    const shown = all.filter((s) => visible(s, this.showAll, now));
    const hidden = all.length - shown.length;
    this.toggle.textContent = this.showAll ? 'Hide older ended sessions'
      : (hidden ? `Show ${plural(hidden, 'older ended session')}` : '');
    this.toggle.hidden = !this.showAll && !hidden;
    const ready = this.app.events.status === 'live' || this.app.events.sessions.size > 0;
    // "No sessions yet" would be wrong while the first reading still looks for them.
    const reading = readingText(this.app.events.progress) !== null;
    this.empty.hidden = !ready || reading || shown.length > 0;
    if (ready) this.root.dataset.ready = 'true';

    const focusedKey = document.activeElement && document.activeElement.dataset
      ? document.activeElement.dataset.key : undefined;
    const counts = {};
    const sections = [];
    for (const group of GROUPS) {
      const members = shown.filter(group.test).sort(byActivity);
      counts[group.id] = members.length;
      if (!members.length) continue;
      sections.push(this.section(group, members, now));
    }
    const typing = document.activeElement && document.activeElement.closest
      && document.activeElement.closest('.decision') ? document.activeElement : null;
    this.sections.replaceChildren(...sections);
    this.decisionBoxes.prune(new Set(events.decisions.keys()));
    if (typing && typing.isConnected) typing.focus(); // a reply being typed keeps its place
    for (const key of [...this.cards.keys()]) {
      if (!shown.some((s) => sessionKey(s.agent, s.session_id) === key)) this.cards.delete(key);
    }
    if (focusedKey && this.cards.has(focusedKey)) this.cards.get(focusedKey).focus();

    const parts = [];
    if (counts.needs) parts.push(`${counts.needs} need${counts.needs === 1 ? 's' : ''} you`);
    if (counts.running) parts.push(`${counts.running} running`);
    if (counts.failed) parts.push(`${counts.failed} failed`);
    if (counts.done) parts.push(`${counts.done} done`);
    this.summary.textContent = parts.length ? parts.join(' · ') : 'Nothing is running.';
    this.app.setTitle(parts.length ? `Board — ${parts.join(', ')}` : 'Board');
  }

  section(group, members, now) {
    const projects = new Map();
    for (const s of members) {
      const key = s.project || '';
      if (!projects.has(key)) projects.set(key, []);
      projects.get(key).push(s);
    }
    const headingId = `group-${group.id}`;
    return h('section', { class: `group group-${group.id}`, 'aria-labelledby': headingId, dataset: { group: group.id } },
      h('h2', { id: headingId }, group.title, ' ', h('span', { class: 'count' }, String(members.length))),
      [...projects.entries()].map(([project, list]) => h('div', { class: 'project', dataset: { project } },
        h('h3', { class: 'project-name', title: project || '' }, shortPath(project)),
        h('ul', { class: 'cards' }, list.map((s) => h('li', null, this.card(s, now), this.answers(s)))))));
  }

  // The buttons that answer the session's requests (none: nothing), beside its card.
  answers(s) {
    const requests = requestsOf(this.app.events, s.agent, s.session_id);
    const boxes = this.decisionBoxes.boxesFor(requests, { agent: s.agent, sessionId: s.session_id });
    if (!boxes.length) return null;
    const holder = h('div', { class: 'card-decisions', dataset: { key: sessionKey(s.agent, s.session_id) } });
    placeBoxes(holder, boxes);
    return holder;
  }

  card(s, now) {
    const key = sessionKey(s.agent, s.session_id);
    const detail = s.detail || '';
    let detailEl = null;
    if (s.state === 'input_required') {
      detailEl = h('p', { class: 'card-detail asking' },
        h('span', { class: 'asking-label' }, s.waiting_for === 'question' ? 'Asks: ' : 'Wants to run: '),
        s.waiting_for === 'question' ? h('span', { class: 'question' }, detail)
          : h('code', null, detail));
    } else if (detail) {
      detailEl = h('p', { class: 'card-detail' }, detail);
    }
    const usage = s.usage ? (s.usage.input_tokens || 0) + (s.usage.output_tokens || 0)
      + (s.usage.cache_read_tokens || 0) + (s.usage.cache_creation_tokens || 0) : 0;
    const card = h('a', {
      class: `card state-${s.state}${s.waiting_for ? ` waiting-${s.waiting_for}` : ''}`,
      href: sessionHref(s.agent, s.session_id),
      'data-nav': true,
      dataset: { key, state: s.state },
    },
    h('div', { class: 'card-top' },
      h('span', { class: `agent agent-${s.agent}` }, s.agent),
      h('span', { class: 'card-title' }, s.title || s.session_id),
      h('span', { class: `state-badge state-${s.state}` }, stateLabel(s))),
    detailEl,
    h('p', { class: 'card-meta' },
      h('time', { datetime: s.last_activity || '', dataset: { ago: s.last_activity || '' } },
        ago(s.last_activity, now)),
      s.model ? h('span', null, s.model) : null,
      usage ? h('span', null, `${number(usage)} tokens`) : null,
      usage && 'cost_usd' in s ? h('span', { class: 'card-cost' }, dollars(s.cost_usd)) : null));
    this.cards.set(key, card);
    return card;
  }

  refreshTimes() {
    const now = Date.now();
    for (const el of this.root.querySelectorAll('time[data-ago]')) {
      el.textContent = ago(el.dataset.ago, now);
    }
    this.render();
  }
}
