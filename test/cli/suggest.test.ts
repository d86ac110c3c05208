import { describe, expect, it } from 'vitest';
import { closestCommand, editDistance } from '../../src/cli/suggest.js';

const commands = [
  { id: 'orgs:list', takesArgs: false },
  { id: 'orgs:get', takesArgs: true },
  { id: 'partners:list', takesArgs: false },
  { id: 'partners:me', takesArgs: false },
  { id: 'partners:me:update', takesArgs: false },
  { id: 'help', takesArgs: true },
];

describe('the closest command for an unknown one (CLI.md "oclif pitfalls")', () => {
  it('counts a transposition as one edit', () => {
    expect(editDistance('gte', 'get')).toBe(1);
    expect(editDistance('orgs:lst', 'orgs:list')).toBe(1);
  });

  it('suggests typos of topics and verbs', () => {
    expect(closestCommand('orgs:lst', commands)).toBe('orgs:list');
    expect(closestCommand('partner:list', commands)).toBe('partners:list');
    expect(closestCommand('partners:me:updte', commands)).toBe('partners:me:update');
    expect(closestCommand('hlep', commands)).toBe('help');
  });

  it('ignores the words oclif joined into the id when the command takes arguments', () => {
    expect(closestCommand('orgs:gte:3b9e4c1a', commands)).toBe('orgs:get');
  });

  it('suggests nothing for nonsense', () => {
    expect(closestCommand('zzzzzzzz', commands)).toBeUndefined();
  });
});
