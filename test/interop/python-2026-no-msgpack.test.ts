/** Without the optional peer @msgpack/msgpack, msgpack files fail with MissingDependencyError naming `npm i @msgpack/msgpack`; JSON still works. */
import { describe, expect, it, vi } from "vitest";

vi.mock("../../src/runtime/core/optional-dependency.js", async (original) => {
  const actual = await original<typeof import("../../src/runtime/core/optional-dependency.js")>();
  return {
    ...actual,
    importPackage: async (name: string) => {
      if (name === "@msgpack/msgpack")
        throw Object.assign(new Error(`Cannot find package '${name}'`), { code: "ERR_MODULE_NOT_FOUND" });
      return import(name);
    },
  };
});

describe("msgpack is an optional peer", () => {
  it("names the package and the install command; JSON histories need nothing", async () => {
    const { importSessionMsgpack, readHistoryJsonl } = await import("../../src/runtime/interop/index.js");
    const { MissingDependencyError } = await import("../../src/runtime/core/optional-dependency.js");
    const error = await importSessionMsgpack(new Uint8Array([0x80]), { from: "python-file-store" }).catch(
      (e: unknown) => e,
    );
    expect(error).toBeInstanceOf(MissingDependencyError);
    expect((error as { hint?: string }).hint).toBe("npm i @msgpack/msgpack");
    expect(readHistoryJsonl('{"type":"message","role":"user","contents":[]}\n')).toHaveLength(1);
  });
});
