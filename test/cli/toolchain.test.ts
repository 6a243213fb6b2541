import { afterEach, describe, expect, it } from "vitest";
import { installCommand, loadCompat, loadGenerator, ToolchainMissingError, toolchainResolution } from "../../src/cli/toolchain.js";
import { cli } from "./helpers.js";

const realResolve = toolchainResolution.resolve;
/** Simulates a project where `absent` packages are not installed. */
function without(...absent: string[]): void {
  toolchainResolution.resolve = (id: string) => {
    if (absent.includes(id)) throw Object.assign(new Error(`Cannot find module '${id}'`), { code: "MODULE_NOT_FOUND" });
    return realResolve(id);
  };
}

afterEach(() => {
  toolchainResolution.resolve = realResolve;
});

describe("the generator toolchain is an optional peer", () => {
  it("loads the generator and the compatibility check when the toolchain is installed", async () => {
    expect(typeof (await loadGenerator()).generate).toBe("function");
    expect(typeof (await loadCompat()).runDiff).toBe("function");
  });

  it("a missing package is a ToolchainMissingError naming it and the install command with statebag's peer ranges", async () => {
    without("ts-morph", "typescript-json-schema");
    const error = await loadGenerator().catch((e: unknown) => e);
    expect(error).toBeInstanceOf(ToolchainMissingError);
    const e = error as ToolchainMissingError;
    expect(e.code).toBe("toolchain-missing");
    expect(e.missing).toEqual(["ts-morph", "typescript-json-schema"]);
    expect(e.message.split("\n")[0]).toBe("statebag gen needs ts-morph, typescript-json-schema, which are not installed");
    // The whole toolchain with the ranges statebag declares, so versions never skew.
    expect(e.hint).toMatch(/^install the generator toolchain as dev dependencies: npm i -D typescript@"~5\.9\.\d+" ts-morph@"\^\d+/);
    expect(e.installCommand).toBe(installCommand(["typescript", "ts-morph", "typescript-json-schema", "refa", "json-schema-faker"]));
  });

  it("diff needs only the compatibility check's packages", async () => {
    without("ts-morph", "typescript");
    await expect(loadCompat()).resolves.toBeDefined();
    without("refa");
    await expect(loadCompat()).rejects.toThrow("statebag diff needs refa, which is not installed");
  });

  it("the CLI reports it as an error with the fix, never a module-resolution trace, and exits 3", async () => {
    without("typescript");
    const r = await cli(["gen", "--check"]);
    expect(r.code).toBe(3);
    expect(r.stderr).toContain("error: statebag gen needs typescript, which is not installed");
    expect(r.stderr).toMatch(/fix: +install the generator toolchain as dev dependencies: npm i -D typescript@/);
    expect(r.stderr).not.toContain("Cannot find module");
  });
});
