// The "All lists" screen: every list with its icon and the subtitle the app
// shows ("N Remaining", "All Done!", "(No Items)"); add, rename, change icon,
// delete.

/** The icon names the apps ship (any short string is allowed too). */
export const ICONS = ['No Icon', 'Appointments', 'Birthdays', 'Chores', 'Drinks', 'Folder', 'Groceries', 'Inbox', 'Photos', 'Trips'];
const GLYPHS = {
  'No Icon': '', Appointments: '📅', Birthdays: '🎂', Chores: '🧹', Drinks: '🍹', Folder: '📁',
  Groceries: '🛒', Inbox: '📥', Photos: '🖼️', Trips: '✈️',
};

/** The glyph the page shows for an icon name. */
export function glyph(icon) {
  return GLYPHS[icon] ?? '🏷️';
}

/** The app's subtitle of a list summary. */
export function subtitle(summary) {
  if (summary.itemCount === 0) return '(No Items)';
  if (summary.uncheckedCount === 0) return 'All Done!';
  return `${summary.uncheckedCount} Remaining`;
}

/** A <select> of the icon names, `selected` chosen (added if it is not one of the app's). */
export function iconSelect(selected = 'No Icon') {
  const select = document.createElement('select');
  select.dataset.role = 'icon';
  const names = ICONS.includes(selected) ? ICONS : [...ICONS, selected];
  for (const name of names) {
    const option = document.createElement('option');
    option.value = name;
    option.textContent = `${glyph(name)} ${name}`.trim();
    option.selected = name === selected;
    select.append(option);
  }
  return select;
}

export class Overview {
  /**
   * `element`: the `<ul data-role="lists">`. `actions`: `rename(id, name)`,
   * `setIcon(id, icon)`, `remove(id)` (each returns a promise).
   */
  constructor(element, actions) {
    this.element = element;
    this.actions = actions;
    this.lists = new Map();
  }

  /** Replaces the lists shown. */
  setAll(summaries) {
    this.lists = new Map(summaries.map((s) => [s.id, s]));
    this.render();
  }

  render() {
    const items = [...this.lists.values()].sort((a, b) => a.id - b.id).map((s) => this.#row(s));
    this.element.replaceChildren(...items);
  }

  #row(s) {
    const li = document.createElement('li');
    li.dataset.listId = String(s.id);
    li.className = 'list';
    const icon = document.createElement('span');
    icon.className = 'icon';
    icon.dataset.icon = s.icon;
    icon.title = s.icon;
    icon.textContent = glyph(s.icon);
    const link = document.createElement('a');
    link.href = `#list=${s.id}`;
    link.className = 'name';
    link.dataset.role = 'name';
    link.textContent = s.name;
    const sub = document.createElement('span');
    sub.className = 'subtitle';
    sub.dataset.role = 'subtitle';
    sub.textContent = subtitle(s);
    const tools = document.createElement('span');
    tools.className = 'tools';
    const rename = document.createElement('button');
    rename.type = 'button';
    rename.dataset.role = 'rename';
    rename.textContent = 'Rename';
    rename.addEventListener('click', () => this.#rename(li, s));
    const select = iconSelect(s.icon);
    select.addEventListener('change', () => this.actions.setIcon(s.id, select.value));
    const remove = document.createElement('button');
    remove.type = 'button';
    remove.dataset.role = 'delete';
    remove.textContent = 'Delete';
    remove.addEventListener('click', () => {
      if (remove.dataset.confirm === 'true') { this.actions.remove(s.id); return; }
      remove.dataset.confirm = 'true';
      remove.textContent = 'Delete?';
    });
    tools.append(rename, select, remove);
    const text = document.createElement('span');
    text.className = 'texts';
    text.append(link, sub);
    li.append(icon, text, tools);
    return li;
  }

  #rename(li, s) {
    const form = document.createElement('form');
    form.className = 'rename';
    const input = document.createElement('input');
    input.name = 'name';
    input.value = s.name;
    input.required = true;
    input.dataset.role = 'rename-input';
    form.append(input);
    form.addEventListener('submit', (event) => {
      event.preventDefault();
      const name = input.value.trim();
      if (name && name !== s.name) this.actions.rename(s.id, name);
      else this.render();
    });
    input.addEventListener('keydown', (event) => { if (event.key === 'Escape') this.render(); });
    li.querySelector('.texts').replaceChildren(form);
    input.focus();
    input.select();
  }
}
