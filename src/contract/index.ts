import { audit } from './audit.js';
import { auth } from './auth.js';
import { health } from './health.js';
import { tenancy } from './tenancy.js';

export * from './endpoint.js';
export * from './common.js';

/** Every endpoint of the API, by area. The server binds each one; the client derives a call for each. */
export const contract = { health, auth, tenancy, audit } as const;
export type Contract = typeof contract;
