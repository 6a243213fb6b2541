/**
 * Import, save, load and export agree on one size limit (`limits.maxBytes`): what an import
 * accepts can be saved, exported and imported again under the same limit, and a document whose
 * session statebag could not write back within it is refused up front (InteropSizeError: the
 * limit, the size, how to proceed). The edges are tested with an injected limit on small sessions
 * (exactly at it, and one byte under), in every shape statebag writes; one test runs the default
 * limits themselves on a document at the 64 MiB edge (one long message, cheap to build).
 */
import { describe, expect, it } from "vitest";
import type { AgentSession } from "../../src/runtime/core/session.js";
import { jsonEqual } from "../../src/runtime/core/json.js";
import {
  InteropError,
  InteropSizeError,
  exportSession,
  exportSessionDocument,
  importSession,
  type SessionShape,
} from "../../src/runtime/interop/index.js";
import { DEFAULT_JSON_LIMITS, JsonParseError } from "../../src/runtime/json/safe-json.js";
import { deserializeSession, serializeSession } from "../../src/runtime/persistence/serialization.js";
import { defaultSessionCodec } from "../../src/runtime/stores/codec.js";
import { DEFAULT_MAX_BYTES } from "../../src/cli/read-document.js";

const bytes = (text: string) => Buffer.byteLength(text, "utf8");

/** A .NET document of `n` messages (a user/assistant conversation), compact as .NET writes it. */
function dotnetDocument(n: number, text = (i: number) => `message ${i}: ünïcödé ✓`): string {
  const messages = Array.from({ length: n }, (_, i) => ({
    role: i % 2 === 0 ? "user" : "assistant",
    contents: [{ $type: "text", text: text(i) }],
  }));
  return JSON.stringify({ stateBag: { InMemoryChatHistoryProvider: { messages } } });
}

const unlimited = { maxBytes: Number.MAX_SAFE_INTEGER };
const session = importSession(dotnetDocument(40), { from: "dotnet", limits: unlimited });

/** What statebag writes for `s` read as `shape`, compact: its statebag document and the shape's. */
function writtenBack(s: AgentSession, shape: SessionShape): number {
  return Math.max(bytes(serializeSession(s)), bytes(JSON.stringify(exportSessionDocument(s, { to: shape }))));
}

const SHAPES: SessionShape[] = [
  "dotnet",
  "dotnet-thread",
  "dotnet-provider-state",
  "python",
  "python-memory",
  "python-thread",
  "python-file-store",
  "ag-ui-snapshot",
  "durable",
  "durable-2-preview",
];

describe.each(SHAPES)("%s: one size limit from import to export and back", (shape) => {
  // The document as Agent Framework holds it (compact), and what its import writes back.
  const input = exportSession(session, { to: shape, indent: 0, limits: unlimited });
  const imported = importSession(input, { from: shape, limits: unlimited });
  const edge = writtenBack(imported, shape);

  it("at the limit: imports, saves and loads, exports (compactly) and imports the export again", () => {
    expect(bytes(input)).toBeLessThanOrEqual(edge);
    const limits = { maxBytes: edge };
    const read = importSession(input, { from: shape, limits });
    // Saved and loaded with the same limit (a store's codec holds both sides to it).
    const codec = defaultSessionCodec({ limits });
    const loaded = codec.deserialize(codec.serialize(read));
    const exported = exportSession(loaded, { to: shape, limits });
    expect(bytes(exported)).toBeLessThanOrEqual(edge);
    // Indented while that fits; else the same document on one line.
    const pretty = exportSession(loaded, { to: shape, limits: unlimited });
    expect(exported).toBe(bytes(pretty) <= edge ? pretty : JSON.stringify(JSON.parse(pretty)));
    const again = importSession(exported, { from: shape, limits });
    expect(jsonEqual(again.stateBag, read.stateBag)).toBe(true);
  });

  it("one byte under: the import refuses up front, saying which limit, how big and how to proceed", () => {
    const limit = edge - 1;
    let error: unknown;
    try {
      importSession(input, { from: shape, limits: { maxBytes: limit } });
    } catch (e) {
      error = e;
    }
    if (bytes(input) === edge) {
      // The document itself is what statebag would write back (the Python shapes): the read refuses it.
      expect(error).toBeInstanceOf(JsonParseError);
      expect((error as JsonParseError).code).toBe("json-too-large");
      return;
    }
    expect(error).toBeInstanceOf(InteropSizeError);
    expect(error).toBeInstanceOf(InteropError);
    const e = error as InteropSizeError;
    expect(e.code).toBe("interop-import");
    expect(e.direction).toBe("import");
    expect(e.limit).toBe(limit);
    expect(e.bytes).toBe(edge);
    expect(["statebag", shape]).toContain(e.document);
    expect(e.message).toContain(`${limit.toLocaleString("en-US")} bytes`);
    expect(e.message).toContain(`${edge.toLocaleString("en-US")} bytes`);
    expect(e.message).toContain("limits.maxBytes");
    expect(e.hint).toContain(`raise limits.maxBytes to at least ${edge}`);
    expect(e.hint).toContain("--max-bytes");
  });
});

