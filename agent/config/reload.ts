import { watch, type FSWatcher } from 'node:fs';
import { basename, dirname } from 'node:path';
import type { Clock } from '../../shared/clock.ts';
import type { Logger } from '../../shared/log.ts';
import type { AgentMetrics } from '../observability/metrics.ts';
import { diffConfig, isEmptyChange, type ConfigChange } from './diff.ts';
import { loadConfigFile } from './load.ts';
import { formatProblem } from '../../shared/config-report/report.ts';
import type { AgentConfig } from './schema.ts';

export type ReloadTrigger = 'SIGHUP' | 'file change' | 'request';
export type ReloadResult = 'applied' | 'unchanged' | 'rejected';

/** Where SIGHUP comes from: the process, or an emitter in tests. */
export interface SignalSource {
  on(signal: 'SIGHUP', listener: () => void): unknown;
  off(signal: 'SIGHUP', listener: () => void): unknown;
}

export interface ConfigReloaderOptions {
  path: string;
  current: AgentConfig;
  logger: Logger;
  clock: Clock;
  /** Receives each applied change; accounts not in it keep running. */
  onChange: (change: ConfigChange) => void | Promise<void>;
  metrics?: Pick<AgentMetrics, 'configReloads'>;
  signals?: SignalSource;
  /** Watch the file (and its folder, where a ConfigMap swaps a symlink) for changes. Default true. */
  watchFile?: boolean;
  /** Quiet time after a file event before reading, so a file being written is read once, whole. */
  debounceMs?: number;
}

/**
 * Reloads `vendor-agent.yml` on SIGHUP or when the file changes. A valid new file yields a diff for
 * the listener; an invalid one is logged with every problem and the running configuration stays.
 * Reloads run one at a time; triggers during a reload cause one more reload after it.
 */
export class ConfigReloader {
  #current: AgentConfig;
  readonly #options: ConfigReloaderOptions;
  #running: Promise<ReloadResult> | undefined;
  #again: ReloadTrigger | undefined;
  #watcher: FSWatcher | undefined;
  #debounce: AbortController | undefined;
  readonly #onSighup = () => void this.reload('SIGHUP');

  constructor(options: ConfigReloaderOptions) {
    this.#options = options;
    this.#current = options.current;
  }

  get current(): AgentConfig {
    return this.#current;
  }

  start(): void {
    (this.#options.signals ?? process).on('SIGHUP', this.#onSighup);
    if (this.#options.watchFile === false) return;
    const file = basename(this.#options.path);
    this.#watcher = watch(dirname(this.#options.path), (_event, name) => {
      // A ConfigMap volume replaces the `..data` symlink rather than writing the file itself.
      if (name === null || name === file || name === '..data') this.#fileChanged();
    });
    this.#watcher.on('error', (e) => this.#options.logger.warn({ err: e.message }, 'cannot watch the configuration file; SIGHUP still reloads it'));
  }

  stop(): void {
    (this.#options.signals ?? process).off('SIGHUP', this.#onSighup);
    this.#watcher?.close();
    this.#watcher = undefined;
    this.#debounce?.abort();
  }

  /** Reloads now (or once more after the reload in progress). */
  reload(trigger: ReloadTrigger): Promise<ReloadResult> {
    if (this.#running !== undefined) {
      this.#again = trigger;
      return this.#running.then(() => this.#running ?? 'unchanged');
    }
    this.#running = this.#reloadOnce(trigger).finally(() => {
      this.#running = undefined;
      const again = this.#again;
      this.#again = undefined;
      if (again !== undefined) void this.reload(again);
    });
    return this.#running;
  }

  #fileChanged(): void {
    this.#debounce?.abort();
    const controller = new AbortController();
    this.#debounce = controller;
    this.#options.clock.sleep(this.#options.debounceMs ?? 250, controller.signal).then(
      () => void this.reload('file change'),
      () => {},
    );
  }

  async #reloadOnce(trigger: ReloadTrigger): Promise<ReloadResult> {
    const { logger, metrics, path } = this.#options;
    const result = await loadConfigFile(path);
    if (result.config === undefined) {
      metrics?.configReloads.inc({ result: 'rejected' });
      logger.error(
        { trigger, file: path, problems: result.problems.map(formatProblem) },
        `configuration not reloaded: ${result.problems.length} problem(s); the running configuration stays`,
      );
      return 'rejected';
    }
    const change = diffConfig(this.#current, result.config);
    if (isEmptyChange(change)) {
      logger.debug({ trigger, file: path }, 'configuration unchanged');
      return 'unchanged';
    }
    for (const w of result.warnings) logger.warn({ key: w.path }, w.message);
    this.#current = result.config;
    metrics?.configReloads.inc({ result: 'applied' });
    logger.info(
      {
        trigger,
        file: path,
        added: change.accounts.added.map((a) => a.name),
        changed: change.accounts.changed.map((a) => a.name),
        removed: change.accounts.removed.map((a) => a.name),
        sections: change.sections,
      },
      'configuration reloaded',
    );
    try {
      await this.#options.onChange(change);
    } catch (e) {
      logger.error({ trigger, err: e instanceof Error ? e.message : String(e) }, 'applying the reloaded configuration failed');
    }
    return 'applied';
  }
}
