// Tool calls drawn for what they do, from the call's input alone (or the replay model's own
// fields when it gives them): Edit, MultiEdit and Write as diffs, TodoWrite as a checklist,
// AskUserQuestion with its options and the answers chosen (read from the result), Bash with its
// description, Grep and Glob with pattern and path, Codex's apply_patch as a diff. Anything else
// keeps the generic head (name and summary). The raw input stays one click away in the caller.

import { diffView, lineDiff } from './diff.js';
import { h } from './dom.js';

const str = (value) => (typeof value === 'string' ? value : '');

// Tools drawn as a view of their input: a call of one whose input was cut for the page shows
// the view once the whole call is loaded.
export const VIEW_TOOLS = new Set([
  'Edit', 'MultiEdit', 'Write', 'NotebookEdit', 'apply_patch', 'TodoWrite', 'AskUserQuestion',
]);

function whole(item) {
  return item.input && typeof item.input === 'object' && !Array.isArray(item.input);
}

function inputOf(item) {
  return item.input && typeof item.input === 'object' && !Array.isArray(item.input) ? item.input : {};
}

const MODEL_OPS = { add: '+', del: '-', context: ' ' };

// The replay model's own `diff` (a unified diff as lines {kind, text}: file, hunk, add, del,
// context, cut): one view per file, numbered from each hunk's header.
export function modelDiffViews(diff, fallbackTitle = null) {
  const views = [];
  let title = fallbackTitle;
  let rows = [];
  let a = 1;
  let b = 1;
  const flush = () => {
    if (rows.length) views.push(diffView(rows, { title }));
    rows = [];
  };
  for (const line of diff) {
    if (!line || typeof line !== 'object') continue;
    const text = str(line.text);
    if (line.kind === 'file') {
      flush();
      title = text;
    } else if (line.kind === 'hunk') {
      const numbers = text.match(/^@@ -(\d+)(?:,\d+)? \+(\d+)/);
      if (numbers) {
        if (rows.length) rows.push({ gap: '' });
        a = Number(numbers[1]) || 1;
        b = Number(numbers[2]) || 1;
      }
    } else if (line.kind === 'cut') {
      rows.push({ gap: text });
    } else if (line.kind in MODEL_OPS) {
      const op = MODEL_OPS[line.kind];
      rows.push({ op, text, a: op === '+' ? null : a, b: op === '-' ? null : b });
      if (op !== '+') a += 1;
      if (op !== '-') b += 1;
    }
  }
  flush();
  return views;
}

function editDiffs(item, input) {
  const file = str(input.file_path) || str(input.path) || null;
  if (Array.isArray(item.diff)) return modelDiffViews(item.diff, file);
  if (item.name === 'Write') return [diffView(lineDiff('', str(input.content)), { title: file })];
  const edits = item.name === 'MultiEdit' && Array.isArray(input.edits) ? input.edits : [input];
  return edits.filter((e) => e && typeof e === 'object').map((edit, i) => diffView(
    lineDiff(str(edit.old_string), str(edit.new_string)),
    { title: edits.length > 1 ? `${file || ''} · edit ${i + 1} of ${edits.length}` : file },
  ));
}

// Codex's apply_patch: "*** Update File: path" sections of "+", "-" and " " lines.
function patchDiffs(patch) {
  const views = [];
  let title = null;
  let rows = [];
  const flush = () => {
    if (rows.length) views.push(diffView(rows, { title }));
    rows = [];
  };
  let a = 1;
  let b = 1;
  for (const line of patch.split('\n')) {
    const header = line.match(/^\*\*\* (?:Update|Add|Delete) File: (.*)$/);
    if (header) {
      flush();
      title = header[1];
      a = 1;
      b = 1;
    } else if (line.startsWith('*** ') || line.startsWith('@@')) {
      continue;
    } else if (title !== null) {
      const op = line[0] === '+' || line[0] === '-' ? line[0] : ' ';
      rows.push({ op, text: line.slice(1), a: op === '+' ? null : a, b: op === '-' ? null : b });
      if (op !== '+') a += 1;
      if (op !== '-') b += 1;
    }
  }
  flush();
  return views;
}

const TODO_MARKS = { completed: '☑', in_progress: '◐', pending: '☐' };
const TODO_WORDS = { completed: 'done', in_progress: 'in progress', pending: 'to do' };

function checklist(todos) {
  return h('ul', { class: 'checklist' }, todos.filter((t) => t && typeof t === 'object').map((todo) => {
    const status = TODO_MARKS[todo.status] ? todo.status : 'pending';
    return h('li', { class: `todo todo-${status}`, dataset: { status } },
      h('span', { class: 'todo-mark', 'aria-hidden': 'true' }, TODO_MARKS[status]),
      h('span', { class: 'todo-text' }, str(todo.content) || str(todo.activeForm)),
      h('span', { class: 'visually-hidden' }, ` (${TODO_WORDS[status]})`));
  }));
}

