/**
 * `statebag import` and `statebag export` agree on one size limit (--max-bytes, default the
 * loader's 64 MiB): a session imported at the limit is saved, exported and imported again under
 * it (the final newline included), and one byte less is refused at import, up front, saying the
 * limit, the size and how to proceed. The limit is injected (--max-bytes) so the documents stay small.
 */
import { mkdtempSync, readFileSync, rmSync, statSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { exportSessionDocument, importSession } from "../../src/runtime/interop/index.js";
import { serializeSession } from "../../src/runtime/persistence/serialization.js";
import { cli } from "./helpers.js";

const dir = mkdtempSync(join(tmpdir(), "statebag-size-limits-"));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

const bytes = (text: string) => Buffer.byteLength(text, "utf8");
const messages = Array.from({ length: 30 }, (_, i) => ({
  role: i % 2 === 0 ? "user" : "assistant",
  contents: [{ $type: "text", text: `message ${i} ✓` }],
}));
const input = JSON.stringify({ stateBag: { InMemoryChatHistoryProvider: { messages } } });
const doc = join(dir, "chat-1.json");
writeFileSync(doc, input);

/** What statebag writes back for the document read as session "chat-1" (the file's name), compact. */
const session = importSession(input, { from: "dotnet", id: "chat-1", limits: { maxBytes: 1 << 30 } });
const edge = Math.max(
  bytes(serializeSession(session)),
  bytes(JSON.stringify(exportSessionDocument(session, { to: "dotnet" }))),
);

describe("import and export under one --max-bytes", () => {
  it("at the limit: import into a store, export, and import the export again", async () => {
    const store = `sqlite:${join(dir, "at.db")}`;
    const max = String(edge);
    const imported = await cli(["import", doc, "--store", store, "--max-bytes", max, "--json"]);
    expect(imported.code, imported.stderr).toBe(0);
    expect(imported.json()).toMatchObject({ imported: 1, failed: [] });

    const out = join(dir, "chat-1.dotnet.json");
    const exported = await cli([
      "export",
      "--to",
      "dotnet",
      "--id",
      "chat-1",
      "--store",
      store,
      "--max-bytes",
      max,
      "-o",
      out,
    ]);
    expect(exported.code, exported.stderr).toBe(0);
    // Written within the limit, its final newline included (indented, it would not be).
    expect(statSync(out).size).toBeLessThanOrEqual(edge);

    const again = await cli(["import", out, "--id", "chat-1", "--max-bytes", max]);
    expect(again.code, again.stderr).toBe(0);
    // Printed compactly (indented it would be over the limit) and within it: it reads back too.
    expect(bytes(again.stdout)).toBeLessThanOrEqual(edge);
    const printed = join(dir, "chat-1.statebag.json");
    writeFileSync(printed, again.stdout);
    const roundTrip = await cli(["export", "--to", "dotnet", printed, "--max-bytes", max]);
    expect(roundTrip.code, roundTrip.stderr).toBe(0);
    expect(JSON.parse(roundTrip.stdout)).toEqual(JSON.parse(readFileSync(out, "utf8")));
  });

  it("one byte under: the import refuses up front (nothing stored), naming the limit, the size and the fix", async () => {
    const store = `sqlite:${join(dir, "under.db")}`;
    const max = String(edge - 1);
    const refused = await cli(["import", doc, "--store", store, "--max-bytes", max, "--json"]);
    expect(refused.code).toBe(1);
    const report = refused.json<{ imported: number; failed: { file: string; message: string }[] }>();
    expect(report.imported).toBe(0);
    expect(report.failed).toHaveLength(1);
    expect(report.failed[0].message).toContain(`over that limit`);
    expect(report.failed[0].message).toContain(`${(edge - 1).toLocaleString("en-US")} bytes`);
    expect(report.failed[0].message).toContain(`${edge.toLocaleString("en-US")} bytes`);
    // Nothing was stored.
    const listed = await cli(["export", "--to", "dotnet", "--id", "chat-1", "--store", store]);
    expect(listed.code).toBe(1);
    expect(listed.stderr).toContain("does not exist");

    const one = await cli(["import", doc, "--id", "chat-1", "--max-bytes", max]);
    expect(one.code).toBe(1);
    expect(one.stdout).toBe("");
    expect(one.stderr).toContain("over that limit");
    expect(one.stderr).toContain(`raise limits.maxBytes to at least ${edge}`);
    expect(one.stderr).toContain("--max-bytes");
  });

  it("an export over the limit is refused before anything is written, and says how to proceed", async () => {
    const store = `sqlite:${join(dir, "export.db")}`;
    expect((await cli(["import", doc, "--store", store, "--max-bytes", String(edge)])).code).toBe(0);
    // The durable entity state spells every message out at length: over the limit even compact.
    const out = join(dir, "durable.json");
    const r = await cli([
      "export",
      "--to",
      "durable",
      "--id",
      "chat-1",
      "--store",
      store,
      "--max-bytes",
      String(edge),
      "-o",
      out,
    ]);
    expect(r.code).toBe(1);
    expect(r.stderr).toMatch(/the document would be [\d,]+ bytes .*written compactly, over the [\d,]+ bytes/);
    expect(r.stderr).toContain("--max-bytes");
    expect(() => statSync(out)).toThrow();
  });
});
