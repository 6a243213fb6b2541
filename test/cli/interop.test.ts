import { copyFileSync, mkdirSync, readdirSync, readFileSync, writeFileSync } from "node:fs";
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
    expect(doc.session.stateBag["statebag.chatHistory"].messages[0]).toMatchObject({
      authorName: "testAuthor",
      role: "user",
      contents: [],
    });
    // What import prints, validate accepts.
    expect((await cli(["validate", "-"], { stdin: r.stdout })).code).toBe(0);
  });

  it("reads a Python session, writes --out and --save to a store", async () => {
    const out = join(tmp.dir, "py.statebag.json");
    const store = `sqlite:${tmp.dir}/import.db`;
    const r = await cli(["import", "--from", "python", python, "--out", out, "--save", "--store", store]);
    expect(r.code).toBe(0);
    expect(r.stdout).toContain("is session s1");
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
    const py = await cli(["export", "--to", "python", file]);
    expect(py.code).toBe(0);
    expect(JSON.parse(py.stdout)).toMatchObject({ type: "session", session_id: "exp" });
  });

  it("round-trips: import (.NET) -> export (.NET) gives the document back (MEAI defaults made explicit)", async () => {
    const imported = await cli(["import", "--from", "dotnet", dotnet, "--id", "rt"]);
    const exported = await cli(["export", "--to", "dotnet", "-"], { stdin: imported.stdout });
    expect(exported.code).toBe(0);
    expect(JSON.parse(exported.stdout)).toEqual({
      stateBag: {
        InMemoryChatHistoryProvider: { messages: [{ authorName: "testAuthor", role: "user", contents: [] }] },
      },
    });
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
    expect((await cli(["export", "--to", "dotnet", "--all"])).code).toBe(2); // --all needs --out
    expect((await cli(["export", "s.json"])).code).toBe(2); // --to is required
  });
});

describe("statebag import: every shape, recognised", () => {
  it("recognises the shape without --from, says which and why", async () => {
    const r = await cli(["import", join(FIXTURES, "20_dotnet_thread_store_state.json"), "--id", "t"]);
    expect(r.code).toBe(0);
    expect(r.stderr).toMatch(/recognised dotnet-thread: "storeState"/);
    expect(JSON.parse(r.stdout).session.stateBag["statebag.chatHistory"].messages[0].authorName).toBe("testAuthor");
    const json = await cli(["import", join(FIXTURES, "30_durable_state_readme_sample_1_0_0.json"), "--json"]);
    expect(json.json()).toMatchObject({
      ok: true,
      from: "durable",
      evidence: expect.stringContaining("schemaVersion"),
    });
  });

  it("asks for --from when two readings are possible, and accepts every shape name", async () => {
    const doc = tmp.file("both.json", {
      type: "session",
      session_id: "s",
      service_session_id: null,
      state: { memory: { messages: [] }, in_memory: { messages: [] } },
    });
    const r = await cli(["import", doc]);
    expect(r.code).toBe(1);
    expect(r.stderr).toMatch(/two readings are possible: python or python-memory/);
    expect(r.stderr).toMatch(/--from python/);
    expect((await cli(["import", "--from", "python-memory", doc])).code).toBe(0);
    const unknown = await cli(["import", tmp.file("odd.json", { hello: 1 })]);
    expect(unknown.code).toBe(1);
    expect(unknown.stderr).toMatch(/--from/);
  });

  it("refuses a FileSessionStore snapshot of another version with the store's message", async () => {
    const r = await cli(["import", join(FIXTURES, "25_python_file_store_unsupported_version_1_1.json")]);
    expect(r.code).toBe(1);
    expect(r.stderr).toContain("Unsupported session snapshot version '1.1'; expected '1.0'.");
  });
});

