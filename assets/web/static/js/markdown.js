// Markdown to a sanitised DOM fragment. Transcript Markdown is untrusted: raw HTML in it is shown
// as text, images become a text placeholder (no remote loads), and the HTML marked makes goes
// through DOMPurify (links: http, https and mailto only, rel="noopener noreferrer").

import { Marked } from '../vendor/marked/marked.esm.js';
import DOMPurify from '../vendor/dompurify/purify.es.js';

const ESCAPES = { '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;', "'": '&#39;' };

function escapeHtml(value) {
  return String(value).replace(/[&<>"']/g, (c) => ESCAPES[c]);
}

const marked = new Marked({ gfm: true, breaks: false, async: false });
marked.use({
  renderer: {
    html(token) {
      const raw = escapeHtml(token.text ?? token.raw ?? '');
      return token.block ? `<p class="raw-html">${raw}</p>` : raw;
    },
    image(token) {
      const label = token.text || token.href || '';
      return `<span class="image-placeholder">${escapeHtml(`[image: ${label}]`)}</span>`;
    },
  },
});

const purify = DOMPurify(window);
purify.addHook('afterSanitizeAttributes', (node) => {
  if (node.nodeName === 'A') {
    if (node.hasAttribute('href')) {
      node.setAttribute('rel', 'noopener noreferrer');
      node.setAttribute('target', '_blank');
    } else {
      node.removeAttribute('target');
    }
  }
});

const CONFIG = {
  RETURN_DOM_FRAGMENT: true,
  ALLOWED_URI_REGEXP: /^(?:https?|mailto):/i,
  ALLOW_DATA_ATTR: false,
  FORBID_TAGS: [
    'style', 'img', 'svg', 'math', 'form', 'input', 'button', 'textarea', 'select', 'option',
    'iframe', 'frame', 'object', 'embed', 'video', 'audio', 'source', 'picture', 'link', 'meta',
    'base', 'template', 'dialog',
  ],
  FORBID_ATTR: ['style', 'id', 'name', 'srcset', 'src', 'action', 'formaction'],
};

export function sanitize(html) {
  return purify.sanitize(html, CONFIG);
}

export function renderMarkdown(source) {
  let html;
  try {
    html = marked.parse(String(source ?? ''));
  } catch (err) {
    const pre = document.createElement('pre');
    pre.textContent = String(source ?? '');
    const fragment = document.createDocumentFragment();
    fragment.append(pre);
    return fragment;
  }
  return sanitize(html);
}
