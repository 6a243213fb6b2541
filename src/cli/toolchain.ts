/**
 * The generator's toolchain (TypeScript 5.9, ts-morph, typescript-json-schema, refa,
 * json-schema-faker, tsx) is its own dev package, `statebag-kit`: the runtime package has no
 * compiler peer, so an application on any TypeScript (7 included) installs statebag without a
 * conflict, and the kit brings the compiler it was built for as its own dependency.
 *
 * `statebag gen` and `statebag diff` load the kit through here: from the project first, then from
 * next to statebag, then (in statebag's own repository only) the generator's sources. A project
 * without it is told the one command that installs it, never a module-resolution trace.
 */
import { existsSync, readFileSync } from "node:fs";
import { createRequire } from "node:module";
import { join } from "node:path";
import { fileURLToPath, pathToFileURL } from "node:url";
import { ToolchainMissingError } from "../runtime/core/toolchain-error.js";

/** The package that holds `statebag gen`'s toolchain. */
export const KIT = "statebag-kit";

// Defined with the runtime's internal toolchain entry, which the kit imports it from (its
// declarations must not reach this module, whose declarations name the generator's sources).
export { ToolchainMissingError };

/** statebag's own version: the kit is released with it, and the install command pins it. */
export function statebagVersion(): string {
  for (const rel of ["../../package.json", "../../../package.json"]) {
    try {
      const pkg = JSON.parse(readFileSync(new URL(rel, import.meta.url), "utf8")) as {
        name?: string;
        version?: string;
      };
      if (pkg.name === "statebag" && pkg.version) return pkg.version;
    } catch {
      // try the next candidate
    }
  }
  return "latest";
}

/**
 * `npm i -D statebag-kit@<statebag's version>`: one package, whatever compiler the app uses (the
 * kit's TypeScript is its own dependency, so the app's `typescript` is never changed).
 */
export function installCommand(): string {
  return `npm i -D ${KIT}@${statebagVersion()}`;
}

/** How the kit is found (tests replace it to simulate a project with or without it). @internal */
export const toolchainResolution: {
  /** The resolved file of `id` as seen from a file in `fromDir`; throws when it is not installed there. */
  resolve: (id: string, fromDir: string) => string;
  /** The generator's sources next to this module (statebag's own repository), or undefined in an installed package. */
  sourceEntry: (entry: "index" | "compat/index") => string | undefined;
} = {
  resolve: (id, fromDir) => createRequire(join(fromDir, "statebag-resolve.js")).resolve(id),
  sourceEntry: (entry) => {
    // src/cli/ in a checkout (index.ts), or dist/src/cli/ after this repository's build (index.js);
    // the published package leaves dist/generator out, so neither exists there.
    for (const ext of [".ts", ".js"]) {
      const url = new URL(`../../generator/${entry}${ext}`, import.meta.url);
      if (url.protocol === "file:" && existsSync(url)) return url.href;
    }
    return undefined;
  },
};

/** The kit's entry for `subpath` and its version, from the project directory first, then from next to statebag. */
function findKit(
  subpath: "" | "/compat",
  projectDir: string,
): { entry: string; version: string | undefined } | undefined {
  for (const from of [projectDir, fileURLToPath(new URL(".", import.meta.url))]) {
    let entry: string;
    try {
      entry = toolchainResolution.resolve(`${KIT}${subpath}`, from);
    } catch {
      continue; // not installed there
    }
    let version: string | undefined;
    try {
      version = (
        JSON.parse(readFileSync(toolchainResolution.resolve(`${KIT}/package.json`, from), "utf8")) as {
          version?: string;
        }
      ).version;
    } catch {
      version = undefined;
    }
    return { entry, version };
  }
  return undefined;
}

// These name the generator's sources, which the runtime package does not ship: so the package
// leaves out the CLI's declarations (package.json "files"), and nothing a public or kit-facing
// entry declares may import this module (the consumer e2e test compiles them with skipLibCheck off).
type GeneratorModule = typeof import("../../generator/index.js");
type CompatModule = typeof import("../../generator/compat/index.js");

async function load<T>(
  command: string,
  subpath: "" | "/compat",
  projectDir: string,
  fromSources: () => Promise<T>,
): Promise<T> {
  const kit = findKit(subpath, projectDir);
  if (kit !== undefined) {
    // The kit is released with statebag and uses its internals (statebag/internal/toolchain): another
    // release of either may not fit, so a mismatch stops here, not somewhere inside the generator.
    const wanted = statebagVersion();
    if (kit.version !== wanted)
      throw new ToolchainMissingError(
        [`${KIT}@${wanted}`],
        command,
        installCommand(),
        `${KIT}@${kit.version ?? "unknown"}`,
      );
    return (await import(pathToFileURL(kit.entry).href)) as T;
  }
  if (toolchainResolution.sourceEntry(subpath === "" ? "index" : "compat/index") !== undefined) return fromSources();
  throw new ToolchainMissingError([KIT], command, installCommand());
}

/** The generator module: statebag-kit's, or this repository's sources. */
export function loadGenerator(projectDir: string = process.cwd()): Promise<GeneratorModule> {
  return load("gen", "", projectDir, () => import("../../generator/index.js"));
}

/** The compatibility-check module (`statebag diff`): statebag-kit's, or this repository's sources. */
export function loadCompat(projectDir: string = process.cwd()): Promise<CompatModule> {
  return load("diff", "/compat", projectDir, () => import("../../generator/compat/index.js"));
}
