// Small formatting helpers shared by the views (pure).

export const STATE_LABELS = {
  input_required: 'Needs you',
  running: 'Running',
  failed: 'Failed',
  done: 'Done',
  ended: 'Ended',
};

export function stateLabel(session) {
  if (session.state === 'input_required') {
    return session.waiting_for === 'question' ? 'Question' : 'Approval';
  }
  return STATE_LABELS[session.state] || session.state;
}

// A session's key in the page's maps: ids are only unique per host ("local": this machine).
export function sessionKey(agent, sessionId, host = null) {
  return host && host !== 'local' ? `${host}/${agent}:${sessionId}` : `${agent}:${sessionId}`;
}

export function sessionHref(agent, sessionId, params) {
  const base = `/session/${encodeURIComponent(agent)}/${encodeURIComponent(sessionId)}`;
  const query = params ? new URLSearchParams(params).toString() : '';
  return query ? `${base}?${query}` : base;
}

export function epoch(iso) {
  if (!iso) return null;
  const t = Date.parse(iso);
  return Number.isNaN(t) ? null : t;
}

// A session's last activity in ms (null when unknown), parsed once per session object: the
// board reads it of every session on every render (sections, filters, the project menu), and a
// session's object is replaced, never changed, when the socket brings it anew.
const activities = new WeakMap();
export function activityOf(session) {
  let t = activities.get(session);
  if (t === undefined) {
    t = epoch(session.last_activity);
    activities.set(session, t);
  }
  return t;
}

export function ago(iso, now = Date.now()) {
  const t = epoch(iso);
  if (t === null) return '';
  const seconds = Math.max(0, Math.round((now - t) / 1000));
  if (seconds < 45) return 'just now';
  for (const [unit, size] of [['d', 86400], ['h', 3600], ['m', 60]]) {
    if (seconds >= size) return `${Math.floor(seconds / size)}${unit} ago`;
  }
  return `${seconds}s ago`;
}

const TIME = new Intl.DateTimeFormat([], { hour: '2-digit', minute: '2-digit', second: '2-digit' });
const DATE_TIME = new Intl.DateTimeFormat([], {
  year: 'numeric', month: 'short', day: 'numeric', hour: '2-digit', minute: '2-digit',
});

export function clock(iso) {
  const t = epoch(iso);
  if (t === null) return '';
  const d = new Date(t);
  return new Date().toDateString() === d.toDateString() ? TIME.format(d) : DATE_TIME.format(d);
}

// The person's home folder, as the server says it (GET /api/health's `home`): only that one
// reads as `~`. Until it is known (or on a server that does not say), paths stay whole.
let HOME = null;

export function setHome(home) {
  HOME = typeof home === 'string' && home.startsWith('/') ? home.replace(/\/+$/, '') : null;
}

export function homePath(path) {
  if (!path) return '';
  if (HOME && HOME !== '' && (path === HOME || path.startsWith(`${HOME}/`))) {
    return `~${path.slice(HOME.length)}`;
  }
  return path;
}

// A path at most `max` characters long, cut in the middle: the head and the folder's own name
// stay (`~/projects/s…/agentbar-wt3`), since the name is what tells worktrees apart.
export function cutMiddle(path, max) {
  if (!max || path.length <= max) return path;
  const cut = path.lastIndexOf('/');
  const name = cut >= 0 ? path.slice(cut + 1) : path;
  const room = max - name.length - 2;
  if (room < 4) return `…/${name}`.length <= max ? `…/${name}` : `${name.slice(0, max - 1)}…`;
  return `${path.slice(0, room)}…/${name}`;
}

export function shortPath(path, max = 0) {
  if (!path) return '(no project)';
  return cutMiddle(homePath(path), max);
}

// The folder's own name: `/work/alpha` -> `alpha`.
export function folderName(path) {
  if (!path) return '';
  const trimmed = path.replace(/\/+$/, '');
  return trimmed.slice(trimmed.lastIndexOf('/') + 1) || trimmed;
}

