/**
 * A few DOM helpers instead of a framework: h() builds elements, the rest is plain DOM.
 * Attributes that are false, null or undefined are left out; on* functions become listeners.
 */
export type Child = Node | string | number | null | undefined | false | Child[];
export type Attrs = Record<string, unknown>;

const PROPERTIES = new Set(['value', 'checked', 'disabled', 'hidden', 'selected', 'multiple', 'readOnly', 'indeterminate', 'open']);

export function h<K extends keyof HTMLElementTagNameMap>(tag: K, attrs?: Attrs | null, ...children: Child[]): HTMLElementTagNameMap[K] {
  const element = document.createElement(tag);
  if (attrs) setAttrs(element, attrs);
  append(element, children);
  return element;
}

export function setAttrs(element: HTMLElement, attrs: Attrs): void {
  for (const [key, value] of Object.entries(attrs)) {
    if (value === undefined || value === null || value === false) continue;
    if (key.startsWith('on') && typeof value === 'function') {
      element.addEventListener(key.slice(2).toLowerCase(), value as EventListener);
    } else if (key === 'class') {
      element.className = String(value);
    } else if (key === 'style' && typeof value === 'object') {
      Object.assign(element.style, value);
    } else if (PROPERTIES.has(key)) {
      (element as unknown as Record<string, unknown>)[key] = value;
    } else {
      element.setAttribute(key, value === true ? '' : String(value));
    }
  }
}

export function append(parent: Node, children: Child[]): void {
  for (const child of children) {
    if (child === null || child === undefined || child === false) continue;
    if (Array.isArray(child)) append(parent, child);
    else parent.appendChild(typeof child === 'object' ? child : document.createTextNode(String(child)));
  }
}

/** Replaces every child of `parent`. */
export function replace(parent: Node, ...children: Child[]): void {
  while (parent.firstChild) parent.removeChild(parent.firstChild);
  append(parent, children);
}

let counter = 0;
/** A unique id for label/for and aria-describedby pairs. */
export const uid = (prefix = 'id') => `${prefix}-${++counter}`;

const dateFormat = new Intl.DateTimeFormat(undefined, { dateStyle: 'medium', timeStyle: 'short' });

/** A <time> element for an ISO timestamp, or the fallback text when there is none. */
export function time(iso: string | null | undefined, fallback = '—'): Child {
  if (!iso) return fallback;
  const date = new Date(iso);
  if (Number.isNaN(date.getTime())) return iso;
  return h('time', { datetime: iso }, dateFormat.format(date));
}

export function bytes(n: number | null | undefined): string {
  if (n === null || n === undefined) return '—';
  if (n < 1024) return `${n} B`;
  const units = ['KB', 'MB', 'GB', 'TB'];
  let value = n / 1024;
  let unit = 0;
  while (value >= 1024 && unit < units.length - 1) {
    value /= 1024;
    unit++;
  }
  return `${value.toFixed(value < 10 ? 1 : 0)} ${units[unit]}`;
}

export const count = (n: number) => n.toLocaleString();

/** Moves focus to an element that is not normally focusable (headings after navigation). */
export function focusQuietly(element: HTMLElement | null | undefined): void {
  if (!element) return;
  if (!element.hasAttribute('tabindex')) element.setAttribute('tabindex', '-1');
  element.focus({ preventScroll: false });
}

/** A section named by its own h2 heading (aria-labelledby `${name}-title`), then its content. */
export function titledSection(className: string, name: string, title: Child, ...children: Child[]): HTMLElement {
  const headingId = `${name}-title`;
  return h('section', { class: className, 'aria-labelledby': headingId }, h('h2', { id: headingId }, title), ...children);
}