describe("statebag import into a store: many documents", () => {
  it("imports a directory with progress summary, reports unreadable documents, is idempotent and has a dry run", async () => {
    const dir = join(tmp.dir, "mixed");
    mkdirSync(dir);
    for (const name of [
      "20_dotnet_thread_store_state.json",
      "21_dotnet_thread_conversation_id.json",
      "12_python_session_function_call_reasoning_unknown_tag.json",
      "30_durable_state_readme_sample_1_0_0.json",
      "25_python_file_store_unsupported_version_1_1.json",
    ]) {
      copyFileSync(join(FIXTURES, name), join(dir, name));
    }
    writeFileSync(join(dir, "broken.json"), '{"storeState": {"messages": [{"role": 5}]}}');
    writeFileSync(join(dir, ".hidden.json.tmp"), "ignored");
    const store = `sqlite:${tmp.dir}/bulk.db`;
    const dry = await cli(["import", dir, "--store", store, "--dry-run", "--json"]);
    expect(dry.code).toBe(1);
    const planned = dry.json();
    expect(planned).toMatchObject({ ok: false, dryRun: true, documents: 6, imported: 4, unchanged: 0 });
    expect(planned.failed.map((f: { file: string }) => f.file)).toEqual(
      [join(dir, "25_python_file_store_unsupported_version_1_1.json"), join(dir, "broken.json")].map((p) =>
        p.replace(tmp.dir, tmp.dir),
      ),
    );
    expect(planned.failed[1]).toMatchObject({ pointer: "/storeState/messages/0/role" });
    expect((await cli(["inspect", "--store", store, "--json"])).json().sessions ?? []).toHaveLength(0);

    const first = await cli(["import", dir, "--store", store]);
    expect(first.code).toBe(1);
    expect(first.stdout).toMatch(/imported 4, already there 0/);
    expect(first.stdout).toMatch(/dotnet-thread\s+imported 2/);
    expect(first.stdout).toMatch(
      /✖ .*broken\.json at \/storeState\/messages\/0\/role: .*expected a string role, found number 5/,
    );
    const again = await cli(["import", dir, "--store", store, "--json"]);
    expect(again.json()).toMatchObject({ imported: 0, unchanged: 4 });
    // Documents without an id of their own are stored under their file name.
    const stored = await cli(["inspect", "--store", store, "20_dotnet_thread_store_state", "--json"]);
    expect(stored.json().ok).toBe(true);
  });

  it("importing the same document again reports it already there and writes nothing", async () => {
    const store = `sqlite:${tmp.dir}/again.db`;
    const first = await cli(["import", "--from", "python", python, "--store", store, "--json"]);
    expect(first.json()).toMatchObject({ imported: 1, unchanged: 0 });
    const before = (await cli(["inspect", "--store", store, "s1", "--json"])).stdout;
    const again = await cli(["import", "--from", "python", python, "--store", store, "--json"]);
    expect(again.code).toBe(0);
    expect(again.json()).toMatchObject({ imported: 0, unchanged: 1 });
    expect(again.json().conflicts ?? []).toHaveLength(0);
    expect((await cli(["inspect", "--store", store, "s1", "--json"])).stdout).toBe(before);
  });

  it("a Python FileSessionStore directory: read into a store, written back as a store directory", async () => {
    const src = join(tmp.dir, "pystore");
    mkdirSync(src);
    const snapshot = (id: string) => ({
      type: "session",
      session_id: id,
      service_session_id: null,
      state: {
        in_memory: { messages: [{ type: "message", role: "user", contents: [{ type: "text", text: `hi ${id}` }] }] },
      },
      version: "1.0",
    });
    writeFileSync(join(src, "user-1.json"), JSON.stringify(snapshot("user-1")));
    writeFileSync(join(src, "~session-dGVuYW50L3VzZXI.json"), JSON.stringify(snapshot("tenant/user")));
    writeFileSync(join(src, ".user-1.json.0123.corrupt"), "{not-json");
    const store = `sqlite:${tmp.dir}/pystore.db`;
    const r = await cli(["import", "--from", "python-file-store", src, "--store", store, "--json"]);
    expect(r.json()).toMatchObject({ ok: true, imported: 2, byShape: { "python-file-store": { imported: 2 } } });
    const back = join(tmp.dir, "pystore-back");
    const exported = await cli(["export", "--to", "python-file-store", "--all", "--store", store, "--out", back]);
    expect(exported.code).toBe(0);
    expect(readdirSync(back).sort()).toEqual(["user-1.json", "~session-dGVuYW50L3VzZXI.json"]);
    expect(JSON.parse(readFileSync(join(back, "~session-dGVuYW50L3VzZXI.json"), "utf8"))).toEqual(
      snapshot("tenant/user"),
    );
  });
});

describe("statebag export: shapes and metadata", () => {
  it("adds statebag metadata only with --with-metadata; writes older shapes", async () => {
    const file = tmp.file("meta.json", envelope(sampleSession("meta")));
    const bare = JSON.parse((await cli(["export", "--to", "dotnet", file])).stdout);
    expect(bare.stateBag["statebag.session"]).toBeUndefined();
    const withMeta = JSON.parse((await cli(["export", "--to", "dotnet", file, "--with-metadata"])).stdout);
    expect(withMeta.stateBag["statebag.session"]).toMatchObject({ id: "meta" });
    const thread = JSON.parse((await cli(["export", "--to", "dotnet-thread", file])).stdout);
    expect(Object.keys(thread)).toEqual(["storeState"]);
    const durable = JSON.parse((await cli(["export", "--to", "durable", file])).stdout);
    expect(durable.schemaVersion).toBe("1.1.0");
  });
});
