// The dashboard's pages (docs/dashboard.md). Every page reads the client through GUI RPC
// requests sent to /api/rpc (the replies are GUI RPC's own XML) and acts the same way, so
// it shows what boinccmd and the BOINC Manager show. /api/events says when to read again.
'use strict';

const CSRF = document.querySelector('meta[name=csrf]').content;
const PAGE = document.body.dataset.page;

// ---- requests -------------------------------------------------------------------------

function xmlText(value) {
  return String(value).replace(/[&<>"']/g, (c) =>
    ({ '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;', "'": '&apos;' })[c]);
}

async function post(path, body, type) {
  const response = await fetch(path, {
    method: 'POST',
    headers: { 'Content-Type': type, 'X-CSRF-Token': CSRF },
    body,
    credentials: 'same-origin',
  });
  if (response.status === 401) {
    window.location.assign('/login');
    throw new Error('logged out');
  }
  if (!response.ok) throw new Error(await response.text());
  return new DOMParser().parseFromString(await response.text(), 'application/xml');
}

// One GUI RPC request (the operation's XML); its reply, parsed.
function rpc(operation) {
  return post('/api/rpc', `<boinc_gui_rpc_request>${operation}</boinc_gui_rpc_request>`,
    'application/xml');
}

function replyError(doc) {
  const error = doc.getElementsByTagName('error')[0];
  return error ? error.textContent.trim() : null;
}

// An action: its reply, or an error shown to the user.
async function act(operation) {
  try {
    const doc = await rpc(operation);
    const error = replyError(doc);
    if (error) showProblem(error);
    else showProblem(null);
    refresh();
    return !error;
  } catch (e) {
    showProblem(e.message);
    return false;
  }
}

function op(name, fields) {
  const inner = Object.entries(fields).map(([k, v]) => `<${k}>${xmlText(v)}</${k}>`).join('');
  return `<${name}>${inner}</${name}>`;
}

// ---- reading replies ------------------------------------------------------------------

function child(node, name) {
  for (const c of node.children) if (c.tagName === name) return c;
  return null;
}
function text(node, name) {
  const c = child(node, name);
  return c ? c.textContent.trim() : '';
}
function num(node, name) {
  const v = parseFloat(text(node, name));
  return Number.isFinite(v) ? v : 0;
}
function flag(node, name) {
  const c = child(node, name);
  return c !== null && c.textContent.trim() !== '0';
}
function all(doc, name) {
  return Array.from(doc.getElementsByTagName(name));
}

// ---- building pages -------------------------------------------------------------------

function el(tag, attrs, ...children) {
  const e = document.createElement(tag);
  for (const [k, v] of Object.entries(attrs || {})) {
    if (v === undefined || v === null || v === false) continue;
    if (k === 'class') e.className = v;
    else if (k.startsWith('on')) e.addEventListener(k.slice(2), v);
    else e.setAttribute(k, v === true ? '' : v);
  }
  for (const c of children.flat()) {
    if (c === null || c === undefined || c === false) continue;
    e.append(c instanceof Node ? c : String(c));
  }
  return e;
}

function showProblem(message) {
  const box = document.getElementById('problem');
  box.hidden = !message;
  box.textContent = message || '';
}

const now = () => Date.now() / 1000;

function duration(seconds) {
  if (!Number.isFinite(seconds) || seconds <= 0) return '—';
  const s = Math.round(seconds);
  const d = Math.floor(s / 86400);
  const h = Math.floor((s % 86400) / 3600);
  const m = Math.floor((s % 3600) / 60);
  const pad = (n) => String(n).padStart(2, '0');
  if (d > 0) return `${d}d ${pad(h)}h`;
  if (h > 0) return `${h}h ${pad(m)}m`;
  return `${m}m ${pad(s % 60)}s`;
}

// Made once: a formatter made per call costs more than the rest of a table row.
const DATE_TIME = new Intl.DateTimeFormat([], { month: 'short', day: 'numeric', hour: '2-digit', minute: '2-digit' });
const TIME = new Intl.DateTimeFormat([], { hour: '2-digit', minute: '2-digit', second: '2-digit' });

function when(t) {
  return t ? DATE_TIME.format(new Date(t * 1000)) : '—';
}

function clock(t) {
  return t ? TIME.format(new Date(t * 1000)) : '—';
}

function share(value) {
  const n = parseFloat(value);
  return Number.isFinite(n) ? String(Math.round(n * 100) / 100) : value;
}

function until(t) {
  const left = t - now();
  return left > 1 ? `in ${duration(left)}` : 'now';
}

function bytes(n) {
  if (!n) return '0 B';
  const units = ['B', 'KB', 'MB', 'GB', 'TB'];
  let i = 0;
  while (n >= 1024 && i < units.length - 1) { n /= 1024; i++; }
  return `${n.toFixed(i ? 1 : 0)} ${units[i]}`;
}

function progress(fraction) {
  const pct = Math.max(0, Math.min(100, fraction * 100));
  const fill = el('div', { class: 'fill' });
  // Through the style object: the page's policy refuses inline style attributes.
  fill.style.width = `${pct.toFixed(1)}%`;
  return el('div', { class: 'bar', title: `${pct.toFixed(1)} %` }, fill, el('span', {}, `${pct.toFixed(1)} %`));
}

function table(id, headers, rows, sort) {
  const head = el('tr', {}, headers.map((h, i) => {
    if (!sort || !h) return el('th', {}, h);
    const mark = sort.column === i ? (sort.descending ? ' ▼' : ' ▲') : '';
    return el('th', { class: 'sortable', onclick: () => sort.by(i) }, h + mark);
  }));
  return el('table', { id }, el('thead', {}, head), el('tbody', {}, rows));
}

function card(title, ...body) {
  return el('section', { class: 'card' }, el('h2', {}, title), ...body);
}

// ---- what the replies mean ------------------------------------------------------------

const RESULT_STATES = ['New', 'Downloading', 'Ready to start', 'Computation error',
  'Uploading', 'Ready to report', 'Aborted', 'Upload failed'];

function taskStatus(r) {
  const task = child(r, 'active_task');
  const state = num(r, 'state');
  if (flag(r, 'project_suspended_via_gui')) return 'Project suspended';
  if (flag(r, 'suspended_via_gui')) return 'Suspended';
  if (state === 2 && task) {
    const scheduler = num(task, 'scheduler_state');
    if (scheduler === 2) return 'Running';
    if (scheduler === 1) return 'Waiting to run';
  }
  if (flag(r, 'ready_to_report')) return 'Ready to report';
  return RESULT_STATES[state] || `State ${state}`;
}

function resourceOf(r) {
  const words = text(r, 'resources');
  const gpu = words.match(/([A-Za-z]+) GPU/);
  return gpu ? `${gpu[1]} GPU` : 'CPU';
}

// BOINC's suspend reasons (a bit each).
const SUSPEND_REASONS = [[1, 'on batteries'], [2, 'computer in use'], [4, 'suspended by the user'],
  [8, 'time of day'], [16, 'CPU benchmarks running'], [32, 'disk space'], [64, 'CPU throttling'],
  [128, 'no recent input'], [256, 'starting up'], [512, 'an exclusive app is running'],
  [1024, 'CPU usage is high'], [2048, 'network transfer limit'], [4096, 'requested by the OS'],
  [8192, 'no Wi-Fi'], [16384, 'battery charging'], [32768, 'battery overheated']];

function suspendReason(code) {
  if (!code) return null;
  const reasons = SUSPEND_REASONS.filter(([bit]) => code & bit).map(([, words]) => words);
  return reasons.length ? reasons.join(', ') : `reason ${code}`;
}

const MODES = { 1: 'always', 2: 'according to preferences', 3: 'never' };

function projectNames(doc) {
  const names = new Map();
  for (const p of all(doc, 'project')) names.set(text(p, 'master_url'), text(p, 'project_name') || text(p, 'master_url'));
  return names;
}

function backoffOf(p) {
  let latest = 0;
  for (const b of p.getElementsByTagName('rsc_backoff_time')) {
    const value = child(b, 'value') ? num(b, 'value') : parseFloat(b.textContent);
    if (Number.isFinite(value)) latest = Math.max(latest, value);
  }
  return latest;
}

// ---- the pages ------------------------------------------------------------------------

const pages = {};

pages.overview = {
  async render(view) {
    const [cc, results, projects] = await Promise.all([
      rpc('<get_cc_status/>'), rpc('<get_results/>'), rpc('<get_project_status/>')]);
    const status = all(cc, 'cc_status')[0];
    const names = projectNames(projects);
    const tasks = all(results, 'result');
    const running = tasks.filter((r) => taskStatus(r) === 'Running');
    const byResource = new Map();
    for (const r of running) {
      const resource = resourceOf(r);
      if (!byResource.has(resource)) byResource.set(resource, []);
      byResource.get(resource).push(r);
    }
    const runningCards = byResource.size === 0
      ? [el('p', { class: 'muted' }, 'Nothing is running.')]
      : Array.from(byResource, ([resource, list]) => el('div', { class: 'device' },
        el('h3', {}, `${resource}: ${list.length} running`),
        el('ul', { class: 'running' }, list.map((r) => {
          const task = child(r, 'active_task');
          return el('li', { 'data-task': text(r, 'name') },
            el('span', { class: 'name' }, text(r, 'name')),
            el('span', { class: 'muted' }, names.get(text(r, 'project_url')) || ''),
            progress(task ? num(task, 'fraction_done') : 0));
        }))));

    const reasons = status ? [
      ['Computing', suspendReason(num(status, 'task_suspend_reason')), num(status, 'task_mode')],
      ['GPUs', suspendReason(num(status, 'gpu_suspend_reason')), num(status, 'gpu_mode')],
      ['Network', suspendReason(num(status, 'network_suspend_reason')), num(status, 'network_mode')],
    ] : [];
    const modeButtons = (kind) => el('span', { class: 'buttons' },
      [['always', 'Always'], ['auto', 'By preferences'], ['never', 'Never']].map(([mode, label]) =>
        el('button', { class: 'small', 'data-mode': `${kind}-${mode}`,
          onclick: () => act(`<${kind}><${mode}/><duration>0</duration></${kind}>`) }, label)));
    const statusRows = reasons.map(([what, reason, mode], i) => el('tr', {},
      el('th', {}, what),
      el('td', { class: reason ? 'warn' : 'ok' }, reason ? `suspended: ${reason}` : 'running'),
      el('td', {}, `mode: ${MODES[mode] || mode}`),
      el('td', {}, modeButtons(['set_run_mode', 'set_gpu_mode', 'set_network_mode'][i]))));

    const buffer = new Map();
    for (const r of tasks) {
      if (num(r, 'state') > 2 || flag(r, 'ready_to_report')) continue;
      const resource = resourceOf(r);
      const entry = buffer.get(resource) || { count: 0, seconds: 0 };
      entry.count += 1;
      entry.seconds += num(r, 'estimated_cpu_time_remaining');
      buffer.set(resource, entry);
    }
    const bufferRows = Array.from(buffer, ([resource, b]) =>
      el('tr', {}, el('th', {}, resource), el('td', {}, `${b.count} tasks`), el('td', {}, `${duration(b.seconds)} of work`)));

    const projectRows = all(projects, 'project').map((p) => el('tr', {},
      el('td', {}, text(p, 'project_name') || text(p, 'master_url')),
      el('td', {}, when(num(p, 'last_rpc_time'))),
      el('td', {}, flag(p, 'scheduler_rpc_in_progress') ? 'under way' : until(num(p, 'min_rpc_time'))),
      el('td', {}, num(p, 'nrpc_failures') ? `${num(p, 'nrpc_failures')} failed in a row` : '')));

    view.replaceChildren(el('div', { class: 'grid' },
      card('Running now', runningCards),
      card('Status', el('table', { class: 'plain', id: 'status' }, statusRows)),
      card('Work buffer', bufferRows.length
        ? el('table', { class: 'plain', id: 'buffer' }, bufferRows)
        : el('p', { class: 'muted' }, 'No work queued.')),
      card('Scheduler RPCs', table('next-rpc', ['Project', 'Last RPC', 'Next RPC', ''], projectRows))));
  },
};

const taskSort = { column: 6, descending: false, by(i) {
  if (this.column === i) this.descending = !this.descending;
  else { this.column = i; this.descending = false; }
  refresh();
} };

pages.tasks = {
  async render(view) {
    const [results, projects] = await Promise.all([rpc('<get_results/>'), rpc('<get_project_status/>')]);
    const names = projectNames(projects);
    const rows = all(results, 'result').map((r) => {
      const task = child(r, 'active_task');
      const elapsed = task ? num(task, 'elapsed_time') : num(r, 'final_elapsed_time');
      return {
        r,
        keys: [names.get(text(r, 'project_url')) || '', text(r, 'name'), taskStatus(r),
          task ? num(task, 'fraction_done') : 0, elapsed, num(r, 'estimated_cpu_time_remaining'),
          num(r, 'report_deadline')],
      };
    });
    const c = taskSort.column;
    rows.sort((a, b) => {
      const [x, y] = [a.keys[c], b.keys[c]];
      const order = typeof x === 'number' ? x - y : String(x).localeCompare(String(y));
      return taskSort.descending ? -order : order;
    });
    const body = rows.map(({ r, keys }) => {
      const project = text(r, 'project_url');
      const name = text(r, 'name');
      const fields = { project_url: project, name };
      const suspended = flag(r, 'suspended_via_gui');
      const done = num(r, 'state') > 2 || flag(r, 'ready_to_report');
      return el('tr', { 'data-task': name },
        el('td', {}, keys[0]),
        el('td', { class: 'name' }, name),
        el('td', { class: 'status' }, keys[2]),
        el('td', {}, progress(keys[3])),
        el('td', {}, duration(keys[4])),
        el('td', {}, done ? '—' : duration(keys[5])),
        el('td', { class: keys[6] < now() && !done ? 'warn' : '' }, when(keys[6])),
        el('td', { class: 'buttons' },
          done ? null : suspended
            ? el('button', { class: 'small', 'data-action': 'resume', onclick: () => act(op('resume_result', fields)) }, 'Resume')
            : el('button', { class: 'small', 'data-action': 'suspend', onclick: () => act(op('suspend_result', fields)) }, 'Suspend'),
          done ? null : el('button', { class: 'small danger', 'data-action': 'abort', onclick: () => {
            if (window.confirm(`Abort ${name}? Its work is lost.`)) act(op('abort_result', fields));
          } }, 'Abort')));
    });
    view.replaceChildren(el('p', { class: 'muted' }, `${rows.length} tasks`),
      table('tasks', ['Project', 'Task', 'Status', 'Progress', 'Elapsed', 'Remaining', 'Deadline', ''], body, taskSort));
  },
};

async function attachWithKey(url, key) {
  const ok = await act(op('project_attach', { project_url: url, authenticator: key, project_name: '' }));
  if (!ok) return;
  for (let i = 0; i < 60; i++) {
    const doc = await rpc('<project_attach_poll/>');
    const code = num(all(doc, 'project_attach_reply')[0] || doc.documentElement, 'error_num');
    if (code === 0) { showProblem(null); document.getElementById('attach-status').textContent = `Attached to ${url}.`; refresh(); return; }
    if (code !== -204) { showProblem(`Attaching failed (${code}): ${all(doc, 'message').map((m) => m.textContent).join(' ')}`); return; }
    await new Promise((r) => setTimeout(r, 1000));
  }
}

pages.projects = {
  setup(fixed) {
    const url = el('input', { id: 'attach-url', placeholder: 'https://project.example.org/', size: 40 });
    const key = el('input', { id: 'attach-key', placeholder: 'account key' , size: 34 });
    const email = el('input', { id: 'attach-email', type: 'email', placeholder: 'e-mail address' });
    const password = el('input', { id: 'attach-password', type: 'password', placeholder: 'password' });
    const byKey = el('form', { id: 'attach-form', class: 'inline', onsubmit: (e) => {
      e.preventDefault();
      attachWithKey(url.value.trim(), key.value.trim());
    } }, el('label', {}, 'Project URL ', url), el('label', {}, 'Account key ', key),
    el('button', { type: 'submit', id: 'attach' }, 'Attach'));
    const byPassword = el('form', { id: 'attach-account-form', class: 'inline', onsubmit: async (e) => {
      e.preventDefault();
      const form = new URLSearchParams({ url: url.value.trim(), email: email.value, password: password.value });
      try {
        await post('/api/lookup-account', form.toString(), 'application/x-www-form-urlencoded');
        for (let i = 0; i < 60; i++) {
          const doc = await rpc('<lookup_account_poll/>');
          const key = all(doc, 'authenticator')[0];
          if (key) { await attachWithKey(url.value.trim(), key.textContent.trim()); return; }
          const code = num(doc.documentElement.firstElementChild || doc.documentElement, 'error_num');
          const error = replyError(doc) || (code && code !== -204 ? `error ${code}` : null);
          if (error) { showProblem(`The account lookup failed: ${error}`); return; }
          await new Promise((r) => setTimeout(r, 1000));
        }
      } catch (err) { showProblem(err.message); }
    } }, el('label', {}, 'or E-mail ', email), el('label', {}, 'Password ', password),
    el('button', { type: 'submit' }, 'Look up and attach'));
    fixed.append(card('Attach a project', byKey, byPassword, el('p', { id: 'attach-status', class: 'muted' })));
  },
  async render(view) {
    const doc = await rpc('<get_project_status/>');
    const rows = all(doc, 'project').map((p) => {
      const url = text(p, 'master_url');
      const fields = { project_url: url };
      const suspended = flag(p, 'suspended_via_gui');
      const noWork = flag(p, 'dont_request_more_work');
      const notes = [suspended && 'suspended', noWork && 'no new work',
        num(p, 'nrpc_failures') && `${num(p, 'nrpc_failures')} RPC failures`,
        flag(p, 'scheduler_rpc_in_progress') && 'RPC under way'].filter(Boolean);
      const backoff = backoffOf(p);
      return el('tr', { 'data-project': url },
        el('td', {}, el('div', {}, text(p, 'project_name') || url), el('div', { class: 'muted small' }, url)),
        el('td', {}, share(text(p, 'resource_share'))),
        el('td', {}, num(p, 'rec').toFixed(1)),
        el('td', {}, `${num(p, 'user_total_credit').toFixed(0)} / ${num(p, 'host_total_credit').toFixed(0)}`),
        el('td', {}, backoff > now() ? until(backoff) : '—'),
        el('td', {}, when(num(p, 'last_rpc_time'))),
        el('td', {}, until(num(p, 'min_rpc_time'))),
        el('td', { class: 'status' }, notes.join(', ') || 'ok'),
        el('td', { class: 'buttons' },
          el('button', { class: 'small', onclick: () => act(op('project_update', fields)) }, 'Update'),
          el('button', { class: 'small', onclick: () => act(op(suspended ? 'project_resume' : 'project_suspend', fields)) }, suspended ? 'Resume' : 'Suspend'),
          el('button', { class: 'small', onclick: () => act(op(noWork ? 'project_allowmorework' : 'project_nomorework', fields)) }, noWork ? 'Allow work' : 'No new work'),
          el('button', { class: 'small danger', onclick: () => {
            if (window.confirm(`Detach from ${url}? Its tasks are lost.`)) act(op('project_detach', fields));
          } }, 'Detach')));
    });
    view.replaceChildren(table('projects',
      ['Project', 'Share', 'REC', 'Credit (user / host)', 'Backoff', 'Last RPC', 'Next RPC', 'Status', ''], rows));
  },
};

pages.schedule = {
  async render(view) {
    const [results, explained] = await Promise.all([rpc('<get_results/>'), fetch('/api/explain', { credentials: 'same-origin' })]);
    const running = all(results, 'result').filter((r) => taskStatus(r) === 'Running');
    const rows = running.map((r) => {
      const task = child(r, 'active_task');
      const started = now() - num(task, 'elapsed_time');
      return el('tr', {}, el('td', {}, resourceOf(r)), el('td', { class: 'name' }, text(r, 'name')),
        el('td', {}, when(started)), el('td', {}, duration(num(r, 'estimated_cpu_time_remaining'))));
    });
    const explanation = explained.ok ? await explained.text() : `explain failed: ${await explained.text()}`;
    const picture = el('img', { id: 'timeline', class: 'timeline', alt: 'Which task ran on which CPU and GPU over the last hours',
      src: `/api/timeline.svg?at=${Date.now()}` });
    view.replaceChildren(
      card('The last hours, per device (as sim --timeline draws a run)', picture),
      card('Running now, by device', table('schedule-running', ['Device', 'Task', 'Started', 'Remaining'], rows)),
      card('Why: the scheduler\'s reasoning at this instant (explain)', el('pre', { id: 'explain' }, explanation)));
  },
};

pages.transfers = {
  async render(view) {
    const [doc, projects] = await Promise.all([rpc('<get_file_transfers/>'), rpc('<get_project_status/>')]);
    const names = projectNames(projects);
    const rows = all(doc, 'file_transfer').map((f) => {
      const persistent = child(f, 'persistent_file_xfer');
      const active = child(f, 'file_xfer');
      const size = num(f, 'nbytes');
      const done = active ? num(active, 'bytes_xferred') : persistent ? num(persistent, 'last_bytes_xferred') : 0;
      const retry = persistent ? num(persistent, 'next_request_time') : 0;
      const status = active ? `${bytes(num(active, 'xfer_speed'))}/s` : retry > now() ? `retry ${until(retry)}` : 'waiting';
      return el('tr', {}, el('td', {}, names.get(text(f, 'project_url')) || text(f, 'project_url')),
        el('td', { class: 'name' }, text(f, 'name')), el('td', {}, flag(f, 'is_upload') ? 'upload' : 'download'),
        el('td', {}, bytes(size)), el('td', {}, progress(size ? done / size : 0)), el('td', {}, status));
    });
    view.replaceChildren(rows.length
      ? table('transfers', ['Project', 'File', 'Direction', 'Size', 'Progress', 'Status'], rows)
      : el('p', { class: 'muted', id: 'transfers' }, 'No transfers now.'));
  },
};

pages.log = {
  async render(view) {
    const [messages, notices] = await Promise.all([
      rpc('<get_messages><seqno>0</seqno></get_messages>'), rpc('<get_notices><seqno>0</seqno></get_notices>')]);
    const PRIORITY = { 1: 'info', 2: 'alert', 3: 'error' };
    const lines = all(messages, 'msg').slice(-500).reverse().map((m) => el('tr', { class: `pri${num(m, 'pri')}` },
      el('td', { class: 'nowrap' }, clock(num(m, 'time'))), el('td', {}, text(m, 'project')),
      el('td', {}, PRIORITY[num(m, 'pri')] || ''), el('td', {}, text(m, 'body'))));
    const noticeCards = all(notices, 'notice').slice(-50).reverse().map((n) => el('article', { class: 'notice' },
      el('h3', {}, text(n, 'title') || text(n, 'project_name') || 'Notice'),
      el('p', {}, text(n, 'description')),
      el('p', { class: 'muted small' }, `${text(n, 'project_name')} · ${when(num(n, 'create_time'))}`)));
    view.replaceChildren(el('div', { class: 'grid wide' },
      card('Notices', noticeCards.length ? noticeCards : el('p', { class: 'muted' }, 'No notices.')),
      card('Event log (newest first)', table('messages', ['Time', 'Project', '', 'Message'], lines))));
  },
};

const PREFERENCES = [
  ['max_ncpus_pct', 'Use at most this % of the CPUs'],
  ['cpu_usage_limit', 'Use at most this % of CPU time'],
  ['work_buf_min_days', 'Store at least this many days of work'],
  ['work_buf_additional_days', 'Store up to this many more days'],
  ['disk_max_used_gb', 'Use at most this many GB of disk'],
  ['disk_max_used_pct', 'Use at most this % of the disk'],
  ['ram_max_used_busy_pct', 'Use at most this % of memory when in use'],
  ['cpu_scheduling_period_minutes', 'Switch between tasks every (minutes)'],
];

async function readOverride() {
  const doc = await rpc('<get_global_prefs_override/>');
  const prefs = all(doc, 'global_preferences')[0];
  return prefs ? new XMLSerializer().serializeToString(prefs) : '<global_preferences></global_preferences>';
}

pages.preferences = {
  async setup(fixed) {
    const inputs = PREFERENCES.map(([name, label]) =>
      el('label', { class: 'field' }, el('span', {}, label), el('input', { id: `pref-${name}`, name, inputmode: 'decimal', size: 8 })));
    const saved = el('span', { id: 'prefs-status', class: 'muted' });
    const form = el('form', { id: 'prefs-form', onsubmit: async (e) => {
      e.preventDefault();
      const doc = new DOMParser().parseFromString(await readOverride(), 'application/xml');
      const root = doc.documentElement;
      for (const [name] of PREFERENCES) {
        const value = document.getElementById(`pref-${name}`).value.trim();
        const old = child(root, name);
        if (value === '') { if (old) old.remove(); continue; }
        if (!Number.isFinite(Number(value))) { showProblem(`${name}: not a number: ${value}`); return; }
        const node = old || root.appendChild(doc.createElement(name));
        node.textContent = value;
      }
      const text = new XMLSerializer().serializeToString(root);
      if (await act(`<set_global_prefs_override>${text}</set_global_prefs_override>`)
        && await act('<read_global_prefs_override/>')) {
        saved.textContent = `Saved at ${new Date().toLocaleTimeString()}; the client uses them now.`;
        fillOverride();
      }
    } }, el('div', { class: 'fields' }, inputs), el('button', { type: 'submit', id: 'prefs-save' }, 'Save override'), ' ', saved);
    fixed.append(card('Local override (global_prefs_override.xml); empty fields follow the working set', form));
    async function fillOverride() {
      const doc = new DOMParser().parseFromString(await readOverride(), 'application/xml');
      for (const [name] of PREFERENCES) {
        document.getElementById(`pref-${name}`).value = text(doc.documentElement, name);
      }
    }
    await fillOverride();
  },
  async render(view) {
    const doc = await rpc('<get_global_prefs_working/>');
    const prefs = all(doc, 'global_preferences')[0];
    const rows = prefs ? Array.from(prefs.children).filter((c) => c.children.length === 0).map((c) =>
      el('tr', { 'data-pref': c.tagName }, el('th', {}, c.tagName), el('td', {}, c.textContent.trim() || 'yes'))) : [];
    view.replaceChildren(card('Preferences in force (GUI RPC\'s working set: the override where there is one, '
      + 'else the projects\' preferences; BOINC\'s defaults for what neither sets)',
    rows.length ? el('table', { class: 'plain', id: 'working-prefs' }, rows)
      : el('p', { class: 'muted', id: 'working-prefs' }, 'BOINC\'s defaults throughout.')));
  },
};

// ---- refreshing -----------------------------------------------------------------------

let busy = false;
let again = false;

async function refresh() {
  const page = pages[PAGE];
  if (!page) return;
  if (busy) { again = true; return; }
  busy = true;
  try {
    await page.render(document.getElementById('view'));
    document.getElementById('updated').textContent = `Updated ${new Date().toLocaleTimeString()}`;
    // When the page first showed the client: examples/dashboard_load.rs reads it.
    if (!document.body.dataset.loaded) document.body.dataset.loadedMs = String(Math.round(performance.now()));
    document.body.dataset.loaded = 'true';
  } catch (e) {
    showProblem(`Cannot read the client: ${e.message}`);
  } finally {
    busy = false;
    if (again) { again = false; refresh(); }
  }
}

function listen() {
  const live = document.getElementById('live');
  const events = new EventSource('/api/events');
  events.addEventListener('update', () => { live.classList.add('on'); refresh(); });
  events.onerror = () => live.classList.remove('on');
}

document.getElementById('logout').addEventListener('submit', async (e) => {
  e.preventDefault();
  await fetch('/logout', { method: 'POST', headers: { 'X-CSRF-Token': CSRF }, credentials: 'same-origin' });
  window.location.assign('/login');
});

(async () => {
  const page = pages[PAGE];
  if (page && page.setup) {
    try { await page.setup(document.getElementById('fixed')); } catch (e) { showProblem(e.message); }
  }
  await refresh();
  listen();
})();
