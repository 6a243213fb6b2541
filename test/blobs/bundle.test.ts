/**
 * An app using `statebag/stores` (blobs included) bundles with esbuild whether or not
 * `@aws-sdk/client-s3` is installed, without inlining it, and the bundle says what to install
 * when a store keeps its blobs in S3 and the package is not there.
 */
import { execFile } from "node:child_process";
import { mkdtemp, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { promisify } from "node:util";
import { build, type Plugin } from "esbuild";
import { afterAll, beforeAll, expect, it } from "vitest";

const REPO = join(import.meta.dirname, "../..");
const run = promisify(execFile);

const s3Absent: Plugin = {
  name: "s3-absent",
  setup(b) {
    b.onResolve({ filter: /^@aws-sdk\// }, (args) => ({
      errors: [{ text: `Could not resolve "${args.path}" (not installed)` }],
    }));
  },
};

const APP = `
import { openStore } from ${JSON.stringify(join(REPO, "src/stores.ts"))};
const store = await openStore("memory:?blobs=" + encodeURIComponent("s3://bucket/prefix?region=us-east-1"));
const out = {};
try {
  await store.blobs.put(new Uint8Array([1, 2, 3]), { mediaType: "text/plain" });
} catch (error) {
  out.s3 = { code: error.code, message: error.message };
}
const own = await openStore("memory:");
out.own = (await own.blobs.put(new Uint8Array([1, 2, 3]), { mediaType: "text/plain" })).size;
console.log(JSON.stringify(out));
`;

let dir: string;
beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), "statebag-blob-bundle-"));
  await writeFile(join(dir, "app.mjs"), APP);
});
afterAll(async () => {
  await rm(dir, { recursive: true, force: true });
});

it("bundles without @aws-sdk/client-s3; the bundle's S3 blob store says what to install, its own blobs work", async () => {
  const outfile = join(dir, "bundle.mjs");
  const result = await build({
    entryPoints: [join(dir, "app.mjs")],
    bundle: true,
    platform: "node",
    format: "esm",
    outfile,
    plugins: [s3Absent],
    logLevel: "silent",
    metafile: true,
    // What the repository's own packages need at run time and are loaded by name (drivers) stay out.
    external: ["pg", "ioredis", "better-sqlite3"],
  });
  expect(Object.keys(result.metafile.inputs).filter((input) => input.includes("@aws-sdk"))).toEqual([]);
  const { stdout } = await run(process.execPath, [outfile]);
  expect(JSON.parse(stdout)).toEqual({
    s3: {
      code: "missing-dependency",
      message: 'the S3 blob store needs the "@aws-sdk/client-s3" package, which is not installed',
    },
    own: 3,
  });
});
