import { describe, expect, it } from 'vitest';
import { watchText } from './client/format.ts';

describe("the account page's Watch column (docs/console.md#one-account)", () => {
  it('says how many of a kind’s scopes watch when only some do, and marks that as a fault', () => {
    expect(watchText({ scopes: 3, watching: 1 })).toEqual({ text: 'watching 1 of 3', complete: false });
    expect(watchText({ scopes: 3, watching: 2 })).toEqual({ text: 'watching 2 of 3', complete: false });
  });

  it('says watching when every scope watches, and not watching when none does', () => {
    expect(watchText({ scopes: 1, watching: 1 })).toEqual({ text: 'watching', complete: true });
    expect(watchText({ scopes: 3, watching: 3 })).toEqual({ text: 'watching', complete: true });
    expect(watchText({ scopes: 3, watching: 0 })).toEqual({ text: 'not watching', complete: false });
    expect(watchText({ scopes: 1, watching: 0 })).toEqual({ text: 'not watching', complete: false });
  });
});
