// Line diffs for the replay's Edit, MultiEdit and Write calls: which lines went, which came
// (a longest common subsequence between the changed middles), drawn like a code review's diff
// with both line numbers; bounded, so a huge input costs a fixed amount of work and DOM.

import { h } from './dom.js';

const MAX_CELLS = 250_000; // LCS table size above which the middles show as removed then added
const MAX_ROWS = 400; // diff rows drawn; the rest is counted
const CONTEXT = 3; // unchanged lines kept around each change

function splitLines(text) {
  if (text === null || text === undefined || text === '') return [];
  const lines = String(text).split('\n');
  if (lines.length > 1 && lines[lines.length - 1] === '') lines.pop();
  return lines;
}

// [{op: ' ' | '-' | '+', text, a, b}]: a and b are 1-based line numbers in old and new (null
// where the line is not in that side).
export function lineDiff(oldText, newText, { firstLine = 1 } = {}) {
  const a = splitLines(oldText);
  const b = splitLines(newText);
  let start = 0;
  while (start < a.length && start < b.length && a[start] === b[start]) start += 1;
  let endA = a.length;
  let endB = b.length;
  while (endA > start && endB > start && a[endA - 1] === b[endB - 1]) {
    endA -= 1;
    endB -= 1;
  }
  const out = [];
  const push = (op, text, i, j) => out.push({
    op, text, a: i === null ? null : i + firstLine, b: j === null ? null : j + firstLine,
  });
  for (let i = 0; i < start; i += 1) push(' ', a[i], i, i);
  const n = endA - start;
  const m = endB - start;
  if (n * m > MAX_CELLS) {
    for (let i = start; i < endA; i += 1) push('-', a[i], i, null);
    for (let j = start; j < endB; j += 1) push('+', b[j], null, j);
  } else {
    // lcs[i][j]: the common length of a[start+i..endA) and b[start+j..endB).
    const width = m + 1;
    const lcs = new Uint32Array((n + 1) * width);
    for (let i = n - 1; i >= 0; i -= 1) {
      for (let j = m - 1; j >= 0; j -= 1) {
        lcs[i * width + j] = a[start + i] === b[start + j]
          ? lcs[(i + 1) * width + j + 1] + 1
          : Math.max(lcs[(i + 1) * width + j], lcs[i * width + j + 1]);
      }
    }
    let i = 0;
    let j = 0;
    while (i < n || j < m) {
      if (i < n && j < m && a[start + i] === b[start + j]) {
        push(' ', a[start + i], start + i, start + j);
        i += 1;
        j += 1;
      } else if (i < n && (j >= m || lcs[(i + 1) * width + j] >= lcs[i * width + j + 1])) {
        push('-', a[start + i], start + i, null); // removed lines before added ones, as a review reads
        i += 1;
      } else {
        push('+', b[start + j], null, start + j);
        j += 1;
      }
    }
  }
  const shift = endA - endB;
  for (let i = endA; i < a.length; i += 1) push(' ', a[i], i, i - shift);
  return out;
}

export function diffCounts(rows) {
  let added = 0;
  let removed = 0;
  for (const row of rows) {
    if (row.gap !== undefined) continue;
    if (row.op === '+') added += 1;
    else if (row.op === '-') removed += 1;
  }
  return { added, removed };
}

// The rows to draw: changes with CONTEXT lines around them, gaps between marked.
function hunks(rows) {
  const keep = new Uint8Array(rows.length);
  rows.forEach((row, i) => {
    if (row.op === ' ') return;
    if (row.gap !== undefined) {
      keep[i] = 1; // a gap the rows themselves mark (between hunks, a cut)
      return;
    }
    for (let k = Math.max(0, i - CONTEXT); k <= Math.min(rows.length - 1, i + CONTEXT); k += 1) {
      keep[k] = 1;
    }
  });
  const out = [];
  let gap = 0;
  rows.forEach((row, i) => {
    if (keep[i]) {
      if (gap) out.push({ gap });
      gap = 0;
      out.push(row);
    } else gap += 1;
  });
  if (gap && out.length) out.push({ gap });
  return out;
}

const SIGN_CLASS = { '+': 'add', '-': 'del', ' ': 'ctx' };

// A diff view: a table of rows (old number, new number, sign, text), at most MAX_ROWS of them.
export function diffView(rows, { title = null } = {}) {
  const { added, removed } = diffCounts(rows);
  const shown = hunks(rows);
  const body = h('tbody');
  let drawn = 0;
  for (const row of shown) {
    if (drawn >= MAX_ROWS) break;
    drawn += 1;
    if (row.gap !== undefined) {
      body.append(h('tr', { class: 'diff-gap' },
        h('td', { class: 'diff-num', colspan: '2' }, '⋯'),
        h('td', { class: 'diff-text', colspan: '2' }, typeof row.gap === 'number'
          ? `${row.gap} unchanged line${row.gap === 1 ? '' : 's'}` : row.gap)));
      continue;
    }
    body.append(h('tr', { class: `diff-row diff-${SIGN_CLASS[row.op]}` },
      h('td', { class: 'diff-num' }, row.a === null ? '' : String(row.a)),
      h('td', { class: 'diff-num' }, row.b === null ? '' : String(row.b)),
      h('td', { class: 'diff-sign', 'aria-hidden': 'true' }, row.op),
      h('td', { class: 'diff-text' }, row.text)));
  }
  const left = shown.length - drawn;
  return h('div', { class: 'diff' },
    h('div', { class: 'diff-head' },
      title ? h('span', { class: 'diff-file' }, title) : null,
      h('span', { class: 'diff-stat' },
        h('span', { class: 'diff-added' }, `+${added}`), ' ',
        h('span', { class: 'diff-removed' }, `−${removed}`))),
    h('div', { class: 'diff-scroll' }, h('table', { class: 'diff-table' }, body)),
    left > 0 ? h('p', { class: 'diff-more muted' }, `${left} more diff rows not shown (see Input)`) : null);
}