// What a card calls a session: its title, else its folder's name; never its raw id.
export function sessionTitle(session) {
  const title = (session.title || '').trim();
  if (title) return title;
  const name = folderName(session.project);
  return name ? `Session in ${name}` : `Untitled ${session.agent || ''} session`.replace('  ', ' ');
}

// Tokens a session spent, as a card says them: input + output ("38k tokens"); the cache's reads
// and writes are counted apart (they are re-reads of the same context, not new work).
export function tokensText(usage) {
  if (!usage) return '';
  const spent = (usage.input_tokens || 0) + (usage.output_tokens || 0);
  return spent ? `${number(spent)} tokens` : '';
}

export function cacheText(usage) {
  if (!usage) return '';
  const cache = (usage.cache_read_tokens || 0) + (usage.cache_creation_tokens || 0);
  return cache ? `${number(cache)} cached` : '';
}

/** A session's cost in dollars, as short as a card needs; "cost unknown" when unpriced. */
export function dollars(cost) {
  if (cost === null || cost === undefined) return 'cost unknown';
  if (cost > 0 && cost < 0.01) return '< $0.01';
  return `$${cost.toFixed(2)}`;
}

export function number(n) {
  if (n === null || n === undefined) return '0';
  if (n >= 1e6) return `${(n / 1e6).toFixed(n >= 1e7 ? 0 : 1)}M`;
  if (n >= 1e4) return `${Math.round(n / 1e3)}k`;
  if (n >= 1e3) return `${(n / 1e3).toFixed(1)}k`;
  return String(n);
}

export function usageText(usage) {
  if (!usage) return '';
  const parts = [`in ${number(usage.input_tokens)}`, `out ${number(usage.output_tokens)}`];
  if (usage.cache_read_tokens) parts.push(`cache read ${number(usage.cache_read_tokens)}`);
  if (usage.cache_creation_tokens) parts.push(`cache write ${number(usage.cache_creation_tokens)}`);
  return parts.join(' · ');
}

export function addUsage(total, usage) {
  if (!usage) return total;
  const out = total || {
    input_tokens: 0, output_tokens: 0, cache_read_tokens: 0, cache_creation_tokens: 0,
  };
  for (const key of Object.keys(out)) out[key] += usage[key] || 0;
  return out;
}

export function subUsage(a, b) {
  const out = {};
  for (const key of Object.keys(a)) out[key] = Math.max(0, (a[key] || 0) - ((b && b[key]) || 0));
  return out;
}

// `5,000`: one formatter made once (toLocaleString makes one per call: slow on a big board).
const COUNT = new Intl.NumberFormat();
export function count(n) {
  return COUNT.format(n);
}

export function plural(n, one, many) {
  return `${n} ${n === 1 ? one : (many || `${one}s`)}`;
}

// `1.3 GB`, `640 MB` (powers of 1024, as the tray and `agentbar status` say it).
export function bytes(n) {
  for (const [unit, name] of [[2 ** 30, 'GB'], [2 ** 20, 'MB'], [2 ** 10, 'KB']]) {
    if (n >= unit) {
      const value = n / unit;
      return `${value < 10 ? value.toFixed(1) : Math.round(value)} ${name}`;
    }
  }
  return `${n} bytes`;
}

// `1.3 of 3.1 GB`: the unit said once when both share it (`0 of 3.1 GB`).
export function bytesOf(done, total) {
  const whole = bytes(total);
  const unit = whole.split(' ').pop();
  let part = bytes(done);
  if ((unit !== 'bytes' && part.endsWith(` ${unit}`)) || done === 0) part = part.split(' ')[0];
  return `${part} of ${whole}`;
}

// How far the engine's first reading has come (docs/api.md PROGRESS), in words; null once done.
export function readingText(progress) {
  if (!progress || progress.done) return null;
  if (!progress.live_ready) return 'Reading live sessions…';
  const live = 'live sessions are up to date';
  if (!(progress.bytes_total > 0)) return `Reading history… ${live}`;
  const percent = Math.min(99, Math.floor((progress.fraction || 0) * 100));
  return `Reading history… ${percent} % (${bytesOf(progress.bytes_done, progress.bytes_total)}), `
    + live;
}
