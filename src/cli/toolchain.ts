/**
 * The generator's toolchain (TypeScript, ts-morph, typescript-json-schema, refa, json-schema-faker)
 * is an optional peer dependency: an application that only loads, validates, migrates and stores
 * sessions never installs a compiler. `statebag gen` and `statebag diff` load it through here, so
 * a project without it is told the one command that installs it, not a module-resolution trace.
 */
import { readFileSync } from "node:fs";
import { StatebagError } from "../runtime/core/errors.js";

/** What `gen` needs; `diff` needs only the compatibility check's part. */
const GENERATOR_PACKAGES = ["typescript", "ts-morph", "typescript-json-schema", "refa", "json-schema-faker"] as const;
const COMPAT_PACKAGES = ["refa", "json-schema-faker"] as const;

export type ToolchainPackage = (typeof GENERATOR_PACKAGES)[number];

/** One or more toolchain packages are not installed where statebag can load them. */
export class ToolchainMissingError extends StatebagError {
  constructor(
    readonly missing: readonly ToolchainPackage[],
    readonly command: string,
    readonly installCommand: string,
  ) {
    super("toolchain-missing", `statebag ${command} needs ${missing.join(", ")}, which ${missing.length === 1 ? "is" : "are"} not installed`, {
      hint: `install the generator toolchain as dev dependencies: ${installCommand}`,
    });
  }
}

/** How packages are resolved (tests replace it to simulate a project without the toolchain). @internal */
export const toolchainResolution: { resolve: (id: string) => string } = {
  // ESM resolution: some of these packages (json-schema-faker) publish no `require` entry.
  resolve: (id) => import.meta.resolve(id),
};

/** The peer ranges from statebag's own package.json, so the install command never drifts from it. */
function peerRanges(): Record<string, string> {
  for (const rel of ["../../package.json", "../../../package.json"]) {
    try {
      const pkg = JSON.parse(readFileSync(new URL(rel, import.meta.url), "utf8")) as { name?: string; peerDependencies?: Record<string, string> };
      if (pkg.name === "statebag") return pkg.peerDependencies ?? {};
    } catch {
      // try the next candidate
    }
  }
  return {};
}

/** `npm i -D typescript@"~5.9.3" ...` for the given packages. */
export function installCommand(packages: readonly string[]): string {
  const ranges = peerRanges();
  return `npm i -D ${packages.map((p) => (ranges[p] ? `${p}@"${ranges[p]}"` : p)).join(" ")}`;
}

function assertInstalled(command: string, packages: readonly ToolchainPackage[]): void {
  const missing = packages.filter((p) => {
    try {
      toolchainResolution.resolve(p);
      return false;
    } catch {
      return true;
    }
  });
  // Name the whole toolchain in the command: installing only the missing half leaves version skew.
  if (missing.length > 0) throw new ToolchainMissingError(missing, command, installCommand(packages));
}

/** The generator module, after checking its toolchain is installed. */
export async function loadGenerator(): Promise<typeof import("../../generator/index.js")> {
  assertInstalled("gen", GENERATOR_PACKAGES);
  return import("../../generator/index.js");
}

/** The compatibility-check module, after checking its toolchain is installed. */
export async function loadCompat(): Promise<typeof import("../../generator/compat/index.js")> {
  assertInstalled("diff", COMPAT_PACKAGES);
  return import("../../generator/compat/index.js");
}
