// Search across every indexed session: ranked hits with a highlighted snippet (built from the
// API's plain-text segments, never from markup); a hit opens the replay at its line.

import { ApiError, getJSON } from './api.js';
import { h } from './dom.js';
import { clock, sessionHref, shortPath } from './format.js';

const KIND_LABELS = { prompt: 'Prompt', answer: 'Answer', tool: 'Tool call' };

export function snippetNodes(segments) {
  return (segments || []).map((segment) => (segment.mark
    ? h('mark', null, segment.text)
    : document.createTextNode(segment.text)));
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
    this.status = h('p', { class: 'search-status', 'aria-live': 'polite' });
    this.results = h('ol', { class: 'results' });
    const form = h('form', { class: 'search-form', role: 'search' }, this.input,
      h('button', { type: 'submit' }, 'Search'));
    form.addEventListener('submit', (event) => {
      event.preventDefault();
      this.search(true);
    });
    this.input.addEventListener('input', () => {
      window.clearTimeout(this.timer);
      this.timer = window.setTimeout(() => this.search(false), 200);
    });
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
    root.append(h('header', { class: 'view-header' }, h('h1', null, 'Search')), form, this.status, this.results);
    app.setTitle('Search');
    root.dataset.ready = 'true';
    this.input.focus();
    if (this.input.value.trim()) this.search(false);
  }

  destroy() {
    window.clearTimeout(this.timer);
    this.seq += 1;
  }

  async search(push) {
    const q = this.input.value.trim();
    const url = q ? `/search?q=${encodeURIComponent(q)}` : '/search';
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
    let body;
    try {
      body = await getJSON('/api/search', { q, limit: 100 });
    } catch (err) {
      if (seq !== this.seq) return;
      this.results.replaceChildren();
      this.status.textContent = err instanceof ApiError && err.code === 'no_search'
        ? 'Search is not available: this server has no index.'
        : `Search failed: ${err.message}`;
      return;
    }
    if (seq !== this.seq) return;
    const hits = body.hits || [];
    this.status.textContent = hits.length ? `${hits.length} result${hits.length === 1 ? '' : 's'}`
      : 'No results.';
    this.results.replaceChildren(...hits.map((hit) => this.result(hit)));
  }

  result(hit) {
    const params = { at: String(hit.offset) };
    if (hit.thread && hit.thread !== 'main') params.thread = hit.thread;
    return h('li', { class: 'result' },
      h('a', { href: sessionHref(hit.agent, hit.session_id, params), 'data-nav': true, class: 'result-link' },
        h('span', { class: 'result-title' }, hit.title || hit.session_id),
        h('span', { class: 'result-meta' },
          h('span', { class: `agent agent-${hit.agent}` }, hit.agent),
          h('span', { class: 'project', title: hit.project || '' }, shortPath(hit.project)),
          h('span', { class: 'kind' }, KIND_LABELS[hit.kind] || hit.kind),
          hit.thread && hit.thread !== 'main' ? h('span', { class: 'kind' }, 'sub-agent') : null,
          hit.ts ? h('time', { datetime: hit.ts }, clock(hit.ts)) : null),
        h('span', { class: 'snippet' }, snippetNodes(hit.snippet))));
  }
}
