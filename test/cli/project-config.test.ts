/**
 * The project config: found from the working directory upward, validated with file and JSON
 * pointer, written by `statebag init`, and what lets every command run without flags.
 */
import { existsSync, mkdirSync, readdirSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { CliError } from "../../src/cli/io.js";
import { findProjectConfig, statebagRepositoryRoot, validateConfig } from "../../src/cli/project-config.js";
import { cli, envelope, REPO, sampleSession, tempDir } from "./helpers.js";

const tmp = tempDir("statebag-config-");
afterAll(() => tmp.cleanup());
let n = 0;
/** A fresh folder under the temporary directory. */
function folder(files: Record<string, string | object> = {}): string {
  const dir = join(tmp.dir, `p${n++}`);
  mkdirSync(dir, { recursive: true });
  for (const [name, content] of Object.entries(files)) {
    mkdirSync(join(dir, name, ".."), { recursive: true });
    writeFileSync(join(dir, name), typeof content === "string" ? content : JSON.stringify(content, null, 2));
  }
  return dir;
}

function thrown(fn: () => unknown): CliError {
  try {
    fn();
  } catch (error) {
    if (error instanceof CliError) return error;
    throw error;
  }
  throw new Error("expected a CliError");
}

describe("findProjectConfig", () => {
  it("finds statebag.config.json from a nested folder, applies the defaults, resolves paths against its folder", () => {
    const dir = folder({
      "statebag.config.json": { generated: "lib/gen", store: "sqlite:data/s.db" },
      "src/deep/x.ts": "",
    });
    const config = findProjectConfig(join(dir, "src/deep"))!;
    expect(config).toMatchObject({
      file: join(dir, "statebag.config.json"),
      pointer: "",
      root: dir,
      tsconfig: join(dir, "tsconfig.json"),
      generated: join(dir, "lib/gen"),
      schemas: join(dir, "schemas"),
      fixtures: join(dir, "test/fixtures"),
      registry: join(dir, "src/generated/registry.ts"),
      store: `sqlite:${join(dir, "data/s.db")}`,
      runtimeImport: "statebag",
    });
  });

  it('reads the "statebag" key of package.json; a package.json without it is passed over', () => {
    const dir = folder({
      "package.json": { name: "app", statebag: { fixtures: "fx" } },
      "pkg/package.json": { name: "inner" },
    });
    const config = findProjectConfig(join(dir, "pkg"))!;
    expect(config.file).toBe(join(dir, "package.json"));
    expect(config.pointer).toBe("/statebag");
    expect(config.fixtures).toBe(join(dir, "fx"));
  });

  it("is undefined where there is none (store URLs other than relative SQLite paths are kept as written)", () => {
    expect(findProjectConfig(folder())).toBeUndefined();
    expect(validateConfig({ store: "postgres://u@h/db" }, "/p/statebag.config.json").store).toBe("postgres://u@h/db");
  });

  it("rejects two configs in one folder", () => {
    const dir = folder({ "statebag.config.json": {}, "package.json": { statebag: {} } });
    const e = thrown(() => findProjectConfig(dir));
    expect(e.message).toContain("two statebag configs");
    expect(e.details.fix).toContain("keep one");
  });

  it("names the file and JSON pointer of an unknown key, and suggests the key meant", () => {
    const dir = folder({ "package.json": { statebag: { Registry: "r.ts" } } });
    const e = thrown(() => findProjectConfig(dir));
    expect(e.exitCode).toBe(2);
    expect(e.message).toBe('package.json: unknown key "Registry"');
    expect(e.details.where).toBe(`${join(dir, "package.json")} at /statebag/Registry`);
    expect(e.details.fix).toBe('did you mean "registry"?');
    const other = thrown(() => validateConfig({ output: "x" }, "/p/statebag.config.json"));
    expect(other.details.fix).toContain(
      '"tsconfig", "schemas", "generated", "fixtures", "registry", "store", "runtimeImport"',
    );
  });

  it("rejects wrong types, empty strings, absolute paths and a non-object", () => {
    const file = "/p/statebag.config.json";
    expect(thrown(() => validateConfig({ schemas: 3 }, file)).message).toBe(
      'statebag.config.json: "schemas" must be a non-empty string, found number',
    );
    expect(thrown(() => validateConfig({ schemas: 3 }, file)).details.where).toBe(`${file} at /schemas`);
    expect(thrown(() => validateConfig({ store: "" }, file)).message).toContain("found an empty string");
    expect(thrown(() => validateConfig({ generated: "/abs/gen" }, file)).message).toContain(
      '"generated" is an absolute path',
    );
    const root = thrown(() => validateConfig([], file));
    expect(root.message).toContain("must be an object, found an array");
    expect(root.details.where).toBe(`${file} at (the document root)`);
  });

  it("reports a config that is not JSON with where it breaks", () => {
    const dir = folder({ "statebag.config.json": '{"schemas": "s",}' });
    const e = thrown(() => findProjectConfig(dir));
    expect(e.message).toContain("statebag.config.json is not valid JSON");
    expect(e.details.fix).toContain("no comments or trailing commas");
  });

  it("--config names the file explicitly; a missing one or a package.json without the key is an error", async () => {
    const dir = folder({ "conf/sb.json": { store: "memory:" }, "package.json": { name: "x" } });
    expect(findProjectConfig(folder(), join(dir, "conf/sb.json"))!.store).toBe("memory:");
    expect(thrown(() => findProjectConfig(dir, "nope.json")).message).toBe("--config nope.json: no such file");
    expect(thrown(() => findProjectConfig(dir, "package.json")).message).toContain(
      'package.json has no "statebag" key',
    );
    const r = await cli(["--config", "nope.json", "validate", "x.json"], { cwd: dir });
    expect(r.code).toBe(2);
    expect(r.stderr).toContain("--config nope.json: no such file");
  });

  it("recognises statebag's own repository, and nothing else", () => {
    expect(statebagRepositoryRoot(join(REPO, "src/cli"))).toBe(REPO.replace(/\/$/, ""));
    expect(statebagRepositoryRoot(folder({ "package.json": { name: "statebag" } }))).toBeUndefined();
  });
});

describe("statebag init", () => {
  it("writes statebag.config.json, a tsconfig.json and the folders, and says what to do next", async () => {
    const dir = folder({ "package.json": { name: "app", type: "module" } });
    const r = await cli(["init"], { cwd: dir });
    expect(r.stderr).toBe("");
    expect(r.code).toBe(0);
    expect(JSON.parse(readFileSync(join(dir, "statebag.config.json"), "utf8"))).toEqual({
      tsconfig: "tsconfig.json",
      schemas: "schemas",
      generated: "src/generated",
      fixtures: "test/fixtures",
      registry: "src/generated/registry.ts",
      store: "sqlite:./.statebag/sessions.db",
    });
    expect(JSON.parse(readFileSync(join(dir, "tsconfig.json"), "utf8")).compilerOptions.module).toBe("NodeNext");
    for (const d of ["schemas", "src/generated", "test/fixtures"]) expect(existsSync(join(dir, d))).toBe(true);
    expect(r.stdout).toContain("npx statebag gen --scaffold-fixtures");
    // What it wrote is what every command then reads.
    expect(findProjectConfig(join(dir, "src"))!.root).toBe(dir);
  });

  it("refuses to overwrite a config (exit 2, nothing changed) and keeps an existing tsconfig.json", async () => {
    const dir = folder({ "tsconfig.json": '{"compilerOptions": {}}', "statebag.config.json": '{"store": "memory:"}' });
    const r = await cli(["init"], { cwd: dir });
    expect(r.code).toBe(2);
    expect(r.stderr).toContain("this project already has a statebag config: statebag.config.json");
    expect(readFileSync(join(dir, "statebag.config.json"), "utf8")).toBe('{"store": "memory:"}');
    const kept = folder({ "tsconfig.json": '{"compilerOptions": {}}' });
    expect((await cli(["init", "--store", "memory:"], { cwd: kept })).code).toBe(0);
    expect(readFileSync(join(kept, "tsconfig.json"), "utf8")).toBe('{"compilerOptions": {}}');
    expect(JSON.parse(readFileSync(join(kept, "statebag.config.json"), "utf8")).store).toBe("memory:");
  });

  it('--package-json puts the config under "statebag" in package.json, keeping the rest', async () => {
    const dir = folder({ "package.json": '{\n    "name": "app",\n    "scripts": {"test": "vitest"}\n}\n' });
    expect((await cli(["init", "--package-json"], { cwd: dir })).code).toBe(0);
    const text = readFileSync(join(dir, "package.json"), "utf8");
    expect(text).toMatch(/^\{\n {4}"name"/);
    expect(JSON.parse(text)).toMatchObject({
      name: "app",
      scripts: { test: "vitest" },
      statebag: { registry: "src/generated/registry.ts" },
    });
    expect(existsSync(join(dir, "statebag.config.json"))).toBe(false);
    const again = await cli(["init"], { cwd: dir });
    expect(again.code).toBe(2);
    expect(again.stderr).toContain('package.json ("statebag" key)');
    const none = await cli(["init", "--package-json"], { cwd: folder() });
    expect(none.code).toBe(2);
    expect(none.stderr).toContain("there is no package.json here");
  });

  it("refuses a store URL the config would reject, and to run in statebag's own repository", async () => {
    const dir = folder();
    const r = await cli(["init", "--store", ""], { cwd: dir });
    expect(r.code).toBe(2);
    expect(readdirSync(dir)).toEqual([]);
    expect((await cli(["init"], { cwd: join(REPO, "src") })).code).toBe(2);
  });
});

describe("statebag gen without a config", () => {
  it("refuses outside statebag's repository, writing nothing, and names the command to run", async () => {
    const dir = folder({
      "package.json": { name: "app" },
      "tsconfig.json": { include: ["src"] },
      "src/a.ts": "export const a = 1;\n",
    });
    const before = readdirSync(dir, { recursive: true }).sort();
    const r = await cli(["gen"], { cwd: dir });
    expect(r.code).toBe(2);
    expect(r.stderr).toContain(`no statebag config in ${dir} or any folder above it`);
    expect(r.stderr).toContain("fix:   run npx statebag init");
    expect(readdirSync(dir, { recursive: true }).sort()).toEqual(before);
    const check = await cli(["gen", "--check"], { cwd: join(dir, "src") });
    expect(check.code).toBe(2);
  });
});

describe("commands take the store and registry from the config", () => {
  it("validate checks the project's types through the config's registry, with no flags", async () => {
    const dir = folder({
      "statebag.config.json": { registry: "reg.ts" },
      "package.json": { type: "module" },
      "reg.ts": `import { TypeRegistry } from ${JSON.stringify(join(REPO, "src/runtime/registry/registry.js"))};
import { defaultRegistry } from ${JSON.stringify(join(REPO, "src/runtime/validation/default-registry.js"))};
export const registry = TypeRegistry.compose(defaultRegistry());
registry.register({ $type: "acme.Cfg", version: 1, schema: { type: "object", properties: { n: { type: "integer" } }, required: ["n"] } });
`,
    });
    const s = sampleSession("c");
    s.stateBag["acme.cfg"] = { $type: "acme.Cfg", n: 1 };
    writeFileSync(join(dir, "good.json"), JSON.stringify(envelope(s)));
    s.stateBag["acme.cfg"] = { $type: "acme.Cfg", n: "one" };
    writeFileSync(join(dir, "bad.json"), JSON.stringify(envelope(s)));
    const good = await cli(["validate", "good.json"], { cwd: dir });
    expect(good.stderr).toBe("");
    expect(good.code).toBe(0);
    expect(good.stdout).toContain("acme.cfg: acme.Cfg v1");
    const bad = await cli(["validate", "bad.json"], { cwd: dir });
    expect(bad.code).toBe(1);
    expect(bad.stdout).toContain("/session/stateBag/acme.cfg/n");
  });

  it("a registry the config names but that was not generated yet is an error saying to run gen", async () => {
    const dir = folder({ "statebag.config.json": {} });
    writeFileSync(join(dir, "s.json"), JSON.stringify(envelope(sampleSession())));
    const r = await cli(["validate", "s.json"], { cwd: dir });
    expect(r.code).toBe(2);
    expect(r.stderr).toContain(
      'the registry module src/generated/registry.ts does not exist yet ("registry" in statebag.config.json)',
    );
    expect(r.stderr).toContain("fix:   run npx statebag gen");
  });

  it("the config's store is used after --store and $STATEBAG_STORE; a relative SQLite path is the project's", async () => {
    const dir = folder({ "statebag.config.json": { store: "sqlite:./db/sessions.db" } });
    mkdirSync(join(dir, "sub"));
    const setup = await cli(["store", "setup", "--json"], { cwd: join(dir, "sub") });
    expect(setup.code).toBe(0);
    expect(setup.json().store).toContain(join(dir, "db/sessions.db"));
    expect(existsSync(join(dir, "db/sessions.db"))).toBe(true);
    const env = await cli(["store", "setup", "--json"], { cwd: dir, env: { STATEBAG_STORE: "memory:" } });
    expect(env.json().store).toBe("memory:");
    const flag = await cli(["store", "setup", "--json", "--store", "memory:"], { cwd: dir });
    expect(flag.json().store).toBe("memory:");
  });
});
