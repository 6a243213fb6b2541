/**
 * Plays users on the toolchains they have today: packs statebag and statebag-kit once, then installs
 * them into fresh apps outside this repository, from the npm registry (through one shared cache),
 * with npm and with pnpm, on TypeScript 5.9 and on TypeScript 7 (`latest`, the native compiler with
 * no compiler API). Each install must be clean (no peer conflict, `npm ls` / `pnpm ls` exit 0); then
 * `statebag init`, a provider state type, `statebag gen` (first without the kit: the one install
 * command), and `tsc --noEmit` with the app's own compiler.
 *
 * On pnpm + TypeScript 7 (strict layout, newest compiler) it then walks the loop users live in: an
 * agent turn against SQLite, a restart, a load; evolving the type, where every mistake must fail at
 * `tsc` or `gen --check` and the correct evolution must migrate the stored session and run the next
 * turn. Every command is a new process, as it is for the user.
 */
import {
  existsSync,
  mkdirSync,
  mkdtempSync,
  readdirSync,
  readFileSync,
  realpathSync,
  rmSync,
  symlinkSync,
  writeFileSync,
} from "node:fs";
import { createRequire } from "node:module";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { CACHE, ensurePnpm, ok, packBoth, REPO, run, type Run, writeIn } from "./apps.js";
import { projectFiles, tsBlocks } from "../readme/blocks.js";

/** pnpm, from the registry into the shared cache (beforeAll). */
let PNPM = "";
const repoPkg = JSON.parse(readFileSync(join(REPO, "package.json"), "utf8")) as {
  version: string;
  devDependencies: Record<string, string>;
};
const work = mkdtempSync(join(tmpdir(), "statebag-e2e-"));

// --- the matrix ----------------------------------------------------------------------------------

interface Combination {
  pm: "npm" | "pnpm";
  typescript: string;
  /** The one that also runs the walkthroughs. */
  walkthrough: boolean;
}
const TS59 = repoPkg.devDependencies.typescript; // ~5.9.3
const TS7 = "7.0.2";
const combinations: Combination[] = [
  { pm: "npm", typescript: TS59, walkthrough: false },
  { pm: "npm", typescript: TS7, walkthrough: false },
  { pm: "pnpm", typescript: TS59, walkthrough: false },
  { pm: "pnpm", typescript: TS7, walkthrough: true },
];
const appDir = (c: Combination) => join(work, `app-${c.pm}-ts${c.typescript.replace(/\D+/g, "")}`);

/** `npm install ...` / `pnpm add ...`: exactly what the docs tell a user, no flag. */
const install = (c: Combination, dev: boolean, specs: string[], cwd = appDir(c)) =>
  c.pm === "npm"
    ? run("npm", ["install", ...(dev ? ["--save-dev"] : []), ...specs], cwd)
    : run(PNPM, ["add", ...(dev ? ["--save-dev"] : []), ...specs], cwd);

/** An install printed no peer conflict and no peer warning. */
function cleanInstall(r: Run, what: string): void {
  ok(r, what);
  const printed = `${r.stdout}\n${r.stderr}`;
  expect(printed, what).not.toMatch(/ERESOLVE|EBADENGINE|peer dep|unmet peer|missing peer|incorrect peer/i);
  expect(
    printed.split("\n").filter((l) => /^npm warn/i.test(l) && /peer/i.test(l)),
    what,
  ).toEqual([]);
}

/** `statebag <args>` as the user runs it: `npx statebag` with npm, the bin pnpm linked with pnpm. */
function statebagIn(c: Combination, cwd: string, args: string[]): Promise<Run> {
  return c.pm === "npm"
    ? run("npx", ["--no-install", "statebag", ...args], cwd)
    : run(join(cwd, "node_modules/.bin/statebag"), args, cwd);
}
/** The app's own compiler (5.9 or 7), never this repository's. */
const tscIn = (cwd: string) =>
  run(process.execPath, [join(cwd, "node_modules/typescript/bin/tsc"), "--noEmit", "-p", "tsconfig.json"], cwd);

let statebagTarball = "";
let kitTarball = "";

beforeAll(async () => {
  ({ statebag: statebagTarball, kit: kitTarball } = await packBoth(work));
  PNPM = await ensurePnpm();
}, 300_000);

afterAll(() => rmSync(work, { recursive: true, force: true }));

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
const fixtureV2 = {
  $type: "acme.NotesState",
  $version: 2,
  notes: [
    { text: "buy milk", pinned: true },
    { text: "call Ada about the Lisbon trip", pinned: false },
  ],
  updatedAt: "2025-04-02T17:40:00Z",
};

