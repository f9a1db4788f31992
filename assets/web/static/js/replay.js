// The replay of one session: its items page by page (scrolling up loads older pages, never the
// whole file), opened at the end, at the item that needs the user, or at a search hit; sub-agent
// threads expand where they were spawned; new items arrive live. A request of the session that
// waits on the person gets its buttons at the pending call (above the transcript while that call
// is not on the page), live from the events stream's decisions.

import { sessionActions } from './actions.js';
import { ApiError, exportUrl, getJSON, requestsOf, sessionPath } from './api.js';
import { DecisionBoxes, placeBoxes } from './decisions.js';
import { append, clear, h } from './dom.js';
import {
  addUsage, ago, clock, dollars, plural, sessionHref, sessionKey, shortPath, stateLabel, subUsage,
  usageText,
} from './format.js';
import { ansiFragment, hasAnsi } from './ansi.js';
import { markWords } from './highlight.js';
import { renderMarkdown } from './markdown.js';
import { VIEW_TOOLS, toolView } from './tools.js';
import {
  humanDurations, isCaveat, localOutput, noteLabel, slashCommand,
} from './transcript_text.js';

const FOLD_LINES = 24;
const FOLD_CHARS = 3000;
const LOAD_MARGIN = 900; // px from either end of the page at which the next page is fetched
const LIVE_POLL_MS = 4000;
const MAX_CATCH_UP_PAGES = 20;

function isWaiting(session) {
  return session && (session.state === 'running' || session.state === 'input_required');
}

// -- one item --------------------------------------------------------------------------------

// Text into a <pre>: terminal colour codes become classed spans, never boxes.
function fillPre(pre, text) {
  if (hasAnsi(text)) pre.replaceChildren(ansiFragment(text));
  else pre.textContent = text;
  return pre;
}

// Long text shows its start only (less to lay out), and unfolds on demand.
function foldable(text, cls = 'output', expanded = false) {
  const lines = text.split('\n');
  if (lines.length <= FOLD_LINES && text.length <= FOLD_CHARS) return fillPre(h('pre', { class: cls }), text);
  let head = lines.slice(0, FOLD_LINES).join('\n');
  if (head.length > FOLD_CHARS) head = head.slice(0, FOLD_CHARS);
  const pre = fillPre(h('pre', { class: `${cls} folded` }), `${head}\n…`);
  const more = `Show more (${plural(lines.length, 'line')}, ${text.length.toLocaleString()} characters)`;
  const button = h('button', { type: 'button', class: 'fold-toggle', 'aria-expanded': 'false' }, more);
  const show = (folded) => {
    pre.classList.toggle('folded', folded);
    fillPre(pre, folded ? `${head}\n…` : text);
    button.setAttribute('aria-expanded', folded ? 'false' : 'true');
    button.textContent = folded ? more : 'Show less';
  };
  button.addEventListener('click', () => show(!pre.classList.contains('folded')));
  if (expanded) show(false);
  return h('div', { class: 'foldable' }, pre, button);
}

const SHORT_CHARS = 90;

// A long description's first line, cut short (the whole text stays in the title).
function firstLine(text) {
  const line = String(text || '').trim().split('\n')[0].trim();
  return line.length > SHORT_CHARS ? `${line.slice(0, SHORT_CHARS - 1)}…` : line;
}