describe("export within the limit", () => {
  const indented = exportSession(session, { to: "python", limits: unlimited });
  const compact = exportSession(session, { to: "python", indent: 0, limits: unlimited });

  it("keeps the indentation while it fits, drops it when it alone would go over, refuses past the compact size", () => {
    expect(exportSession(session, { to: "python", limits: { maxBytes: bytes(indented) } })).toBe(indented);
    expect(exportSession(session, { to: "python", limits: { maxBytes: bytes(indented) - 1 } })).toBe(compact);
    expect(exportSession(session, { to: "python", limits: { maxBytes: bytes(compact) } })).toBe(compact);
    let error: unknown;
    try {
      exportSession(session, { to: "python", limits: { maxBytes: bytes(compact) - 1 } });
    } catch (e) {
      error = e;
    }
    expect(error).toBeInstanceOf(InteropSizeError);
    const e = error as InteropSizeError;
    expect(e.code).toBe("interop-export");
    expect([e.bytes, e.limit, e.document]).toEqual([bytes(compact), bytes(compact) - 1, "python"]);
    expect(e.message).toMatch(/the document would be [\d,]+ bytes .*written compactly, over the [\d,]+ bytes .*limit/);
  });
});

describe("the default limits agree (no limit passed anywhere)", () => {
  it("are one number: the loader's, the CLI's --max-bytes default, the stores' codec and the export's", () => {
    expect(DEFAULT_MAX_BYTES).toBe(DEFAULT_JSON_LIMITS.maxBytes);
    expect(DEFAULT_JSON_LIMITS.maxBytes).toBe(64 * 1024 * 1024);
  });

  it("a document at the 64 MiB edge imports, exports and imports again; one byte more is refused at import", () => {
    const limit = DEFAULT_JSON_LIMITS.maxBytes;
    // One long message: the sizes grow one byte per character, so the edge is found from a small one.
    const long = (n: number) => dotnetDocument(2, (i) => (i === 0 ? "x".repeat(n) : "ok"));
    const small = importSession(long(1), { from: "dotnet" });
    const n = limit - (writtenBack(small, "dotnet") - 1);
    const input = long(n);
    expect(bytes(input)).toBeLessThanOrEqual(limit);

    const read = importSession(input, { from: "dotnet" });
    expect(writtenBack(read, "dotnet")).toBe(limit);
    const exported = exportSession(read, { to: "dotnet" });
    expect(bytes(exported)).toBeLessThanOrEqual(limit);
    const again = importSession(exported, { from: "dotnet" });
    expect(jsonEqual(deserializeSession(serializeSession(again)).stateBag, read.stateBag)).toBe(true);

    const over = long(n + 1);
    expect(bytes(over)).toBeLessThanOrEqual(limit); // read within the limit ...
    expect(() => importSession(over, { from: "dotnet" })).toThrow(InteropSizeError); // ... but not writable back
  }, 60_000);
});
