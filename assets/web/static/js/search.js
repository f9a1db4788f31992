// Search across every indexed session as you type: ranked hits with a highlighted snippet (built
// from the API's plain-text segments, never from markup), one session's repeated snippet shown
// once with its count, filters by agent, project and time kept in the address; a hit opens the
// replay at its line with the words marked. The header's box searches as you type too (wired
// here, so all of search's behaviour is in this module).

import { ApiError, getJSON } from './api.js';
import { h } from './dom.js';
import { clock, sessionHref, shortPath } from './format.js';

const KIND_LABELS = { prompt: 'Prompt', answer: 'Answer', tool: 'Tool call' };
const TYPE_DELAY_MS = 180;
const FILTERS = ['agent', 'project', 'since'];
const SINCE_CHOICES = [['', 'Any time'], ['1h', 'Last hour'], ['today', 'Today'],
  ['1w', 'Last 7 days'], ['30d', 'Last 30 days']];

export function snippetNodes(segments) {
  return (segments || []).map((segment) => (segment.mark
    ? h('mark', null, segment.text)
    : document.createTextNode(segment.text)));
}

// The address of a search: the words and the filters that are set.
export function searchUrl(q, filters = {}) {
  const params = new URLSearchParams();
  if (q) params.set('q', q);
  for (const name of FILTERS) if (filters[name]) params.set(name, filters[name]);
  const query = params.toString();
  return query ? `/search?${query}` : '/search';
}

export class SearchView {
  constructor(root, app, { params }) {
    this.app = app;
    this.seq = 0;
    this.input = h('input', {
      type: 'search',
      name: 'q',
      id: 'search-input',
      autocomplete: 'off',
      spellcheck: 'false',
      placeholder: 'Search prompts, answers and commands',
      'aria-label': 'Search every session',
    });
    this.input.value = params.get('q') || '';
    this.filters = this.filterControls(params);
    this.status = h('p', { class: 'search-status', 'aria-live': 'polite' });
    this.results = h('ol', { class: 'results' });
    const form = h('form', { class: 'search-form', role: 'search' }, this.input,
      h('button', { type: 'submit' }, 'Search'));
    form.addEventListener('submit', (event) => {
      event.preventDefault();
      this.search(true);
    });
    this.input.addEventListener('input', () => this.soon());
    this.input.addEventListener('keydown', (event) => {
      if (event.key === 'ArrowDown') {
        const first = this.results.querySelector('a');
        if (first) {
          first.focus();
          event.preventDefault();
        }
      }
    });
    this.results.addEventListener('keydown', (event) => {
      if (event.key !== 'ArrowDown' && event.key !== 'ArrowUp') return;
      const links = [...this.results.querySelectorAll('a')];
      const i = links.indexOf(document.activeElement);
      if (i < 0) return;
      event.preventDefault();
      if (event.key === 'ArrowUp' && i === 0) this.input.focus();
      else links[Math.max(0, Math.min(links.length - 1, i + (event.key === 'ArrowDown' ? 1 : -1)))].focus();
    });
    root.append(h('header', { class: 'view-header' }, h('h1', null, 'Search')), form,
      this.filters.el, this.status, this.results);
    app.setTitle('Search');
    root.dataset.ready = 'true';
    this.input.focus();
    // Typed in the header's box: the caret stays at the end of what was typed.
    this.input.setSelectionRange(this.input.value.length, this.input.value.length);
    if (this.input.value.trim()) this.search(false);
  }

  filterControls(params) {
    const agents = new Set();
    const projects = new Set();
    for (const s of this.app.events.sessions.values()) {
      if (s.agent) agents.add(s.agent);
      if (s.project) projects.add(s.project);
    }
    const wantedAgent = params.get('agent') || '';
    if (wantedAgent) agents.add(wantedAgent);
    const agent = h('select', { name: 'agent', 'aria-label': 'Agent' },
      h('option', { value: '' }, 'Every agent'),
      [...agents].sort().map((a) => h('option', { value: a }, a)));
    agent.value = wantedAgent;
    // Every agent this agentbar knows, with its name (the sessions seen so far may not show all).
    getJSON('/api/agents').then((body) => {
      const known = new Set([...agent.options].map((o) => o.value));
      for (const entry of body.agents || []) {
        if (known.has(entry.agent)) {
          agent.querySelector(`option[value="${CSS.escape(entry.agent)}"]`).textContent = entry.name || entry.agent;
        } else agent.append(h('option', { value: entry.agent }, entry.name || entry.agent));
      }
    }).catch(() => {});
    const list = h('datalist', { id: 'search-projects' },
      [...projects].sort().map((p) => h('option', { value: p })));
    const project = h('input', {
      type: 'search', name: 'project', list: 'search-projects', placeholder: 'Any project',
      'aria-label': 'Project', autocomplete: 'off', spellcheck: 'false',
    });
    project.value = params.get('project') || '';
    const since = h('select', { name: 'since', 'aria-label': 'Time' },
      SINCE_CHOICES.map(([value, label]) => h('option', { value }, label)));
    const wantedSince = params.get('since') || '';
    if (wantedSince && !SINCE_CHOICES.some(([v]) => v === wantedSince)) {
      since.append(h('option', { value: wantedSince }, `Since ${wantedSince}`));
    }
    since.value = wantedSince;
    for (const control of [agent, since]) control.addEventListener('change', () => this.search(false));
    project.addEventListener('input', () => this.soon());
    const el = h('div', { class: 'search-filters', role: 'group', 'aria-label': 'Filters' },
      h('label', null, h('span', { class: 'filter-label' }, 'Agent'), agent),
      h('label', null, h('span', { class: 'filter-label' }, 'Project'), project, list),
      h('label', null, h('span', { class: 'filter-label' }, 'Time'), since));
    return {
      el,
      values: () => ({ agent: agent.value, project: project.value.trim(), since: since.value }),
    };
  }

