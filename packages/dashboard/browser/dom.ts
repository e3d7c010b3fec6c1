/** Children h() accepts: nodes, text, nothing (null, undefined, false), or lists of those. */
export type Child = Node | string | number | null | undefined | false | readonly Child[];

/** Attributes; `on<event>` functions become listeners; true is a bare attribute, false/null/undefined none. */
export type Props = Record<string, string | number | boolean | null | undefined | ((event: Event) => void)>;

function append(parent: Node, children: readonly Child[]): void {
  for (const child of children) {
    if (child === null || child === undefined || child === false) continue;
    if (Array.isArray(child)) append(parent, child);
    else if (child instanceof Node) parent.appendChild(child);
    else parent.appendChild(document.createTextNode(String(child)));
  }
}

function apply(element: Element, props: Props | null | undefined): void {
  for (const [key, value] of Object.entries(props ?? {})) {
    if (typeof value === 'function') element.addEventListener(key.slice(2).toLowerCase(), value);
    else if (value === true) element.setAttribute(key, '');
    else if (value !== false && value !== null && value !== undefined)
      element.setAttribute(key, String(value));
  }
}

/** An HTML element: h('button', { type: 'button', onClick }, 'Cordon'). */
export function h<K extends keyof HTMLElementTagNameMap>(
  tag: K,
  props?: Props | null,
  ...children: Child[]
): HTMLElementTagNameMap[K] {
  const element = document.createElement(tag);
  apply(element, props);
  append(element, children);
  return element;
}

const svgNamespace = 'http://www.w3.org/2000/svg';

/** An SVG element (charts and capacity bars are drawn as inline SVG: no library, no network). */
export function s<K extends keyof SVGElementTagNameMap>(
  tag: K,
  props?: Props | null,
  ...children: Child[]
): SVGElementTagNameMap[K] {
  const element = document.createElementNS(svgNamespace, tag);
  apply(element, props);
  append(element, children);
  return element;
}

/**
 * Replaces `parent`'s content, keeping keyboard focus where it was: the element focused before
 * (found again by its `data-key`) is focused again, with its caret, so live updates never throw
 * a keyboard user back to the top of the page.
 */
export function replaceContent(parent: Element, ...children: Child[]): void {
  const active = document.activeElement;
  const key = active instanceof HTMLElement && parent.contains(active) ? active.dataset.key : undefined;
  const caret =
    active instanceof HTMLInputElement && key
      ? { start: active.selectionStart, end: active.selectionEnd }
      : undefined;
  const fragment = document.createDocumentFragment();
  append(fragment, children);
  parent.replaceChildren(fragment);
  if (!key) return;
  const again = parent.querySelector<HTMLElement>(`[data-key="${CSS.escape(key)}"]`);
  if (!again) return;
  again.focus({ preventScroll: true });
  if (again instanceof HTMLInputElement && caret && caret.start !== null && again.type !== 'number') {
    try {
      again.setSelectionRange(caret.start, caret.end);
    } catch {
      // inputs without a caret (select-like types) have nothing to restore
    }
  }
}

/**
 * A table in a region that scrolls sideways on a narrow screen and takes keyboard focus (so it
 * can be scrolled without a mouse): one heading per column, then the rows.
 */
export function scrollableTable(
  label: string,
  headings: readonly string[],
  rows: readonly Child[],
  tableProps: Props | null = null,
): HTMLDivElement {
  return h(
    'div',
    { class: 'table-scroll', tabindex: '0', role: 'region', 'aria-label': label },
    h(
      'table',
      tableProps,
      h(
        'thead',
        null,
        h(
          'tr',
          null,
          headings.map((t) => h('th', { scope: 'col' }, t)),
        ),
      ),
      h('tbody', null, rows),
    ),
  );
}