/** Every file under the given folders of the project, with its content: to prove a command wrote nothing. */
function snapshot(...folders: string[]): Record<string, string> {
  const app = walkApp;
  const files: Record<string, string> = {};
  for (const folder of folders) {
    const root = join(app, folder);
    if (!existsSync(root)) continue;
    for (const entry of readdirSync(root, { recursive: true, withFileTypes: true })) {
      if (entry.isFile())
        files[join(entry.parentPath, entry.name)] = readFileSync(join(entry.parentPath, entry.name), "utf8");
    }
  }
  return files;
}

const fixtureV1 = {
  $type: "acme.NotesState",
  notes: ["buy milk", "call Ada about the Lisbon trip"],
  updatedAt: "2025-03-14T09:12:03+01:00",
};

// --- every combination: install, init, gen, tsc ---------------------------------------------------

describe.each(combinations)("an app on $pm with TypeScript $typescript", (c) => {
  const app = appDir(c);

  it("installs statebag, then the toolchain, with no peer conflict; gen without the kit names the one install command", async () => {
    mkdirSync(app);
    writeIn(app, "package.json", { name: "acme-app", version: "1.0.0", private: true, type: "module" });
    if (c.pm === "pnpm") {
      // The app's pnpm settings: the shared store, and tsx's esbuild may run its install script
      // (pnpm refuses unapproved build scripts; that is esbuild's, not statebag's).
      writeIn(
        app,
        "pnpm-workspace.yaml",
        `storeDir: ${JSON.stringify(join(CACHE, "pnpm-store"))}\ncacheDir: ${JSON.stringify(join(CACHE, "pnpm-cache"))}\npreferOffline: true\nallowBuilds:\n  esbuild: true\n`,
      );
    }
    const devTools = [
      `typescript@${c.typescript}`,
      `@types/node@${repoPkg.devDependencies["@types/node"]}`,
      `tsx@${repoPkg.devDependencies.tsx}`,
    ];
    cleanInstall(await install(c, false, [statebagTarball]), "installing statebag");
    if (c.pm === "npm") {
      // The documented line: the kit with the app's own compiler, in one install.
      cleanInstall(
        await install(c, true, [kitTarball, ...devTools]),
        "installing statebag-kit with the app's compiler",
      );
      ok(await statebagIn(c, app, ["init"]), "statebag init");
    } else {
      // (pnpm installs are cheap: here gen runs once before the kit is installed.)
      cleanInstall(await install(c, true, devTools), "installing the app's compiler");
      ok(await statebagIn(c, app, ["init"]), "statebag init");
      writeIn(app, "src/notes.ts", notesV1);
      const missing = await statebagIn(c, app, ["gen"]);
      expect(missing.code).toBe(3);
      expect(missing.stderr).toContain("statebag gen needs statebag-kit, which is not installed");
      expect(missing.stderr).toContain(
        `fix:   install the generator toolchain as a dev dependency: npm i -D statebag-kit@${repoPkg.version}`,
      );
      expect(missing.stderr).not.toMatch(/typescript@|Cannot find module/);
      cleanInstall(await install(c, true, [kitTarball]), "installing statebag-kit");
    }
    writeIn(app, "src/notes.ts", notesV1);
    ok(await run(c.pm === "npm" ? "npm" : PNPM, ["ls"], app), `${c.pm} ls`);
  }, 300_000);

  it("the app keeps its compiler; the kit runs its own (and records those in the gen cache)", async () => {
    const version = (pkgJson: string) => (JSON.parse(readFileSync(pkgJson, "utf8")) as { version: string }).version;
    const appTs = version(join(app, "node_modules/typescript/package.json"));
    expect(appTs).toMatch(c.typescript === TS7 ? /^7\.0\.2$/ : /^5\.9\./);
    const kitDir = realpathSync(join(app, "node_modules/statebag-kit"));
    const tjs = createRequire(join(kitDir, "index.js")).resolve("typescript-json-schema/package.json");
    const kitTs = version(createRequire(tjs).resolve("typescript/package.json"));
    expect(kitTs).toMatch(/^5\.9\./);
    // The no-op cache's fingerprint names the compilers the generator runs, not the app's.
    const printed = ok(
      await run(
        process.execPath,
        [
          "--input-type=module",
          "-e",
          `const m = await import(${JSON.stringify(join(kitDir, "dist/generator/cache.js"))}); console.log(JSON.stringify(m.generatorFingerprintInputs().slice(-4)))`,
        ],
        app,
      ),
      "the kit's fingerprint",
    );
    expect(JSON.parse(printed.stdout)).toEqual([
      "typescript (typescript-json-schema)",
      kitTs,
      "typescript (ts-morph)",
      expect.stringMatching(/^\d+\.\d+\.\d+/),
    ]);
  });

  it("gen (scaffolded fixture, then a real one), gen --check, and tsc --noEmit with the app's own compiler", async () => {
    const scaffold = await statebagIn(c, app, ["gen", "--scaffold-fixtures"]);
    expect(scaffold.code, scaffold.stderr).toBe(1);
    expect(scaffold.stderr).toContain("test/fixtures/acme.NotesState/v1.json is still the placeholder");
    writeIn(app, "test/fixtures/acme.NotesState/v1.json", fixtureV1);
    ok(await statebagIn(c, app, ["gen"]), "statebag gen");
    expect(ok(await statebagIn(c, app, ["gen", "--check"]), "statebag gen --check").stdout).toContain(
      "generated files are current",
    );
    const compiled = ok(await tscIn(app), "tsc");
    expect(compiled.stdout).toBe("");
  }, 120_000);
});

