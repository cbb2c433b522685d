import { relative } from 'node:path';
import { BaseSequencer, type TestSpecification } from 'vitest/node';

/**
 * The order of a run when vitest knows no durations yet (a fresh checkout, as in CI): within each
 * project, in vitest's order between projects, the suites that start processes and servers (`test/`,
 * `bench/`) before the unit tests beside the code. vitest alone runs larger files first there, and
 * several of the longest suites are short files (a 120-line file holds a minute of outages and
 * restarts): started last, one of them keeps a worker busy for a minute while the other has nothing
 * left to do. With the unit tests last, the tail is made of files of a few seconds.
 */
export function crossComponentFirst<T>(items: readonly T[], projectOf: (item: T) => string, fileOf: (item: T) => string): T[] {
  const projects = [...new Set(items.map(projectOf))];
  const rank = (file: string) => (file.startsWith('test/') || file.startsWith('bench/') ? 0 : 1);
  return [...items].sort((a, b) => projects.indexOf(projectOf(a)) - projects.indexOf(projectOf(b)) || rank(fileOf(a)) - rank(fileOf(b)));
}

/** Once vitest has every file's duration (a later run on the same checkout), its own order, longest first, stands. */
export default class Sequencer extends BaseSequencer {
  override async sort(files: TestSpecification[]): Promise<TestSpecification[]> {
    const sorted = await super.sort(files);
    const fileOf = (spec: TestSpecification) => relative(this.ctx.config.root, spec.moduleId);
    const known = sorted.every((spec) => this.ctx.cache.getFileTestResults(`${spec.project.name}:${fileOf(spec)}`) !== undefined);
    return known ? sorted : crossComponentFirst(sorted, (spec) => spec.project.name, fileOf);
  }
}
