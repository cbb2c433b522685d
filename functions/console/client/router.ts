/**
 * The console's client-side router: paths under /ui, moved between with the History API. The server
 * answers every /ui path with the same shell, so a deep link or a reload lands on the same page.
 */
export const UI_BASE = '/ui';

/** What a page gets: its path parameters, its query, and a way to leave work behind (pollers, requests). */
export interface PageVisit {
  params: Record<string, string>;
  query: URLSearchParams;
  signal: AbortSignal;
  onLeave(cleanup: () => void): void;
}

export interface RouteDefinition {
  pattern: RegExp;
  names: string[];
  render(main: HTMLElement, visit: PageVisit): Promise<void> | void;
}

/** `/ui/accounts/:name` → a route whose `name` is the decoded segment. */
export function route(path: string, render: RouteDefinition['render']): RouteDefinition {
  const names: string[] = [];
  const source = path.replace(/:([a-zA-Z]+)/g, (_m, name: string) => {
    names.push(name);
    return '([^/]+)';
  });
  return { pattern: new RegExp(`^${UI_BASE}${source}/?$`), names, render };
}

export class ConsoleRouter {
  readonly #routes: RouteDefinition[];
  readonly #main: HTMLElement;
  readonly #notFound: RouteDefinition['render'];
  #leave: (() => void)[] = [];
  #controller = new AbortController();

  readonly #onPopState = () => void this.show();
  readonly #onClick = (event: MouseEvent) => {
    const link = (event.target as Element | null)?.closest?.('a[data-nav]');
    if (!(link instanceof HTMLAnchorElement) || event.defaultPrevented || event.button !== 0) return;
    if (event.metaKey || event.ctrlKey || event.shiftKey || event.altKey) return;
    event.preventDefault();
    this.go(link.getAttribute('href') ?? `${UI_BASE}/`);
  };

  constructor(main: HTMLElement, routes: RouteDefinition[], notFound: RouteDefinition['render']) {
    this.#routes = routes;
    this.#main = main;
    this.#notFound = notFound;
    window.addEventListener('popstate', this.#onPopState);
    document.addEventListener('click', this.#onClick);
  }

  /** Stops following links and history, and leaves the current page (on sign-out). */
  dispose(): void {
    window.removeEventListener('popstate', this.#onPopState);
    document.removeEventListener('click', this.#onClick);
    for (const cleanup of this.#leave.splice(0)) cleanup();
    this.#controller.abort();
  }

  /** Shows `path` as a new history entry (or in place of the current one). */
  go(path: string, options: { replace?: boolean } = {}): void {
    if (options.replace) history.replaceState(null, '', path);
    else history.pushState(null, '', path);
    void this.show();
  }

  /** Renders the page of the current location, and moves focus to its heading. */
  async show(): Promise<void> {
    for (const cleanup of this.#leave.splice(0)) cleanup();
    this.#controller.abort();
    this.#controller = new AbortController();
    const path = location.pathname;
    const visit: PageVisit = {
      params: {},
      query: new URLSearchParams(location.search),
      signal: this.#controller.signal,
      onLeave: (cleanup) => this.#leave.push(cleanup),
    };
    let render = this.#notFound;
    for (const candidate of this.#routes) {
      const match = candidate.pattern.exec(path);
      if (match === null) continue;
      candidate.names.forEach((name, i) => (visit.params[name] = decodeURIComponent(match[i + 1] ?? '')));
      render = candidate.render;
      break;
    }
    this.#main.replaceChildren();
    for (const link of document.querySelectorAll('nav a[data-nav]')) {
      const href = link.getAttribute('href') ?? '';
      const current = href === `${UI_BASE}/` ? path === `${UI_BASE}/` || path === UI_BASE || path.startsWith(`${UI_BASE}/accounts`) : path.startsWith(href);
      if (current) link.setAttribute('aria-current', 'page');
      else link.removeAttribute('aria-current');
    }
    await render(this.#main, visit);
    const heading = this.#main.querySelector('h1');
    if (heading !== null) {
      heading.setAttribute('tabindex', '-1');
      heading.focus();
      document.title = `${heading.textContent ?? ''} · vendor-agent console`;
    }
  }
}
