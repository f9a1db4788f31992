// The board: every session, those that need you first (with the buttons that answer them), then
// the running ones, then the finished and failed ones by recency (today, this week, older);
// grouped by project inside a section (and by host once a remote's sessions are in), each
// project collapsible; filtered by what the address says. Kept current by the WebSocket, and
// drawn a page at a time per section ("Show more"), so ten thousand sessions stay fast.

import { TasksPanel } from './actions.js';
import { getJSON, requestsOf } from './api.js';
import { DecisionBoxes, placeBoxes } from './decisions.js';
import { h } from './dom.js';
import { BoardFilter } from './filters.js';
import { FilterBar } from './filter_bar.js';
import {
  activityOf, ago, cacheText, count, dollars, readingText, sessionHref, sessionKey, sessionTitle,
  setHome, shortPath, stateLabel, tokensText, usageText,
} from './format.js';
import { HostsLine } from './hosts.js';
import { LimitsLine } from './limits.js';
import { ProblemsLine } from './problems.js';

// What told agentbar a session's state (its `source`), in words.
const SIGNALS = {
  hook: 'hook', registry: 'session registry', pty: 'terminal', transcript: 'transcript',
  process: 'process',
};

export const PAGE = 30; // cards a section draws at first, and each "Show more" adds
const COLLAPSED_KEY = 'agentbar.board.collapsed';

export const SECTIONS = [
  { id: 'needs', title: 'Needs you' },
  { id: 'running', title: 'Running' },
  { id: 'today', title: 'Today' },
  { id: 'week', title: 'This week' },
  { id: 'older', title: 'Older' },
];

// Where the recency sections start: local midnight today, and seven days ago (the same week
// as the "Last 7 days" filter, so that filter never shows "Older").
export function recencyBounds(now = Date.now()) {
  const midnight = new Date(now);
  midnight.setHours(0, 0, 0, 0);
  return { today: midnight.getTime(), week: Math.min(midnight.getTime(), now - 7 * 86400000) };
}

// `t`: the session's last activity in ms (null when unknown).
export function sectionOf(state, t, bounds) {
  if (state === 'input_required') return 'needs';
  if (state === 'running') return 'running';
  if (t !== null && t >= bounds.today) return 'today';
  if (t !== null && t >= bounds.week) return 'week';
  return 'older';
}

// The keys of the sessions with a request waiting; null when none waits (the usual case: then
// no session's key is built, which at 10,000 sessions is most of a pass over them).
function askingKeys(decisions) {
  if (!decisions.size) return null;
  const keys = new Set();
  for (const r of decisions.values()) {
    keys.add(sessionKey(r.agent, r.session_id, r.host));
    if (r.task_id) keys.add(sessionKey(r.agent, r.task_id, r.host));
  }
  return keys;
}

// The sessions that wait on the person: input_required, or with a request the book holds.
export function needsCount(sessions, decisions = new Map()) {
  const asking = askingKeys(decisions);
  let n = 0;
  for (const s of sessions) {
    if (s.state === 'input_required' || (asking && asking.has(sessionKey(s.agent, s.session_id, s.host)))) n += 1;
  }
  return n;
}

function loadCollapsed() {
  try {
    const list = JSON.parse(window.localStorage.getItem(COLLAPSED_KEY) || '[]');
    return new Set(Array.isArray(list) ? list.filter((x) => typeof x === 'string') : []);
  } catch (err) {
    return new Set();
  }
}

