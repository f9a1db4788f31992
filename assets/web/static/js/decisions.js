// The buttons that answer a request waiting on the person (docs/api.md "Decisions"): Approve,
// Deny and Always allow (with the exact rule it adds, only when offered), or a question's reply
// box with its options as buttons. Each answer names the request's own id (origin "window");
// a request answered elsewhere first (the terminal, the tray) turns a late click into a short
// inline message. Boxes are kept by request id, so a view that redraws keeps what was typed.

import { ApiError, postJSON } from './api.js';
import { append, clear, h } from './dom.js';

const NOTE_MS = 8000; // a late answer's message stays this long after its request closed

const VERB = { allow: 'Approved', allow_always: 'Always allowed', deny: 'Denied', reply: 'Replied' };

export class DecisionBoxes {
  constructor() {
    this.boxes = new Map(); // request id -> element
  }

  // The boxes of `requests` (made once each), plus the closed ones still saying something.
  boxesFor(requests, { agent, sessionId } = {}) {
    const found = [];
    for (const request of requests) {
      if (!this.boxes.has(request.request_id)) {
        this.boxes.set(request.request_id, decisionBox(request));
      }
      found.push(this.boxes.get(request.request_id));
    }
    for (const [id, box] of this.boxes) {
      if (requests.some((r) => r.request_id === id)) continue;
      if (box.dataset.agent !== agent || box.dataset.session !== sessionId) continue;
      if (box.dataset.note === 'late') found.push(box);
    }
    return found;
  }

  // Requests that closed: their boxes go, but a late answer's message stays a moment.
  prune(open) {
    for (const [id, box] of this.boxes) {
      if (open.has(id)) continue;
      if (box.dataset.note === 'late') {
        if (!box.dataset.closing) {
          box.dataset.closing = 'true';
          window.setTimeout(() => {
            this.boxes.delete(id);
            box.remove();
          }, NOTE_MS);
        }
        continue;
      }
      this.boxes.delete(id);
      box.remove();
    }
  }
}

function what(request) {
  if (request.kind === 'question') return request.questions.length ? request.questions[0].text : request.summary;
  return request.summary ? `${request.tool}: ${request.summary}` : request.tool;
}

export function decisionBox(request) {
  const note = h('p', { class: 'decision-note', 'aria-live': 'polite' });
  const box = h('div', {
    class: `decision decision-${request.kind}`,
    role: 'group',
    'aria-label': request.kind === 'question' ? 'Answer the question' : 'Approve or deny',
    dataset: {
      request: request.request_id, agent: request.agent, session: request.session_id,
    },
  });
  const buttons = [];
  const send = async (body) => {
    for (const b of buttons) b.disabled = true;
    note.textContent = '';
    try {
      await postJSON(`/api/decisions/${encodeURIComponent(request.request_id)}`,
        { ...body, origin: 'window' });
      note.textContent = `${VERB[body.verdict] || 'Answered'}.`;
    } catch (err) {
      if (err instanceof ApiError && err.status === 409) {
        // Answered in the terminal (or withdrawn) first: say so, briefly; nothing was sent.
        box.dataset.note = 'late';
        for (const b of buttons) b.hidden = true;
        note.textContent = 'Already answered elsewhere: nothing was sent.';
        return;
      }
      note.textContent = err.message;
      for (const b of buttons) b.disabled = false;
    }
  };
  const button = (label, cls, body, extra = {}) => {
    const b = h('button', {
      type: 'button', class: `button ${cls}`, dataset: { verdict: body.verdict, ...extra },
      onclick: () => send(body),
    }, label);
    buttons.push(b);
    return b;
  };
  const head = h('p', { class: 'decision-what' },
    request.kind === 'question' ? h('span', null, what(request)) : h('code', null, what(request)));
  if (request.kind === 'question') {
    append(box, [head, questionForm(request, send, buttons, button)]);
  } else {
    const row = h('div', { class: 'decision-buttons' },
      button('Approve', 'approve', { verdict: 'allow' }),
      button('Deny', 'deny', { verdict: 'deny' }),
      request.always_rule !== null && request.always_rule !== undefined
        ? button(['Always allow ', h('code', { class: 'rule' }, request.always_rule)], 'always',
          { verdict: 'allow_always' })
        : null);
    append(box, [head, row]);
  }
  box.append(note);
  return box;
}

// A question: its options as buttons (one question: a click answers; several: a click fills
// that question's field), a field for words of one's own, Send, and Deny.
function questionForm(request, send, buttons, button) {
  const questions = request.questions.length ? request.questions
    : [{ text: request.summary, header: '', options: [], multiple: false }];
  const fields = [];
  const form = h('form', { class: 'decision-reply' });
  questions.forEach((q, index) => {
    const field = h('input', {
      type: 'text', class: 'reply-field', name: `reply-${index}`,
      'aria-label': q.header || q.text || 'Your reply', placeholder: 'Your reply',
    });
    fields.push(field);
    const options = q.options.map((option) => {
      if (questions.length === 1 && !q.multiple) {
        return button(option, 'option', { verdict: 'reply', replies: [option] }, { option });
      }
      const b = h('button', {
        type: 'button', class: 'button option', dataset: { option },
        onclick: () => {
          if (!q.multiple || !field.value.trim()) field.value = option;
          else field.value = `${field.value}, ${option}`;
        },
      }, option);
      buttons.push(b);
      return b;
    });
    append(form, [
      questions.length > 1 ? h('p', { class: 'reply-question' }, q.header ? h('strong', null, `${q.header}: `) : null, q.text) : null,
      options.length ? h('div', { class: 'decision-options' }, options) : null,
      field,
    ]);
  });
  const submit = h('button', { type: 'submit', class: 'button send' }, 'Send');
  buttons.push(submit, ...fields);
  append(form, [h('div', { class: 'decision-buttons' }, submit,
    button('Deny', 'deny', { verdict: 'deny' }))]);
  form.addEventListener('submit', (event) => {
    event.preventDefault();
    const replies = fields.map((f) => f.value.trim());
    if (replies.some((r) => !r)) {
      (fields.find((f) => !f.value.trim()) || fields[0]).focus();
      return;
    }
    send({ verdict: 'reply', replies });
  });
  return form;
}

// Replace `container`'s boxes by `boxes` (the same elements move; nothing is re-made).
export function placeBoxes(container, boxes) {
  if (container.children.length === boxes.length
    && boxes.every((b, i) => container.children[i] === b)) return;
  clear(container);
  append(container, boxes);
}
