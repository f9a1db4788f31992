// The board's launch control: an agent picker (the launchable agents, as segmented buttons), a
// folder field with a list of pinned folders (kept in this browser) and recent ones (the
// folders of known sessions, GET /api/projects), a first prompt, and Launch. The folder may be
// typed as `~` or `~/proj`: the server expands those to its user's home and says plainly when a
// folder does not exist.

import { postJSON } from './api.js';
import { h } from './dom.js';
import { folderName, shortPath } from './format.js';

const PINNED_KEY = 'agentbar.launch.pinned';

export function pinnedFolders() {
  try {
    const list = JSON.parse(window.localStorage.getItem(PINNED_KEY) || '[]');
    return Array.isArray(list) ? list.filter((x) => typeof x === 'string') : [];
  } catch (err) {
    return [];
  }
}

function savePinned(list) {
  try {
    window.localStorage.setItem(PINNED_KEY, JSON.stringify(list));
  } catch (err) {
    // storage refused: pinned for this page only
  }
}

export class LaunchControl {
  constructor({ agents, onlaunched }) {
    this.agent = '';
    this.recent = [];
    this.active = -1;
    this.note = h('span', { class: 'action-note', 'aria-live': 'polite' });
    this.picker = h('div', { class: 'segmented agent-picker', role: 'radiogroup', 'aria-label': 'Agent' });
    this.folder = h('input', {
      name: 'project', type: 'text', class: 'input folder-input', autocomplete: 'off',
      spellcheck: 'false', placeholder: '~/project or /path/to/folder', 'aria-label': 'Project folder',
      role: 'combobox', 'aria-expanded': 'false', 'aria-controls': 'launch-folders',
      'aria-autocomplete': 'list', required: true,
    });
    this.list = h('ul', { class: 'folder-list', id: 'launch-folders', role: 'listbox', hidden: true });
    this.prompt = h('input', {
      name: 'prompt', type: 'text', class: 'input', placeholder: 'First prompt (optional)',
      'aria-label': 'First prompt', autocomplete: 'off',
    });
    this.go = h('button', { type: 'submit', class: 'button primary launch' }, 'Launch');
    this.el = h('form', { class: 'launch-form', 'aria-label': 'Launch an agent' },
      this.picker,
      h('div', { class: 'folder-field' }, this.folder, this.list),
      this.prompt, this.go, this.note);
    this.folder.addEventListener('focus', () => this.open());
    this.folder.addEventListener('input', () => this.open());
    this.folder.addEventListener('keydown', (event) => this.onKey(event));
    this.folder.addEventListener('blur', () => window.setTimeout(() => this.close(), 150));
    this.el.addEventListener('submit', (event) => {
      event.preventDefault();
      this.launch(onlaunched);
    });
    agents.then((list) => this.showAgents(list), () => {});
  }

  showAgents(list) {
    this.picker.replaceChildren(...list.map((a, i) => h('button', {
      type: 'button', class: 'segment', role: 'radio', dataset: { agent: a.agent },
      'aria-checked': i === 0 ? 'true' : 'false',
      onclick: () => this.pick(a.agent),
    }, a.name)));
    if (list.length) this.pick(list[0].agent);
  }

  pick(agent) {
    this.agent = agent;
    for (const b of this.picker.children) b.setAttribute('aria-checked', b.dataset.agent === agent ? 'true' : 'false');
  }

  setRecent(recent) {
    this.recent = recent;
    if (!this.list.hidden) this.open();
  }

  // Pinned first, then recent ones not pinned; what is typed narrows both.
  choices() {
    const typed = this.folder.value.trim().toLowerCase();
    const pinned = pinnedFolders();
    const all = [...pinned.map((p) => [p, true]), ...this.recent.filter((r) => !pinned.includes(r)).map((r) => [r, false])];
    if (!typed) return all;
    return all.filter(([p]) => p.toLowerCase().includes(typed) || shortPath(p).toLowerCase().includes(typed));
  }

  open() {
    const choices = this.choices();
    this.active = -1;
    const items = [];
    let heading = null;
    choices.forEach(([folder, pinned], index) => {
      const head = pinned ? 'Pinned' : 'Recent';
      if (head !== heading) {
        heading = head;
        items.push(h('li', { class: 'folder-heading', role: 'presentation' }, head));
      }
      items.push(h('li', {
        class: 'folder-option', role: 'option', id: `launch-folder-${index}`, dataset: { folder, index },
        'aria-selected': 'false',
        onmousedown: (event) => {
          event.preventDefault(); // keep the field's focus
          if (event.target.closest('.pin')) return;
          this.choose(folder);
        },
      },
      h('span', { class: 'folder-name' }, folderName(folder)),
      h('span', { class: 'folder-path' }, shortPath(folder, 56)),
      h('button', {
        type: 'button', class: `pin${pinned ? ' pinned' : ''}`, tabindex: '-1',
        'aria-label': pinned ? `Unpin ${folder}` : `Pin ${folder}`, title: pinned ? 'Unpin' : 'Pin',
        onmousedown: (event) => {
          event.preventDefault();
          this.togglePin(folder);
        },
      }, pinned ? '★' : '☆')));
    });
    this.list.replaceChildren(...items);
    this.list.hidden = items.length === 0;
    this.folder.setAttribute('aria-expanded', this.list.hidden ? 'false' : 'true');
  }

  close() {
    this.list.hidden = true;
    this.folder.setAttribute('aria-expanded', 'false');
    this.folder.removeAttribute('aria-activedescendant');
  }

  togglePin(folder) {
    const pinned = pinnedFolders();
    savePinned(pinned.includes(folder) ? pinned.filter((p) => p !== folder) : [...pinned, folder]);
    this.open();
  }

  choose(folder) {
    this.folder.value = folder;
    this.close();
    this.prompt.focus();
  }

  onKey(event) {
    const options = [...this.list.querySelectorAll('.folder-option')];
    if (event.key === 'ArrowDown' || event.key === 'ArrowUp') {
      event.preventDefault();
      if (this.list.hidden) this.open();
      if (!options.length) return;
      const step = event.key === 'ArrowDown' ? 1 : -1;
      this.active = (this.active + step + options.length) % options.length;
      options.forEach((o, i) => o.setAttribute('aria-selected', i === this.active ? 'true' : 'false'));
      this.folder.setAttribute('aria-activedescendant', options[this.active].id);
      options[this.active].scrollIntoView({ block: 'nearest' });
    } else if (event.key === 'Enter' && !this.list.hidden && this.active >= 0) {
      event.preventDefault();
      this.choose(options[this.active].dataset.folder);
    } else if (event.key === 'Escape' && !this.list.hidden) {
      event.preventDefault();
      event.stopPropagation();
      this.close();
    }
  }

  async launch(onlaunched) {
    const project = this.folder.value.trim();
    if (!project) {
      this.note.textContent = 'Pick or type a folder first.';
      this.folder.focus();
      return;
    }
    this.go.disabled = true;
    this.note.textContent = '';
    try {
      const reply = await postJSON('/api/tasks', {
        agent: this.agent, project, prompt: this.prompt.value || null,
      });
      onlaunched(reply.task);
    } catch (err) {
      this.note.textContent = err.message;
    } finally {
      this.go.disabled = false;
    }
  }
}
