import { badRequest } from '../../errors.js';

/** A keyset position (05 wire notes "4.6"): base64url of JSON `{ts, id}`. */
export interface Position {
  ts: string;
  id: string;
}

export function encodePosition(ts: string, id: string): string {
  return Buffer.from(JSON.stringify({ ts, id })).toString('base64url');
}

export function decodePosition(cursor: string): Position {
  try {
    const parsed: unknown = JSON.parse(Buffer.from(cursor, 'base64url').toString('utf8'));
    if (typeof parsed === 'object' && parsed !== null && 'ts' in parsed && 'id' in parsed && typeof parsed.ts === 'string' && typeof parsed.id === 'string') {
      return { ts: parsed.ts, id: parsed.id };
    }
  } catch {
    // fall through
  }
  throw badRequest('Invalid cursor', 'INVALID_CURSOR');
}