describe("a toolchain the kit was not built for", () => {
  it("a kit whose TypeScript an override replaced by 7 stops with a ToolchainMissingError, not a crash in the compiler", async () => {
    const c = combinations.find((x) => x.pm === "npm" && x.typescript === TS7)!;
    const app = appDir(c);
    const pkg = JSON.parse(readFileSync(join(app, "package.json"), "utf8")) as Record<string, unknown>;
    writeIn(app, "package.json", { ...pkg, overrides: { typescript: "$typescript" } });
    ok(await run("npm", ["install"], app), "npm install with the override");
    const r = await statebagIn(c, app, ["gen", "--check", "--no-cache"]);
    expect(r.code).toBe(3);
    expect(r.stderr).toContain(
      "statebag gen needs TypeScript (typescript-json-schema's compiler) 5.9, but found version 7.0.2",
    );
    expect(r.stderr).toContain(`npm i -D statebag-kit@${repoPkg.version}`);
  }, 120_000);
});

// --- the walkthroughs, on pnpm + TypeScript 7 ------------------------------------------------------

const walk = combinations.find((c) => c.walkthrough)!;
const walkApp = appDir(walk);
const statebag = (args: string[], cwd = walkApp) => statebagIn(walk, cwd, args);
const tsc = () => tscIn(walkApp);
/** The project's own script, run with tsx in a new process (a restart every time). */
const script = (...args: string[]) => run(process.execPath, ["--import", "tsx", "src/app.ts", ...args], walkApp);
const write = (file: string, content: string | object) => writeIn(walkApp, file, content);

describe(`a user's project on ${walk.pm} with TypeScript ${walk.typescript}, from the first command to production`, () => {
  const app = walkApp;
  it("a provider, gen, an agent turn against SQLite, a restart, a load", async () => {
    // init, the type and its fixture are in place (the combination's own test above).
    expect((await statebag(["init"])).code).toBe(2); // never overwrites
    write("src/notes-provider.ts", providerV1);
    write("src/app.ts", appScript);
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
    expect(readFileSync(join(app, "src/generated/descriptors.ts"), "utf8")).toContain(
      '{ $type: "acme.NotesState", version: 2 }',
    );
    expect(readFileSync(join(app, "src/generated/versions.ts"), "utf8")).toMatch(
      /interface NotesState_v1[\s\S]*interface NotesState_v2/,
    );
  }, 180_000);

  it("mistake 1: the provider left at version 1 after the type moved to 2 fails tsc, in either form", async () => {
    // providerV1 is still in place: the long form, `version: 1` typed by hand.
    const stale = await tsc();
    expect(stale.code).not.toBe(0);
    expect(stale.stdout).toMatch(
      /src\/notes-provider\.ts\(\d+,\d+\): error TS2322: Type '1' is not assignable to type '2'/,
    );
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
    expect(JSON.parse(loaded.stdout.trim())).toMatchObject({
      $type: "acme.NotesState",
      $version: 2,
      notes: [{ text: "Buy milk", pinned: false }],
    });
    const turn = ok(await script("turn", "Call Ada"), "the second turn");
    const state = JSON.parse(turn.stdout.trim()) as { $version: number; notes: { text: string; pinned: boolean }[] };
    expect(state.$version).toBe(2);
    // The README's v2 provider appends a placeholder note per turn.
    expect(state.notes).toEqual([
      { text: "Buy milk", pinned: false },
      { text: "...", pinned: false },
    ]);
    // A restart: the session saved at v2 loads as it is, and the CLI (registry from the config) agrees.
    expect(JSON.parse(ok(await script("show"), "the load after the second turn").stdout.trim())).toEqual(state);
    const inspect = ok(await statebag(["inspect", "s1", "--brief"]), "statebag inspect at v2");
    expect(inspect.stdout).toContain("✔ valid");
    expect(inspect.stdout).toContain("acme.notes: acme.NotesState v2");
  }, 180_000);
});
