/**
 * Plays a user: builds and packs statebag, installs the tarball into a fresh project outside this
 * repository, and walks the loop its users live in: `statebag init`, a provider state type,
 * `statebag gen`, an agent turn against SQLite, a restart, a load; then evolving the type, where
 * every mistake must fail at `tsc` or `gen --check` and the correct evolution must migrate the
 * stored session and run the next turn.
 *
 * The project reuses this repository's node_modules (symlinked: nothing is downloaded, and the
 * repository's own node_modules and package.json are never touched). Every command is a new
 * process, as it is for the user.
 */
import { execFile } from "node:child_process";
import { cpSync, existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, symlinkSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { delimiter, dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { projectFiles, tsBlocks } from "../readme/blocks.js";

const REPO = fileURLToPath(new URL("../../", import.meta.url));
const work = mkdtempSync(join(tmpdir(), "statebag-e2e-"));
const app = join(work, "acme-app");

interface Run {
  code: number;
  stdout: string;
  stderr: string;
}

/** Runs a command (a new process) with the project's bin folder and this Node first on PATH. */
function run(command: string, args: string[], options: { cwd?: string; env?: Record<string, string> } = {}): Promise<Run> {
  const PATH = [dirname(process.execPath), join(app, "node_modules/.bin"), process.env.PATH].join(delimiter);
  return new Promise((resolve) => {
    execFile(
      command,
      args,
      { cwd: options.cwd ?? app, env: { PATH, HOME: process.env.HOME ?? work, NO_COLOR: "1", npm_config_update_notifier: "false", ...options.env }, maxBuffer: 16 * 1024 * 1024, timeout: 240_000 },
      (error, stdout, stderr) => resolve({ code: error ? (typeof error.code === "number" ? error.code : 1) : 0, stdout, stderr }),
    );
  });
}

const statebag = (args: string[], cwd?: string) => run("npx", ["--no-install", "statebag", ...args], { cwd });
const tsc = () => run(process.execPath, [join(app, "node_modules/typescript/bin/tsc"), "--noEmit", "-p", "tsconfig.json"]);
/** The project's own script, run with tsx in a new process (a restart every time). */
const script = (...args: string[]) => run(process.execPath, ["--import", "tsx", "src/app.ts", ...args]);

function write(file: string, content: string | object): void {
  const path = join(app, file);
  mkdirSync(dirname(path), { recursive: true });
  writeFileSync(path, typeof content === "string" ? content : JSON.stringify(content, null, 2) + "\n");
}

/** Fails with everything the command printed, so a broken step explains itself. */
function ok(r: Run, what: string): Run {
  if (r.code !== 0) throw new Error(`${what} exited ${r.code}\n--- stdout\n${r.stdout}\n--- stderr\n${r.stderr}`);
  return r;
}

// --- the user's files -----------------------------------------------------------------------------

const notesV1 = `import type { ProviderState } from "statebag";

/** Notes the notes provider keeps per session. */
export interface NotesState extends ProviderState<"acme.NotesState", 1> {
  notes: string[];
  /** @format date-time */
  updatedAt?: string;
}
`;

const providerV1 = `import { messageText, ProviderSessionState } from "statebag";
import { AIContextProvider, type InvokedContext, type ProviderContext } from "statebag/agent";
import type { NotesState } from "./notes.js";

/** Remembers what the user said, per session. */
export class NotesProvider extends AIContextProvider {
  readonly key = "acme.notes";
  readonly state = new ProviderSessionState<NotesState>(this.key, {
    stateType: "acme.NotesState",
    version: 1,
    initial: () => ({ $type: "acme.NotesState", notes: [] }),
  });

  override invoking(context: ProviderContext) {
    const notes = this.state.read(context.state)?.notes ?? [];
    return notes.length ? { instructions: \`Notes: \${notes.join("; ")}\` } : undefined;
  }

  override invoked(context: InvokedContext) {
    const current = this.state.readOrInit(context.state);
    const added = context.requestMessages.filter((m) => m.role === "user").map((m) => messageText(m));
    this.state.write(context.state, { ...current, notes: [...current.notes, ...added], updatedAt: new Date().toISOString() });
  }
}
`;

/** One agent turn (`turn <text>`), or just a load (`show`), against the project's SQLite store. */
const appScript = `import { TypeRegistry, defaultRegistry } from "statebag";
import { ChatClientAgent } from "statebag/agent";
import { defaultSessionCodec, openStore, withSession } from "statebag/stores";
import { ScriptedChatClient } from "statebag/testing";
import { generatedMigrations, generatedTypes } from "./generated/registry.js";
import { NotesProvider } from "./notes-provider.js";

const registry = TypeRegistry.compose(defaultRegistry(), { source: "acme-app", types: generatedTypes, migrations: generatedMigrations });
const store = await openStore("sqlite:./.statebag/sessions.db", { codec: defaultSessionCodec({ registry }) });
const [mode, text] = process.argv.slice(2);
try {
  if (mode === "turn") {
    const agent = new ChatClientAgent({ client: new ScriptedChatClient(), contextProviders: [new NotesProvider()] });
    await withSession(store, "s1", (session) => agent.run(text, session));
  }
  const loaded = await store.get("s1");
  console.log(JSON.stringify(loaded?.session.stateBag["acme.notes"] ?? null));
} finally {
  await store.close();
}
`;

/** The evolve walkthrough's files, exactly as docs/walkthroughs.md shows them (src/notes.ts at v2 with its migration, the v2 provider). */
const readme = readFileSync(join(REPO, "docs/walkthroughs.md"), "utf8");
const readmeBlocks = tsBlocks(readme);
const evolveAt = readme.split("\n").findIndex((l) => l.startsWith("## Walkthrough: evolve a type"));
const notesV2 = projectFiles(readmeBlocks, Infinity).get("src/notes.ts")!.code;
const providerV2 = projectFiles(readmeBlocks, Infinity).get("src/notes-provider.ts")!.code;
/** The add walkthrough's provider (the descriptor form), as docs/walkthroughs.md shows it before the evolve walkthrough. */
const readmeProviderV1 = projectFiles(readmeBlocks, evolveAt).get("src/notes-provider.ts")!.code;
const fixtureV2 = { $type: "acme.NotesState", $version: 2, notes: [{ text: "buy milk", pinned: true }, { text: "call Ada about the Lisbon trip", pinned: false }], updatedAt: "2025-04-02T17:40:00Z" };

/** Every file under the given folders of the project, with its content: to prove a command wrote nothing. */
function snapshot(...folders: string[]): Record<string, string> {
  const files: Record<string, string> = {};
  for (const folder of folders) {
    const root = join(app, folder);
    if (!existsSync(root)) continue;
    for (const entry of readdirSync(root, { recursive: true, withFileTypes: true })) {
      if (entry.isFile()) files[join(entry.parentPath, entry.name)] = readFileSync(join(entry.parentPath, entry.name), "utf8");
    }
  }
  return files;
}

const fixtureV1 = { $type: "acme.NotesState", notes: ["buy milk", "call Ada about the Lisbon trip"], updatedAt: "2025-03-14T09:12:03+01:00" };

// --- setting the project up -------------------------------------------------------------------------

beforeAll(async () => {
  // npm run build && npm pack, as a release would (prepack builds; the build is done just before).
  ok(await run("npm", ["run", "build"], { cwd: REPO }), "npm run build");
  const packed = ok(await run("npm", ["pack", "--ignore-scripts", "--json", "--pack-destination", work], { cwd: REPO }), "npm pack");
  const tarball = join(work, (JSON.parse(packed.stdout) as { filename: string }[])[0].filename);

  // The tarball is installed as npm would: unpacked to node_modules/statebag; its dependencies are
  // this repository's (symlinked, never modified).
  mkdirSync(join(app, "node_modules/.bin"), { recursive: true });
  ok(await run("tar", ["-xzf", tarball, "-C", work]), "tar");
  cpSync(join(work, "package"), join(app, "node_modules/statebag"), { recursive: true });
  rmSync(join(work, "package"), { recursive: true, force: true });
  for (const entry of readdirSync(join(REPO, "node_modules"))) {
    if (entry === ".bin" || entry === "statebag" || entry.startsWith(".")) continue;
    symlinkSync(join(REPO, "node_modules", entry), join(app, "node_modules", entry));
  }
  symlinkSync("../statebag/bin/statebag.mjs", join(app, "node_modules/.bin/statebag"));
  write("package.json", { name: "acme-app", private: true, type: "module", dependencies: { statebag: `file:${tarball}` } });
}, 300_000);

afterAll(() => rmSync(work, { recursive: true, force: true }));

describe("a user's project, from the first command to production", () => {
  it("init, a provider state type, gen, an agent turn against SQLite, a restart, a load", async () => {
    const init = ok(await statebag(["init"]), "statebag init");
    expect(init.stdout).toContain("created statebag.config.json");
    expect(existsSync(join(app, "statebag.config.json"))).toBe(true);
    expect((await statebag(["init"])).code).toBe(2); // never overwrites

    write("src/notes.ts", notesV1);
    write("src/notes-provider.ts", providerV1);
    write("src/app.ts", appScript);

    // The scaffolded fixture is a placeholder: the check refuses it until it is a realistic value.
    const scaffold = await statebag(["gen", "--scaffold-fixtures"]);
    expect(scaffold.stdout).toContain("test/fixtures/acme.NotesState/v1.json");
    expect(scaffold.code).toBe(1);
    expect(scaffold.stderr).toContain("test/fixtures/acme.NotesState/v1.json is still the placeholder");
    write("test/fixtures/acme.NotesState/v1.json", fixtureV1);
    ok(await statebag(["gen"]), "statebag gen");
    const registry = readFileSync(join(app, "src/generated/registry.ts"), "utf8");
    expect(registry).toContain("acme.NotesState");
    expect(registry).toContain("npx statebag gen"); // the command for this project, not this repository's
    expect(registry).not.toContain("runtime/registry-types"); // statebag's internal imports never leak

    const check = ok(await statebag(["gen", "--check"]), "statebag gen --check");
    expect(check.stdout).toContain("generated files are current");
    ok(await tsc(), "tsc");

    const turn = ok(await script("turn", "Buy milk"), "the first turn");
    expect(JSON.parse(turn.stdout.trim())).toMatchObject({ $type: "acme.NotesState", notes: ["Buy milk"] });
    // A restart: a new process loads the stored session.
    const loaded = ok(await script("show"), "the load after a restart");
    expect(JSON.parse(loaded.stdout.trim())).toMatchObject({ $type: "acme.NotesState", notes: ["Buy milk"] });

    // The CLI knows the project's types from the config: no flags.
    const inspect = ok(await statebag(["inspect", "s1", "--brief"]), "statebag inspect");
    expect(inspect.stdout).toContain("✔ valid");
    expect(inspect.stdout).toContain("acme.notes: acme.NotesState v1");
  }, 240_000);

  it("gen in a project without a config refuses and writes nothing (statebag's internal registry never lands there)", async () => {
    const bare = join(work, "bare");
    mkdirSync(join(bare, "src"), { recursive: true });
    symlinkSync(join(app, "node_modules"), join(bare, "node_modules"));
    writeFileSync(join(bare, "package.json"), JSON.stringify({ name: "bare", type: "module" }));
    writeFileSync(join(bare, "tsconfig.json"), JSON.stringify({ include: ["src"] }));
    writeFileSync(join(bare, "src/notes.ts"), notesV1);
    const r = await statebag(["gen"], bare);
    expect(r.code).toBe(2);
    expect(r.stderr).toContain("fix:   run npx statebag init");
    expect(existsSync(join(bare, "src/generated"))).toBe(false);
    expect(existsSync(join(bare, "schemas"))).toBe(false);
  }, 60_000);

  it("without the project's registry, validate/inspect/migrate never call a user type valid or current", async () => {
    // Another folder, with statebag installed but no config: the CLI knows only statebag's own types.
    const elsewhere = join(work, "elsewhere");
    mkdirSync(elsewhere, { recursive: true });
    symlinkSync(join(app, "node_modules"), join(elsewhere, "node_modules"));
    const store = `sqlite:${join(app, ".statebag/sessions.db")}`;
    const inspect = await statebag(["inspect", "s1", "--brief", "--store", store], elsewhere);
    expect(inspect.code).toBe(1);
    expect(inspect.stdout).not.toContain("✔ valid");
    expect(inspect.stdout).toContain('1 value of a type the CLI does not know ("acme.NotesState") was not checked');
    expect(inspect.stdout).toContain('set "registry" in statebag.config.json');
    const migrate = await statebag(["migrate", "--dry-run", "--store", store], elsewhere);
    expect(migrate.code).toBe(1);
    expect(migrate.stdout).not.toMatch(/acme\.NotesState.*current/);
    expect(migrate.stdout).toContain('"acme.NotesState" v1 (unknown type: not checked, left as stored): 1');
  }, 60_000);

  it("mistake 4: gen on a breaking change (notes change shape, version not bumped) writes nothing, prints no success mark, exits 1", async () => {
    const before = snapshot("src/generated", "schemas", "test/fixtures");
    write("src/notes.ts", notesV1.replace("notes: string[];", "notes: { text: string }[];"));
    const r = await statebag(["gen"]);
    expect(r.code).toBe(1);
    expect(r.stdout).not.toContain("✔");
    expect(r.stdout).not.toContain("wrote");
    expect(r.stderr).toContain("acme.NotesState");
    expect(r.stderr).toContain("nothing was written");
    expect(snapshot("src/generated", "schemas", "test/fixtures")).toEqual(before);
    write("src/notes.ts", notesV1);
    ok(await statebag(["gen", "--check"]), "gen --check after undoing the breaking change");
  }, 120_000);

  it("the README's evolve walkthrough: v2 and its migration, gen --scaffold-fixtures refuses the placeholder, gen with a real fixture", async () => {
    expect(notesV2).toContain('ProviderState<"acme.NotesState", 2>');
    expect(notesV2).toContain("defineMigration<NotesState_v1, NotesState_v2>");
    write("src/notes.ts", notesV2);
    const scaffold = await statebag(["gen", "--scaffold-fixtures"]);
    expect(scaffold.code).toBe(1);
    expect(scaffold.stderr).toContain("test/fixtures/acme.NotesState/v2.json is still the placeholder");
    write("test/fixtures/acme.NotesState/v2.json", fixtureV2);
    ok(await statebag(["gen"]), "statebag gen at v2");
    expect(readFileSync(join(app, "src/generated/descriptors.ts"), "utf8")).toContain('{ $type: "acme.NotesState", version: 2 }');
    expect(readFileSync(join(app, "src/generated/versions.ts"), "utf8")).toMatch(/interface NotesState_v1[\s\S]*interface NotesState_v2/);
  }, 180_000);

  it("mistake 1: the provider left at version 1 after the type moved to 2 fails tsc, in either form", async () => {
    // providerV1 is still in place: the long form, `version: 1` typed by hand.
    const stale = await tsc();
    expect(stale.code).not.toBe(0);
    expect(stale.stdout).toMatch(/src\/notes-provider\.ts\(\d+,\d+\): error TS2322: Type '1' is not assignable to type '2'/);
    // The descriptor form of the add walkthrough: the version follows the type, its v1 initial value does not compile.
    write("src/notes-provider.ts", readmeProviderV1);
    const initial = await tsc();
    expect(initial.code).not.toBe(0);
    expect(initial.stdout).toMatch(/src\/notes-provider\.ts\(\d+,\d+\): error TS\d+: [\s\S]*\$version/);
  }, 120_000);

  it("mistake 2: a migration whose up forgets a required field fails tsc (per-version types) and gen --check (the v1 fixture migrated)", async () => {
    write("src/notes-provider.ts", providerV2);
    write("src/notes.ts", notesV2.replace("({ text, pinned: false })", "({ text })"));
    const compiled = await tsc();
    expect(compiled.code).not.toBe(0);
    expect(compiled.stdout).toMatch(/src\/notes\.ts\(\d+,\d+\): error TS\d+: [\s\S]*'pinned'/);
    const check = await statebag(["gen", "--check"]);
    expect(check.code).toBe(1);
    expect(check.stderr).toContain("test/fixtures/acme.NotesState/v1.json");
    expect(check.stderr).toContain("pinned");
    write("src/notes.ts", notesV2);
  }, 120_000);

  it("the correct evolution: gen --check and tsc pass, the stored v1 session migrates and a second turn runs", async () => {
    ok(await statebag(["gen", "--check"]), "gen --check at v2");
    ok(await tsc(), "tsc at v2");
    const loaded = ok(await script("show"), "loading the v1 session with v2 code");
    expect(JSON.parse(loaded.stdout.trim())).toMatchObject({ $type: "acme.NotesState", $version: 2, notes: [{ text: "Buy milk", pinned: false }] });
    const turn = ok(await script("turn", "Call Ada"), "the second turn");
    const state = JSON.parse(turn.stdout.trim()) as { $version: number; notes: { text: string; pinned: boolean }[] };
    expect(state.$version).toBe(2);
    // The README's v2 provider appends a placeholder note per turn.
    expect(state.notes).toEqual([{ text: "Buy milk", pinned: false }, { text: "...", pinned: false }]);
    // A restart: the session saved at v2 loads as it is, and the CLI (registry from the config) agrees.
    expect(JSON.parse(ok(await script("show"), "the load after the second turn").stdout.trim())).toEqual(state);
    const inspect = ok(await statebag(["inspect", "s1", "--brief"]), "statebag inspect at v2");
    expect(inspect.stdout).toContain("✔ valid");
    expect(inspect.stdout).toContain("acme.notes: acme.NotesState v2");
  }, 180_000);
});
