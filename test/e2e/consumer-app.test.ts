/**
 * An app that installs only the runtime (`npm i statebag`, no optional peer: no pg, ioredis, openai,
 * ai, better-sqlite3, TypeScript toolchain) on the toolchains users have today:
 * - its type check passes with `skipLibCheck: false` on TypeScript 5.9 and 7, importing every
 *   public entry point (statebag's own declarations must stand alone);
 * - the README's 30-second example runs on Node, on Bun and on Deno (with the permissions the docs
 *   name), and from a single-file esbuild bundle, including an app that imports the model clients
 *   whose SDKs it never installed.
 *
 * And an app with the generator toolchain too (`npm i -D statebag-kit ...`), the kit packed the
 * plain way (`npm pack` in kit/, its own prepack building it): the tarball holds what `statebag gen`
 * loads, gen runs from it, and a consumer of the kit's entries (`statebag-kit`, `statebag-kit/compat`
 * and the `statebag/internal/toolchain` entry they import) type-checks with `skipLibCheck: false`
 * on TypeScript 5.9 and 7. No declaration either package ships reaches a file it does not ship.
 *
 * Both packages are packed from a copy of this checkout (test/e2e/apps.ts) and installed with npm,
 * as a user's `npm install <tarball>` would.
 */
import {
  existsSync,
  mkdirSync,
  mkdtempSync,
  readFileSync,
  readdirSync,
  realpathSync,
  rmSync,
  symlinkSync,
} from "node:fs";
import { tmpdir } from "node:os";
import { dirname, join, relative } from "node:path";
import { pathToFileURL } from "node:url";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { CACHE, ok, packCheckout, packKitPlainly, REPO, run as runIn, stageCheckout, writeIn } from "./apps.js";

const BIN = join(REPO, "node_modules/.bin");
const work = mkdtempSync(join(tmpdir(), "statebag-consumer-"));
const app = join(work, "app");
const run = (command: string, args: string[], cwd = app, env: Record<string, string> = {}) =>
  runIn(command, args, cwd, env);
const write = (file: string, content: string | object) => writeIn(app, file, content);

/** The compilers a consumer's type check runs on: this repository's TypeScript 5.9 and 7. */
const COMPILERS = [
  { compiler: "TypeScript 5.9", tsc: join(REPO, "node_modules/typescript/bin/tsc") },
  { compiler: "TypeScript 7", tsc: join(REPO, "node_modules/typescript7/bin/tsc") },
];
/** A strict app's tsconfig: every declaration it reaches is checked (skipLibCheck off). */
const STRICT_TSCONFIG = {
  compilerOptions: {
    target: "ES2022",
    module: "NodeNext",
    moduleResolution: "NodeNext",
    strict: true,
    skipLibCheck: false,
    noEmit: true,
    types: ["node"],
    rootDir: ".",
  },
  include: ["*.ts"],
};

/**
 * Every relative import of an installed package's .d.ts files that names a file the package does
 * not have ("file -> specifier"): such a declaration breaks `skipLibCheck: false` for whoever
 * reaches it (statebag's internal toolchain entry once reached the CLI's, which names the generator).
 */
