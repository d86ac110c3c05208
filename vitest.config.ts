import { fileURLToPath } from 'node:url';
import { defineConfig } from 'vitest/config';

// Loopback HTTPS receivers of outbound tests (webhooks, SSO, alert channels) present this certificate; the test
// processes trust it the one way the server allows, Node's NODE_EXTRA_CA_CERTS, read when a worker starts. It
// replaces any bundle the shell set: tests reach no host but loopback.
process.env.NODE_EXTRA_CA_CERTS = fileURLToPath(new URL('test/fixtures/tls/receiver-cert.pem', import.meta.url));

export default defineConfig({
  test: {
    include: ['test/**/*.test.ts'],
    // One first-started template data dir per bootstrap environment, copied into each test's (test/helpers/template.ts).
    globalSetup: ['test/helpers/global-setup.ts'],
    pool: 'forks',
    testTimeout: 20_000,
    hookTimeout: 30_000,
    // Each test builds its own app on its own SQLite file (a copy of a template); no rows are shared between tests.
    isolate: true,
    // Two workers on the two cores: e2e files spend much of their time waiting on server processes.
    maxWorkers: 2,
  },
});
