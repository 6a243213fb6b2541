/**
 * The house's layers, as CONTRIBUTING.md#layers writes them down, are what Biome enforces
 * (`biome.json`: one `noRestrictedImports` override per room, `noImportCycles` on):
 *
 * - a probe file in every room imports every other room; one Biome run over the probes must refuse
 *   exactly the imports the table forbids (an arrow up, or a neighbour on the same floor) and let
 *   the others pass. Probes sit at the room's top and one folder down, so relative paths of both
 *   depths are covered. Two probes importing each other must be refused as a circle;
 * - every folder under src/runtime/ is a room of the table (a new room cannot escape the rule);
 * - src/generated/ (which Biome does not lint) imports only what its floor may.
 *
 * biome.json's layer overrides are written from the table by scripts/layers.mjs.
 */
import { execFileSync } from "node:child_process";
import { existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { dirname, join, posix, relative, resolve } from "node:path";
import { fileURLToPath } from "node:url";
import { describe, expect, it } from "vitest";
import { allowedOf, readLayers, type LayerRoom } from "../../scripts/layers.mjs";

const REPO = resolve(fileURLToPath(new URL("../../", import.meta.url)));
const BIOME = join(REPO, "node_modules/@biomejs/biome/bin/biome");

type Room = LayerRoom;

const ROOMS = readLayers(readFileSync(join(REPO, "CONTRIBUTING.md"), "utf8"));
const byName = new Map(ROOMS.map((room) => [room.name, room]));

/** The rooms `room` may import, by the table. */
function allowed(room: Room): Set<string> {
  const names = allowedOf(room, ROOMS);
  for (const name of names) if (!byName.has(name)) throw new Error(`${room.name} may import "${name}": no such room`);
  return names;
}

/** Where a room's probe files go (none for a room of one file: it cannot hold a probe). */
function probePaths(room: Room, tag: string): string[] {
  const glob = room.files.find((file) => !file.startsWith("!"))!;
  if (glob.endsWith("/**")) {
    const dir = glob.slice(0, -3);
    return [`${dir}/__layers-probe-${tag}.ts`, `${dir}/__layers-probe-${tag}/nested.ts`];
  }
  if (glob.endsWith("/*.ts")) return [`${glob.slice(0, -5)}/__layers-probe-${tag}.ts`];
  return [];
}

/** A file of the room for a probe to import (it need not exist: the rule reads the path). */
function targetFile(room: Room): string {
  const glob = room.files.find((file) => !file.startsWith("!"))!;
  if (glob.endsWith("/**")) return `${glob.slice(0, -3)}/some-module.ts`;
  if (glob.endsWith("/*.ts")) return `${glob.slice(0, -5)}/index.ts`;
  return glob;
}

function specifier(from: string, to: string): string {
  const rel = posix.relative(posix.dirname(from), to).replace(/\.ts$/, ".js");
  return rel.startsWith(".") ? rel : `./${rel}`;
}

/** The room a repository path belongs to, by the table's globs (undefined: none). */
function roomOf(path: string): Room | undefined {
  const matches = (glob: string) =>
    glob.endsWith("/**")
      ? path.startsWith(glob.slice(0, -2))
      : glob.endsWith("/*.ts")
        ? dirname(path) === glob.slice(0, -5) && path.endsWith(".ts")
        : path === glob;
  return ROOMS.find(
    (room) =>
      room.files.some((glob) => !glob.startsWith("!") && matches(glob)) &&
      !room.files.some((glob) => glob.startsWith("!") && matches(glob.slice(1))),
  );
}

describe("the layers (CONTRIBUTING.md#layers) are what Biome enforces", () => {
  it("the table is whole: floors rise, every room named once, every folder of src/runtime/ a room", () => {
    expect(ROOMS.length).toBeGreaterThan(10);
    expect(new Set(ROOMS.map((room) => room.name)).size).toBe(ROOMS.length);
    for (let i = 1; i < ROOMS.length; i++) expect(ROOMS[i].floor).toBeGreaterThanOrEqual(ROOMS[i - 1].floor);
    for (const room of ROOMS)
      for (const name of allowed(room))
        expect(byName.get(name)!.floor, `${room.name} may import ${name}, which is not below it`).toBeLessThan(
          room.floor,
        );
    const runtime = readdirSync(join(REPO, "src/runtime"), { withFileTypes: true })
      .filter((entry) => entry.isDirectory())
      .map((entry) => `src/runtime/${entry.name}/**`);
    const missing = runtime.filter((glob) => !ROOMS.some((room) => room.files.includes(glob)));
    expect(missing, "add a row for each of these to CONTRIBUTING.md#layers, and its override to biome.json").toEqual(
      [],
    );
    for (const dir of ["cli", "generated", "internal"])
      expect(roomOf(`src/${dir}/x.ts`)?.name, `src/${dir}/ is a room`).toBeDefined();
  });

  it("Biome refuses every import the table forbids, passes every one it allows, and refuses a circle", () => {
    const tag = `${process.pid}`;
    const written: string[] = [];
    const createdDirs: string[] = [];
    /** file -> line (1-based) -> [importer, target, forbidden] */
    const expected = new Map<string, Map<number, [string, string, boolean]>>();
    const write = (file: string, text: string) => {
      const abs = join(REPO, file);
      let dir = dirname(abs);
      const missing: string[] = [];
      while (!existsSync(dir)) {
        missing.push(dir);
        dir = dirname(dir);
      }
      mkdirSync(dirname(abs), { recursive: true });
      createdDirs.push(...missing);
      writeFileSync(abs, text);
      written.push(file);
    };
    try {
      for (const room of ROOMS) {
        if (room.name === "generated") continue; // not linted: checked below
        const ok = allowed(room);
        for (const probe of probePaths(room, tag)) {
          const lines: string[] = [];
          const byLine = new Map<number, [string, string, boolean]>();
          for (const target of ROOMS) {
            if (target.name === room.name) continue;
            lines.push(`import "${specifier(probe, targetFile(target))}";`);
            byLine.set(lines.length, [room.name, target.name, !ok.has(target.name)]);
          }
          write(probe, `${lines.join("\n")}\n`);
          expected.set(probe, byLine);
        }
      }
      const cycleA = `src/runtime/core/__layers-cycle-${tag}-a.ts`;
      const cycleB = `src/runtime/core/__layers-cycle-${tag}-b.ts`;
      write(cycleA, `import { b } from "./__layers-cycle-${tag}-b.js";\nexport const a = () => b;\n`);
      write(cycleB, `import { a } from "./__layers-cycle-${tag}-a.js";\nexport const b = () => a;\n`);

      let output = "";
      try {
        output = execFileSync(
          process.execPath,
          [BIOME, "lint", "--reporter=concise", "--max-diagnostics=none", "--colors=off", ...written],
          { cwd: REPO, encoding: "utf8", stdio: ["ignore", "pipe", "pipe"] },
        );
      } catch (err) {
        const failed = err as { stdout?: string; stderr?: string };
        output = `${failed.stdout ?? ""}${failed.stderr ?? ""}`;
      }
      const refused = new Set<string>();
      const cycles = new Set<string>();
      let message = "";
      for (const line of output.split("\n")) {
        const hit = /([\w./-]+\.ts):(\d+):\d+:? lint\/(style\/noRestrictedImports|suspicious\/noImportCycles)(.*)/.exec(
          line,
        );
        if (hit === null) continue;
        if (hit[3] === "suspicious/noImportCycles") cycles.add(hit[1]);
        else {
          refused.add(`${hit[1]}:${hit[2]}`);
          message ||= hit[4];
        }
      }

      const wrong: string[] = [];
      for (const [probe, byLine] of expected)
        for (const [line, [importer, target, forbidden]] of byLine) {
          const was = refused.has(`${probe}:${line}`);
          if (was !== forbidden)
            wrong.push(
              forbidden
                ? `${importer} must not import ${target}, but Biome lets ${probe}:${line} through`
                : `${importer} may import ${target}, but Biome refuses ${probe}:${line}`,
            );
        }
      expect(wrong, `biome.json does not match CONTRIBUTING.md#layers:\n${wrong.join("\n")}`).toEqual([]);

      // The two cases everyone reads first: an arrow up from the ground floor, and a legal one.
      const core = probePaths(byName.get("core")!, tag)[0];
      const coreToStores = [...expected.get(core)!].find(([, [, target]]) => target === "stores")![0];
      expect(refused.has(`${core}:${coreToStores}`)).toBe(true);
      const json = probePaths(byName.get("json")!, tag)[0];
      const jsonToCore = [...expected.get(json)!].find(([, [, target]]) => target === "core")![0];
      expect(refused.has(`${json}:${jsonToCore}`)).toBe(false);
      expect(message).toContain("CONTRIBUTING.md#layers");

      expect([...cycles].sort()).toEqual([cycleA, cycleB]);
    } finally {
      for (const file of written) rmSync(join(REPO, file), { force: true });
      for (const file of written) {
        const dir = dirname(join(REPO, file));
        if (dir.endsWith(`__layers-probe-${tag}`)) rmSync(dir, { recursive: true, force: true });
      }
      for (const dir of createdDirs.reverse()) rmSync(dir, { recursive: true, force: true });
    }
  }, 120_000);

  it("scripts/layers.mjs --check passes on the repository and fails, writing nothing, on a stale biome.json", () => {
    const before = readFileSync(join(REPO, "biome.json"), "utf8");
    execFileSync(process.execPath, [join(REPO, "scripts/layers.mjs"), "--check"], { stdio: "pipe" });
    expect(readFileSync(join(REPO, "biome.json"), "utf8")).toBe(before);

    // A copy of the repository's table and rule with one room's override dropped.
    const scratch = mkdtempSync(join(tmpdir(), "statebag-layers-check-"));
    mkdirSync(join(scratch, "scripts"), { recursive: true });
    writeFileSync(join(scratch, "scripts/layers.mjs"), readFileSync(join(REPO, "scripts/layers.mjs")));
    writeFileSync(join(scratch, "CONTRIBUTING.md"), readFileSync(join(REPO, "CONTRIBUTING.md")));
    const stale = JSON.parse(before) as { overrides: unknown[] };
    const layerRules = stale.overrides.filter((override) =>
      JSON.stringify(override).includes("CONTRIBUTING.md#layers"),
    );
    expect(layerRules.length).toBeGreaterThan(1);
    stale.overrides = stale.overrides.filter((override) => override !== layerRules[0]);
    const staleText = `${JSON.stringify(stale, null, 2)}\n`;
    writeFileSync(join(scratch, "biome.json"), staleText);
    let failure: { status?: number; stderr?: Buffer } | undefined;
    try {
      execFileSync(process.execPath, [join(scratch, "scripts/layers.mjs"), "--check"], { stdio: "pipe" });
    } catch (error) {
      failure = error as { status?: number; stderr?: Buffer };
    }
    expect(failure?.status).toBe(1);
    expect(String(failure?.stderr)).toContain("differs from the table");
    expect(readFileSync(join(scratch, "biome.json"), "utf8")).toBe(staleText);
    rmSync(scratch, { recursive: true, force: true });
  });

  it("src/generated/ imports only what its floor may (Biome does not lint it)", () => {
    const generated = byName.get("generated")!;
    const ok = allowed(generated);
    const wrong: string[] = [];
    for (const name of readdirSync(join(REPO, "src/generated")).filter((file) => file.endsWith(".ts"))) {
      const file = `src/generated/${name}`;
      const text = readFileSync(join(REPO, file), "utf8");
      for (const m of text.matchAll(/(?:from|import)\s*\(?\s*"(\.{1,2}\/[^"]+)"/g)) {
        const target = relative(REPO, join(REPO, "src/generated", m[1])).replace(/\.js$/, ".ts");
        const room = roomOf(target);
        if (room === generated || (room !== undefined && ok.has(room.name))) continue;
        wrong.push(`${file} -> ${target} (${room?.name ?? "no room"})`);
      }
    }
    expect(
      wrong,
      `generated code may import ${[...ok].join(", ")} only: put what it calls in checks/, registry/ or lower`,
    ).toEqual([]);
  });
});
