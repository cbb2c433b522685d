/**
 * Turning what the API server sends (watch lines, list pages) into what the cache needs: per object
 * its type of event, key, resourceVersion and compact form. Pure functions, run on the agent's main
 * thread or in a decoder thread (decoder.ts): parsing is most of the cache's work.
 */
import { splitLines } from '../clusters/lines.ts';
import { compactObject } from './compact.ts';

/** What the decoder needs of a kind. */
export interface KindInfo {
  kind: string;
  group: string;
  apiVersion: string;
}

export interface Decoded {
  /** `ADDED`, `MODIFIED`, `DELETED`, `BOOKMARK`, `ERROR`, another type the server sent, or `ITEM` for a list item. */
  type: string;
  namespace: string;
  name: string;
  resourceVersion: string;
  /** The compact form, for created and changed objects and list items. */
  compact?: string;
  /** A bookmark that ends a WatchList's initial events. */
  initialEventsEnd?: boolean;
  /** For `ERROR`: the Status code and the Status as JSON text. */
  status?: { code: number; body: string };
  /** The line was not JSON. */
  malformed?: boolean;
}

export interface DecodedList {
  resourceVersion?: string;
  continue?: string;
  items: Decoded[];
}

type Meta = { name?: string; namespace?: string; resourceVersion?: string; annotations?: Record<string, string> };

const INITIAL_EVENTS_END = 'k8s.io/initial-events-end';

function item(type: string, object: Record<string, unknown>, info: KindInfo, compact: boolean): Decoded {
  const meta = (object.metadata ?? {}) as Meta;
  const out: Decoded = { type, namespace: meta.namespace ?? '', name: meta.name ?? '', resourceVersion: meta.resourceVersion ?? '' };
  if (compact) out.compact = compactObject(object, info.kind, info.group, info.apiVersion).json;
  return out;
}

export function decodeLine(line: string, info: KindInfo): Decoded {
  let ev: { type?: string; object?: Record<string, unknown> };
  try {
    ev = JSON.parse(line) as typeof ev;
  } catch {
    return { type: '', namespace: '', name: '', resourceVersion: '', malformed: true };
  }
  const type = ev.type ?? '';
  const object = ev.object ?? {};
  switch (type) {
    case 'ADDED':
    case 'MODIFIED':
      return item(type, object, info, true);
    case 'DELETED':
      return item(type, object, info, false);
    case 'BOOKMARK': {
      const d = item(type, object, info, false);
      if ((object.metadata as Meta | undefined)?.annotations?.[INITIAL_EVENTS_END] === 'true') d.initialEventsEnd = true;
      return d;
    }
    case 'ERROR':
      return { type, namespace: '', name: '', resourceVersion: '', status: { code: typeof object.code === 'number' ? object.code : 500, body: JSON.stringify(object) } };
    default:
      return { type, namespace: '', name: '', resourceVersion: '' };
  }
}

/** Every line of a batch (newline-separated watch lines). */
export function decodeBatch(batch: Uint8Array, info: KindInfo): Decoded[] {
  return splitLines(batch).map((l) => decodeLine(l, info));
}

/** A list page: its resourceVersion, continue token and items. Throws on a body that is not JSON. */
export function decodeList(body: string, info: KindInfo): DecodedList {
  const page = JSON.parse(body) as { metadata?: { resourceVersion?: string; continue?: string }; items?: Record<string, unknown>[] };
  return {
    ...(page.metadata?.resourceVersion === undefined ? {} : { resourceVersion: page.metadata.resourceVersion }),
    ...(page.metadata?.continue ? { continue: page.metadata.continue } : {}),
    items: (page.items ?? []).map((o) => item('ITEM', o, info, true)),
  };
}
