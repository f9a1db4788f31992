// Terminal colour codes in tool output: SGR sequences (colours, bold, underline) become spans
// with classes (the page's CSP allows no inline styles), every other escape sequence is dropped,
// so an output never shows boxes or "\u001b[31m".

const ESC = '\u001b';
// CSI ... final byte, OSC ... BEL/ST, and lone two-character escapes.
const SEQUENCE = /\u001b(?:\[([0-?]*)[ -/]*([@-~])|\][^\u0007\u001b]*(?:\u0007|\u001b\\)?|[@-Z\\-_])/g;
const CONTROL = /[\u0000-\u0008\u000b\u000c\u000e-\u001a\u001c-\u001f\u007f]/g;

export function hasAnsi(text) {
  return typeof text === 'string' && text.includes(ESC);
}

export function stripAnsi(text) {
  return String(text ?? '').replace(SEQUENCE, '').replace(CONTROL, '');
}

// The state after the parameters of one SGR sequence ("1;31", "38;5;208", "" is a reset).
function applySgr(state, params) {
  const codes = params === '' ? [0] : params.split(';').map((p) => Number(p) || 0);
  const next = { ...state };
  for (let i = 0; i < codes.length; i += 1) {
    const c = codes[i];
    if (c === 0) Object.assign(next, { fg: null, bg: null, bold: false, dim: false, italic: false, underline: false });
    else if (c === 1) next.bold = true;
    else if (c === 2) next.dim = true;
    else if (c === 3) next.italic = true;
    else if (c === 4) next.underline = true;
    else if (c === 22) Object.assign(next, { bold: false, dim: false });
    else if (c === 23) next.italic = false;
    else if (c === 24) next.underline = false;
    else if (c >= 30 && c <= 37) next.fg = c - 30;
    else if (c >= 90 && c <= 97) next.fg = c - 90 + 8;
    else if (c === 39) next.fg = null;
    else if (c >= 40 && c <= 47) next.bg = c - 40;
    else if (c >= 100 && c <= 107) next.bg = c - 100 + 8;
    else if (c === 49) next.bg = null;
    else if (c === 38 || c === 48) {
      // 256 colours: the first 16 map to the palette; others and 24-bit colour are skipped.
      const key = c === 38 ? 'fg' : 'bg';
      if (codes[i + 1] === 5) {
        const n = codes[i + 2];
        next[key] = n < 16 ? n : null;
        i += 2;
      } else if (codes[i + 1] === 2) {
        next[key] = null;
        i += 4;
      }
    }
  }
  return next;
}

function classes(state) {
  const out = [];
  if (state.fg !== null) out.push(`ansi-fg-${state.fg}`);
  if (state.bg !== null) out.push(`ansi-bg-${state.bg}`);
  if (state.bold) out.push('ansi-bold');
  if (state.dim) out.push('ansi-dim');
  if (state.italic) out.push('ansi-italic');
  if (state.underline) out.push('ansi-underline');
  return out.join(' ');
}

// A fragment of text nodes and classed spans for text that may hold escape sequences.
export function ansiFragment(text) {
  const fragment = document.createDocumentFragment();
  const source = String(text ?? '');
  let state = { fg: null, bg: null, bold: false, dim: false, italic: false, underline: false };
  let last = 0;
  const emit = (chunk) => {
    const clean = chunk.replace(CONTROL, '');
    if (!clean) return;
    const cls = classes(state);
    if (!cls) fragment.append(document.createTextNode(clean));
    else {
      const span = document.createElement('span');
      span.className = cls;
      span.textContent = clean;
      fragment.append(span);
    }
  };
  SEQUENCE.lastIndex = 0;
  for (let match = SEQUENCE.exec(source); match; match = SEQUENCE.exec(source)) {
    emit(source.slice(last, match.index));
    last = SEQUENCE.lastIndex;
    if (match[2] === 'm') state = applySgr(state, match[1] || '');
  }
  emit(source.slice(last));
  return fragment;
}
