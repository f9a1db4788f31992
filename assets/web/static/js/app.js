// The single-page app: routes /, /board, /search and /session/<agent>/<id> to their views, keeps
// one WebSocket for all of them, and handles the keys that work everywhere.

import { Events, getJSON, ApiError } from './api.js';
import { BoardView, needsCount } from './board.js';
import { h } from './dom.js';
import { setHome } from './format.js';
import { ReplayView } from './replay.js';
import { SearchView } from './search.js';

class App {
  constructor() {
    this.main = document.getElementById('app');
    this.events = new Events();
    this.view = null;
    this.baseTitle = 'agentbar';
    this.pageTitle = '';
    this.status = document.getElementById('live-status');
    this.headerSearch = document.getElementById('header-search');
  }

  start() {
    document.addEventListener('click', (event) => this.onClick(event));
    window.addEventListener('popstate', () => this.route());
    document.addEventListener('keydown', (event) => this.onKey(event));
    this.headerSearch.addEventListener('submit', (event) => {
      event.preventDefault();
      const q = this.headerSearch.querySelector('input').value.trim();
      this.navigate(q ? `/search?q=${encodeURIComponent(q)}` : '/search');
    });
    this.events.onStatus((status) => {
      this.status.textContent = status === 'live' ? 'live' : (status === 'offline' ? 'reconnecting…' : 'connecting…');
      this.status.dataset.status = status;
    });
    this.events.on(() => this.updateTitle());
    this.events.start();
    this.route();
    this.checkAccess();
  }

  async checkAccess() {
    try {
      const health = await getJSON('/api/health');
      setHome(health && health.home); // `~` for the server's user's home, and no other
    } catch (err) {
      if (err instanceof ApiError && (err.status === 401 || err.status === 403)) {
        this.main.replaceChildren(h('section', { class: 'notice' },
          h('h1', null, 'This page needs a fresh address'),
          h('p', null, 'Run ', h('code', null, 'agentbar window'),
            ' (or the tray\'s Open window): it opens this page with a one-time code.')));
      }
    }
  }

  navigate(url, { replace = false } = {}) {
    if (replace) window.history.replaceState(null, '', url);
    else window.history.pushState(null, '', url);
    this.route();
    window.scrollTo(0, 0);
  }

  onClick(event) {
    if (event.defaultPrevented || event.button !== 0) return;
    if (event.metaKey || event.ctrlKey || event.shiftKey || event.altKey) return;
    const link = event.target.closest && event.target.closest('a[data-nav]');
    if (!link) return;
    event.preventDefault();
    this.navigate(link.getAttribute('href'));
  }

  onKey(event) {
    if (event.defaultPrevented || event.altKey || event.ctrlKey || event.metaKey) return;
    const tag = event.target && event.target.tagName;
    if (tag === 'INPUT' || tag === 'TEXTAREA' || tag === 'SELECT') {
      if (event.key === 'Escape') event.target.blur();
      return;
    }
    if (event.key === '/') {
      event.preventDefault();
      const input = document.getElementById('search-input') || this.headerSearch.querySelector('input');
      input.focus();
      input.select();
    } else if (event.key === 'b') {
      this.navigate('/');
    } else if (event.key === '?') {
      const help = document.getElementById('keys-help');
      help.hidden = !help.hidden;
    }
  }

  route() {
    if (this.view && this.view.destroy) this.view.destroy();
    this.view = null;
    this.main.replaceChildren();
    delete this.main.dataset.ready;
    const path = window.location.pathname;
    const params = new URLSearchParams(window.location.search);
    const session = path.match(/^\/session\/([a-z][a-z0-9_-]{0,31})\/([A-Za-z0-9][A-Za-z0-9._-]{0,127})\/?$/);
    document.body.dataset.view = session ? 'replay' : (path === '/search' ? 'search' : 'board');
    for (const link of document.querySelectorAll('.site-nav a')) {
      link.toggleAttribute('aria-current', link.dataset.view === document.body.dataset.view);
    }
    if (session) {
      this.view = new ReplayView(this.main, this, { agent: session[1], sessionId: session[2], params });
    } else if (path === '/search') {
      this.view = new SearchView(this.main, this, { params });
    } else if (path === '/' || path === '/board') {
      this.view = new BoardView(this.main, this);
    } else {
      this.main.append(h('section', { class: 'notice' }, h('h1', null, 'Not found'),
        h('p', null, h('a', { href: '/', 'data-nav': true }, 'Back to the board'))));
      this.setTitle('Not found');
    }
  }

  setTitle(title) {
    this.pageTitle = title;
    this.updateTitle();
  }

  // The window title always says how many sessions need you.
  updateTitle() {
    const need = needsCount(this.events.sessions.values(), this.events.decisions);
    const prefix = need ? `(${need}) ` : '';
    document.title = `${prefix}${this.pageTitle ? `${this.pageTitle} — ` : ''}${this.baseTitle}`;
  }
}

const app = new App();
window.agentbarApp = app;
app.start();
