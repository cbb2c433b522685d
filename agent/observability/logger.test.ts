import { mkdtempSync, readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { stringify } from 'yaml';
import { parseConfig } from '../config/load.ts';
import { accountLogger, createAgentLogger } from './logger.ts';

function logFile(): string {
  return join(mkdtempSync(join(tmpdir(), 'agent-log-')), 'agent.log');
}

function loggingConfig(logging: Record<string, unknown>) {
  const result = parseConfig(stringify({ logging }), 't.yml');
  expect(result.problems).toEqual([]);
  return result.config!.logging;
}

function lines(file: string): string[] {
  return readFileSync(file, 'utf8').split('\n').filter((l) => l !== '');
}

const EMIT = ['trace', 'debug', 'info', 'warn', 'error', 'fatal'] as const;

describe('agent logger', () => {
  it('json format: one object per line with agentId, and account on account lines', () => {
    const file = logFile();
    const { logger } = createAgentLogger(loggingConfig({ file, format: 'json' }), 'agent-7');
    logger.info('starting');
    accountLogger(logger, 'prod').warn({ kind: 'Pod' }, 'watch restarted');
    const [first, second] = lines(file).map((l) => JSON.parse(l) as Record<string, unknown>);
    expect(first).toMatchObject({ level: 'info', msg: 'starting', agentId: 'agent-7' });
    expect(first).not.toHaveProperty('account');
    expect(second).toMatchObject({ level: 'warn', msg: 'watch restarted', agentId: 'agent-7', account: 'prod', kind: 'Pod' });
  });

  it('logging.file creates the folders it names', () => {
    const file = join(mkdtempSync(join(tmpdir(), 'agent-log-')), 'nested', 'deeper', 'agent.log');
    const { logger } = createAgentLogger(loggingConfig({ file, format: 'json' }), 'agent-7');
    logger.info('starting');
    expect(lines(file).map((l) => JSON.parse(l) as Record<string, unknown>)).toEqual([expect.objectContaining({ msg: 'starting', agentId: 'agent-7' })]);
  });

  it('text format (the default): time LEVEL message key=value', () => {
    const file = logFile();
    const { logger } = createAgentLogger(loggingConfig({ file }), 'agent-7');
    accountLogger(logger, 'prod').info('connected');
    expect(lines(file)).toEqual([expect.stringMatching(/^\d{4}-\d\d-\d\dT\S+Z INFO connected agentId=agent-7 account=prod$/)]);
  });

  it.each([
    ['panic', ['fatal']],
    ['FATAL', ['fatal']],
    ['error', ['error', 'fatal']],
    ['Warn', ['warn', 'error', 'fatal']],
    ['warning', ['warn', 'error', 'fatal']],
    ['INFO', ['info', 'warn', 'error', 'fatal']],
    ['debug', ['debug', 'info', 'warn', 'error', 'fatal']],
    ['trace', ['trace', 'debug', 'info', 'warn', 'error', 'fatal']],
  ])('logging.level %s writes %j', (level, expected) => {
    const file = logFile();
    const { logger } = createAgentLogger(loggingConfig({ file, level, format: 'json' }), 'a');
    for (const l of EMIT) logger[l](l);
    expect(lines(file).map((l) => (JSON.parse(l) as { msg: string }).msg)).toEqual(expected);
  });

  it('a new level reaches child loggers made before the change', () => {
    const file = logFile();
    const agent = createAgentLogger(loggingConfig({ file, level: 'info', format: 'json' }), 'a');
    const child = accountLogger(agent.logger, 'prod').child({ component: 'cache' });
    child.debug('hidden');
    agent.setLevel('debug');
    child.debug('shown');
    agent.logger.debug('root shown');
    expect(lines(file).map((l) => (JSON.parse(l) as { msg: string }).msg)).toEqual(['shown', 'root shown']);
  });
});
