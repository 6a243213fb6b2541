/**
 * #20: statebag's declarations stand alone. `ioredis` is optional, so an app without it that
 * compiles with `skipLibCheck: false` must not meet an import of it in statebag's .d.ts files: the
 * Redis store's public types are structural (redis/types.ts). Checked on the declarations the
 * compiler emits for the Redis modules, not on the sources' text alone.
 */
import { createRequire } from "node:module";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
import { describe, expect, it } from "vitest";

const require = createRequire(import.meta.url);
const ts = require("typescript") as typeof import("typescript");
const root = join(dirname(fileURLToPath(import.meta.url)), "../..");

describe("Redis store declarations", () => {
  it("mention no ioredis module (emitted .d.ts of redis/store.ts and the modules it pulls in)", () => {
    const config = ts.getParsedCommandLineOfConfigFile(
      join(root, "tsconfig.build.json"),
      {},
      { ...ts.sys, onUnRecoverableConfigFileDiagnostic: () => undefined },
    );
    expect(config).toBeDefined();
    const options = {
      ...config!.options,
      noEmit: false,
      declaration: true,
      emitDeclarationOnly: true,
      outDir: "/virtual-dts",
      incremental: false,
      composite: false,
    };
    const program = ts.createProgram([join(root, "src/runtime/stores/redis/store.ts")], options);
    const emitted = new Map<string, string>();
    program.emit(undefined, (name, text) => emitted.set(name, text));
    const redis = [...emitted].filter(([name]) => /stores\/redis\/[^/]*\.d\.ts$/.test(name));
    expect(redis.map(([name]) => name.replace(/.*\//, "")).sort()).toEqual([
      "batch-save.d.ts",
      "blobs.d.ts",
      "connection.d.ts",
      "keys.d.ts",
      "message-log.d.ts",
      "scripts.d.ts",
      "store.d.ts",
      "stream-buffer.d.ts",
      "types.d.ts",
      "upgrade.d.ts",
      "url.d.ts",
    ]);
    for (const [name, text] of emitted) {
      expect({ name, imports: /(from\s+|import\(\s*|require\(\s*)["']ioredis["']/.test(text) }).toEqual({
        name,
        imports: false,
      });
    }
    const store = redis.find(([name]) => name.endsWith("/redis/store.d.ts"))![1];
    expect(store).toMatch(/redisOptions\?: RedisDriverOptions/);
  }, 60_000);
});
