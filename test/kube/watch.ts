import type { ServerResponse } from 'node:http';
import type { Clock } from '../../shared/clock.ts';
import { parseResourceVersion, throwListOptionsErrors } from './list.ts';
import { apiVersionOf, type ResourceType, servedAs } from './resource-types.ts';
import { type Labels, parseFieldSelector, parseLabelSelector } from './selectors.ts';
import { expired, type FieldError, type Status, tooLargeResourceVersion } from './status.ts';
import type { Store, StoreEvent, Subscriber } from './store.ts';
import type { WatchCache } from './watch-cache.ts';

/**
 * Watch streams: newline-delimited `{"type":..,"object":..}` events, resumable from a
 * resourceVersion, with BOOKMARK events, WatchList initial events ending in the
 * `k8s.io/initial-events-end` bookmark, server-side `timeoutSeconds`, and ERROR events carrying a
 * Status (410 Expired for a compacted resourceVersion), as kube-apiserver's watch cache serves them.
 */
export interface WatchQuery {
  rt: ResourceType;
  version: string;
  /** `undefined` watches every namespace. */
  namespace: string | undefined;
  labelSelector?: string;
  fieldSelector?: string;
  resourceVersion?: string;
  resourceVersionMatch?: string;
  /** `undefined` when the parameter is absent. */
  sendInitialEvents?: boolean;
  allowWatchBookmarks: boolean;
  timeoutSeconds?: number;
}

export interface WatchSettings {
  /** false answers like Kubernetes 1.20, which knows no WatchList: `resourceVersionMatch` is refused for watch. */
  watchList: boolean;
  bookmarkIntervalMs: number;
  defaultTimeoutSeconds: number;
  tooLargeResourceVersionWaitMs: number;
  /** A watcher that lets more than this pile up unread is closed, like a real server drops slow watchers. */
  maxBufferedBytes: number;
  /** Drives watch timeouts and the bookmark interval. */
  clock: Clock;
  /** Bookmarks carry the version the watch cache of their resource stands at. */
  cache: WatchCache;
}

/** Which watches a fault applies to. */
export interface WatchFilter {
  group?: string;
  resource?: string;
  namespace?: string;
}

type Selectors = (labels: Labels, fields: Readonly<Record<string, string>>) => boolean;

/** A validated watch request: its selectors, where it starts, and whether it begins with the current state. */
interface Prepared {
  matches: Selectors | undefined;
  /** `undefined`: from the current state. */
  fromRv: number | undefined;
  /** Send the current objects as ADDED first. */
  initial: boolean;
  /** A WatchList request: the initial events end with the `k8s.io/initial-events-end` bookmark. */
  initialEventsEnd: boolean;
}

/** A turn's lines go out early once they reach this size, so a long turn does not hold them all. */
const FLUSH_CHARS = 1 << 20;

const EVENT_HEAD: Record<StoreEvent['type'], string> = {
  ADDED: '{"type":"ADDED","object":',
  MODIFIED: '{"type":"MODIFIED","object":',
  DELETED: '{"type":"DELETED","object":',
};
const EVENT_TAIL = '}\n';

export class WatchStream implements Subscriber {
  readonly rt: ResourceType;
  readonly namespace: string | null;
  readonly #version: string;
  readonly #res: ServerResponse;
  readonly #matches: Selectors | undefined;
  readonly #bookmarks: boolean;
  readonly #settings: WatchSettings;
  readonly #onClose: () => void;
  #lastRv = 0;
  /** Events at or below this version are not sent (a watch from a version the server has not reached). */
  #fromRv = 0;
  #silent = false;
  #closed = false;
  /**
   * Lines written in this turn of the event loop, sent as one chunk at its end: a burst of events
   * then costs one chunk and one TLS write per turn instead of one per line.
   */
  #pending: string[] = [];
  #pendingChars = 0;
  #flushQueued = false;
  /**
   * While catching up (initial events, backlog replay) lines wait here and go out as the client reads
   * them, so a large catch-up is paced by the client instead of tripping the slow-watcher limit.
   * Entries are lines, or stored objects to send as ADDED (built when sent, to keep memory flat).
   */
  #queue: (string | { added: string })[] | undefined;
  #queueHead = 0;
  readonly #timer = new AbortController();
  #unsubscribe: () => void = () => {};

