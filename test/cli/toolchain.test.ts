import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, afterEach, describe, expect, it } from "vitest";
import { generatorFingerprintInputs } from "../../generator/cache.js";
import { assertCompilers, compilerVersions } from "../../generator/compilers.js";
import {
  installCommand,
  loadCompat,
  loadGenerator,
  statebagVersion,
  ToolchainMissingError,
  toolchainResolution,
} from "../../src/cli/toolchain.js";
import { cli } from "./helpers.js";

const realResolve = toolchainResolution.resolve;
const realSource = toolchainResolution.sourceEntry;
/** Simulates an installed statebag (no generator sources next to it) in a project without the kit. */
function installedWithoutKit(): void {
  toolchainResolution.sourceEntry = () => undefined;
  toolchainResolution.resolve = (id: string) => {
    throw Object.assign(new Error(`Cannot find module '${id}'`), { code: "MODULE_NOT_FOUND" });
  };
}

afterEach(() => {
  toolchainResolution.resolve = realResolve;
  toolchainResolution.sourceEntry = realSource;
});

const work = mkdtempSync(join(tmpdir(), "statebag-toolchain-"));
afterAll(() => rmSync(work, { recursive: true, force: true }));

/** A project with a stand-in statebag-kit in its node_modules, whose modules say where they came from. */
function projectWithKit(name: string, version = statebagVersion()): string {
  const project = join(work, name);
  const kit = join(project, "node_modules/statebag-kit");
  mkdirSync(kit, { recursive: true });
  writeFileSync(join(project, "package.json"), JSON.stringify({ name, type: "module" }));
  writeFileSync(
    join(kit, "package.json"),
    JSON.stringify({
      name: "statebag-kit",
      version,
      type: "module",
      exports: {
        ".": { default: "./index.js" },
        "./compat": { default: "./compat.js" },
        "./package.json": "./package.json",
      },
    }),
  );
  writeFileSync(
    join(kit, "index.js"),
    `export const from = ${JSON.stringify(name)}; export const generate = () => "kit";\n`,
  );
  writeFileSync(
    join(kit, "compat.js"),
    `export const from = ${JSON.stringify(name)}; export const runDiff = () => "kit";\n`,
  );
  return project;
}

describe("the generator toolchain is the statebag-kit dev package", () => {
  it("in this repository (no kit installed) gen and diff load the generator's sources", async () => {
    expect(typeof (await loadGenerator()).generate).toBe("function");
    expect(typeof (await loadCompat()).runDiff).toBe("function");
  });

  it("the kit installed in the project wins over the sources next to statebag", async () => {
    const project = projectWithKit("with-kit");
    const generator = (await loadGenerator(project)) as unknown as { from: string };
    expect(generator.from).toBe("with-kit");
    const compat = (await loadCompat(join(project, "node_modules"))) as unknown as { from: string }; // found from a subfolder too
    expect(compat.from).toBe("with-kit");
  });

  it("a kit of another release than statebag's is a ToolchainMissingError naming both, before any of it loads", async () => {
    const project = projectWithKit("old-kit", "0.0.1");
    const error = (await loadGenerator(project).catch((e: unknown) => e)) as ToolchainMissingError;
    expect(error).toBeInstanceOf(ToolchainMissingError);
    expect(error.message.split("\n")[0]).toBe(
      `statebag gen needs statebag-kit@${statebagVersion()}, but found statebag-kit@0.0.1`,
    );
    expect(error.installCommand).toBe(`npm i -D statebag-kit@${statebagVersion()}`);
    await expect(loadCompat(project)).rejects.toThrow(
      `statebag diff needs statebag-kit@${statebagVersion()}, but found statebag-kit@0.0.1`,
    );
  });

  it("without the kit: a ToolchainMissingError naming the one install command, pinned to statebag's version, and no compiler", async () => {
    installedWithoutKit();
    const error = await loadGenerator(work).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(ToolchainMissingError);
    const e = error as ToolchainMissingError;
    expect(e.code).toBe("toolchain-missing");
    expect(e.missing).toEqual(["statebag-kit"]);
    expect(e.message.split("\n")[0]).toBe("statebag gen needs statebag-kit, which is not installed");
    expect(statebagVersion()).toMatch(/^\d+\.\d+\.\d+/);
    expect(e.installCommand).toBe(`npm i -D statebag-kit@${statebagVersion()}`);
    expect(e.hint).toBe(`install the generator toolchain as a dev dependency: ${installCommand()}`);
    // Never the old advice, which downgraded the app's own TypeScript.
    expect(e.message).not.toMatch(/typescript@|ts-morph/);
    await expect(loadCompat(work)).rejects.toThrow("statebag diff needs statebag-kit, which is not installed");
  });

  it("the CLI reports it as an error with the fix, never a module-resolution trace, and exits 3", async () => {
    installedWithoutKit();
    const r = await cli(["gen", "--check"]);
    expect(r.code).toBe(3);
    expect(r.stderr).toContain("error: statebag gen needs statebag-kit, which is not installed");
    expect(r.stderr).toMatch(/fix: +install the generator toolchain as a dev dependency: npm i -D statebag-kit@\d/);
    expect(r.stderr).not.toContain("Cannot find module");
    expect(r.stderr).not.toContain("typescript@");
  });
});

describe("the compilers the generator runs", () => {
  it("are typescript-json-schema's TypeScript and ts-morph's bundled one, read without loading either", () => {
    const versions = compilerVersions();
    expect(versions.typescript).toMatch(/^5\.9\./);
    expect(versions.tsMorph).toMatch(/^\d+\.\d+\.\d+/);
    expect(versions.tsMorph).not.toBe(versions.typescript); // ts-morph 28 bundles its own (6.0)
  });

  it("another compiler than the kit was built for is a ToolchainMissingError naming both versions", () => {
    const found = compilerVersions();
    expect(assertCompilers(found, "npm i -D statebag-kit@1.2.3")).toEqual(found);
    const error = (() => {
      try {
        assertCompilers({ ...found, typescript: "7.0.2" }, "npm i -D statebag-kit@1.2.3");
      } catch (e) {
        return e;
      }
    })() as ToolchainMissingError;
    expect(error).toBeInstanceOf(ToolchainMissingError);
    expect(error.message.split("\n")[0]).toBe(
      `statebag gen needs TypeScript (typescript-json-schema's compiler) 7.0, but found version ${found.typescript}`,
    );
    expect(error.hint).toContain("npm i -D statebag-kit@1.2.3");
    // A kit whose compiler can not be found at all (resolved from a folder without one).
    expect(() => assertCompilers(found, "npm i -D statebag-kit@1.2.3", join(work, "nowhere.js"))).toThrow(
      /needs TypeScript \(typescript-json-schema's compiler\) 5\.9, but found none that loads/,
    );
  });

  it("are what the no-op cache's fingerprint records, never the app's `typescript` package", () => {
    const inputs = generatorFingerprintInputs();
    const versions = compilerVersions();
    const pairs = new Map<string, string>();
    for (let i = inputs.indexOf("ajv"); i >= 0 && i < inputs.length; i += 2) pairs.set(inputs[i], inputs[i + 1]);
    expect(pairs.get("typescript (typescript-json-schema)")).toBe(versions.typescript);
    expect(pairs.get("typescript (ts-morph)")).toBe(versions.tsMorph);
    expect(pairs.has("typescript")).toBe(false); // the package an app resolves: 7.x in an app on TypeScript 7
  });
});
