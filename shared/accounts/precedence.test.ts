import { describe, expect, it } from 'vitest';
import type { Definition } from './model.ts';
import { isDriverDefined, winningDefinition } from './precedence.ts';

const file: Definition = { kind: 'driver-config', settings: { context: 'file' }, at: 1 };
const server: Definition = { kind: 'config-server', settings: { context: 'server' }, at: 1 };
const agent: Definition = { kind: 'static-agent-config', agentId: 'a1', zoneId: 'z', settings: { context: 'agent' }, at: 1 };
const plugin = (precedence?: number): Definition => ({
  kind: 'plugin',
  ...(precedence === undefined ? {} : { precedence }),
  settings: { context: `plugin-${precedence ?? 'none'}` },
  at: 1,
});

function winner(defs: Record<string, Definition>): string | undefined {
  return winningDefinition(defs)?.[1].settings.context;
}

describe('precedence (docs/api.md#precedence)', () => {
  it('rule 3: the agent overrides the driver config file', () => {
    expect(winner({ 'driver-config': file, 'agent:a1': agent })).toBe('agent');
  });

  it('rule 3: the agent overrides the config server', () => {
    expect(winner({ 'config-server': server, 'agent:a1': agent })).toBe('agent');
  });

  it('rule 4: a plugin with precedence lower than 1000 beats the agent', () => {
    expect(winner({ 'plugin:p': plugin(500), 'agent:a1': agent })).toBe('plugin-500');
  });

  it('rule 4: a plugin with no precedence loses to the agent', () => {
    expect(winner({ 'plugin:p': plugin(), 'agent:a1': agent })).toBe('agent');
  });

  it('rule 4: a plugin whose precedence only ties the agent (1000) loses', () => {
    expect(winner({ 'plugin:p': plugin(1000), 'agent:a1': agent })).toBe('agent');
  });

  it('rule 4: a plugin with a precedence above 1000 loses to the agent', () => {
    expect(winner({ 'plugin:p': plugin(2000), 'agent:a1': agent })).toBe('agent');
  });

  it('among plugins the lower precedence wins', () => {
    expect(winner({ 'plugin:a': plugin(700), 'plugin:b': plugin(300) })).toBe('plugin-300');
  });

  it('among driver sources: a plugin with a precedence, then config server, then config file', () => {
    expect(winner({ 'driver-config': file, 'config-server': server, 'plugin:p': plugin(5000) })).toBe('plugin-5000');
    expect(winner({ 'driver-config': file, 'config-server': server })).toBe('server');
    expect(winner({ 'driver-config': file, 'plugin:p': plugin() })).toBe('plugin-none');
  });

  it('among agents announcing the same static account, the latest announcement wins', () => {
    const older: Definition = { ...agent, agentId: 'a1', settings: { context: 'old' }, at: 1 };
    const newer: Definition = { ...agent, agentId: 'a2', settings: { context: 'new' }, at: 2 };
    expect(winner({ 'agent:a1': older, 'agent:a2': newer })).toBe('new');
  });

  it('the winner is the same whatever order the item lists its definitions in', () => {
    const defs: [string, Definition][] = [
      ['driver-config', file],
      ['config-server', server],
      ['plugin:p', plugin()],
      ['plugin:q', { ...plugin(1000), settings: { context: 'plugin-q' } }],
      ['agent:a1', { ...agent, settings: { context: 'agent-a1' }, at: 2 }],
      ['agent:a2', { ...agent, agentId: 'a2', settings: { context: 'agent-a2' }, at: 2 }],
    ];
    const orders = (list: [string, Definition][]): [string, Definition][][] =>
      list.length <= 1 ? [list] : list.flatMap((first, i) => orders([...list.slice(0, i), ...list.slice(i + 1)]).map((rest) => [first, ...rest]));
    // Equal precedence (1000), the agent before a plugin that ties it, then the latest, then by source id.
    for (const order of orders(defs)) expect(winner(Object.fromEntries(order))).toBe('agent-a1');
    for (const order of orders(defs.slice(0, 3))) expect(winner(Object.fromEntries(order))).toBe('plugin-none');
  });

  it('no definitions, no winner; driver-defined means a driver source defines it', () => {
    expect(winningDefinition({})).toBeUndefined();
    expect(isDriverDefined({ 'agent:a1': agent })).toBe(false);
    expect(isDriverDefined({ 'agent:a1': agent, 'plugin:p': plugin(1) })).toBe(true);
  });
});
