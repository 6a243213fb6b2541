import { defineConfig } from "vitest/config";

export default defineConfig({
  test: {
    include: ["test/**/*.test.ts"],
    testTimeout: 30_000,
    hookTimeout: 60_000,
    // Store suites talk to real PostgreSQL/Redis; keep the 2-core machine from thrashing.
    maxWorkers: 2,
  },
});
