import { fileURLToPath } from "node:url";
import { defineConfig } from "vitest/config";

const src = fileURLToPath(new URL("./src/", import.meta.url));

export default defineConfig({
  // `statebag` and its subpaths are this repository's sources in tests, as tsconfig.json's `paths`
  // make them for tsc and tsx (the package's own exports point at dist/, which a checkout need not have).
  resolve: {
    alias: [
      { find: /^statebag$/, replacement: `${src}index.ts` },
      { find: /^statebag\/(.+)$/, replacement: `${src}$1.ts` },
    ],
  },
  test: {
    include: ["test/**/*.test.ts"],
    testTimeout: 30_000,
    hookTimeout: 60_000,
    // Store suites talk to real PostgreSQL/Redis; keep the 2-core machine from thrashing.
    maxWorkers: 2,
  },
});
