import { describe, expect, it } from 'vitest';
import { closestCommand, closestFlag, editDistance } from '../../src/cli/suggest.js';

const commands = [
  { id: 'orgs:list', takesArgs: false },
  { id: 'orgs:get', takesArgs: true },
  { id: 'partners:list', takesArgs: false },
  { id: 'partners:me', takesArgs: false },
  { id: 'partners:me:update', takesArgs: false },
  { id: 'help', takesArgs: true },
  { id: 'sites:create', takesArgs: false },
  { id: 'sites:get', takesArgs: true },
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

  it('suggests a command typed under a topic it is not in, a plain typo before it', () => {
    expect(closestCommand('orgs:sites:create', commands)).toBe('sites:create');
    expect(closestCommand('orgs:sites:get:3b9e4c1a', commands)).toBe('sites:get');
    expect(closestCommand('orgs:lst', commands)).toBe('orgs:list');
  });
});

describe('the flag an unknown one probably meant (CLI.md "Grammar")', () => {
  const names = ['output', 'columns', 'base-url', 'partner-id', 'org-id', 'limit', 'all', 'to', 'from-file'];

  it('names the one flag that has what was typed as a whole part', () => {
    expect(closestFlag('--url', names)).toBe('base-url');
    expect(closestFlag('--partner=3b9e', names)).toBe('partner-id');
    expect(closestFlag('--file', names)).toBe('from-file');
  });

  it('names a typo within one edit per three characters', () => {
    expect(closestFlag('--ouptut', names)).toBe('output');
    expect(closestFlag('--lmit', names)).toBe('limit');
    expect(closestFlag('--colums=id', names)).toBe('columns');
  });

  it('names nothing when no flag is close, or when a part fits several', () => {
    expect(closestFlag('--bogus', names)).toBeUndefined();
    expect(closestFlag('--xy', names)).toBeUndefined();
    // `url` is two edits from `all`, too many for three letters: only the part rule names base-url.
    expect(closestFlag('--url', ['all', 'limit'])).toBeUndefined();
    expect(closestFlag('--id', names)).toBeUndefined();
    expect(closestFlag('--org', ['org-id', 'org-name'])).toBeUndefined();
  });
});
