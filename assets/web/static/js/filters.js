// The board's filters (project, agent, state, time, host): read from and written to the page's
// query string, so a filtered board is an address (reload, back and forward keep it), and
// matched the way the server's GET /api/sessions matches them (core/listing.py SessionFilter).

import { getJSON } from './api.js';
import { activityOf } from './format.js';

export const STATES = [
  ['input_required', 'Needs you'],
  ['running', 'Running'],
  ['done', 'Done'],
  ['failed', 'Failed'],
  ['ended', 'Ended'],
];

export const SPANS = [
  ['', 'Any time'],
  ['1h', 'Last hour'],
  ['24h', 'Last 24 hours'],
  ['7d', 'Last 7 days'],
  ['30d', 'Last 30 days'],
];

const SPAN = /^(\d{1,6})\s*([smhdw])$/;
const SPAN_SECONDS = { s: 1, m: 60, h: 3600, d: 86400, w: 7 * 86400 };
const KEYS = ['project', 'agent', 'state', 'since', 'host'];

// `2h` as the moment that long ago (ms), or null for anything else.
export function sinceMoment(span, now = Date.now()) {
  const m = SPAN.exec((span || '').trim().toLowerCase());
  return m ? now - Number(m[1]) * SPAN_SECONDS[m[2]] * 1000 : null;
}

export class BoardFilter {
  constructor({ project = '', agent = '', states = [], since = '', host = '' } = {}) {
    this.project = project;
    this.agent = agent;
    this.states = [...new Set(states)].filter((s) => STATES.some(([k]) => k === s));
    this.since = sinceMoment(since) === null ? '' : since;
    this.host = host;
  }

  static fromSearch(search) {
    const q = new URLSearchParams(search);
    return new BoardFilter({
      project: q.get('project') || '',
      agent: q.get('agent') || '',
      states: (q.get('state') || '').split(',').map((s) => s.trim()).filter(Boolean),
      since: q.get('since') || '',
      host: q.get('host') || '',
    });
  }

  with(changes) {
    return new BoardFilter({ ...this.fields(), ...changes });
  }

  fields() {
    return {
      project: this.project, agent: this.agent, states: this.states, since: this.since,
      host: this.host,
    };
  }

  get active() {
    return Boolean(this.project || this.agent || this.states.length || this.since || this.host);
  }

  // The query parameters (the API's names): only those set.
  params() {
    const out = {};
    if (this.project) out.project = this.project;
    if (this.agent) out.agent = this.agent;
    if (this.states.length) out.state = this.states.join(',');
    if (this.since) out.since = this.since;
    if (this.host) out.host = this.host;
    return out;
  }

  // `url` with this filter's parameters in its query (others kept).
  applyTo(url) {
    const next = new URL(url);
    for (const key of KEYS) next.searchParams.delete(key);
    for (const [key, value] of Object.entries(this.params())) next.searchParams.set(key, value);
    return next;
  }

  // A state filter is applied by the board to the state it shows (a session with a pending
  // request needs you whatever the engine said): `state` is that one.
  matches(session, now = Date.now(), state = session.state) {
    if (this.agent && session.agent !== this.agent) return false;
    if (this.host && (session.host || 'local') !== this.host) return false;
    if (this.states.length && !this.states.includes(state)) return false;
    if (this.since) {
      const t = activityOf(session);
      if (t === null || t < sinceMoment(this.since, now)) return false;
    }
    return !this.project || projectMatches(session.project, this.project);
  }
}

// As core/listing.py: the folder's own name exactly, or any part of its path.
export function projectMatches(project, wanted) {
  if (!project) return false;
  const want = wanted.replace(/\/+$/, '') || '/';
  const name = project.replace(/\/+$/, '').split('/').pop();
  return name === want || project.includes(want);
}

// The sessions `filter` keeps, asked of the server: a server that filters says how many there
// are in all (`total`); one that does not (older) sends every session, filtered here instead.
export async function querySessions(filter, { limit, offset } = {}) {
  const body = await getJSON('/api/sessions', { ...filter.params(), all: 1, limit, offset });
  if (typeof body.total === 'number') return { sessions: body.sessions, total: body.total };
  const kept = body.sessions.filter((s) => filter.matches(s));
  const start = offset || 0;
  return { sessions: kept.slice(start, limit ? start + limit : undefined), total: kept.length };
}
