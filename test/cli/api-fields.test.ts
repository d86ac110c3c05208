import { describe, expect, it } from 'vitest';
import { apiPath, fieldsToObject, fieldsToQuery, keyPath, parseHeader } from '../../src/cli/api-fields.js';
import { UsageError } from '../../src/cli/prompts.js';

const noStdin = () => {
  throw new Error('stdin read');
};

describe('svc api fields (CLI.md "Scripting conveniences", as gh api reads them)', () => {
  it('-f is always a string; -F types true/false/null and numbers', () => {
    const body = fieldsToObject(
      [
        { text: 'name=42', typed: false },
        { text: 'max=42', typed: true },
        { text: 'ratio=-1.5', typed: true },
        { text: 'on=true', typed: true },
        { text: 'gone=null', typed: true },
        { text: 'word=yes', typed: true },
        { text: 'eq=a=b', typed: false },
      ],
      noStdin,
    );
    expect(body).toEqual({ name: '42', max: 42, ratio: -1.5, on: true, gone: null, word: 'yes', eq: 'a=b' });
  });

  it('nests name[sub] and appends name[]', () => {
    expect(keyPath('a[b][]')).toEqual(['a', 'b', '']);
    const body = fieldsToObject(
      [
        { text: 'settings[timezone]=UTC', typed: false },
        { text: 'settings[contact][name]=Ada', typed: false },
        { text: 'tags[]=a', typed: false },
        { text: 'tags[]=b', typed: false },
      ],
      noStdin,
    );
    expect(body).toEqual({ settings: { timezone: 'UTC', contact: { name: 'Ada' } }, tags: ['a', 'b'] });
  });

  it('@- reads standard input', () => {
    expect(fieldsToObject([{ text: 'note=@-', typed: true }], () => 'from stdin')).toEqual({ note: 'from stdin' });
  });

  it('rejects fields without = and conflicting shapes as usage errors', () => {
    expect(() => fieldsToObject([{ text: 'novalue', typed: false }], noStdin)).toThrow(UsageError);
    expect(() => fieldsToObject([{ text: 'a=1', typed: false }, { text: 'a[b]=2', typed: false }], noStdin)).toThrow(UsageError);
  });

  it('query fields repeat keys for lists', () => {
    expect(fieldsToQuery([{ text: 'limit=5', typed: false }, { text: 'tag[]=x', typed: false }, { text: 'tag[]=y', typed: false }], noStdin)).toEqual({ limit: '5', tag: ['x', 'y'] });
  });

  it('paths may leave out /api/v1; /health stays at the root; URLs are refused', () => {
    expect(apiPath('/orgs/partners')).toBe('/api/v1/orgs/partners');
    expect(apiPath('orgs/partners?limit=2')).toBe('/api/v1/orgs/partners?limit=2');
    expect(apiPath('/api/v1/orgs/partners')).toBe('/api/v1/orgs/partners');
    expect(apiPath('/health/ready')).toBe('/health/ready');
    expect(() => apiPath('https://example.com/api/v1/orgs')).toThrow(UsageError);
  });

  it('headers are "Name: value"', () => {
    expect(parseHeader('Accept: text/csv')).toEqual(['accept', 'text/csv']);
    expect(() => parseHeader('no colon')).toThrow(UsageError);
  });
});
