// The Checklists web app: the overview of all lists and one list at a time
// (`#list=ID`), live over a WebSocket to checklistd (`/ws`, subprotocol
// checklists.v1), item edits queued offline (outbox.js).

import { ChecklistClient, SUBPROTOCOL, ChangeKind } from '../js/checklists.js';
import { Overview, iconSelect, subtitle } from './overview.js';
import { ListView } from './list-view.js';
import { Outbox } from './outbox.js';

const $ = (role) => document.querySelector(`[data-role="${role}"]`);
const TOKEN_KEY = 'checklists.token';

// ---- where and who ------------------------------------------------------

function hashParams() { return new URLSearchParams(location.hash.slice(1)); }

/** `#token=...` is taken into the page's storage and removed from the address. */
function takeTokenFromHash() {
  const params = hashParams();
  if (!params.has('token')) return;
  localStorage.setItem(TOKEN_KEY, params.get('token'));
  params.delete('token');
  const rest = params.toString();
  history.replaceState(null, '', `${location.pathname}${location.search}${rest ? `#${rest}` : ''}`);
}
takeTokenFromHash();

/** `ws(s)://<page host>/ws`, or `?server=URL` for a page served elsewhere. */
function serverURL() {
  const override = new URLSearchParams(location.search).get('server');
  if (override) return override;
  return `${location.protocol === 'https:' ? 'wss:' : 'ws:'}//${location.host}/ws`;
}

const client = new ChecklistClient({
  openSocket: () => new WebSocket(serverURL(), SUBPROTOCOL),
  clientName: 'checklists-web/1.0',
  token: localStorage.getItem(TOKEN_KEY) || undefined,
});
window.checklists = { client }; // for the browser tests and the console

// ---- messages and connection state -------------------------------------

function say(text, { error = false } = {}) {
  const p = $('message');
  p.textContent = text;
  p.classList.toggle('error', error);
  p.hidden = !text;
}

const STATE_TEXT = {
  connecting: 'Connecting…',
  open: 'Connected',
  offline: 'Offline: changes are kept and sent when the connection returns',
  refused: 'Not signed in',
  stopped: 'Stopped',
};

client.on('state', (state, detail) => {
  const el = $('connection');
  el.dataset.state = state;
  el.textContent = STATE_TEXT[state] ?? state;
  const authError = $('auth-error');
  if (state === 'refused') {
    authError.textContent = `The server refused the token: ${detail?.serverMessage ?? 'not authenticated'}. Enter a valid token.`;
    authError.hidden = false;
    $('token').focus();
  } else if (state === 'open') {
    authError.hidden = true;
    connected().catch((error) => say(`Could not read the lists: ${error.message}`, { error: true }));
  }
});

$('token-form').addEventListener('submit', (event) => {
  event.preventDefault();
  const token = $('token').value.trim();
  if (token) localStorage.setItem(TOKEN_KEY, token); else localStorage.removeItem(TOKEN_KEY);
  $('token').value = '';
  client.setToken(token || undefined);
});

// ---- the overview -------------------------------------------------------

function requireConnection() {
  if (client.state === 'open') return true;
  say('Lists are added, renamed and deleted while connected; item changes are kept offline.', { error: true });
  return false;
}

async function listAction(action, what) {
  if (!requireConnection()) return;
  try {
    const summary = await action();
    if (summary?.id !== undefined) { overview.lists.set(summary.id, summary); overview.render(); updateListHead(); }
    say('');
  } catch (error) {
    say(`Could not ${what}: ${error.serverMessage ?? error.message}`, { error: true });
    overview.render();
  }
}

const overview = new Overview($('lists'), {
  rename: (id, name) => listAction(() => client.updateList(id, { name }), 'rename the list'),
  setIcon: (id, icon) => listAction(() => client.updateList(id, { icon }), 'change the icon'),
  remove: (id) => listAction(async () => {
    await client.deleteList(id);
    overview.lists.delete(id);
    overview.render();
  }, 'delete the list'),
});

const newListIcon = iconSelect('No Icon');
$('add-list-icon').append(newListIcon);
$('add-list').addEventListener('submit', (event) => {
  event.preventDefault();
  const name = event.target.elements.name.value.trim();
  if (!name) return;
  listAction(() => client.createList(name, newListIcon.value), 'add the list')
    .then(() => { event.target.reset(); newListIcon.value = 'No Icon'; });
});

let subscribed = false;
let refreshTimer = 0;

const LISTS_KEY = 'checklists.lists'; // the overview last read, for a reload while offline

async function refreshLists() {
  const lists = await client.listLists();
  try { localStorage.setItem(LISTS_KEY, JSON.stringify(lists)); } catch { /* a convenience only */ }
  for (const s of lists) if (!client.revisions.has(s.id)) client.revisions.set(s.id, s.revision);
  overview.setAll(lists);
  updateListHead();
}

/** LIST_LISTS again soon (counts change with patches; pushes carry operations, not counts). */
function scheduleListsRefresh() {
  clearTimeout(refreshTimer);
  refreshTimer = setTimeout(() => refreshLists().catch(() => {}), 50);
}

async function connected() {
  await refreshLists();
  if (!subscribed) { subscribed = true; await client.subscribeAll(); }
  listView?.refresh();
  outbox.flush();
}

client.on('change', (change) => {
  switch (change.kind) {
    case ChangeKind.LIST_CREATED:
      overview.lists.set(change.list, { id: change.list, name: change.name, icon: change.icon, itemCount: 0, uncheckedCount: 0, revision: change.revision });
      overview.render();
      break;
    case ChangeKind.LIST_UPDATED: {
      const s = overview.lists.get(change.list);
      if (s) Object.assign(s, { name: change.name, icon: change.icon, revision: change.revision });
      overview.render();
      break;
    }
    case ChangeKind.LIST_DELETED:
      overview.lists.delete(change.list);
      overview.render();
      if (listView?.listId === change.list) { location.hash = ''; say('The list was deleted.'); }
      break;
    default:
      scheduleListsRefresh();
      if (listView?.listId === change.list) listView.applyChange(change);
  }
  updateListHead();
});
client.on('resync', (list) => {
  scheduleListsRefresh();
  if (listView?.listId === list) listView.refresh();
});

// ---- the offline queue --------------------------------------------------

/** Pending changes of the open list by item id: what the rows show until they are applied. */
let pendingByItem = new Map();

function computePending() {
  pendingByItem = new Map();
  if (!listView) return;
  for (const entry of outbox.forList(listView.listId)) {
    for (const op of entry.ops) {
      const id = op.ref?.id;
      if (id === undefined) continue;
      const p = pendingByItem.get(id) ?? {};
      if (op.op === 'SET_CHECKED') p.checked = op.checked;
      if (op.op === 'SET_TEXT') p.text = op.text;
      if (op.op === 'DELETE') p.deleted = true;
      if (op.op === 'MOVE') p.moving = true;
      pendingByItem.set(id, p);
    }
  }
}

function renderOutbox() {
  const entries = outbox.entries;
  $('outbox-panel').hidden = entries.length === 0;
  $('pending-count').textContent = entries.length === 1 ? '1 change waiting to be sent' : `${entries.length} changes waiting to be sent`;
  $('outbox').replaceChildren(...entries.map((e) => {
    const li = document.createElement('li');
    li.dataset.pending = 'true';
    li.dataset.listId = String(e.list);
    li.textContent = e.label;
    return li;
  }));
  computePending();
  listView?.redraw();
}

/** Applies an answered patch's field changes to the rows at once (the push confirms them). */
function applyAnswered(entry) {
  if (listView?.listId !== entry.list) return;
  let structural = false;
  for (const op of entry.ops) {
    const id = op.ref?.id;
    if (op.op === 'SET_CHECKED') listView.applyLocal(id, (i) => { i.checked = op.checked; });
    else if (op.op === 'SET_TEXT') listView.applyLocal(id, (i) => { i.text = op.text; });
    else if (op.op === 'SET_REMIND') listView.applyLocal(id, (i) => { i.remind = op.remind; });
    else if (op.op === 'SET_DUE') listView.applyLocal(id, (i) => { if (op.present) i.due = op.due; else delete i.due; });
    else if (op.op === 'SET_PRICE') listView.applyLocal(id, (i) => { if (op.present) i.price = op.price; else delete i.price; });
    else structural = true;
  }
  if (structural) listView.refresh();
}

const outbox = new Outbox(client, {
  onChange: renderOutbox,
  onApplied: (entry) => applyAnswered(entry),
  onFailed: (entry, error) => {
    say(`Not applied: ${entry.label} (${error.serverMessage ?? error.message})`, { error: true });
    if (listView?.listId === entry.list) listView.refresh();
  },
});

// ---- one list -----------------------------------------------------------

let listView = null;
let editing = null;

function updateListHead() {
  if (!listView) return;
  const s = overview.lists.get(listView.listId);
  $('list-name').textContent = s?.name ?? `List ${listView.listId}`;
  $('list-subtitle').textContent = s ? subtitle(s) : '';
  document.title = s ? `${s.name} – Checklists` : 'Checklists';
}

function quote(text) { return `“${text.length > 40 ? `${text.slice(0, 39)}…` : text}”`; }

function parsePrice(text) {
  const t = text.trim().replace(',', '.');
  if (!t) return undefined;
  const value = Number(t);
  return Number.isFinite(value) ? Math.round(value * 100) : undefined;
}
function parseDue(text) { return text ? Math.floor(Date.parse(`${text}T00:00:00Z`) / 1000) : undefined; }
function dueInput(seconds) { return seconds === undefined ? '' : new Date(seconds * 1000).toISOString().slice(0, 10); }
function priceInput(cents) { return cents === undefined ? '' : (cents / 100).toFixed(2); }

const itemActions = {
  check(item) {
    const checked = !(pendingByItem.get(item.id)?.checked ?? item.checked);
    outbox.add(listView.listId, [{ op: 'SET_CHECKED', ref: { id: item.id }, checked }], `${checked ? 'Check' : 'Uncheck'} ${quote(item.text)}`);
  },
  remove(item) {
    outbox.add(listView.listId, [{ op: 'DELETE', ref: { id: item.id } }], `Delete ${quote(item.text)}`);
  },
  move(item, index, toIndex) {
    outbox.add(listView.listId, [{ op: 'MOVE', ref: { id: item.id }, toIndex }], `Move ${quote(item.text)} to row ${toIndex + 1}`);
  },
  edit(item) {
    editing = item;
    const form = $('editor');
    form.elements.text.value = pendingByItem.get(item.id)?.text ?? item.text;
    form.elements.due.value = dueInput(item.due);
    form.elements.price.value = priceInput(item.price);
    form.elements.remind.checked = item.remind;
    form.hidden = false;
    form.elements.text.focus();
  },
};

$('editor').addEventListener('submit', (event) => {
  event.preventDefault();
  const form = event.target;
  const item = editing;
  form.hidden = true;
  editing = null;
  if (!item || !listView) return;
  const ref = { id: item.id };
  const ops = [];
  const text = form.elements.text.value;
  if (text && text !== item.text) ops.push({ op: 'SET_TEXT', ref, text });
  const due = parseDue(form.elements.due.value);
  if (due !== item.due) ops.push(due === undefined ? { op: 'SET_DUE', ref, present: false } : { op: 'SET_DUE', ref, present: true, due });
  const price = parsePrice(form.elements.price.value);
  if (price !== item.price) ops.push(price === undefined ? { op: 'SET_PRICE', ref, present: false } : { op: 'SET_PRICE', ref, present: true, price });
  if (form.elements.remind.checked !== item.remind) ops.push({ op: 'SET_REMIND', ref, remind: form.elements.remind.checked });
  if (ops.length) outbox.add(listView.listId, ops, `Edit ${quote(item.text)}`);
});
$('cancel-edit').addEventListener('click', () => { $('editor').hidden = true; editing = null; });

$('add-item').addEventListener('submit', (event) => {
  event.preventDefault();
  if (!listView) return;
  const form = event.target;
  const text = form.elements.text.value.trim();
  if (!text) return;
  const op = { op: 'INSERT', tempRef: 1, where: 2, text, checked: false, remind: false };
  const due = parseDue(form.elements.due.value);
  const price = parsePrice(form.elements.price.value);
  if (due !== undefined) op.due = due;
  if (price !== undefined) op.price = price;
  outbox.add(listView.listId, [op], `Add ${quote(text)}`);
  form.reset();
  form.elements.text.focus();
});

function showList(id) {
  if (listView?.listId !== id) {
    listView?.close();
    $('editor').hidden = true;
    listView = new ListView($('rows'), client, id, {
      pending: (itemId) => pendingByItem.get(itemId),
      actions: itemActions,
      onTotal: () => updateListHead(),
    });
    computePending();
    listView.start().catch((error) => say(`Could not open the list: ${error.serverMessage ?? error.message}`, { error: true }));
  }
  $('overview').hidden = true;
  $('list').hidden = false;
  updateListHead();
}

function showOverview() {
  listView?.close();
  listView = null;
  $('list').hidden = true;
  $('overview').hidden = false;
  document.title = 'Checklists';
}

function route() {
  takeTokenFromHash();
  const id = Number(hashParams().get('list'));
  if (Number.isSafeInteger(id) && id > 0) showList(id); else showOverview();
}

window.addEventListener('hashchange', route);
window.checklists.listView = () => listView;
try { overview.setAll(JSON.parse(localStorage.getItem(LISTS_KEY) ?? '[]')); } catch { /* none kept */ }
renderOutbox();
route();
client.start();