export class BoardView {
  constructor(root, app) {
    this.app = app;
    this.root = root;
    this.filter = BoardFilter.fromSearch(window.location.search);
    this.cards = new Map();
    this.pages = new Map(); // section id -> cards it draws
    this.collapsed = loadCollapsed();
    this.drawn = false;
    this.frame = null;
    this.decisionBoxes = new DecisionBoxes();

    this.summary = h('p', { class: 'board-summary', 'aria-live': 'polite' });
    this.readingText = h('span', { class: 'reading-text' });
    this.readingBar = h('progress', { max: 1, 'aria-hidden': 'true' });
    this.reading = h('p', { class: 'board-progress', role: 'status', hidden: true },
      this.readingBar, this.readingText);
    this.empty = h('div', { class: 'empty-state', hidden: true });
    this.tasks = new TasksPanel(app);
    this.problems = new ProblemsLine(app);
    this.limits = new LimitsLine(app);
    this.hosts = new HostsLine(() => this.schedule());
    this.bar = new FilterBar((filter) => this.setFilter(filter));
    this.needs = h('div', { class: 'board-needs' });
    this.rest = h('div', { class: 'board-sections' });
    root.append(
      h('header', { class: 'view-header board-header' },
        h('div', { class: 'board-title' }, h('h1', null, 'Sessions'), this.summary),
        this.limits.el),
      this.problems.el,
      this.reading,
      this.hosts.el,
      this.bar.el,
      this.needs,
      this.tasks.el,
      this.empty,
      this.rest,
    );
    this.unsubscribe = app.events.on((message) => {
      if (message && message.type === 'host') this.hosts.take(message.host);
      if (message && message.type === 'progress') this.renderReading();
      else this.schedule();
    });
    this.timer = window.setInterval(() => this.schedule(), 30000);
    this.learnHome();
    this.render();
  }

  destroy() {
    this.unsubscribe();
    this.problems.destroy();
    this.limits.destroy();
    this.tasks.destroy();
    this.hosts.destroy();
    window.clearInterval(this.timer);
    if (this.frame !== null) window.cancelAnimationFrame(this.frame);
  }

  // `~` stands for the server's user's home only: asked once, then the cards are drawn again.
  async learnHome() {
    try {
      const health = await getJSON('/api/health');
      if (health && health.home) {
        setHome(health.home);
        this.schedule();
      }
    } catch (err) {
      // paths stay whole
    }
  }

  setFilter(filter) {
    this.filter = filter;
    const url = filter.applyTo(window.location.href);
    url.searchParams.delete('all'); // the old "show older ended sessions" switch
    if (url.href !== window.location.href) window.history.pushState(null, '', url);
    this.pages.clear();
    this.render();
  }

