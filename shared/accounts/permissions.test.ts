import { describe, expect, it } from 'vitest';
import type { AccountRecord, Definition } from './model.ts';
import { accessOfSettings, accountAccess, grants } from './permissions.ts';

const roles = (...r: string[]) => new Set(r);

function record(defs: Record<string, Definition>): Pick<AccountRecord, 'defs'> {
  return { defs };
}

describe('account permissions (docs/api.md#authorization)', () => {
  it('is open without permissions or with empty lists', () => {
    expect(accessOfSettings(undefined)).toEqual({ kind: 'open' });
    expect(accessOfSettings({})).toEqual({ kind: 'open' });
    expect(accessOfSettings({ permissions: [] })).toEqual({ kind: 'open' });
    expect(accessOfSettings({ permissions: [{ READ: [] }, { WRITE: [] }] })).toEqual({ kind: 'open' });
    expect(grants({ kind: 'open' }, roles(), 'WRITE')).toBe(true);
  });

  it('gathers READ and WRITE over every entry; writers may also read', () => {
    const access = accessOfSettings({ permissions: [{ READ: ['dev', 'ops'] }, { WRITE: ['ops'] }, { READ: ['audit'], WRITE: ['release'] }] });
    expect(access).toEqual({ kind: 'restricted', read: ['audit', 'dev', 'ops', 'release'], write: ['ops', 'release'] });
    expect(grants(access, roles('dev'), 'READ')).toBe(true);
    expect(grants(access, roles('dev'), 'WRITE')).toBe(false);
    expect(grants(access, roles('release'), 'READ')).toBe(true);
    expect(grants(access, roles('release'), 'WRITE')).toBe(true);
    expect(grants(access, roles('other', 'DEV'), 'READ')).toBe(false); // role names are case-sensitive
    expect(grants(access, roles(), 'READ')).toBe(false);
  });

  it('an account restricted by READ alone may be written by nobody who is not a manager', () => {
    const access = accessOfSettings({ permissions: [{ READ: ['dev'] }] });
    expect(grants(access, roles('dev'), 'READ')).toBe(true);
    expect(grants(access, roles('dev'), 'WRITE')).toBe(false);
  });

  it('role names with whitespace: permissions not applied, everyone gets access (docs/agent-config.md#permissions)', () => {
    for (const name of ['release team', ' ops', 'dev\t', 'a\nb']) {
      const access = accessOfSettings({ permissions: [{ READ: ['dev'] }, { WRITE: ['ops', name] }] });
      expect(access.kind).toBe('ignored');
      expect(access).toMatchObject({ reason: expect.stringContaining(JSON.stringify(name)) });
      expect(grants(access, roles(), 'READ')).toBe(true);
      expect(grants(access, roles(), 'WRITE')).toBe(true);
    }
  });

  it('follows the winning definition (docs/api.md#precedence)', () => {
    const defs: Record<string, Definition> = {
      'driver-config': { kind: 'driver-config', settings: { permissions: [{ READ: ['file-role'] }] }, at: 1 },
      'agent:a1': { kind: 'static-agent-config', agentId: 'a1', zoneId: 'z', settings: {}, at: 2 },
    };
    // The agent beats the config file, and its definition has no permissions.
    expect(accountAccess(record(defs))).toEqual({ kind: 'open' });
    const plugin: Definition = { kind: 'plugin', precedence: 500, settings: { permissions: [{ READ: ['plugin-role'] }] }, at: 3 };
    expect(accountAccess(record({ ...defs, 'plugin:p': plugin }))).toEqual({ kind: 'restricted', read: ['plugin-role'], write: [] });
  });
});
