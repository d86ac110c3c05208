import { z } from 'zod';
import { endpoint } from './endpoint.js';

/** What a client may know before signing in (issue 15 item 11): the server's switches, as configured. */
export const PublicConfigSchema = z.object({
  registration: z.object({ enabled: z.boolean().describe('Self-registration is open (01 §5.8 ENABLE_REGISTRATION)') }),
  mfa: z.object({ enabled: z.boolean().describe('The MFA feature is on (01 §5.7 ENABLE_2FA)') }),
});

export const health = {
  live: endpoint({
    method: 'GET',
    path: '/health',
    root: true,
    responses: { 200: z.object({ status: z.literal('ok'), version: z.string(), uptime: z.number() }) },
    auth: { public: true },
    summary: 'Liveness: the process answers',
  }),
  ready: endpoint({
    method: 'GET',
    path: '/health/ready',
    root: true,
    responses: {
      200: z.object({ status: z.enum(['ready', 'not_ready']), checks: z.record(z.string(), z.string()) }),
      503: z.object({ status: z.enum(['ready', 'not_ready']), checks: z.record(z.string(), z.string()) }),
    },
    auth: { public: true },
    summary: 'Readiness: the database answers (503 when not)',
  }),
  config: endpoint({
    method: 'GET',
    path: '/config',
    responses: { 200: PublicConfigSchema },
    auth: { public: true },
    summary: 'Public configuration: whether registration and MFA are enabled',
  }),
  openapi: endpoint({
    method: 'GET',
    path: '/openapi.json',
    responses: { 200: z.record(z.string(), z.unknown()) },
    auth: { public: true },
    summary: 'This API as an OpenAPI 3.1 document',
  }),
  openapiDocs: endpoint({
    method: 'GET',
    path: '/docs/openapi.json',
    responses: { 200: z.record(z.string(), z.unknown()) },
    auth: { public: true },
    summary: 'This API as an OpenAPI 3.1 document (the deployed service path)',
  }),
} as const;
