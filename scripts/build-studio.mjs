// Builds the studio's page script: type-checks src/cli/studio/client/ with its own tsconfig (the
// DOM library, no Node) and bundles client/app.ts with esbuild into one classic script,
// <dist>/src/cli/studio/client/app.js, next to the compiled server that serves it.
//
// `node scripts/build-studio.mjs [<dist>]` (default: dist/): the second half of `npm run build`, and
// what the kit's compile and the packing tests run after tsc. The studio started from the sources
// bundles with `bundleStudioClient()` (no type check: that is the typecheck's job), so the two
// bundles are built with the same options.
import { execFileSync } from "node:child_process";
import { join, resolve } from "node:path";
import { fileURLToPath } from "node:url";

const repo = fileURLToPath(new URL("..", import.meta.url));
const CLIENT = join(repo, "src/cli/studio/client");

/** The client bundled (esbuild, a dev dependency): the script's text, or written to `outfile`. */
export async function bundleStudioClient(outfile) {
  const esbuild = await import("esbuild");
  const result = await esbuild.build({
    entryPoints: [join(CLIENT, "app.ts")],
    bundle: true,
    format: "iife",
    target: "es2022",
    charset: "utf8",
    legalComments: "none",
    logLevel: "warning",
    ...(outfile ? { outfile } : { write: false }),
  });
  return outfile ? undefined : result.outputFiles[0].text;
}

if (process.argv[1] && resolve(process.argv[1]) === fileURLToPath(import.meta.url)) {
  const dist = resolve(process.argv[2] ?? join(repo, "dist"));
  try {
    execFileSync(
      process.execPath,
      [join(repo, "node_modules/typescript/bin/tsc"), "-p", join(CLIENT, "tsconfig.json")],
      {
        stdio: "inherit",
      },
    );
  } catch {
    console.error("build-studio: the studio's page script does not type-check (its errors are above)");
    process.exit(1);
  }
  await bundleStudioClient(join(dist, "src/cli/studio/client/app.js"));
}
