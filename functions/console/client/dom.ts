/**
 * Element building for the console. Text always goes in as text nodes, never as HTML, so nothing an
 * API answer holds (names, messages, cluster objects) can become markup or script.
 */
export type Child = Node | string | number | null | undefined | false;
export type Attributes = Record<string, string | number | boolean | undefined | ((event: Event) => void)>;

export function el<K extends keyof HTMLElementTagNameMap>(tag: K, attributes: Attributes = {}, ...children: Child[]): HTMLElementTagNameMap[K] {
  const node = document.createElement(tag);
  for (const [name, value] of Object.entries(attributes)) {
    if (value === undefined || value === false) continue;
    if (typeof value === 'function') node.addEventListener(name.replace(/^on/, ''), value);
    else if (value === true) node.setAttribute(name, '');
    else node.setAttribute(name, String(value));
  }
  appendChildren(node, children);
  return node;
}

export function appendChildren(node: Node, children: Child[]): void {
  for (const child of children) {
    if (child === null || child === undefined || child === false) continue;
    node.appendChild(typeof child === 'string' || typeof child === 'number' ? document.createTextNode(String(child)) : child);
  }
}

/** Replaces everything inside `node` with `children`. */
export function replaceChildren(node: Node, ...children: Child[]): void {
  while (node.firstChild) node.removeChild(node.firstChild);
  appendChildren(node, children);
}

/** A table with a caption and column headers, for screen readers as much as for eyes. */
export function dataTable(caption: string, headers: string[], rows: Child[][], options: { captionHidden?: boolean } = {}): HTMLTableElement {
  return el(
    'table',
    {},
    el('caption', { class: options.captionHidden ? 'visually-hidden' : undefined }, caption),
    el('thead', {}, el('tr', {}, ...headers.map((h) => el('th', { scope: 'col' }, h)))),
    el('tbody', {}, ...rows.map((cells) => el('tr', {}, ...cells.map((cell) => el('td', {}, cell))))),
  );
}

/** A link inside the console, followed by the router without reloading the page; a refresh keeps its focus. */
export function navLink(href: string, ...children: Child[]): HTMLAnchorElement {
  return el('a', { href, 'data-nav': true, 'data-focus-key': `link:${href}` }, ...children);
}

/** A labelled form field: the label, the control and a place for its error (`data-error-for`). */
export function field(label: string, control: HTMLInputElement | HTMLSelectElement | HTMLTextAreaElement, hint?: string): HTMLDivElement {
  const id = control.id || `f-${Math.random().toString(36).slice(2, 10)}`;
  control.id = id;
  const errorId = `${id}-error`;
  const hintId = hint === undefined ? undefined : `${id}-hint`;
  control.setAttribute('aria-describedby', [hintId, errorId].filter(Boolean).join(' '));
  return el(
    'div',
    { class: 'field' },
    el('label', { for: id }, label),
    control,
    hint === undefined ? null : el('p', { class: 'hint', id: hintId }, hint),
    el('p', { class: 'field-error', id: errorId, 'data-error-for': control.name, hidden: true }),
  );
}
