// What can be done with a session or started from the board: resume or fork it in a terminal
// agentbar owns, hand its last answer or a brief of it to another agent, approve or deny what
// its launched task waits for, launch a new agent in a folder (docs/api.md, the task routes).

import { ApiError, getJSON, postJSON, sessionPath, taskPath, terminalHref } from './api.js';
import { append, clear, h } from './dom.js';
import { shortPath } from './format.js';
import { LaunchControl } from './launch.js';

// A task started, here or on a remote host: its terminal page (a remote one's through its channel).
function openTerminal(task) {
  window.location.assign(terminalHref(task.task_id, task.host));
}

// A remote host's session is resumed, forked or read there; null for this machine's.
function remoteHost(session) {
  return session.host && session.host !== 'local' ? session.host : null;
}

async function runningTasks() {
  try {
    const body = await getJSON('/api/tasks');
    return body.tasks.filter((t) => t.status === 'running');
  } catch (err) {
    return null; // this agentbar launches no agents (503), or it is away
  }
}

// The agents this agentbar knows and can launch, as the server lists them (its agent kits).
let launchable = null;
async function launchableAgents() {
  if (launchable === null) {
    const body = await getJSON('/api/agents');
    launchable = body.agents.filter((a) => a.launch);
  }
  return launchable;
}

// The Resume / Fork / Hand-off controls of a replay, and its task's Approve / Deny.
export function sessionActions(session) {
  const note = h('span', { class: 'action-note', 'aria-live': 'polite' });
  const box = h('div', { class: 'session-actions', dataset: { session: session.session_id } });
  const params = { agent: session.agent, host: remoteHost(session) };
  const act = async (button, work) => {
    button.disabled = true;
    note.textContent = '';
    try {
      await work();
    } catch (err) {
      note.textContent = err instanceof ApiError ? err.message : String(err);
    } finally {
      button.disabled = false;
    }
  };
  const relaunch = (mode) => h('button', {
    type: 'button', class: `button ${mode}`, dataset: { action: mode },
    onclick: (event) => act(event.currentTarget, async () => {
      const reply = await postJSON(sessionPath(session.session_id, `/${mode}`), {}, { params });
      openTerminal(reply.task);
    }),
  }, mode === 'resume' ? 'Resume' : 'Fork');
  const form = handoffForm(session, note);
  const handoff = h('button', {
    type: 'button', class: 'button handoff', dataset: { action: 'handoff' }, 'aria-expanded': 'false',
    onclick: async (event) => {
      const opening = form.hidden;
      form.hidden = !opening;
      event.currentTarget.setAttribute('aria-expanded', opening ? 'true' : 'false');
      if (opening) await form.refresh();
    },
  }, 'Hand off…');
  append(box, [relaunch('resume'), relaunch('fork'), handoff, note]);
  const taskBox = h('span', { class: 'session-task' });
  box.append(taskBox);
  showTask(session, taskBox, note);
  return h('div', null, box, form);
}

async function showTask(session, box, note) {
  const host = remoteHost(session);
  if (host) {
    // A task of that host runs it: its terminal through the channel (its manager is there).
    if (session.task_id) {
      box.dataset.task = session.task_id;
      append(box, [h('a', { class: 'button open-terminal', href: terminalHref(session.task_id, host) },
        'Open terminal')]);
    }
    return;
  }
  const tasks = await runningTasks();
  if (!tasks) return;
  const task = tasks.find((t) => t.session_id === session.session_id && t.agent === session.agent);
  if (!task) return;
  box.dataset.task = task.task_id;
  const controls = [h('a', { class: 'button open-terminal', href: terminalHref(task.task_id) }, 'Open terminal')];
  // A request the decision book holds for this task is answered by its own buttons (at the
  // pending call): the task's Approve / Deny step aside then.
  const events = window.agentbarApp && window.agentbarApp.events;
  const asking = events && [...events.decisions.values()].some((r) => r.task_id === task.task_id);
  if (task.waiting && !asking) {
    for (const [path, label] of [['/approve', 'Approve'], ['/deny', 'Deny']]) {
      controls.push(h('button', {
        type: 'button', class: `button ${label.toLowerCase()}`,
        onclick: async (event) => {
          event.currentTarget.disabled = true;
          try {
            const reply = await postJSON(taskPath(task.task_id, path), {});
            note.textContent = `${label === 'Approve' ? 'Approved' : 'Denied'}: ${reply.answer.question}`;
          } catch (err) {
            note.textContent = err.message;
          }
        },
      }, label));
    }
  }
  append(box, controls);
}

