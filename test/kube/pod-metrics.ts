import type { Clock } from '../../shared/clock.ts';
import { timestamp } from './objects.ts';
import { type Labels, parseLabelSelector } from './selectors.ts';
import { notFound } from './status.ts';

/**
 * `metrics.k8s.io/v1beta1` PodMetrics as metrics-server serves them, with the usage set by the test.
 * Labels are those of the pod when it exists (metrics-server copies them), else those given.
 */
export interface ContainerUsage {
  name: string;
  /** Quantities as metrics-server writes them, e.g. `{ cpu: '12m', memory: '34Mi' }`. */
  usage: { cpu: string; memory: string };
}

interface Sample {
  namespace: string;
  name: string;
  containers: ContainerUsage[];
  labels: Labels;
  at: number;
}

const GROUP_VERSION = 'metrics.k8s.io/v1beta1';

export class PodMetrics {
  readonly #samples = new Map<string, Sample>();
  readonly #clock: Clock;
  readonly #podLabels: (namespace: string, name: string) => Labels | undefined;

  constructor(clock: Clock, podLabels: (namespace: string, name: string) => Labels | undefined) {
    this.#clock = clock;
    this.#podLabels = podLabels;
  }

  set(namespace: string, name: string, containers: ContainerUsage[], labels: Labels = {}): void {
    this.#samples.set(`${namespace}/${name}`, { namespace, name, containers, labels, at: this.#clock.now() });
  }

  delete(namespace: string, name: string): void {
    this.#samples.delete(`${namespace}/${name}`);
  }

  clear(): void {
    this.#samples.clear();
  }

  #item(s: Sample): Record<string, unknown> {
    return {
      metadata: {
        name: s.name,
        namespace: s.namespace,
        creationTimestamp: timestamp(this.#clock.now()),
        labels: this.#podLabels(s.namespace, s.name) ?? s.labels,
      },
      timestamp: timestamp(s.at),
      window: '30s',
      containers: s.containers,
    };
  }

  list(namespace: string | undefined, labelSelector: string | undefined): string {
    const selector = parseLabelSelector(labelSelector);
    const items = [...this.#samples.values()]
      .filter((s) => namespace === undefined || s.namespace === namespace)
      .sort((a, b) => (`${a.namespace}/${a.name}` < `${b.namespace}/${b.name}` ? -1 : 1))
      .map((s) => this.#item(s))
      .filter((i) => selector.matches((i.metadata as { labels: Labels }).labels));
    return JSON.stringify({ kind: 'PodMetricsList', apiVersion: GROUP_VERSION, metadata: {}, items });
  }

  get(namespace: string, name: string): string {
    const s = this.#samples.get(`${namespace}/${name}`);
    if (s === undefined) throw notFound({ group: 'metrics.k8s.io', resource: 'podmetrics' }, name);
    return JSON.stringify({ kind: 'PodMetrics', apiVersion: GROUP_VERSION, ...this.#item(s) });
  }
}