  constructor(q: WatchQuery, res: ServerResponse, matches: Selectors | undefined, settings: WatchSettings, onClose: () => void) {
    this.rt = q.rt;
    this.namespace = q.namespace ?? null;
    this.#version = q.version;
    this.#res = res;
    this.#matches = matches;
    this.#bookmarks = q.allowWatchBookmarks;
    this.#settings = settings;
    this.#onClose = onClose;
    res.on('close', () => this.#cleanup());
  }

  get closed(): boolean {
    return this.#closed;
  }

  /** Bytes written to this watch that its client has not read yet. */
  get backlog(): number {
    return this.#closed ? 0 : this.#res.writableLength + this.#pendingChars;
  }

  start(store: Store, fromRv: number, timeoutSeconds: number): void {
    this.#lastRv = fromRv;
    this.#fromRv = fromRv;
    this.#unsubscribe = store.subscribe(this.rt, this);
    this.#settings.clock.sleep(timeoutSeconds * 1000, this.#timer.signal).then(
      () => {
        this.bookmark(this.#settings.cache.rv(this.rt));
        this.end();
      },
      () => {},
    );
  }

  deliver(event: StoreEvent): void {
    if (this.#silent || this.#closed || event.rv <= this.#fromRv) return;
    let type = event.type;
    if (this.#matches !== undefined) {
      const now = this.#matches(event.labels, event.fields);
      const before = event.type === 'MODIFIED' && event.prevLabels !== undefined && event.prevFields !== undefined
        ? this.#matches(event.prevLabels, event.prevFields)
        : now;
      if (!now && !before) return;
      if (event.type === 'MODIFIED' && now !== before) type = now ? 'ADDED' : 'DELETED';
    }
    this.#lastRv = event.rv;
    if (type === event.type && this.#versionIsStored()) {
      // The stored JSON goes out as it is, between a head and a tail shared by every event: no
      // line of its own is built (and kept with the history) per event.
      this.#write(EVENT_HEAD[type], event.json, EVENT_TAIL);
    } else {
      this.#write(`{"type":"${type}","object":${servedAs(this.rt, this.#version, event.json)}}\n`);
    }
  }

  #versionIsStored(): boolean {
    return this.rt.versions[0] === this.#version;
  }

  /** Sends a BOOKMARK at `rv` when the watcher asked for them and `rv` is news to it. */
  bookmark(rv: number, initialEventsEnd = false): void {
    if (!this.#bookmarks || this.#silent || this.#closed) return;
    if (rv <= this.#lastRv && !initialEventsEnd) return;
    this.#lastRv = Math.max(this.#lastRv, rv);
    const annotations = initialEventsEnd ? ',"annotations":{"k8s.io/initial-events-end":"true"}' : '';
    const object = `{"kind":"${this.rt.kind}","apiVersion":"${apiVersionOf(this.rt.group, this.#version)}","metadata":{"resourceVersion":"${rv}","creationTimestamp":null${annotations}}}`;
    this.#write(`{"type":"BOOKMARK","object":${object}}\n`);
  }

  sendInitial(json: string): void {
    if (this.#queue !== undefined) this.#queue.push({ added: json });
    else this.#write(this.#addedLine(json));
  }

  #addedLine(json: string): string {
    return `{"type":"ADDED","object":${servedAs(this.rt, this.#version, json)}}\n`;
  }

  /** From here until `endCatchUp`, everything sent is queued and paced by the client. */
  beginCatchUp(): void {
    this.#queue = [];
    this.#queueHead = 0;
  }

  endCatchUp(): void {
    void this.#drainQueue();
  }

  async #drainQueue(): Promise<void> {
    const queue = this.#queue;
    if (queue === undefined) return;
    while (!this.#closed && this.#queueHead < queue.length) {
      const item = queue[this.#queueHead] as string | { added: string };
      queue[this.#queueHead++] = '';
      const line = typeof item === 'string' ? item : this.#addedLine(item.added);
      if (!this.#res.write(line)) {
        await new Promise<void>((resolve) => {
          const done = (): void => {
            this.#res.off('drain', done);
            this.#res.off('close', done);
            resolve();
          };
          this.#res.on('drain', done);
          this.#res.on('close', done);
        });
      }
    }
    this.#queue = undefined;
  }

  error(status: Status): void {
    this.#write(`{"type":"ERROR","object":${JSON.stringify(status)}}\n`);
    this.end();
  }

  /** Sends the line `head + body + tail` (body and tail optional). */
  #write(head: string, body = '', tail = ''): void {
    if (this.#closed) return;
    if (this.#queue !== undefined) {
      this.#queue.push(head + body + tail);
      return;
    }
    this.#pending.push(head);
    if (body !== '') this.#pending.push(body);
    if (tail !== '') this.#pending.push(tail);
    this.#pendingChars += head.length + body.length + tail.length;
    if (this.#pendingChars >= FLUSH_CHARS) this.#flush();
    else if (!this.#flushQueued) {
      this.#flushQueued = true;
      process.nextTick(() => this.#flush());
    }
  }

  #flush(): void {
    this.#flushQueued = false;
    if (this.#pending.length === 0 || this.#closed) return;
    const chunk = this.#pending.length === 1 ? (this.#pending[0] as string) : this.#pending.join('');
    this.#pending = [];
    this.#pendingChars = 0;
    this.#res.write(chunk);
    if (this.#res.writableLength > this.#settings.maxBufferedBytes) this.end();
  }

  /** Stops sending anything, bookmarks and timeout included, while keeping the connection open. */
  silence(): void {
    this.#silent = true;
    this.#timer.abort();
  }

  /** Ends the stream the way the server ends a watch: a clean end of the chunked response. */
  end(): void {
    if (this.#closed) return;
    this.#flush();
    if (this.#closed) return;
    this.#res.end();
    this.#cleanup();
  }

  /** Cuts the connection without ending the response. */
  destroy(): void {
    this.#res.socket?.destroy();
    this.#res.destroy();
    this.#cleanup();
  }

  #cleanup(): void {
    if (this.#closed) return;
    this.#closed = true;
    this.#timer.abort();
    this.#unsubscribe();
    this.#onClose();
  }

  matchesFilter(f: WatchFilter): boolean {
    return (f.group === undefined || f.group === this.rt.group)
      && (f.resource === undefined || f.resource === this.rt.plural)
      && (f.namespace === undefined || f.namespace === this.namespace);
  }
}

/**
 * The watch ListOptions checks: servers with WatchList accept `resourceVersionMatch=NotOlderThan`
 * only together with `sendInitialEvents`; 1.20 knows neither and forbids `resourceVersionMatch`
 * on any watch (ignoring `sendInitialEvents`). Every error is reported at once, as kube-apiserver does.
 */
function validateWatchOptions(q: WatchQuery, watchList: boolean): void {
  const match = q.resourceVersionMatch ?? '';
  const errors: FieldError[] = [];
  const forbid = (detail: string): void => {
    errors.push({ type: 'FieldValueForbidden', field: 'resourceVersionMatch', detail });
  };
  if (!watchList) {
    if (match !== '') {
      forbid('resourceVersionMatch is forbidden for watch');
      if ((q.resourceVersion ?? '') === '') forbid('resourceVersionMatch is forbidden unless resourceVersion is provided');
      if (match !== 'Exact' && match !== 'NotOlderThan') {
        errors.push({ type: 'FieldValueNotSupported', field: 'resourceVersionMatch', detail: `"${match}": supported values: "Exact", "NotOlderThan", ""` });
      }
      if (match === 'Exact' && q.resourceVersion === '0') forbid('resourceVersionMatch "exact" is forbidden for resourceVersion "0"');
    }
    throwListOptionsErrors(errors);
    return;
  }
  if (q.sendInitialEvents !== undefined && match !== 'NotOlderThan') forbid('sendInitialEvents requires setting resourceVersionMatch to NotOlderThan');
  if (match !== '') {
    if (q.sendInitialEvents === undefined) forbid('resourceVersionMatch is forbidden for watch unless sendInitialEvents is provided');
    if (match !== 'NotOlderThan') errors.push({ type: 'FieldValueNotSupported', field: 'resourceVersionMatch', detail: `"${match}": supported values: "NotOlderThan"` });
  }
  throwListOptionsErrors(errors);
}

/** Every open watch of the server, for bookmarks on a timer and for the fault knobs. */
export class WatchHub {
  readonly #store: Store;
  readonly #settings: WatchSettings;
  readonly #streams = new Set<WatchStream>();
  readonly #stop = new AbortController();

  constructor(store: Store, settings: WatchSettings) {
    this.#store = store;
    this.#settings = settings;
    if (settings.bookmarkIntervalMs > 0) void this.#bookmarkLoop(settings.bookmarkIntervalMs);
  }

  async #bookmarkLoop(ms: number): Promise<void> {
    for (;;) {
      try {
        await this.#settings.clock.sleep(ms, this.#stop.signal);
      } catch {
        return;
      }
      this.sendBookmarks();
    }
  }

  get size(): number {
    return this.#streams.size;
  }

  /** The largest backlog of an open watch: how far the slowest watcher is behind, in bytes. */
  maxBacklog(): number {
    let most = 0;
    for (const s of this.#streams) most = Math.max(most, s.backlog);
    return most;
  }

  sendBookmarks(): void {
    for (const s of this.#streams) s.bookmark(this.#settings.cache.rv(s.rt));
  }

  /**
   * Validates the watch options and selectors and waits for a too-new resourceVersion; throws a
   * StatusError before anything is written, so the caller answers it as a plain HTTP error.
   */
  async prepare(q: WatchQuery): Promise<Prepared> {
    validateWatchOptions(q, this.#settings.watchList);
    const labels = parseLabelSelector(q.labelSelector);
    const fields = parseFieldSelector(q.fieldSelector, q.rt.selectableFields);
    const matches = labels.empty && fields.empty ? undefined : (l: Labels, f: Readonly<Record<string, string>>) => labels.matches(l) && fields.matches(f);
    const rvText = q.resourceVersion ?? '';
    const rv = rvText === '' ? 0 : parseResourceVersion(rvText);
    const watchList = this.#settings.watchList && q.sendInitialEvents !== undefined;
    if (watchList) {
      if (rv > this.#store.resourceVersion) await this.#store.waitForRv(rv, this.#settings.tooLargeResourceVersionWaitMs);
      if (rv > this.#store.resourceVersion) throw tooLargeResourceVersion(rv, this.#store.resourceVersion);
      const initial = q.sendInitialEvents === true;
      return { matches, fromRv: initial || rv === 0 ? undefined : rv, initial, initialEventsEnd: initial };
    }
    // Legacy semantics: no resourceVersion (or "0") means "send the current state as ADDED, then changes".
    return { matches, fromRv: rv === 0 ? undefined : rv, initial: rv === 0, initialEventsEnd: false };
  }

  /** Starts streaming; the response status and headers are written here. */
  open(q: WatchQuery, res: ServerResponse, prepared: Prepared, watchListBookmark: boolean): WatchStream {
    res.writeHead(200, { 'Content-Type': 'application/json', 'Cache-Control': 'no-cache, private', 'Transfer-Encoding': 'chunked' });
    res.flushHeaders();
    const stream = new WatchStream(q, res, prepared.matches, this.#settings, () => this.#streams.delete(stream));
    this.#streams.add(stream);
    const store = this.#store;
    const timeoutSeconds = q.timeoutSeconds !== undefined && q.timeoutSeconds > 0 ? q.timeoutSeconds : this.#settings.defaultTimeoutSeconds;
    const current = store.resourceVersion;
    if (prepared.fromRv === undefined) {
      stream.beginCatchUp();
      if (prepared.initial) {
        const matches = prepared.matches;
        const filter = matches === undefined ? undefined : (r: { labels: Labels; fields: Readonly<Record<string, string>> }) => matches(r.labels, r.fields);
        for (const rev of store.page(q.rt, { namespace: q.namespace, atRv: current, filter }).items) stream.sendInitial(rev.json as string);
      }
      stream.start(store, current, timeoutSeconds);
      // Only a WatchList request gets the initial-events-end bookmark; a plain watch from "" or "0" never does.
      if (watchListBookmark && prepared.initialEventsEnd) stream.bookmark(current, true);
      stream.endCatchUp();
      return stream;
    }
    const backlog = store.eventsAfter(q.rt, prepared.fromRv);
    if (backlog === undefined) {
      stream.error(expired(`too old resource version: ${prepared.fromRv} (${store.compactedFor(q.rt)})`).status);
      return stream;
    }
    stream.beginCatchUp();
    stream.start(store, prepared.fromRv, timeoutSeconds);
    for (const ev of backlog) {
      if (q.namespace === undefined || !q.rt.namespaced || ev.namespace === q.namespace) stream.deliver(ev);
    }
    stream.endCatchUp();
    return stream;
  }

  /** Ends (or cuts, with `destroy`) every watch the filter matches; returns how many. */
  drop(filter: WatchFilter = {}, mode: 'end' | 'destroy' = 'end'): number {
    let n = 0;
    for (const s of [...this.#streams]) {
      if (!s.matchesFilter(filter)) continue;
      if (mode === 'end') s.end();
      else s.destroy();
      n++;
    }
    return n;
  }

  /** Makes every matching open watch go quiet: no events, no bookmarks, no timeout, connection kept. */
  silence(filter: WatchFilter = {}): number {
    let n = 0;
    for (const s of this.#streams) {
      if (!s.matchesFilter(filter)) continue;
      s.silence();
      n++;
    }
    return n;
  }

  close(): void {
    this.#stop.abort();
    this.drop({}, 'end');
  }
}