function handoffForm(session, note) {
  const what = h('select', { name: 'what', 'aria-label': 'What to hand off' },
    h('option', { value: 'brief' }, 'a brief of the session'),
    h('option', { value: 'answer' }, 'its last answer'));
  const target = h('select', { name: 'to', 'aria-label': 'Who to hand it to' });
  const send = h('button', { type: 'submit', class: 'button' }, 'Send');
  const form = h('form', { class: 'handoff-form', hidden: true },
    h('span', null, 'Send'), what, h('span', null, 'to'), target, send);
  const host = remoteHost(session);
  form.refresh = async () => {
    clear(target);
    for (const agent of await launchableAgents()) {
      target.append(h('option', { value: `agent:${agent.agent}` },
        `a new ${agent.name} in ${shortPath(session.project)}${host ? ` on ${host}` : ''}`));
    }
    for (const task of (await runningTasks()) || []) {
      if (task.session_id === session.session_id) continue;
      target.append(h('option', { value: `task:${task.task_id}` },
        `running ${task.agent} ${task.task_id} in ${shortPath(task.project)}`));
    }
  };
  form.addEventListener('submit', async (event) => {
    event.preventDefault();
    send.disabled = true;
    const [kind, id] = target.value.split(':');
    const to = kind === 'task' ? { task: id } : { agent: id };
    try {
      const reply = await postJSON(sessionPath(session.session_id, '/handoff'),
        { what: what.value, to }, { params: { agent: session.agent, host } });
      if (kind === 'task') note.textContent = `Sent ${reply.chars} characters to task ${id}.`;
      else openTerminal(reply.task);
    } catch (err) {
      note.textContent = err.message;
    } finally {
      send.disabled = false;
    }
  });
  return form;
}

// Each connected remote host's tasks, each naming its host (GET /api/tasks?host=NAME: its own
// manager's list there). A host that cannot list them (it launches no agents, its agentbar is
// older, it just dropped) is left out: its sessions still show on the board.
async function hostTasks() {
  let hosts;
  try {
    hosts = (await getJSON('/api/hosts')).hosts || [];
  } catch (err) {
    return []; // a server without remotes
  }
  const lists = await Promise.all(hosts.filter((host) => host.state === 'connected').map(
    async (host) => {
      try {
        return (await getJSON('/api/tasks', { host: host.name })).tasks;
      } catch (err) {
        return [];
      }
    }));
  return lists.flat();
}

// A remote task's session changed (it bound, waits, ended): that host's list is read again.
function remoteTaskChange(message) {
  const session = message.type === 'change' && message.session;
  return Boolean(session && session.task_id && remoteHost(session));
}

// The board's panel: launch an agent in a folder (launch.js), and the agents agentbar launched,
// here and on each connected remote host.
export class TasksPanel {
  constructor(app) {
    this.app = app;
    this.list = h('ul', { class: 'task-list' });
    this.launcher = new LaunchControl({ agents: launchableAgents(), onlaunched: openTerminal });
    this.note = this.launcher.note;
    this.heading = h('h2', { id: 'tasks-heading', class: 'panel-title' }, 'Launch an agent');
    this.el = h('section', { class: 'tasks-panel', hidden: true, 'aria-labelledby': 'tasks-heading' },
      this.heading, this.launcher.el, this.list);
    this.refreshing = null;
    this.again = false;
    this.unsubscribe = app.events.on((message) => {
      if (message.type === 'task' || message.type === 'sessions' || message.type === 'host'
          || remoteTaskChange(message)) this.refresh();
    });
    this.refresh();
  }

  destroy() {
    this.unsubscribe();
  }

  // One reading at a time: messages coming while one runs ask for one more after it.
  refresh() {
    if (this.refreshing) {
      this.again = true;
      return this.refreshing;
    }
    this.refreshing = this.read().finally(() => {
      this.refreshing = null;
      if (this.again) {
        this.again = false;
        this.refresh();
      }
    });
    return this.refreshing;
  }

  async read() {
    let tasks = null;
    try {
      tasks = (await getJSON('/api/tasks')).tasks;
    } catch (err) {
      // this agentbar launches no agents: its hosts' tasks may still be listed
    }
    const there = await hostTasks();
    if (tasks === null && !there.length) {
      clear(this.list);
      this.el.hidden = true;
      return;
    }
    this.el.hidden = false;
    this.launcher.el.hidden = tasks === null;
    this.heading.textContent = tasks === null ? 'Launched agents' : 'Launch an agent';
    clear(this.list);
    const shown = [...(tasks || []), ...there];
    for (const task of shown.filter((t) => t.status === 'running' || t.status === 'stopping')) {
      const session = task.session;
      const host = remoteHost(task);
      const where = `${task.agent} in ${shortPath(task.project, 48)}${host ? ` on ${host}` : ''}`;
      this.list.append(h('li', { dataset: { task: task.task_id, host: host || 'local' } },
        h('a', { href: terminalHref(task.task_id, host) }, where),
        task.waiting ? h('span', { class: 'state-badge state-input_required' }, 'Approval') : null,
        session ? h('span', { class: 'detail' }, session.detail || session.state) : null,
        h('span', { class: 'task-id' }, task.task_id)));
    }
    if (tasks === null) return; // no launcher: no folders to offer
    try {
      const { recent } = await getJSON('/api/projects');
      this.launcher.setRecent(recent);
    } catch (err) {
      // the list of recent folders is a convenience: typing one works as well
    }
  }
}