function danglingDeclarations(root: string): string[] {
  const found: string[] = [];
  const walk = (dir: string): string[] =>
    readdirSync(dir, { withFileTypes: true }).flatMap((e) =>
      e.name === "node_modules" ? [] : e.isDirectory() ? walk(join(dir, e.name)) : [join(dir, e.name)],
    );
  for (const file of walk(root).filter((f) => f.endsWith(".d.ts"))) {
    const text = readFileSync(file, "utf8");
    for (const m of text.matchAll(/(?:from\s+|import\s*\(\s*)["'](\.{1,2}\/[^"']+)["']/g)) {
      const target = join(dirname(file), m[1]).replace(/\.js$/, ".d.ts");
      if (!existsSync(target) && !existsSync(join(dirname(file), m[1])))
        found.push(`${relative(root, file)} -> ${m[1]}`);
    }
  }
  return found;
}

const pkg = JSON.parse(readFileSync(join(REPO, "package.json"), "utf8")) as {
  version: string;
  files: string[];
  exports: Record<string, unknown>;
  devDependencies: Record<string, string>;
};
/** Every public entry point, from package.json's exports (internal ones are not for apps). */
const entries = Object.keys(pkg.exports)
  .filter((key) => key !== "./package.json" && !key.includes("internal"))
  .map((key) => (key === "." ? "statebag" : `statebag/${key.slice(2)}`));

const example = `import { ChatClientAgent } from "statebag/agent";
import { openStore, withSession } from "statebag/stores";
import { ScriptedChatClient } from "statebag/testing";

const store = await openStore(); // SQLite, ./.statebag/sessions.db
const agent = new ChatClientAgent({ client: new ScriptedChatClient() });
await withSession(store, "user-42", (session) => agent.run("Hi, my name is Ada.", session));
const restarted = new ChatClientAgent({ client: new ScriptedChatClient() });
const { value } = await withSession(store, "user-42", (session) => restarted.run("What is my name?", session));
console.log(value.text);
await store.close();
`;

/** The packed packages: statebag, and statebag-kit packed the plain way (with the files npm reported). */
let tarball = "";
let kitPack: { tarball: string; files: string[] } = { tarball: "", files: [] };

beforeAll(async () => {
  mkdirSync(CACHE, { recursive: true });
  // `npm pack` in the kit's folder runs its prepack, which compiles statebag (the checkout's dist/)
  // and builds the kit; statebag is then packed from that dist/.
  const checkout = stageCheckout(work);
  kitPack = await packKitPlainly(checkout, work);
  tarball = await packCheckout(checkout, work);
  mkdirSync(app);
  write("package.json", { name: "consumer-app", version: "1.0.0", private: true, type: "module" });
  // The same @types/node the repository uses, so the install needs nothing the npm cache lacks.
  const install = ok(
    await run("npm", ["install", tarball, `@types/node@${pkg.devDependencies["@types/node"]}`]),
    "npm install",
  );
  // No warning of any kind: no peer conflict, no engine mismatch, no install script to approve.
  expect(`${install.stdout}\n${install.stderr}`).not.toMatch(/ERESOLVE|npm warn|npm error/i);
}, 600_000);

afterAll(() => rmSync(work, { recursive: true, force: true }));

describe("an app with only the runtime installed", () => {
  it("has none of the optional peers (so the checks below prove the declarations stand alone)", () => {
    for (const peer of [
      "pg",
      "ioredis",
      "@aws-sdk/client-s3",
      "openai",
      "ai",
      "@ai-sdk/provider",
      "@langchain/langgraph-checkpoint",
      "@openai/agents-core",
      "better-sqlite3",
      "typescript",
      "ts-morph",
      "typescript-json-schema",
    ]) {
      expect(existsSync(join(app, "node_modules", peer)), peer).toBe(false);
    }
  });

  it("ships no declaration that imports a file outside the package", () => {
    expect(danglingDeclarations(join(app, "node_modules/statebag"))).toEqual([]);
  });

  describe.each(COMPILERS)("$compiler", ({ tsc }) => {
    it("type-checks a consumer of every entry point with skipLibCheck: false", async () => {
      const dir = `check-${tsc.includes("typescript7") ? 7 : 5}`;
      write(`${dir}/tsconfig.json`, STRICT_TSCONFIG);
      // A namespace import of each entry puts its whole declaration graph into the program.
      write(
        `${dir}/consumer.ts`,
        entries
          .map((e, i) => `import * as entry${i} from "${e}";\nexport type Entry${i} = typeof entry${i};\n`)
          .join("") +
          example
            .replace(/^import.*\n/gm, "")
            .replace(
              /^/,
              'import { ChatClientAgent } from "statebag/agent";\nimport { openStore, withSession } from "statebag/stores";\nimport { ScriptedChatClient } from "statebag/testing";\n',
            ),
      );
      const r = await run(process.execPath, [tsc, "-p", join(app, dir, "tsconfig.json")]);
      expect(r.stdout + r.stderr, "tsc output").toBe("");
      expect(r.code).toBe(0);
    });
  });

  it("serves the studio's page script from the built bundle it ships (the app has no esbuild to bundle it)", async () => {
    expect(existsSync(join(app, "node_modules/esbuild"))).toBe(false);
    const module = pathToFileURL(join(app, "node_modules/statebag/dist/src/cli/studio/client-script.js")).href;
    const r = ok(
      await run(process.execPath, [
        "--input-type=module",
        "-e",
        `const { studioScript } = await import(${JSON.stringify(module)});\nconst script = await studioScript();\nconsole.log(script.includes("data-ready") && !/^import /m.test(script) ? "bundled" : "not the page script");`,
      ]),
      "studioScript()",
    );
    expect(r.stdout.trim()).toBe("bundled");
  });

  it("runs the 30-second example on Node", async () => {
    write("node/example.ts", example);
    const r = ok(
      await run(process.execPath, ["--experimental-strip-types", "--no-warnings", "example.ts"], join(app, "node")),
      "node example.ts",
    );
    expect(r.stdout.trim()).toBe("Your name is Ada.");
  });

  it("runs the 30-second example on Bun", async () => {
    write("bun/example.ts", example);
    const r = ok(await run(join(BIN, "bun"), ["example.ts"], join(app, "bun")), "bun example.ts");
    expect(r.stdout.trim()).toBe("Your name is Ada.");
  });

  it("runs the 30-second example on Deno with --allow-read --allow-write=.statebag", async () => {
    write("deno/example.ts", example);
    const cwd = join(app, "deno");
    const r = ok(
      await run(
        join(BIN, "deno"),
        ["run", "--allow-read", "--allow-write=.statebag", "--allow-env", "example.ts"],
        cwd,
        { DENO_DIR: join(work, "deno-cache") },
      ),
      "deno run",
    );
    expect(r.stdout.trim()).toBe("Your name is Ada.");
    // Without write permission for .statebag Deno refuses, and the error names the permission.
    rmSync(join(cwd, ".statebag"), { recursive: true, force: true });
    const denied = await run(
      join(BIN, "deno"),
      ["run", "--allow-read", "--allow-env", "--no-prompt", "example.ts"],
      cwd,
      { DENO_DIR: join(work, "deno-cache") },
    );
    expect(denied.code).not.toBe(0);
    expect(denied.stderr).toMatch(/write/i);
  });

  describe.each([
    { sdks: "absent", link: false },
    { sdks: "installed", link: true },
  ])("an esbuild bundle, model SDKs $sdks", ({ link }) => {
    it("is one file that runs with no node_modules and never inlines the model SDKs", async () => {
      const dir = `bundle-${link ? "sdks" : "plain"}`;
      const withClients = `import { OpenAIChatClient } from "statebag/openai";\nimport { AISDKChatClient } from "statebag/ai-sdk";\nexport const clients = [OpenAIChatClient, AISDKChatClient];\n${example}`;
      write(`${dir}/example.ts`, withClients);
      if (link) {
        // The SDKs as the app would have them installed (linked from this repository's copies).
        for (const sdk of ["openai", "ai", "@ai-sdk"]) {
          mkdirSync(dirname(join(app, dir, "node_modules", sdk)), { recursive: true });
          symlinkSync(join(REPO, "node_modules", sdk), join(app, dir, "node_modules", sdk));
        }
      }
      const out = join(work, `${dir}-out`, "example.mjs");
      const built = ok(
        await run(
          join(BIN, "esbuild"),
          ["example.ts", "--bundle", "--platform=node", "--format=esm", "--log-level=warning", `--outfile=${out}`],
          join(app, dir),
        ),
        "esbuild",
      );
      expect(built.stderr, "esbuild warnings").toBe("");
      const bundle = readFileSync(out, "utf8");
      // The SDKs load lazily at run time: the bundle holds statebag and its few dependencies only.
      expect(bundle.length).toBeLessThan(1_500_000);
      expect(bundle).not.toMatch(/api\.openai\.com/);
      expect(readdirSync(dirname(out))).toEqual(["example.mjs"]);
      const r = ok(await run(process.execPath, ["example.mjs"], dirname(out)), "node bundle");
      expect(r.stdout.trim()).toBe("Your name is Ada.");
    });
  });
});

// --- the generator toolchain ----------------------------------------------------------------------

const kitApp = join(work, "kit-app");
const runKit = (command: string, args: string[]) => runIn(command, args, kitApp);
const writeKit = (file: string, content: string | object) => writeIn(kitApp, file, content);

describe("an app with statebag-kit, packed the plain way (npm pack in kit/)", () => {
  beforeAll(async () => {
    mkdirSync(kitApp);
    writeKit("package.json", { name: "kit-app", version: "1.0.0", private: true, type: "module" });
    ok(await runKit("npm", ["install", tarball]), "npm install statebag");
    // kit/README.md's line: the kit with the app's compiler.
    const install = ok(
      await runKit("npm", [
        "install",
        "--save-dev",
        kitPack.tarball,
        `typescript@${pkg.devDependencies.typescript}`,
        `@types/node@${pkg.devDependencies["@types/node"]}`,
        `tsx@${pkg.devDependencies.tsx}`,
      ]),
      "npm install -D statebag-kit",
    );
    expect(`${install.stdout}\n${install.stderr}`).not.toMatch(/ERESOLVE|EBADENGINE|peer dep|npm error/i);
  }, 600_000);

  it("the tarball holds the built generator, the compilers it was built with, and the entries", () => {
    for (const file of [
      "index.js",
      "index.d.ts",
      "compat.js",
      "compat.d.ts",
      "dist/compilers.json",
      "dist/generator/compilers.js",
      "dist/generator/index.js",
      "dist/generator/index.d.ts",
      "dist/generator/compat/index.js",
      "dist/generator/runtime.js",
      "dist/generator/runtime.d.ts",
    ])
      expect(kitPack.files, file).toContain(file);
    // Built from this checkout's generator: every module of it (its CLI, `npm run gen`, excepted).
    const modules = readdirSync(join(REPO, "generator"), { recursive: true, encoding: "utf8" })
      .filter((f) => f.endsWith(".ts") && !f.endsWith(".d.ts") && f !== "cli.ts")
      .map((f) => `dist/generator/${f.replaceAll("\\", "/").replace(/\.ts$/, ".js")}`);
    expect(modules.filter((m) => !kitPack.files.includes(m))).toEqual([]);
    const compilers = JSON.parse(
      readFileSync(join(realpathSync(join(kitApp, "node_modules/statebag-kit")), "dist/compilers.json"), "utf8"),
    ) as Record<string, string>;
    expect(Object.values(compilers).length).toBeGreaterThan(0);
    expect(Object.values(compilers)).not.toContain("?");
  });

  it("statebag gen runs from it", async () => {
    ok(await runKit("npx", ["--no-install", "statebag", "init"]), "statebag init");
    writeKit(
      "src/notes.ts",
      `import type { ProviderState } from "statebag";

/** Notes the notes provider keeps per session. */
export interface NotesState extends ProviderState<"acme.NotesState", 1> {
  notes: string[];
}
`,
    );
    writeKit("test/fixtures/acme.NotesState/v1.json", { $type: "acme.NotesState", notes: ["buy milk"] });
    const gen = ok(await runKit("npx", ["--no-install", "statebag", "gen"]), "statebag gen");
    expect(gen.stderr).not.toMatch(/Cannot find module/);
    expect(existsSync(join(kitApp, "src/generated/registry.ts"))).toBe(true);
    expect(
      ok(await runKit("npx", ["--no-install", "statebag", "gen", "--check"]), "statebag gen --check").stdout,
    ).toContain("generated files are current");
  }, 120_000);

  it("neither package ships a declaration that imports a file outside it", () => {
    expect(danglingDeclarations(realpathSync(join(kitApp, "node_modules/statebag-kit")))).toEqual([]);
    expect(danglingDeclarations(realpathSync(join(kitApp, "node_modules/statebag")))).toEqual([]);
  });

  describe.each(COMPILERS)("$compiler", ({ tsc }) => {
    it("type-checks a consumer of the kit's entries with skipLibCheck: false", async () => {
      const dir = `check-kit-${tsc.includes("typescript7") ? 7 : 5}`;
      writeKit(`${dir}/tsconfig.json`, STRICT_TSCONFIG);
      // The kit's entries, and the runtime entry the kit's declarations import (statebag/internal/toolchain).
      writeKit(
        `${dir}/consumer.ts`,
        ["statebag-kit", "statebag-kit/compat", "statebag/internal/toolchain"]
          .map((e, i) => `import * as entry${i} from "${e}";\nexport type Entry${i} = typeof entry${i};\n`)
          .join(""),
      );
      const r = await runKit(process.execPath, [tsc, "-p", join(kitApp, dir, "tsconfig.json")]);
      expect(r.stdout + r.stderr, "tsc output").toBe("");
      expect(r.code).toBe(0);
    }, 120_000);
  });
});
