import { readFileSync } from "node:fs";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { cli, envelope, FIXTURES, sampleSession, tempDir } from "./helpers.js";

const tmp = tempDir();
afterAll(() => tmp.cleanup());

const dotnet = join(FIXTURES, "01_dotnet_chatclientagentsession_inmemory_history.json");
const python = join(FIXTURES, "04_python_agentsession_to_dict.json");

describe("statebag import", () => {
  it("reads a .NET session and prints a valid statebag document", async () => {
    const r = await cli(["import", "--from", "dotnet", dotnet, "--id", "from-dotnet"]);
    expect(r.code).toBe(0);
    const doc = JSON.parse(r.stdout);
    expect(doc).toMatchObject({ format: "statebag.session", formatVersion: 1, session: { id: "from-dotnet" } });
    expect(doc.session.stateBag["statebag.chatHistory"].messages[0]).toMatchObject({ authorName: "testAuthor", role: "user", contents: [] });
    // What import prints, validate accepts.
    expect((await cli(["validate", "-"], { stdin: r.stdout })).code).toBe(0);
  });

  it("reads a Python session, writes --out and --save to a store", async () => {
    const out = join(tmp.dir, "py.statebag.json");
    const store = `sqlite:${tmp.dir}/import.db`;
    const r = await cli(["import", "--from", "python", python, "--out", out, "--save", "--store", store]);
    expect(r.code).toBe(0);
    expect(r.stdout).toContain('as session "s1"');
    expect(JSON.parse(readFileSync(out, "utf8")).session.conversationId).toBe("svc1");
    const inspected = await cli(["inspect", "--store", store, "s1", "--json"]);
    expect(inspected.json().ok).toBe(true);
  });

  it("exits 1 for a document that is not in the given format, naming the pointer", async () => {
    const r = await cli(["import", "--from", "python", dotnet]);
    expect(r.code).toBe(1);
    expect(r.stderr).toMatch(/Python session format/);
    expect(r.stderr).toMatch(/where: .* at \//);
    const json = await cli(["import", "--from", "dotnet", tmp.file("junk.json", "{nope"), "--json"]);
    expect(json.code).toBe(1);
    expect(json.json().ok).toBe(false);
  });

  it("exits 2 for a missing file or an unknown format", async () => {
    expect((await cli(["import", "--from", "dotnet", "/nonexistent.json"])).code).toBe(2);
    const bad = await cli(["import", "--from", "java", dotnet]);
    expect(bad.code).toBe(2);
    expect(bad.stderr).toMatch(/dotnet/);
  });
});

describe("statebag export", () => {
  it("writes a statebag session as .NET and Python documents", async () => {
    const file = tmp.file("s.json", envelope(sampleSession("exp")));
    const net = await cli(["export", "--to", "dotnet", file]);
    expect(net.code).toBe(0);
    expect(JSON.parse(net.stdout).stateBag.InMemoryChatHistoryProvider.messages).toHaveLength(2);
    const py = await cli(["export", "--to", "python", file, "--no-metadata"]);
    expect(py.code).toBe(0);
    expect(JSON.parse(py.stdout)).toMatchObject({ type: "session", session_id: "exp" });
  });

  it("round-trips: import (.NET) -> export (.NET) gives the document back (MEAI defaults made explicit)", async () => {
    const imported = await cli(["import", "--from", "dotnet", dotnet, "--id", "rt"]);
    const exported = await cli(["export", "--to", "dotnet", "-", "--no-metadata"], { stdin: imported.stdout });
    expect(exported.code).toBe(0);
    expect(JSON.parse(exported.stdout)).toEqual({ stateBag: { InMemoryChatHistoryProvider: { messages: [{ authorName: "testAuthor", role: "user", contents: [] }] } } });
  });

  it("exports a stored session with --id and writes --out", async () => {
    const store = `sqlite:${tmp.dir}/export.db`;
    await cli(["import", "--from", "dotnet", dotnet, "--id", "stored", "--save", "--store", store]);
    const out = join(tmp.dir, "out.py.json");
    const r = await cli(["export", "--to", "python", "--id", "stored", "--store", store, "-o", out]);
    expect(r.code).toBe(0);
    expect(JSON.parse(readFileSync(out, "utf8")).session_id).toBe("stored");
    const missing = await cli(["export", "--to", "python", "--id", "absent", "--store", store]);
    expect(missing.code).toBe(1);
  });

  it("exits 1 for an invalid session and 2 for bad usage", async () => {
    const bad = sampleSession("bad");
    bad.stateBag["statebag.chatHistory"].messages[0].role = 7;
    expect((await cli(["export", "--to", "dotnet", tmp.file("bad.json", envelope(bad))])).code).toBe(1);
    expect((await cli(["export", "--to", "dotnet"])).code).toBe(2);
    expect((await cli(["export", "--to", "dotnet", "x.json", "--id", "y"])).code).toBe(2);
    expect((await cli(["export", "s.json"])).code).toBe(2); // --to is required
  });
});
