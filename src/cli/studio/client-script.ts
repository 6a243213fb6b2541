/**
 * The studio page's script: the typed browser code in client/ (its own tsconfig: the DOM library,
 * no Node), bundled into one classic script. An installed package serves the bundle `npm run build`
 * wrote next to this module (dist/src/cli/studio/client/app.js, by scripts/build-studio.mjs). A
 * checkout running the sources (tsx), or whose dist/ was compiled by tsc alone, bundles
 * client/app.ts with the same script's `bundleStudioClient` (esbuild, a dev dependency) once per
 * process, when the first studio starts.
 */
import { existsSync, readFileSync } from "node:fs";
import { dirname, join } from "node:path";
import { fileURLToPath, pathToFileURL } from "node:url";
import { ConfigurationError } from "../../runtime/core/errors.js";

const HERE = dirname(fileURLToPath(import.meta.url));

/** The built bundle, next to the compiled server. */
const BUILT = join(HERE, "client", "app.js");

/** The checkout's build script: from src/cli/studio, or from dist/src/cli/studio. */
const BUILDERS = [join(HERE, "../../../scripts/build-studio.mjs"), join(HERE, "../../../../scripts/build-studio.mjs")];

let script: Promise<string> | undefined;

/** The page's script, read or bundled once per process. */
export function studioScript(): Promise<string> {
  script ??= loadScript();
  script.catch(() => (script = undefined));
  return script;
}

async function loadScript(): Promise<string> {
  if (existsSync(BUILT)) return readFileSync(BUILT, "utf8");
  const builder = BUILDERS.find((file) => existsSync(file));
  if (builder === undefined)
    throw new ConfigurationError(
      `the studio's page script is missing: ${BUILT} was not built`,
      "reinstall statebag; in statebag's checkout, run `npm run build`",
    );
  const { bundleStudioClient } = (await import(
    pathToFileURL(builder).href
  )) as typeof import("../../../scripts/build-studio.mjs");
  try {
    return (await bundleStudioClient())!;
  } catch (error) {
    throw new ConfigurationError(
      `the studio's page script could not be bundled from src/cli/studio/client/ (${error instanceof Error ? error.message.split("\n")[0] : String(error)})`,
      "run `npm install` in statebag's checkout (esbuild is a dev dependency), then `npm run build`",
    );
  }
}