// Claude's result text: 'User has answered your questions: "Q"="A", "Q2"="B, C". You can…'.
export function parseAnswers(text) {
  const answers = new Map();
  const re = /"((?:[^"\\]|\\.)*)"\s*=\s*"((?:[^"\\]|\\.)*)"/g;
  for (let m = re.exec(text || ''); m; m = re.exec(text || '')) answers.set(m[1], m[2]);
  return answers;
}

// Codex's request_user_input result: {"answers": {"<question id>": {"answers": ["…"]}}}.
function codexAnswers(text, byId) {
  if (!text || text.trim()[0] !== '{') return null;
  let body;
  try {
    body = JSON.parse(text);
  } catch (err) {
    return null;
  }
  if (!body || typeof body.answers !== 'object' || body.answers === null) return null;
  const out = new Map();
  for (const [id, value] of Object.entries(body.answers)) {
    const list = value && Array.isArray(value.answers) ? value.answers : [value];
    out.set(byId.get(id) || id, list.map(String).join(', '));
  }
  return out;
}

function questionsView(item, input) {
  const questions = Array.isArray(item.questions) ? item.questions
    : (Array.isArray(input.questions) ? input.questions : []);
  const blocks = [];
  const box = h('div', { class: 'q-list' });
  for (const q of questions) {
    if (!q || typeof q !== 'object') continue;
    const options = (Array.isArray(q.options) ? q.options : []).map((o) => {
      const label = typeof o === 'string' ? o : str(o.label);
      return {
        label,
        el: h('li', { class: 'q-option', dataset: { label } },
          h('span', { class: 'q-option-label' }, label),
          typeof o === 'object' && o.description ? h('span', { class: 'q-option-desc' }, o.description) : null),
      };
    });
    const answer = h('p', { class: 'q-answer', hidden: true });
    blocks.push({ q, options, answer });
    box.append(h('div', { class: 'q-block' },
      h('p', { class: 'q-text' },
        q.header ? h('span', { class: 'q-chip' }, q.header) : null, ' ', str(q.question),
        q.multiSelect ? h('span', { class: 'muted' }, ' (several allowed)') : null),
      h('ol', { class: 'q-options' }, options.map((o) => o.el)),
      answer));
  }
  const show = (answers) => {
    for (const { q, options, answer } of blocks) {
      const given = answers.get(str(q.question));
      if (given === undefined) continue;
      const chosen = new Set([given, ...given.split(/,\s*/)]);
      let matched = false;
      for (const o of options) {
        const hit = chosen.has(o.label);
        matched ||= hit;
        o.el.classList.toggle('chosen', hit);
        if (hit) o.el.setAttribute('aria-label', `${o.label} (chosen)`);
      }
      answer.hidden = false;
      answer.replaceChildren(h('span', { class: 'q-answer-label' }, matched ? 'Chosen: ' : 'Answered: '), given);
    }
  };
  // The result's answers: the replay model's list when it gives one, else read from its text.
  // Codex names answers by question id: the input has the ids (the model's questions may not).
  const withIds = Array.isArray(input.questions) ? input.questions : questions;
  const byId = new Map(withIds.filter((q) => q && q.id).map((q) => [String(q.id), str(q.question)]));
  const answersOf = (result) => (Array.isArray(result.answers)
    ? new Map(result.answers.filter((a) => a && typeof a === 'object')
      .map((a) => [str(a.question), str(a.answer)]))
    : (codexAnswers(result.text, byId) || parseAnswers(result.text)));
  return { body: box, onResult: (result) => show(answersOf(result)) };
}

function searchHead(item, input) {
  const pattern = str(item.pattern) || str(input.pattern);
  const where = str(item.path) || str(input.path) || str(input.glob);
  if (!pattern) return null;
  return [h('code', { class: 'tool-summary tool-pattern' }, pattern),
    where ? h('span', { class: 'tool-where' }, 'in ', h('code', null, where)) : null];
}

// {head: nodes for after the name (null: the generic summary), body: a view or null,
//  onResult: called with the call's result item when it arrives}.
export function toolView(item) {
  const input = inputOf(item);
  const name = item.name || '';
  const description = str(item.description) || str(input.description);
  switch (name) {
    case 'Edit':
    case 'MultiEdit':
    case 'Write':
    case 'NotebookEdit':
      if (!whole(item) && !Array.isArray(item.diff)) return { head: null, body: null };
      return { head: null, body: h('div', { class: 'tool-view diffs' }, editDiffs(item, input)) };
    case 'apply_patch': {
      const patch = typeof item.input === 'string' ? item.input : str(input.input) || str(input.patch);
      let views = Array.isArray(item.diff) ? modelDiffViews(item.diff) : [];
      if (!views.length && patch) views = patchDiffs(patch);
      return { head: null, body: views.length ? h('div', { class: 'tool-view diffs' }, views) : null };
    }
    case 'TodoWrite':
    case 'update_plan': {
      // Codex's plan: {plan: [{step, status}]}, the same checklist.
      const plan = Array.isArray(input.plan)
        ? input.plan.filter((p) => p && typeof p === 'object').map((p) => ({ content: str(p.step), status: p.status }))
        : null;
      const todos = Array.isArray(item.todos) ? item.todos : (Array.isArray(input.todos) ? input.todos : plan);
      if (!todos) return { head: null, body: null };
      const done = todos.filter((t) => t && t.status === 'completed').length;
      return {
        head: [h('span', { class: 'tool-desc muted' }, `${done} of ${todos.length} done`)],
        body: h('div', { class: 'tool-view' }, checklist(todos)),
      };
    }
    case 'AskUserQuestion':
    case 'request_user_input': {
      if (!whole(item) && !Array.isArray(item.questions)) return { head: [], body: null };
      const view = questionsView(item, input);
      return { head: [], body: h('div', { class: 'tool-view' }, view.body), onResult: view.onResult };
    }
    case 'Grep':
    case 'Glob':
      return { head: searchHead(item, input), body: null };
    default:
      break;
  }
  if (description) {
    return {
      head: [h('span', { class: 'tool-desc' }, description),
        item.summary && item.summary !== description ? h('code', { class: 'tool-summary' }, item.summary) : null],
      body: null,
    };
  }
  return { head: null, body: null };
}
