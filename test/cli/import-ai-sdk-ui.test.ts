/** `statebag import --from ai-sdk-ui`: chats AI SDK UI apps saved (UIMessage[] JSON) into statebag sessions. */
import { readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { toUIMessages } from "../../src/ui-messages.js";
import { REPO, cli, tempDir } from "./helpers.js";

const tmp = tempDir();
afterAll(() => tmp.cleanup());
const DIR = join(REPO, "test/fixtures/ai-sdk-ui");
const CHATS = join(DIR, "chats");

describe("statebag import --from ai-sdk-ui", () => {
  it("imports one chat file: id from the file name, a valid session whose history reads back as the same UI messages", async () => {
    const r = await cli(["import", "--from", "ai-sdk-ui", join(CHATS, "v7-denied.json")]);
    expect(r.code, r.stderr).toBe(0);
    const doc = JSON.parse(r.stdout);
    expect(doc.session.id).toBe("v7-denied");
    expect((await cli(["validate", "-"], { stdin: r.stdout })).code).toBe(0);
    const original = JSON.parse(readFileSync(join(CHATS, "v7-denied.json"), "utf8"));
    expect(toUIMessages(doc.session)).toEqual(original);
    // The denied call is in the history the way statebag's agent records it.
    const contents = doc.session.stateBag["statebag.chatHistory"].messages.flatMap(
      (m: { contents: unknown[] }) => m.contents,
    );
    expect(contents).toContainEqual(
      expect.objectContaining({ $type: "toolApprovalResponse", requestId: "ap-a", approved: false, reason: "not now" }),
    );
    expect(contents).toContainEqual({
      $type: "functionResult",
      callId: "call_b",
      result: { error: "SMTP unavailable" },
    });
  });

  it("imports a directory and a many-chats file into a store, with a dry run first and nothing twice", async () => {
    const store = `sqlite:${tmp.dir}/ui.db`;
    const dry = await cli([
      "import",
      "--from",
      "ai-sdk-ui",
      CHATS,
      join(DIR, "many-chats.json"),
      "--store",
      store,
      "--dry-run",
      "--json",
    ]);
    expect(dry.code, dry.stderr).toBe(0);
    expect(dry.json()).toMatchObject({ ok: true, dryRun: true, documents: 4, imported: 5 });
    const first = await cli([
      "import",
      "--from",
      "ai-sdk-ui",
      CHATS,
      join(DIR, "many-chats.json"),
      "--store",
      store,
      "--json",
    ]);
    expect(first.json()).toMatchObject({ ok: true, imported: 5, unchanged: 0 });
    const again = await cli([
      "import",
      "--from",
      "ai-sdk-ui",
      CHATS,
      join(DIR, "many-chats.json"),
      "--store",
      store,
      "--json",
    ]);
    expect(again.json()).toMatchObject({ ok: true, imported: 0, unchanged: 5 });
    const inspected = await cli(["inspect", "--store", store, "chat-2", "--json"]);
    expect(inspected.code).toBe(0);
    const text = await cli(["import", "--from", "ai-sdk-ui", CHATS, "--store", store]);
    expect(text.stdout).toContain("already there 3");
  });

  it("reads ai 5 and 6 shapes (no approvals; a pending approval)", async () => {
    for (const name of ["v5-weather", "v6-refund"]) {
      const r = await cli(["import", "--from", "ai-sdk-ui", join(CHATS, `${name}.json`)]);
      expect(r.code, r.stderr).toBe(0);
      const session = JSON.parse(r.stdout).session;
      expect(toUIMessages(session)).toEqual(JSON.parse(readFileSync(join(CHATS, `${name}.json`), "utf8")));
    }
  });

  it("reports bad chats with file and pointer, and goes on with the rest", async () => {
    const dir = tmp.dir;
    writeFileSync(
      join(dir, "bad-state.json"),
      JSON.stringify([
        { id: "m", role: "assistant", parts: [{ type: "tool-x", toolCallId: "c", state: "exploded", input: {} }] },
      ]),
    );
    writeFileSync(join(dir, "bad-role.json"), JSON.stringify([{ id: "m", role: "tool\u001b[31m", parts: [] }]));
    writeFileSync(
      join(dir, "proto.json"),
      '[{"id":"m","role":"user","parts":[{"type":"data-x","data":{"__proto__":{"polluted":true}}}]}]',
    );
    writeFileSync(
      join(dir, "dup.json"),
      JSON.stringify([
        { id: "a", messages: [] },
        { id: "a", messages: [] },
      ]),
    );
    const r = await cli([
      "import",
      "--from",
      "ai-sdk-ui",
      join(dir, "bad-state.json"),
      join(dir, "bad-role.json"),
      join(dir, "proto.json"),
      join(dir, "dup.json"),
      "--store",
      `sqlite:${dir}/bad.db`,
      "--json",
    ]);
    expect(r.code).toBe(1);
    const report = r.json();
    expect(report.imported).toBe(1);
    const byFile = Object.fromEntries(
      report.failed.map((f: { file: string; pointer?: string; message: string }) => [f.file.split("/").pop(), f]),
    );
    expect(byFile["bad-state.json"]).toMatchObject({ pointer: "/0/parts/0/state" });
    expect(byFile["bad-role.json"]).toMatchObject({ pointer: "/0/role" });
    expect(byFile["bad-role.json"].message).not.toContain("\u001b");
    expect(byFile["dup.json"]).toMatchObject({ pointer: "/1/id" });
    expect(({} as { polluted?: boolean }).polluted).toBeUndefined();
  });

  it("one file with many chats needs a store; --id must fit; limits apply", async () => {
    const many = await cli(["import", "--from", "ai-sdk-ui", join(DIR, "many-chats.json")]);
    expect(many.code).toBe(2);
    expect(many.stderr).toContain("holds 2 chats");
    const withId = await cli(["import", "--from", "ai-sdk-ui", join(CHATS, "v5-weather.json"), "--id", "weather"]);
    expect(JSON.parse(withId.stdout).session.id).toBe("weather");
    const deep = join(tmp.dir, "deep.json");
    writeFileSync(
      deep,
      `[{"id":"m","role":"user","parts":[{"type":"data-x","data":${"[".repeat(5000)}${"]".repeat(5000)}}]}]`,
    );
    const r = await cli(["import", "--from", "ai-sdk-ui", deep]);
    expect(r.code).toBe(1);
    expect(r.stderr).toMatch(/deep/);
  });
});
