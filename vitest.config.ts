import { defineConfig } from 'vitest/config';

export default defineConfig({
  test: {
    include: ['test/**/*.test.ts'],
    pool: 'forks',
    testTimeout: 20_000,
    hookTimeout: 30_000,
    // Each test builds its own app on its own SQLite file; nothing is shared between files.
    isolate: true,
    // Two workers on the two cores: e2e files spend much of their time waiting on server processes.
    maxWorkers: 2,
  },
});
