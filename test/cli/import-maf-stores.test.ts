/** `statebag import --from dotnet-fs-store <root>` and `--from cosmos-chat-history <file>` (issue #27). Fixtures 45-47. */
import { cpSync, existsSync, mkdirSync, readFileSync, symlinkSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { DOTNET_FS_STORE_KEY } from "../../src/runtime/interop/maf-stores.js";
import { exportSessionDocument } from "../../src/runtime/interop/index.js";
import { openStore } from "../../src/stores.js";
import { cli, FIXTURES, tempDir } from "./helpers.js";

const tmp = tempDir("statebag-maf-stores-");
afterAll(() => tmp.cleanup());

/** A copy of fixture 45 (a fresh tree per test). */
function tree(name: string): string {
  const root = join(tmp.dir, name);
  cpSync(join(FIXTURES, "45_dotnet_fs_store"), root, { recursive: true });
  return root;
}

interface FileReport {
  file: string;
  id?: string;
  agent?: string;
  user?: string;
  conversation?: string;
  outcome: string;
  message?: string;
}

describe("import --from dotnet-fs-store", () => {
  it("imports the whole tree with agent/user/conversation kept, reports each file, and a re-run writes nothing", async () => {
    const root = tree("fs1");
    const db = join(tmp.dir, "fs1.db");
    const first = await cli(["import", "--from", "dotnet-fs-store", root, "--store", `sqlite:${db}`, "--json"]);
    expect(first.code, first.stderr).toBe(0);
    const report = first.json();
    expect(report.files.map((f: FileReport) => [f.id, f.agent, f.user, f.conversation, f.outcome])).toEqual([
      ["a-Concierge/c-conv%2F2", "Concierge", undefined, "conv/2", "imported"],
      ["a-Concierge/u-alice/c-conv-1", "Concierge", "alice", "conv-1", "imported"],
      ["c-local", undefined, undefined, "local", "imported"],
    ]);
    expect(report.skipped).toEqual([]);

    const store = await openStore(`sqlite:${db}`);
    try {
      const { session } = (await store.get("a-Concierge/u-alice/c-conv-1"))!;
      expect((session.stateBag[DOTNET_FS_STORE_KEY] as unknown as { value: unknown }).value).toEqual({
        conversation: "conv-1",
        agent: "Concierge",
        user: "alice",
      });
      // the owner is statebag's record, not written back: the .NET file comes out as it went in
      expect(exportSessionDocument(session, { to: "dotnet" })).toEqual(
        JSON.parse(readFileSync(join(root, "a-Concierge/u-alice/c-conv-1.json"), "utf8")),
      );
      const before = (await store.get("c-local"))!.revision;
      const again = await cli(["import", "--from", "dotnet-fs-store", root, "--store", `sqlite:${db}`, "--json"]);
      expect(again.code, again.stderr).toBe(0);
      expect(again.json().files.map((f: FileReport) => f.outcome)).toEqual(["unchanged", "unchanged", "unchanged"]);
      expect(again.json().imported).toBe(0);
      expect((await store.get("c-local"))!.revision).toBe(before);
    } finally {
      await store.close();
    }
  });

  it("text report: a line per file; --dry-run creates no store", async () => {
    const root = tree("fs-dry");
    const db = join(tmp.dir, "dry.db");
    const r = await cli(["import", "--from", "dotnet-fs-store", root, "--store", `sqlite:${db}`, "--dry-run"]);
    expect(r.code, r.stderr).toBe(0);
    expect(r.stdout).toMatch(/3 session files .* \(dry run: nothing written\): would import 3/);
    expect(r.stdout).toMatch(
      /c-conv%2F2\.json -> session a-Concierge\/c-conv%2F2 \(agent Concierge, conversation conv\/2\): would import/,
    );
    expect(existsSync(db)).toBe(false);
  });

  it("hostile segment names are decoded, kept as data and shown escaped; links, temp files and stray entries are skipped and listed", async () => {
    const root = join(tmp.dir, "hostile");
    const session = readFileSync(join(FIXTURES, "45_dotnet_fs_store/c-local.json"), "utf8");
    mkdirSync(join(root, "a-__proto__", "u-%1B[31mred"), { recursive: true });
    writeFileSync(join(root, "a-__proto__", "u-%1B[31mred", "c-%2E%2E.json"), session);
    writeFileSync(join(root, "a-__proto__", "c-constructor.json"), session);
    writeFileSync(join(root, "c-%00%0Anew%25line.json"), session);
    writeFileSync(join(root, "c-x.json.tmp"), session);
    writeFileSync(join(root, ".c-hidden.json"), session);
    mkdirSync(join(root, "a-__proto__", "u-x", "u-nested"), { recursive: true });
    symlinkSync(join(root, "c-%00%0Anew%25line.json"), join(root, "c-link.json"));
    writeFileSync(join(root, "c-not-a-session.json"), JSON.stringify({ type: "session", session_id: "p", state: {} }));
    const db = `sqlite:${join(tmp.dir, "hostile.db")}`;
    const r = await cli(["import", "--from", "dotnet-fs-store", root, "--store", db, "--json"]);
    expect(r.code).toBe(1);
    const report = r.json();
    const files = report.files as FileReport[];
    expect(files.map((f) => [f.id, f.agent, f.user, f.conversation, f.outcome])).toEqual([
      ["a-__proto__/c-constructor", "__proto__", undefined, "constructor", "imported"],
      ["a-__proto__/u-%1B[31mred/c-%2E%2E", "__proto__", "\u001b[31mred", "..", "imported"],
      ["c-%00%0Anew%25line", undefined, undefined, "\0\nnew%line", "imported"],
      ["c-not-a-session", undefined, undefined, "not-a-session", "failed"],
    ]);
    expect(files[3].message).toMatch(/not a \.NET session document \(it looks like python\)/);
    expect(
      report.skipped.map((s: { file: string; reason: string }) => [s.file.slice(root.length + 1), s.reason]),
    ).toEqual([
      [".c-hidden.json", "not a c-{conversation}.json session file"],
      ["a-__proto__/u-x/u-nested", "not an a-{agent} or u-{user} directory of the store layout"],
      ["c-link.json", "a symbolic link (not followed)"],
      ["c-x.json.tmp", "an unfinished write (temp file)"],
    ]);
    expect(({} as Record<string, unknown>).conversation).toBeUndefined();
    // text: escaped, nothing raw reaches the terminal
    const text = await cli(["import", "--from", "dotnet-fs-store", root, "--store", db]);
    expect(text.code).toBe(1);
    expect(text.stdout).not.toMatch(/[\u0000\u001b]/);
    expect(text.stdout).toMatch(/already there 3, different session already stored 0, unreadable 1, skipped 4/);
  });

  it("the id check, the size limit and the usage rules hold as for other directory imports", async () => {
    const root = join(tmp.dir, "limits");
    mkdirSync(root);
    const session = readFileSync(join(FIXTURES, "45_dotnet_fs_store/c-local.json"), "utf8");
    writeFileSync(join(root, "c-small.json"), session);
    writeFileSync(join(root, "c-big.json"), JSON.stringify({ stateBag: { pad: "x".repeat(4000) } }));
    const db = `sqlite:${join(tmp.dir, "limits.db")}`;
    const r = await cli(["import", "--from", "dotnet-fs-store", root, "--store", db, "--max-bytes", "1KiB", "--json"]);
    expect(r.code).toBe(1);
    expect(r.json().files.map((f: FileReport) => [f.id, f.outcome])).toEqual([
      ["c-big", "failed"],
      ["c-small", "imported"],
    ]);
    expect(r.json().files[0].message).toMatch(/over the 1\.0 KiB document limit/);
    expect((await cli(["import", "--from", "dotnet-fs-store", root])).code).toBe(2); // no store
    expect((await cli(["import", "--from", "dotnet-fs-store", root, "--store", db, "--id", "x"])).code).toBe(2);
    expect((await cli(["import", "--from", "dotnet-fs-store", join(root, "c-small.json"), "--store", db])).code).toBe(
      2,
    );
    const empty = join(tmp.dir, "empty");
    mkdirSync(empty);
    expect((await cli(["import", "--from", "dotnet-fs-store", empty, "--store", db])).stderr).toMatch(
      /no c-\{conversation\}\.json session files/,
    );
  });
});

describe("import --from cosmos-chat-history", () => {
  for (const file of ["46_cosmos_chat_history_export.json", "47_cosmos_chat_history_export.jsonl"]) {
    it(`${file}: one message log per conversation; a re-run appends nothing`, async () => {
      const db = join(tmp.dir, `${file}.db`);
      const first = await cli([
        "import",
        "--from",
        "cosmos-chat-history",
        join(FIXTURES, file),
        "--store",
        `sqlite:${db}`,
        "--json",
      ]);
      expect(first.code, first.stderr).toBe(0);
      expect(
        first
          .json()
          .logs.map((l: { log: string; outcome: string; messages: number }) => [l.log, l.outcome, l.messages])
          .sort(),
      ).toEqual([
        ["contoso/alice/conv-2", "imported", 1],
        ["conv-1", "imported", 2],
      ]);
      const store = await openStore(`sqlite:${db}`);
      try {
        const before = await store.messages.readMessages("conv-1");
        expect(before.messages.map((m) => m.messageId)).toEqual(["m1", "m2"]);
        expect(before.messages[0].contents).toEqual([{ $type: "text", text: "Hello, world!" }]);
        const again = await cli([
          "import",
          "--from",
          "cosmos-chat-history",
          join(FIXTURES, file),
          "--store",
          `sqlite:${db}`,
          "--json",
        ]);
        expect(again.code, again.stderr).toBe(0);
        expect(again.json().logs.map((l: { outcome: string }) => l.outcome)).toEqual(["unchanged", "unchanged"]);
        const after = await store.messages.readMessages("conv-1");
        expect(after.version).toBe(before.version);
        expect(after.messages).toHaveLength(2);
      } finally {
        await store.close();
      }
    });
  }

  it("a grown export appends the rest; other messages in a log are reported; --dry-run writes nothing", async () => {
    const docs = JSON.parse(readFileSync(join(FIXTURES, "46_cosmos_chat_history_export.json"), "utf8")) as Record<
      string,
      unknown
    >[];
    const db = `sqlite:${join(tmp.dir, "grow.db")}`;
    const firstPart = tmp.file("part.json", [docs[0]]);
    expect((await cli(["import", "--from", "cosmos-chat-history", firstPart, "--store", db])).code).toBe(0);
    const whole = join(FIXTURES, "46_cosmos_chat_history_export.json");
    const dry = await cli(["import", "--from", "cosmos-chat-history", whole, "--store", db, "--dry-run", "--json"]);
    expect(
      dry.json().logs.map((l: { log: string; outcome: string; messages: number }) => [l.log, l.outcome, l.messages]),
    ).toEqual([
      ["conv-1", "appended", 1],
      ["contoso/alice/conv-2", "imported", 1],
    ]);
    const text = await cli(["import", "--from", "cosmos-chat-history", whole, "--store", db]);
    expect(text.code, text.stderr).toBe(0);
    expect(text.stdout).toMatch(/imported 1, appended to 1, already there 0/);
    const other = tmp.file("other.json", [
      { ...docs[0], message: '{"role":"user","contents":[{"$type":"text","text":"else"}]}' },
    ]);
    const conflict = await cli(["import", "--from", "cosmos-chat-history", other, "--store", db]);
    expect(conflict.code).toBe(1);
    expect(conflict.stdout).toMatch(/log conv-1 holds other messages/);
  });

  it("a bad document names its pointer; hostile conversation ids are stored as data and shown escaped", async () => {
    const bad = tmp.file(
      "bad.jsonl",
      '{"type":"ChatMessage","conversationId":"c","message":"{}"}\n{"type":"ChatMessage","conversationId":"c","message":5}\n',
    );
    const r = await cli([
      "import",
      "--from",
      "cosmos-chat-history",
      bad,
      "--store",
      `sqlite:${join(tmp.dir, "bad.db")}`,
    ]);
    expect(r.code).toBe(1);
    expect(r.stderr).toMatch(/\/1 \(line 2\)\/message/);
    const hostile = tmp.file("hostile.json", [
      {
        type: "ChatMessage",
        conversationId: "\u001b[2J__proto__",
        timestamp: 1,
        message: '{"role":"user","contents":[]}',
      },
      { type: "ChatMessage", conversationId: "x", timestamp: 1, message: '{"__proto__":{"polluted":1}}' },
    ]);
    const h = await cli([
      "import",
      "--from",
      "cosmos-chat-history",
      hostile,
      "--store",
      `sqlite:${join(tmp.dir, "hostile-cosmos.db")}`,
    ]);
    expect(h.code).toBe(1);
    expect(h.stderr).toMatch(/__proto__/);
    expect(({} as Record<string, unknown>).polluted).toBeUndefined();
    const ok = tmp.file("escape.json", [
      {
        type: "ChatMessage",
        conversationId: "\u001b[2J__proto__",
        timestamp: 1,
        message: '{"role":"user","contents":[]}',
      },
    ]);
    const e = await cli([
      "import",
      "--from",
      "cosmos-chat-history",
      ok,
      "--store",
      `sqlite:${join(tmp.dir, "escape.db")}`,
    ]);
    expect(e.code, e.stderr).toBe(0);
    expect(e.stdout).not.toContain("\u001b");
    expect((await cli(["import", "--from", "cosmos-chat-history", ok])).code).toBe(2);
  });
});