  // Many messages can arrive in one frame (a burst of changes): the board is drawn once.
  schedule() {
    if (this.frame !== null) return;
    this.frame = window.requestAnimationFrame(() => {
      this.frame = null;
      this.render();
    });
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

  // Every session in its section (a pending request makes it need you), filtered.
  sort(now) {
    const events = this.app.events;
    const asking = askingKeys(events.decisions);
    const bounds = recencyBounds(now);
    const bySection = new Map(SECTIONS.map((s) => [s.id, []]));
    const counts = { needs: 0, running: 0, failed: 0, total: 0 };
    let kept = 0;
    for (const s of events.sessions.values()) {
      const state = asking && s.state !== 'input_required' && asking.has(sessionKey(s.agent, s.session_id, s.host))
        ? 'input_required' : s.state;
      counts.total += 1;
      if (!this.filter.matches(s, now, state)) continue;
      kept += 1;
      const session = state === s.state ? s : { ...s, state };
      const t = activityOf(s);
      const section = sectionOf(state, t, bounds);
      bySection.get(section).push([t || 0, session]); // the time read once, for the sort too
      if (section === 'needs') counts.needs += 1;
      else if (section === 'running') counts.running += 1;
      if (state === 'failed' && section === 'today') counts.failed += 1;
    }
    for (const [id, list] of bySection) {
      list.sort((a, b) => b[0] - a[0]);
      bySection.set(id, list.map((pair) => pair[1]));
    }
    return { bySection, counts, kept };
  }

  render() {
    this.renderReading();
    const now = Date.now();
    const events = this.app.events;
    const { bySection, counts, kept } = this.sort(now);
    const partial = events.partial; // the first page is in, the rest on its way: nothing counted
    this.bar.update(this.filter, events.sessions.values(), { kept, total: counts.total, partial });
    this.hosts.show(events.sessions.values());

    // Ready once every session is in (not when the socket opens: its first message is not).
    const ready = events.heard && !partial;
    const reading = readingText(events.progress) !== null;
    this.showEmpty(ready && !reading && kept === 0, counts.total);
    if (ready) this.root.dataset.ready = 'true';

    const focusedKey = document.activeElement && document.activeElement.dataset
      ? document.activeElement.dataset.key : undefined;
    const typing = document.activeElement && document.activeElement.closest
      && document.activeElement.closest('.decision') ? document.activeElement : null;
    this.cards.clear();
    const multiHost = this.hosts.multiHost;
    const [needs, ...others] = SECTIONS.map((group) => {
      const members = bySection.get(group.id);
      return members.length ? this.section(group, members, now, multiHost, partial) : null;
    });
    this.needs.replaceChildren(...(needs ? [needs] : []));
    this.rest.replaceChildren(...others.filter(Boolean));
    this.decisionBoxes.prune(new Set(events.decisions.keys()));
    if (typing && typing.isConnected) typing.focus(); // a reply being typed keeps its place
    if (focusedKey && this.cards.has(focusedKey)) this.cards.get(focusedKey).focus();

    if (partial) return;
    const parts = [];
    if (counts.needs) parts.push(`${counts.needs} need${counts.needs === 1 ? 's' : ''} you`);
    if (counts.running) parts.push(`${counts.running} running`);
    if (counts.failed) parts.push(`${counts.failed} failed today`);
    this.summary.textContent = parts.length ? parts.join(' · ') : 'Nothing is running.';
    this.app.setTitle(parts.length ? `Board — ${parts.join(', ')}` : 'Board');
    if (!this.drawn && ready && counts.total > 0) {
      this.drawn = true;
      // The moment the list is first on screen (bench/bench_board.py reads it).
      window.performance.mark('agentbar:board-drawn');
    }
  }

  showEmpty(empty, total) {
    this.empty.hidden = !empty;
    if (!empty) return;
    if (total > 0) {
      this.empty.replaceChildren(
        h('p', { class: 'empty-title' }, 'No session matches these filters.'),
        h('button', { type: 'button', class: 'button', onclick: () => this.setFilter(new BoardFilter()) },
          'Clear filters'));
    } else {
      this.empty.replaceChildren(
        h('p', { class: 'empty-title' }, 'No agent sessions yet.'),
        h('p', null, 'Start one of the agents agentbar knows (or launch one above) and its sessions appear here.'));
    }
  }

  // A section's sessions grouped by host and project, most recent first, a page at a time.
  section(group, members, now, multiHost, partial) {
    const projects = new Map();
    for (const s of members) {
      const host = s.host || 'local';
      const key = multiHost ? `${host}\u0000${s.project || ''}` : (s.project || '');
      if (!projects.has(key)) projects.set(key, { host, project: s.project || '', list: [] });
      projects.get(key).list.push(s);
    }
    const limit = group.id === 'needs' ? Infinity : (this.pages.get(group.id) || PAGE);
    let budget = limit;
    const blocks = [];
    for (const entry of projects.values()) {
      if (budget <= 0) break;
      const id = `${group.id}|${multiHost ? entry.host : ''}|${entry.project}`;
      const collapsed = group.id !== 'needs' && this.collapsed.has(id);
      const shown = collapsed ? [] : entry.list.slice(0, budget);
      budget -= shown.length;
      blocks.push(this.projectBlock(group, entry, id, collapsed, shown, now, multiHost, partial));
    }
    const drawn = limit - budget;
    const hidden = members.length - drawn - this.collapsedCount(group, projects, multiHost);
    const headingId = `group-${group.id}`;
    return h('section', { class: `group group-${group.id}`, 'aria-labelledby': headingId, dataset: { group: group.id } },
      h('h2', { id: headingId, class: 'group-title' },
        h('span', { class: 'group-name' }, group.title), ' ',
        h('span', { class: 'count' }, partial ? '…' : count(members.length))),
      blocks,
      hidden > 0 && !partial ? h('button', {
        type: 'button', class: 'button show-more', dataset: { group: group.id },
        onclick: () => {
          this.pages.set(group.id, limit + PAGE);
          this.render();
        },
      }, `Show ${Math.min(PAGE, hidden)} more`, h('span', { class: 'muted' }, ` of ${count(hidden)} left`)) : null);
  }

  collapsedCount(group, projects, multiHost) {
    if (group.id === 'needs' || !this.collapsed.size) return 0; // no project's key to build
    let n = 0;
    for (const entry of projects.values()) {
      if (this.collapsed.has(`${group.id}|${multiHost ? entry.host : ''}|${entry.project}`)) n += entry.list.length;
    }
    return n;
  }

  projectBlock(group, entry, id, collapsed, shown, now, multiHost, partial) {
    const toggle = group.id === 'needs' ? null : h('button', {
      type: 'button', class: 'project-toggle', 'aria-expanded': collapsed ? 'false' : 'true',
      title: collapsed ? 'Show this project\'s sessions' : 'Hide this project\'s sessions',
      onclick: () => this.toggleProject(id),
    }, h('span', { class: 'chevron', 'aria-hidden': 'true' }), h('span', { class: 'visually-hidden' }, collapsed ? 'Expand' : 'Collapse'));
    return h('div', { class: `project${collapsed ? ' collapsed' : ''}`, dataset: { project: entry.project, host: entry.host } },
      h('h3', { class: 'project-name' },
        toggle,
        multiHost ? h('span', { class: `host-badge${entry.host === 'local' ? ' local' : ''}` }, entry.host === 'local' ? 'this computer' : entry.host) : null,
        h('span', { class: 'project-path', title: entry.project }, shortPath(entry.project, 60)),
        h('span', { class: 'project-count' }, partial ? '…' : count(entry.list.length))),
      shown.length ? h('ul', { class: 'cards' }, shown.map((s) => h('li', null, this.card(s, now), this.answers(s)))) : null);
  }

  toggleProject(id) {
    if (this.collapsed.has(id)) this.collapsed.delete(id);
    else this.collapsed.add(id);
    try {
      window.localStorage.setItem(COLLAPSED_KEY, JSON.stringify([...this.collapsed]));
    } catch (err) {
      // storage refused (private mode, full): it holds for this page only
    }
    this.render();
  }

  // The buttons that answer the session's requests (none: nothing), under its card.
  answers(s) {
    const requests = requestsOf(this.app.events, s.agent, s.session_id, s.host);
    const boxes = this.decisionBoxes.boxesFor(requests, { agent: s.agent, sessionId: s.session_id });
    if (!boxes.length) return null;
    const holder = h('div', { class: 'card-decisions', dataset: { key: sessionKey(s.agent, s.session_id, s.host) } });
    placeBoxes(holder, boxes);
    return holder;
  }

  card(s, now) {
    const key = sessionKey(s.agent, s.session_id, s.host);
    const detail = s.detail || '';
    let detailEl = null;
    if (s.state === 'input_required') {
      detailEl = h('p', { class: 'card-detail asking' },
        h('span', { class: 'asking-label' }, s.waiting_for === 'question' ? 'Asks ' : 'Wants to run '),
        s.waiting_for === 'question' ? h('span', { class: 'question' }, detail)
          : h('code', null, detail));
    } else if (detail && (s.state === 'running' || s.state === 'failed')) {
      detailEl = h('p', { class: 'card-detail' }, detail);
    }
    const tokens = tokensText(s.usage);
    const cache = cacheText(s.usage);
    const card = h('a', {
      class: `card state-${s.state}${s.waiting_for ? ` waiting-${s.waiting_for}` : ''}`,
      href: sessionHref(s.agent, s.session_id, s.host && s.host !== 'local' ? { host: s.host } : null),
      'data-nav': true,
      dataset: { key, state: s.state },
    },
    h('div', { class: 'card-top' },
      h('span', { class: 'state-dot', 'aria-hidden': 'true' }),
      h('span', { class: 'card-title', title: s.title || '' }, sessionTitle(s)),
      h('span', {
        class: `state-badge state-${s.state}`,
        title: s.source ? `${stateLabel(s)}: from the agent's ${SIGNALS[s.source] || s.source}` : null,
        dataset: { source: s.source || '' },
      }, stateLabel(s))),
    detailEl,
    h('p', { class: 'card-meta' },
      h('span', { class: `agent agent-${s.agent}` }, s.agent),
      (s.state === 'running' || s.state === 'input_required') && s.source
        ? h('span', { class: 'card-signal', title: 'What told agentbar this state' }, `via ${SIGNALS[s.source] || s.source}`)
        : null,
      h('span', { class: 'card-project', title: s.project || '' }, shortPath(s.project, 36)),
      h('time', { datetime: s.last_activity || '', title: s.last_activity || '' }, ago(s.last_activity, now)),
      tokens ? h('span', { class: 'card-tokens', title: usageText(s.usage) }, tokens) : null,
      cache ? h('span', { class: 'card-cache', title: usageText(s.usage) }, cache) : null,
      tokens && s.cost_usd !== null && s.cost_usd !== undefined
        ? h('span', { class: 'card-cost' }, dollars(s.cost_usd)) : null));
    this.cards.set(key, card);
    return card;
  }
}
