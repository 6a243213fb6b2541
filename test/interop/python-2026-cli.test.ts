/** `statebag import --from python-history` / `export --to python-history`, msgpack FileSessionStore snapshots through the CLI (issue #27). */
import { copyFileSync, mkdirSync, readFileSync, readdirSync } from "node:fs";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { cli, FIXTURES, tempDir } from "../cli/helpers.js";

const tmp = tempDir("statebag-py2026-");
afterAll(() => tmp.cleanup());

describe("FileHistoryProvider histories through the CLI", () => {
  it("imports a directory of .jsonl and .msgpack histories into message logs, once, and exports them back byte for byte", async () => {
    const dir = join(tmp.dir, "history");
    mkdirSync(dir);
    copyFileSync(join(FIXTURES, "61_python_file_history.jsonl"), join(dir, "s1.jsonl"));
    copyFileSync(join(FIXTURES, "62_python_file_history.msgpack"), join(dir, "~session-Li4vYSBi.msgpack"));
    const store = `sqlite:${tmp.dir}/history.db`;
    const first = await cli(["import", "--from", "python-history", dir, "--store", store, "--json"]);
    expect(first.code, first.stderr).toBe(0);
    expect(
      first.json().files.map((f: { log: string; outcome: string; messages: number }) => [f.log, f.outcome, f.messages]),
    ).toEqual([
      ["s1", "imported", 5],
      ["../a b", "imported", 5],
    ]);
    const again = await cli(["import", "--from", "python-history", dir, "--store", store, "--json"]);
    expect(again.json().files.map((f: { outcome: string }) => f.outcome)).toEqual(["unchanged", "unchanged"]);

    const jsonl = await cli(["export", "--to", "python-history", "--id", "s1", "--store", store]);
    expect(jsonl.code, jsonl.stderr).toBe(0);
    expect(jsonl.stdout).toBe(readFileSync(join(FIXTURES, "61_python_file_history.jsonl"), "utf8"));
    const out = join(tmp.dir, "back.msgpack");
    const packed = await cli(["export", "--to", "python-history", "--id", "../a b", "--store", store, "--out", out]);
    expect(packed.code, packed.stderr).toBe(0);
    expect(readFileSync(out).equals(readFileSync(join(FIXTURES, "62_python_file_history.msgpack")))).toBe(true);
  });

  it("without --from, a history file is named as one and not read as a session", async () => {
    const file = join(tmp.dir, "s2.jsonl");
    copyFileSync(join(FIXTURES, "61_python_file_history.jsonl"), file);
    const r = await cli(["import", file]);
    expect(r.code).toBe(1);
    expect(r.stderr).toMatch(/FileHistoryProvider history/);
    expect(r.stderr).toMatch(/--from python-history --store/);
  });

  it("a bad record is reported with its file and record; the rest go in", async () => {
    const dir = join(tmp.dir, "bad");
    mkdirSync(dir);
    copyFileSync(join(FIXTURES, "61_python_file_history.jsonl"), join(dir, "ok.jsonl"));
    tmp.file("bad/broken.jsonl", "{not-json}\n");
    const r = await cli(["import", "--from", "python-history", dir, "--store", `sqlite:${tmp.dir}/bad.db`, "--json"]);
    expect(r.code).toBe(1);
    const files = r.json().files as { file: string; outcome: string; message?: string }[];
    expect(files.map((f) => f.outcome)).toEqual(["failed", "imported"]);
    expect(files[0].message).toMatch(/history line 1 is not JSON/);
  });
});

describe("msgpack FileSessionStore snapshots through the CLI", () => {
  it("imports a store directory holding a .msgpack snapshot, and exports --msgpack snapshots back byte for byte", async () => {
    const dir = join(tmp.dir, "sessions");
    mkdirSync(dir);
    copyFileSync(join(FIXTURES, "60_python_file_store_msgpack_snapshot.msgpack"), join(dir, "binary-session.msgpack"));
    const store = `sqlite:${tmp.dir}/sessions.db`;
    const r = await cli(["import", dir, "--store", store, "--json"]);
    expect(r.code, r.stderr).toBe(0);
    expect(r.json().byShape).toEqual({ "python-file-store": { imported: 1, unchanged: 0, conflicts: 0 } });
    const out = join(tmp.dir, "exported");
    const e = await cli(["export", "--to", "python-file-store", "--msgpack", "--all", "--store", store, "--out", out]);
    expect(e.code, e.stderr).toBe(0);
    expect(readdirSync(out)).toEqual(["binary-session.msgpack"]);
    expect(
      readFileSync(join(out, "binary-session.msgpack")).equals(
        readFileSync(join(FIXTURES, "60_python_file_store_msgpack_snapshot.msgpack")),
      ),
    ).toBe(true);
    expect(
      (await cli(["export", "--to", "dotnet", "--msgpack", "--id", "binary-session", "--store", store])).code,
    ).toBe(2);
  });
});