  soon() {
    window.clearTimeout(this.timer);
    this.timer = window.setTimeout(() => this.search(false), TYPE_DELAY_MS);
  }

  destroy() {
    window.clearTimeout(this.timer);
    this.seq += 1;
  }

  async search(push) {
    const q = this.input.value.trim();
    const filters = this.filters.values();
    const url = searchUrl(q, filters);
    if (push) window.history.pushState(null, '', url);
    else window.history.replaceState(null, '', url);
    this.app.setTitle(q ? `Search: ${q}` : 'Search');
    const seq = ++this.seq;
    if (!q) {
      this.results.replaceChildren();
      this.status.textContent = '';
      return;
    }
    this.status.textContent = 'Searching…';
    this.results.setAttribute('aria-busy', 'true');
    let body;
    try {
      body = await getJSON('/api/search', { q, limit: 100, ...filters });
    } catch (err) {
      if (seq !== this.seq) return;
      this.results.replaceChildren();
      this.results.setAttribute('aria-busy', 'false');
      this.status.textContent = err instanceof ApiError && err.code === 'no_search'
        ? 'Search is not available: this server has no index.'
        : `Search failed: ${err.message}`;
      return;
    }
    if (seq !== this.seq) return;
    const hits = body.hits || [];
    this.status.textContent = hits.length ? `${hits.length} result${hits.length === 1 ? '' : 's'}`
      : 'No results.';
    this.results.replaceChildren(...hits.map((hit) => this.result(hit, q)));
    this.results.setAttribute('aria-busy', 'false');
    this.results.dataset.query = q;
  }

  result(hit, q) {
    const params = { at: String(hit.offset), q };
    if (hit.thread && hit.thread !== 'main') params.thread = hit.thread;
    if (hit.host && hit.host !== 'local') params.host = hit.host;
    const count = hit.count > 1 ? h('span', { class: 'hit-count', title: 'the same text in this session' },
      `×${hit.count}`) : null;
    return h('li', { class: 'result' },
      h('a', { href: sessionHref(hit.agent, hit.session_id, params), 'data-nav': true, class: 'result-link' },
        h('span', { class: 'result-title' }, hit.title || hit.session_id),
        h('span', { class: 'result-meta' },
          h('span', { class: `agent agent-${hit.agent}` }, hit.agent),
          h('span', { class: 'project', title: hit.project || '' }, shortPath(hit.project)),
          h('span', { class: 'kind' }, KIND_LABELS[hit.kind] || hit.kind),
          hit.thread && hit.thread !== 'main' ? h('span', { class: 'kind' }, 'sub-agent') : null,
          hit.ts ? h('time', { datetime: hit.ts }, clock(hit.ts)) : null),
        h('span', { class: 'snippet' }, snippetNodes(hit.snippet), count ? ' ' : null, count)));
  }
}

// The header's box: typing opens the search page (replacing the address while one types), whose
// own box takes over with what was typed; Enter does the same at once.
function wireHeaderSearch() {
  const form = document.getElementById('header-search');
  const input = form && form.querySelector('input');
  if (!input) return;
  let timer = null;
  input.addEventListener('input', () => {
    window.clearTimeout(timer);
    timer = window.setTimeout(() => {
      const q = input.value.trim();
      const app = window.agentbarApp;
      if (!q || !app || window.location.pathname === '/search') return;
      input.value = '';
      app.navigate(searchUrl(q));
    }, TYPE_DELAY_MS);
  });
}

wireHeaderSearch();