// A record that is machine activity (a JSON object), not words: folded to one line.
function looksLikeJson(text) {
  return /^\s*[{[]/.test(text || '');
}

function inputText(value) {
  if (value === null || value === undefined) return '';
  if (typeof value === 'string') return value;
  try {
    return JSON.stringify(value, null, 2);
  } catch (err) {
    return String(value);
  }
}

function timeEl(item) {
  return item.ts ? h('time', { datetime: item.ts, title: item.ts }, clock(item.ts)) : null;
}

export class ThreadView {
  constructor(replay, thread, { nested = false } = {}) {
    this.replay = replay;
    this.thread = thread;
    this.nested = nested;
    this.items = [];
    this.keys = new Set();
    this.els = new Map(); // "offset:index" -> the item's element
    this.calls = new Map(); // call_id -> the call's element (its result goes inside)
    this.orphans = new Map(); // call_id -> a result element whose call is not loaded yet
    this.start = null;
    this.end = null;
    this.size = 0;
    this.before = null;
    this.after = null;
    this.loading = null;
    this.focus = null;
    this.list = h('div', { class: 'items', role: 'feed', 'aria-busy': 'false' });
    this.top = h('div', { class: 'page-status top', 'aria-live': 'polite' });
    this.bottom = h('div', { class: 'page-status bottom', 'aria-live': 'polite' });
    this.el = h('div', {
      class: nested ? 'thread nested' : 'thread main', dataset: { thread },
    }, this.top, this.list, this.bottom);
  }

  params(extra) {
    return {
      agent: this.replay.agent,
      host: this.replay.host,
      thread: this.thread === 'main' ? null : this.thread,
      limit: this.nested ? 100 : null,
      ...extra,
    };
  }

  fetchPage(extra) {
    return getJSON(sessionPath(this.replay.sessionId, '/items'), this.params(extra));
  }

  // One fetch at a time per thread; callers queue behind it. `loading` never rejects.
  run(task) {
    const next = (this.loading || Promise.resolve()).then(() => task());
    const tracked = next.catch(() => {}).then(() => {
      if (this.loading === tracked) this.loading = null;
    });
    this.loading = tracked;
    return next;
  }

  // The first page: the last one, the one starting at `at`, or the thread's beginning.
  open({ at = null, fromStart = false } = {}) {
    return this.run(async () => {
      let extra = {};
      if (at !== null) extra = { after: at };
      else if (fromStart) extra = { after: 0 };
      const page = await this.fetchPage(extra);
      this.start = page.start;
      this.end = page.end;
      this.size = page.size;
      this.before = page.before;
      this.after = page.after;
      this.focus = page.focus;
      this.add(page.items, 'append');
      this.updateStatus();
      return page;
    });
  }

  older() {
    if (this.before === null || this.start === null) return Promise.resolve(null);
    return this.run(async () => {
      if (this.before === null) return null;
      const page = await this.fetchPage({ before: this.start });
      this.start = page.start;
      this.before = page.before;
      this.replay.keepScroll(() => this.add(page.items, 'prepend'));
      this.updateStatus();
      return page;
    });
  }

  newer() {
    if (this.after === null || this.end === null) return Promise.resolve(null);
    return this.run(async () => {
      if (this.after === null) return null;
      const page = await this.fetchPage({ after: this.end });
      this.end = page.end;
      this.after = page.after;
      this.size = page.size;
      this.add(page.items, 'append');
      this.updateStatus();
      return page;
    });
  }

  // Live: what was written since the end we have (only when we hold the end of the file).
  follow() {
    if (this.after !== null || this.end === null) return Promise.resolve(null);
    return this.run(async () => {
      const page = await this.fetchPage({ after: this.end });
      this.size = page.size;
      if (!page.items.length && page.end === this.end) return page;
      this.end = page.end;
      this.after = page.after;
      this.add(page.items, 'append');
      this.updateStatus();
      return page;
    });
  }

  // After a state change: the last page (it names the item that needs the user, if any).
  refreshLast() {
    return this.run(async () => {
      const page = await this.fetchPage({});
      this.size = page.size;
      this.focus = page.focus;
      if (this.end !== null && page.start > this.end) {
        // More was written than one page holds: fetch what lies between, page by page.
        let cursor = this.end;
        for (let i = 0; i < MAX_CATCH_UP_PAGES && cursor < page.start; i += 1) {
          const gap = await this.fetchPage({ after: cursor });
          this.add(gap.items, 'append');
          if (gap.end <= cursor) break;
          cursor = gap.end;
        }
      }
      this.add(page.items.filter((item) => this.end === null || item.offset >= this.end), 'append');
      this.end = Math.max(this.end ?? 0, page.end);
      this.after = page.after;
      if (this.start === null) {
        this.start = page.start;
        this.before = page.before;
      }
      this.updateStatus();
      return page;
    });
  }

  updateStatus() {
    this.top.textContent = this.before === null ? (this.nested ? '' : 'Beginning of the transcript')
      : '';
    this.top.classList.toggle('more', this.before !== null);
    clear(this.bottom);
    if (this.after !== null) {
      if (this.nested) {
        this.bottom.append(h('button', {
          type: 'button', class: 'load-more', onclick: () => this.newer(),
        }, 'Load more of this sub-agent'));
      } else {
        this.bottom.textContent = 'Loading newer items…';
      }
    }
    this.list.setAttribute('aria-busy', 'false');
  }

  add(items, where) {
    const fresh = items.filter((item) => !this.keys.has(`${item.offset}:${item.index}`));
    if (!fresh.length) return;
    for (const item of fresh) this.keys.add(`${item.offset}:${item.index}`);
    const fragment = document.createDocumentFragment();
    for (const item of fresh) {
      const el = this.render(item);
      if (el) fragment.append(el);
    }
    if (where === 'prepend') {
      this.items = fresh.concat(this.items);
      this.list.prepend(fragment);
    } else {
      this.items = this.items.concat(fresh);
      this.list.append(fragment);
    }
    this.updateTurns();
  }

  element(offset, index) {
    return this.els.get(`${offset}:${index}`) || null;
  }

  lineElements(offset) {
    return [...this.list.querySelectorAll(`[data-offset="${Number(offset)}"]`)];
  }

  // -- rendering ---------------------------------------------------------------------------

  shell(item, cls, ...children) {
    const el = h('div', {
      class: `item kind-${item.kind}${cls ? ` ${cls}` : ''}`,
      dataset: { offset: String(item.offset), index: String(item.index), kind: item.kind },
      tabindex: '-1',
    }, ...children);
    this.els.set(`${item.offset}:${item.index}`, el);
    return el;
  }

  render(item) {
    switch (item.kind) {
      case 'user': return this.message(item, 'You', 'user');
      case 'assistant': return this.message(item, 'Assistant', 'assistant');
      case 'thinking': return this.thinking(item);
      case 'tool_call': return this.toolCall(item);
      case 'tool_result': return this.toolResult(item);
      case 'subagent': return this.subagent(item);
      case 'compaction': return this.compaction(item);
      case 'error': return this.error(item);
      case 'note': return this.note(item);
      default: return this.unknown(item);
    }
  }

  // "Show all": the item whole, from the item route, replacing what `fill` drew.
  wholeButton(item, fill) {
    if (!item.truncated) return null;
    const button = h('button', { type: 'button', class: 'show-all' },
      `Show all (${item.chars.toLocaleString()} characters)`);
    button.addEventListener('click', async () => {
      button.disabled = true;
      button.textContent = 'Loading…';
      try {
        const body = await getJSON(
          sessionPath(this.replay.sessionId, `/items/${item.offset}/${item.index}`),
          { agent: this.replay.agent, host: this.replay.host, thread: this.thread === 'main' ? null : this.thread },
        );
        fill(body.item, true);
        button.remove();
      } catch (err) {
        button.disabled = false;
        button.textContent = `Could not load it (${err.message}); try again`;
      }
    });
    return button;
  }

  message(item, who, cls) {
    const command = cls === 'user' ? slashCommand(item) : null;
    if (command) return this.slash(item, command);
    const body = h('div', { class: 'markdown' });
    const fill = (whole) => body.replaceChildren(renderMarkdown(whole.text));
    fill(item);
    return this.shell(item, `message ${cls}`,
      h('div', { class: 'who' },
        h('span', { class: 'who-name' }, who),
        item.model && cls === 'assistant' ? h('span', { class: 'model' }, item.model) : null,
        timeEl(item)),
      body,
      this.wholeButton(item, fill),
      item.usage ? h('div', { class: 'usage line-usage' }, usageText(item.usage)) : null);
  }

  // A slash command the person typed, shown as their prompt: the command and its arguments.
  slash(item, command) {
    return this.shell(item, 'message user slash',
      h('div', { class: 'who' }, h('span', { class: 'who-name' }, 'You'),
        h('span', { class: 'model' }, 'command'), timeEl(item)),
      h('p', { class: 'slash-line' }, h('code', { class: 'slash-name' }, command.name),
        command.args ? h('span', { class: 'slash-args' }, ' ', command.args) : null));
  }

  thinking(item) {
    const body = h('div', { class: 'markdown thinking-body' });
    let drawn = false;
    const details = h('details', { class: 'thinking' },
      h('summary', null, h('span', { class: 'label' }, 'Thinking'), ' ',
        h('span', { class: 'preview' }, item.text.replace(/\s+/g, ' ').slice(0, 120))),
      body);
    const fill = (whole) => body.replaceChildren(renderMarkdown(whole.text));
    details.addEventListener('toggle', () => {
      if (details.open && !drawn) {
        drawn = true;
        fill(item);
        const more = this.wholeButton(item, fill);
        if (more) body.after(more);
      }
    });
    return this.shell(item, null, details);
  }

  toolCall(item) {
    const view = toolView(item);
    const viewSlot = h('div', { class: 'tool-view-slot' }, view.body);
    const inputPre = h('div', { class: 'tool-input-body' }, foldable(inputText(item.input), 'input'));
    let el = null;
    const fill = (whole, all) => {
      inputPre.replaceChildren(foldable(inputText(whole.input), 'input', all));
      // The whole input: its view drawn again (answers kept when the result is here).
      const again = toolView(whole);
      viewSlot.replaceChildren(...(again.body ? [again.body] : []));
      el.onResult = again.onResult || null;
      if (el.onResult && el.lastResult) el.onResult(el.lastResult);
    };
    const input = h('details', { class: 'tool-input' },
      h('summary', null, 'Input'), inputPre, this.wholeButton(item, fill));
    // A view the cut input could not give: the same "show all" where the view goes.
    if (!view.body && item.truncated && VIEW_TOOLS.has(item.name)) {
      viewSlot.append(h('p', { class: 'tool-view muted' }, 'This call is too long for the page. ',
        this.wholeButton(item, fill)));
    }
    const slot = h('div', { class: 'tool-result-slot' });
    el = this.shell(item, 'tool',
      h('div', { class: 'tool-head' },
        h('span', { class: 'tool-name' }, item.name || 'tool'),
        view.head ?? (item.summary ? h('code', { class: 'tool-summary' }, item.summary) : null),
        timeEl(item)),
      viewSlot,
      input,
      slot,
      item.usage ? h('div', { class: 'usage line-usage' }, usageText(item.usage)) : null);
    el.onResult = view.onResult || null;
    el.callInput = item.input;
    if (item.call_id) {
      this.calls.set(item.call_id, el);
      const orphan = this.orphans.get(item.call_id);
      if (orphan) {
        this.orphans.delete(item.call_id);
        slot.append(orphan);
        orphan.classList.add('attached');
        el.lastResult = orphan.resultItem || null;
        if (el.onResult && orphan.resultItem) el.onResult(orphan.resultItem);
      }
    }
    return el;
  }

  toolResult(item) {
    const body = h('div', { class: 'tool-output' });
    const fill = (whole, all) => body.replaceChildren(
      whole.text ? foldable(whole.text, 'output', all) : h('p', { class: 'muted' }, '(no output)'));
    fill(item);
    const status = item.denied ? 'Denied' : (item.is_error ? 'Error' : 'Result');
    const el = this.shell(item, `result${item.is_error ? ' is-error' : ''}${item.denied ? ' denied' : ''}`,
      h('div', { class: 'result-head' }, h('span', { class: 'result-label' }, status), timeEl(item)),
      body,
      this.wholeButton(item, fill));
    el.resultItem = item;
    const call = item.call_id ? this.calls.get(item.call_id) : null;
    if (call) {
      call.querySelector('.tool-result-slot').append(el);
      el.classList.add('attached');
      call.lastResult = item;
      if (call.onResult) call.onResult(item);
      return null;
    }
    if (item.call_id) this.orphans.set(item.call_id, el);
    return el;
  }

  subagent(item) {
    const link = item.link || {};
    const call = item.call_id ? this.calls.get(item.call_id) : null;
    const callInput = call && call.callInput && typeof call.callInput === 'object' ? call.callInput : {};
    // The Task's short description, not the whole prompt it was given.
    const description = (typeof callInput.description === 'string' && callInput.description)
      || link.description || item.text || link.thread || '';
    const nested = h('div', { class: 'subthread', hidden: true });
    const button = h('button', {
      type: 'button', class: 'subagent-toggle', 'aria-expanded': 'false',
    }, h('span', { class: 'label' }, 'Sub-agent'), ' ',
    h('span', { class: 'description' }, firstLine(description)),
    link.agent_type ? h('span', { class: 'agent-type' }, link.agent_type) : null);
    const el = this.shell(item, 'subagent', button, nested);
    el.dataset.link = link.thread || '';
    let view = null;
    const expand = async (show) => {
      nested.hidden = !show;
      button.setAttribute('aria-expanded', show ? 'true' : 'false');
      if (show && !view && link.thread) {
        view = new ThreadView(this.replay, link.thread, { nested: true });
        nested.append(view.el);
        try {
          await view.open({ fromStart: true });
        } catch (err) {
          nested.append(h('p', { class: 'error-text' }, `Could not load the sub-agent: ${err.message}`));
        }
      }
    };
    button.addEventListener('click', () => expand(nested.hidden));
    el.expand = expand;
    // Nested where it was spawned: inside the call that started it, when that is here.
    if (call) {
      call.querySelector('.tool-result-slot').before(el);
      el.classList.add('attached');
      return null;
    }
    return el;
  }

  compaction(item) {
    return this.shell(item, 'marker',
      h('div', { class: 'marker-line' },
        h('span', null, `Context compacted${item.name ? ` (${item.name})` : ''}`), timeEl(item)),
      item.text ? h('details', null, h('summary', null, 'Summary'), foldable(item.text, 'note-text')) : null);
  }

  error(item) {
    const body = h('div');
    const fill = (whole, all) => body.replaceChildren(
      foldable(humanDurations(whole.text || '(no message)'), 'error-text', all));
    fill(item);
    const label = item.name === 'retrying' ? 'API error (retrying)'
      : (item.name === 'turn_failed' ? 'Turn failed' : 'Error');
    return this.shell(item, 'error',
      h('div', { class: 'result-head' }, h('span', { class: 'error-label' }, label), timeEl(item)),
      body, this.wholeButton(item, fill),
      item.usage ? h('div', { class: 'usage' }, usageText(item.usage)) : null);
  }

  note(item) {
    const text = item.text || '';
    const name = item.name || 'note';
    if (isCaveat(text)) return null; // the CLI's words to the model, not to the person
    const command = slashCommand(item);
    if (command) return this.slash(item, command);
    const output = name === 'command_output' ? text : localOutput(text);
    if (output !== null) {
      return this.shell(item, 'note command-output',
        h('div', { class: 'note-line' }, h('span', { class: 'note-name' }, 'Command output'), timeEl(item)),
        output ? foldable(output, 'note-text') : h('p', { class: 'muted' }, '(no output)'));
    }
    const label = noteLabel(name);
    const shown = humanDurations(text);
    const long = shown.length > 160 || shown.includes('\n');
    const usage = item.usage && name === 'turn_end'
      ? h('span', { class: 'usage codex-usage' }) : null;
    let content;
    if (long || item.folded || looksLikeJson(shown)) {
      const body = h('div');
      const fill = (whole, all) => body.replaceChildren(foldable(whole.text, 'note-text', all));
      fill(item);
      const preview = item.summary
        || (looksLikeJson(shown) ? '' : shown.replace(/\s+/g, ' ').slice(0, 100));
      content = h('details', { class: 'folded-record' },
        h('summary', null, label ? h('span', { class: 'note-name' }, label) : null, ' ',
          h('span', { class: 'preview' }, preview), timeEl(item)),
        body, this.wholeButton(item, fill));
    } else {
      content = h('div', { class: 'note-line' },
        label ? h('span', { class: 'note-name' }, label) : null, ' ', h('span', null, shown), ' ', usage,
        timeEl(item));
    }
    return this.shell(item, `note${name === 'turn_end' ? ' turn-end' : ''}`, content);
  }

  // A line no one knows (Codex's reviewer verdicts, a new record type): one line, opened on demand.
  unknown(item) {
    const body = h('div');
    const fill = (whole, all) => body.replaceChildren(foldable(whole.text, 'raw', all));
    fill(item);
    const label = item.name ? noteLabel(item.name) || item.name : '';
    return this.shell(item, 'unknown',
      h('details', { class: 'folded-record' },
        h('summary', null, h('span', { class: 'unknown-label' }, 'Record'),
          label ? h('span', { class: 'note-name' }, label) : null, timeEl(item)),
        body, this.wholeButton(item, fill)));
  }

  // Token usage per turn: Claude's lines each carry what they add (summed from one prompt to the
  // next); Codex's turn ends carry running totals (a turn is the difference to the previous one).
  updateTurns() {
    for (const el of this.list.querySelectorAll(':scope > .turn-usage')) el.remove();
    let total = null;
    let lastCumulative = null;
    const flush = (beforeEl) => {
      if (!total) return;
      const footer = h('div', { class: 'turn-usage usage' }, `Turn tokens: ${usageText(total)}`);
      if (beforeEl) this.list.insertBefore(footer, beforeEl);
      else this.list.append(footer);
      total = null;
    };
    for (const item of this.items) {
      if (item.kind === 'user') {
        const el = this.element(item.offset, item.index);
        if (el && el.parentElement === this.list) flush(el);
        total = null;
      } else if (item.kind === 'note' || item.kind === 'error') {
        if (item.usage && (item.name === 'turn_end' || item.name === 'turn_failed')) {
          const el = this.element(item.offset, item.index);
          const slot = el && el.querySelector('.codex-usage');
          if (slot) {
            const turn = lastCumulative ? subUsage(item.usage, lastCumulative) : null;
            slot.textContent = turn
              ? `· turn ${usageText(turn)} · session so far ${usageText(item.usage)}`
              : `· session so far ${usageText(item.usage)}`;
          }
          lastCumulative = item.usage;
        }
      } else if (item.usage) {
        total = addUsage(total, item.usage);
      }
    }
    flush(null);
  }
}

// -- the page --------------------------------------------------------------------------------

export class ReplayView {
  constructor(root, app, { agent, sessionId, params }) {
    this.root = root;
    this.app = app;
    this.agent = agent;
    this.sessionId = sessionId;
    this.threadId = params.get('thread') || 'main';
    // A remote host's session: every request about it names the host (ids are per host).
    this.host = params.get('host') || null;
    const at = params.get('at');
    this.query = params.get('q') || '';
    this.at = at !== null && /^\d+$/.test(at) ? Number(at) : null;
    this.session = null;
    this.destroyed = false;
    this.header = h('header', { class: 'replay-header view-header' },
      h('p', { class: 'loading' }, 'Loading the session…'));
    this.banner = h('div', { class: 'focus-banner', hidden: true, role: 'status' });
    this.main = new ThreadView(this, this.threadId);
    this.decisionBoxes = new DecisionBoxes();
    this.answers = h('div', { class: 'replay-decisions' });
    root.append(this.header, this.banner, this.main.el);
    this.onScroll = () => this.scheduleCheck();
    window.addEventListener('scroll', this.onScroll, { passive: true });
    window.addEventListener('resize', this.onScroll, { passive: true });
    this.unsubscribe = app.events.on((message) => this.onEvent(message));
    this.poll = window.setInterval(() => this.livePoll(), LIVE_POLL_MS);
    this.onKey = (event) => this.key(event);
    document.addEventListener('keydown', this.onKey);
    this.ready = this.load();
  }

  destroy() {
    this.destroyed = true;
    window.removeEventListener('scroll', this.onScroll);
    window.removeEventListener('resize', this.onScroll);
    document.removeEventListener('keydown', this.onKey);
    window.clearInterval(this.poll);
    this.unsubscribe();
  }

  async load() {
    document.documentElement.classList.add('replay-loading');
    try {
      const [detail] = await Promise.all([
        getJSON(sessionPath(this.sessionId), { agent: this.agent, host: this.host }),
        this.main.open({ at: this.at }),
      ]);
      if (this.destroyed) return;
      this.session = detail.session;
      this.drawHeader();
      this.position();
      this.placeDecisions();
      // For bench/bench_web.py: the first page is in the DOM; two frames on, it was painted.
      performance.mark('agentbar:first-page');
      window.requestAnimationFrame(() => window.requestAnimationFrame(
        () => performance.mark('agentbar:first-page-painted'),
      ));
    } catch (err) {
      if (this.destroyed) return;
      clear(this.header);
      append(this.header, [
        h('h1', null, err instanceof ApiError && err.status === 404 ? 'No such session' : 'Could not load the session'),
        h('p', { class: 'error-text' }, err.message),
        h('p', null, h('a', { href: '/', 'data-nav': true }, 'Back to the board'))]);
      this.main.el.hidden = true;
    } finally {
      document.documentElement.classList.remove('replay-loading');
    }
    this.root.dataset.ready = 'true';
    this.scheduleCheck();
  }

  // Where the replay opens: the search hit, else the item that needs the user, else the end.
  position() {
    const se = document.scrollingElement;
    if (this.at !== null) {
      const els = this.main.lineElements(this.at);
      for (const el of els) el.classList.add('hit');
      if (els.length) {
        this.reveal(els[0]);
        // The words searched for, marked inside the hit; the first one brought into view.
        const marks = els.flatMap((el) => markWords(el, this.query));
        (marks[0] || els[0]).scrollIntoView({ block: 'center' });
        els[0].focus({ preventScroll: true });
        return;
      }
    }
    if (this.showFocus()) return;
    se.scrollTop = se.scrollHeight;
  }

  reveal(el) {
    // A hit or focus inside a folded result or a closed block: open its way.
    for (let node = el; node && node !== this.main.list; node = node.parentElement) {
      if (node.tagName === 'DETAILS') node.open = true;
    }
    const input = el.querySelector(':scope > details.tool-input');
    if (input) input.open = true;
  }

  showFocus() {
    const focus = this.main.focus;
    for (const el of this.main.list.querySelectorAll('.focus')) el.classList.remove('focus');
    if (!focus || this.threadId !== 'main' || !this.session
      || this.session.state !== 'input_required') {
      this.banner.hidden = true;
      return false;
    }
    const el = this.main.element(focus.offset, focus.index);
    if (!el) return false;
    el.classList.add('focus');
    this.reveal(el);
    const asks = focus.reason === 'question' ? 'Waiting for your answer' : 'Waiting for your approval';
    const detail = this.session.detail || '';
    clear(this.banner);
    append(this.banner, [
      h('strong', null, `${asks}: `),
      focus.reason === 'question' ? h('span', null, detail) : h('code', null, detail),
      ' ',
      h('button', {
        type: 'button',
        class: 'link-button',
        onclick: () => {
          el.scrollIntoView({ block: 'center' });
          el.focus({ preventScroll: true });
        },
      }, 'Show it (f)')]);
    this.banner.hidden = false;
    el.scrollIntoView({ block: 'center' });
    el.focus({ preventScroll: true });
    return true;
  }

  drawHeader() {
    const s = this.session;
    const counts = s.counts || {};
    const countBits = [];
    if (counts.prompt) countBits.push(plural(counts.prompt, 'prompt'));
    if (counts.answer) countBits.push(plural(counts.answer, 'answer'));
    if (counts.tool) countBits.push(plural(counts.tool, 'tool call'));
    const exports = [['md', 'Markdown'], ['json', 'JSON'], ['html', 'HTML']].map(([format, label]) => h('a', {
      class: 'button export', href: exportUrl(this.agent, this.sessionId, format, this.host), download: true, dataset: { format },
    }, label));
    // Sub-agents by their short description; the compaction helper is not one.
    const threads = (s.thread_info || []).filter((t) => !/^a?compact/i.test(t.thread || ''))
      .map((t) => {
        // Without a description of its own, the one of the call that spawned it, when on the page.
        const link = this.main.list.querySelector(
          `.item.kind-subagent[data-link="${CSS.escape(t.thread)}"] .description`);
        const full = t.description || (link && link.textContent) || t.first_prompt || t.thread;
        return h('li', { class: 'thread-item' }, h('button', {
          type: 'button', class: 'link-button', title: full, onclick: () => this.openThread(t.thread),
        }, firstLine(full)), t.agent_type ? h('span', { class: 'agent-type' }, t.agent_type) : null);
      });
    const subthread = this.threadId !== 'main' ? h('p', { class: 'thread-note' },
      'You are reading a sub-agent’s thread. ',
      h('a', { href: sessionHref(this.agent, this.sessionId, this.hostParams()), 'data-nav': true }, 'Open the main thread')) : null;
    clear(this.header);
    append(this.header, [
      h('nav', { class: 'crumbs' }, h('a', { href: '/', 'data-nav': true }, '← Board')),
      h('h1', { class: 'session-title' }, s.title || s.session_id),
      h('p', { class: 'facts' },
        h('span', { class: `agent agent-${s.agent}` }, s.agent),
        h('span', { class: 'project', title: s.project || '' }, shortPath(s.project)),
        h('span', { class: `state-badge state-${s.state}` }, stateLabel(s)),
        s.detail ? h('span', { class: 'detail' }, s.detail) : null,
        s.model ? h('span', { class: 'model' }, s.model) : null,
        s.started_at ? h('span', null, 'started ', h('time', { datetime: s.started_at, title: s.started_at }, clock(s.started_at))) : null,
        s.last_activity ? h('span', null, 'active ', h('time', { datetime: s.last_activity, title: s.last_activity }, ago(s.last_activity))) : null),
      h('p', { class: 'facts' },
        s.usage ? h('span', { class: 'usage session-usage' }, `Session tokens: ${usageText(s.usage)}`) : null,
        'cost_usd' in s ? h('span', { class: 'usage session-cost', title: 'at the prices shipped with agentbar' },
          s.cost_usd == null ? 'cost unknown' : `cost ${dollars(s.cost_usd)}`) : null,
        countBits.length ? h('span', null, countBits.join(' · ')) : null,
        h('span', { class: 'session-id' }, s.session_id)),
      subthread,
      threads.length ? h('details', { class: 'thread-list' },
        h('summary', null, `Sub-agents (${threads.length})`), h('ul', { class: 'thread-items' }, threads)) : null,
      h('div', { class: 'exports' }, h('span', null, 'Export:'), exports),
      sessionActions(s),
    ]);
    this.app.setTitle(s.title || s.session_id);
  }

  async openThread(thread) {
    const link = this.main.list.querySelector(`.item.kind-subagent[data-link="${CSS.escape(thread)}"]`);
    if (link && link.expand) {
      await link.expand(true);
      link.scrollIntoView({ block: 'start' });
      link.querySelector('button').focus({ preventScroll: true });
      return;
    }
    this.app.navigate(sessionHref(this.agent, this.sessionId, { ...this.hostParams(), thread }));
  }

  hostParams() {
    return this.host ? { host: this.host } : {};
  }

  // Keep what the reader looks at in place while older items go in above it.
  keepScroll(change) {
    const se = document.scrollingElement;
    const height = se.scrollHeight;
    const top = se.scrollTop;
    change();
    se.scrollTop = top + (se.scrollHeight - height);
  }

  scheduleCheck() {
    if (this.checkQueued || this.destroyed) return;
    this.checkQueued = true;
    window.requestAnimationFrame(() => {
      this.checkQueued = false;
      this.check();
    });
  }

  async check() {
    if (this.destroyed || this.root.dataset.ready !== 'true' || this.main.el.hidden) return;
    const se = document.scrollingElement;
    const fromBottom = se.scrollHeight - (se.scrollTop + window.innerHeight);
    try {
      if (se.scrollTop < LOAD_MARGIN && this.main.before !== null && !this.main.loading) {
        await this.main.older();
        this.scheduleCheck();
      } else if (fromBottom < LOAD_MARGIN && this.main.after !== null && !this.main.loading) {
        await this.main.newer();
        this.scheduleCheck();
      }
    } catch (err) {
      this.main.top.textContent = `Could not load more: ${err.message}`;
    }
  }

  atBottom() {
    const se = document.scrollingElement;
    return se.scrollHeight - (se.scrollTop + window.innerHeight) < 80;
  }

  async onEvent(message) {
    if (message.type === 'change') {
      const s = message.session;
      if (!s || s.agent !== this.agent || s.session_id !== this.sessionId || !this.session) return;
      this.session = { ...this.session, ...s, thread_info: this.session.thread_info };
      this.drawHeader();
      if (this.threadId !== 'main') return;
      const stick = this.atBottom();
      try {
        await this.main.refreshLast();
      } catch (err) {
        return;
      }
      if (this.destroyed) return;
      if (!this.showFocus() && stick) {
        document.scrollingElement.scrollTop = document.scrollingElement.scrollHeight;
      }
      this.placeDecisions();
    } else if (message.type === 'sessions' && this.session) {
      const s = this.app.events.sessions.get(sessionKey(this.agent, this.sessionId, this.host));
      if (s && s.state !== this.session.state) {
        this.onEvent({ type: 'change', session: s });
      }
      this.placeDecisions();
    } else if (message.type === 'decision' && this.session) {
      this.placeDecisions();
    }
  }

  // The session's requests' buttons: inside the pending call when it is on the page, else just
  // under the banner; gone once no request waits.
  placeDecisions() {
    if (this.destroyed || !this.session) return;
    const events = this.app.events;
    const requests = this.threadId === 'main' ? requestsOf(events, this.agent, this.sessionId, this.host) : [];
    const boxes = this.decisionBoxes.boxesFor(requests, { agent: this.agent, sessionId: this.sessionId });
    this.decisionBoxes.prune(new Set(events.decisions.keys()));
    if (!boxes.length) {
      this.answers.remove();
      return;
    }
    const typing = document.activeElement && this.answers.contains(document.activeElement)
      ? document.activeElement : null;
    placeBoxes(this.answers, boxes);
    const focus = this.main.list.querySelector('.item.focus');
    const where = focus || this.banner;
    const placed = focus ? this.answers.parentElement === focus : this.answers.previousElementSibling === this.banner;
    if (!placed) {
      if (focus) focus.append(this.answers);
      else this.banner.after(this.answers);
      if (typing) typing.focus({ preventScroll: true });
    }
    this.answers.dataset.at = where === focus ? 'call' : 'top';
  }

  async livePoll() {
    if (this.destroyed || !isWaiting(this.session) || this.main.after !== null || this.main.loading) return;
    const stick = this.atBottom();
    try {
      const page = await this.main.follow();
      if (page && page.items.length && stick) {
        document.scrollingElement.scrollTop = document.scrollingElement.scrollHeight;
      }
    } catch (err) {
      // the next poll tries again
    }
  }

  key(event) {
    if (event.defaultPrevented || event.altKey || event.ctrlKey || event.metaKey) return;
    const tag = event.target && event.target.tagName;
    if (tag === 'INPUT' || tag === 'TEXTAREA' || tag === 'SELECT') return;
    if (event.key === 'j' || event.key === 'k') {
      this.step(event.key === 'j' ? 1 : -1);
      event.preventDefault();
    } else if (event.key === 'f') {
      const el = this.main.list.querySelector('.focus') || this.main.list.querySelector('.hit');
      if (el) {
        el.scrollIntoView({ block: 'center' });
        el.focus({ preventScroll: true });
      }
    } else if (event.key === 'G') {
      document.scrollingElement.scrollTop = document.scrollingElement.scrollHeight;
    }
  }

  // j / k: the next or previous prompt or answer.
  step(direction) {
    const messages = [...this.main.list.querySelectorAll(':scope > .item.message')];
    if (!messages.length) return;
    const current = document.activeElement && messages.indexOf(document.activeElement);
    let target;
    if (current !== null && current >= 0) {
      target = messages[Math.min(messages.length - 1, Math.max(0, current + direction))];
    } else {
      const middle = window.innerHeight / 3;
      const below = messages.filter((el) => el.getBoundingClientRect().top > middle);
      target = direction > 0 ? below[0] : messages.filter((el) => el.getBoundingClientRect().top < 0).pop();
      target = target || messages[direction > 0 ? messages.length - 1 : 0];
    }
    target.focus({ preventScroll: true });
    target.scrollIntoView({ block: 'start' });
  }
}
