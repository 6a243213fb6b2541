import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { fileURLToPath } from "node:url";

export const REPO = path.resolve(fileURLToPath(new URL("../..", import.meta.url)));

/** The runtime files a project in this repo's layout needs for its markers and messages. */
const RUNTIME_FILES = [
  "core/tagged.ts",
  "core/messages.ts",
  "registry/registry-types.ts",
  "registry/formats.ts",
  // What the generated fused check imports.
  "checks/fused-runtime.ts",
  "checks/session-rules.ts",
];

/**
 * `src/runtime/<file>` for each file and every runtime module it imports (relative imports,
 * followed to the end), as `tempProject` files: a temp project whose modules the generator loads
 * (to run their migrations) needs the whole import closure, not only the files it names.
 */
export function runtimeSources(files: readonly string[]): Record<string, string> {
  const out: Record<string, string> = {};
  const queue = files.map((f) => path.join(REPO, "src/runtime", f));
  while (queue.length > 0) {
    const file = queue.shift()!;
    const rel = path.relative(path.join(REPO, "src/runtime"), file).split(path.sep).join("/");
    if (rel.startsWith("..") || `src/runtime/${rel}` in out || !fs.existsSync(file)) continue;
    const text = fs.readFileSync(file, "utf8");
    out[`src/runtime/${rel}`] = text;
    for (const m of text.matchAll(/from\s+"(\.{1,2}\/[^"]+)\.js"/g))
      queue.push(path.resolve(path.dirname(file), `${m[1]}.ts`));
  }
  return out;
}

const created: string[] = [];

/**
 * A throw-away project in this repo's layout (`src/runtime/...`) under os.tmpdir(). It gets a
 * private node_modules holding only ajv (generated validators `require` its runtime helpers) and ajv-formats, so
 * the generator's cache lands inside the temp dir, not in the repo's.
 */
export function tempProject(files: Record<string, string>, options: { runtime?: boolean } = {}): string {
  const root = fs.mkdtempSync(path.join(os.tmpdir(), "statebag-gen-"));
  created.push(root);
  if (options.runtime !== false)
    for (const f of RUNTIME_FILES)
      writeFile(root, `src/runtime/${f}`, fs.readFileSync(path.join(REPO, "src/runtime", f), "utf8"));
  fs.mkdirSync(path.join(root, "node_modules"));
  // ajv and ajv-formats: the runtime's formats (src/runtime/registry/formats.ts) import its definitions.
  for (const pkg of ["ajv", "ajv-formats"])
    fs.symlinkSync(path.join(REPO, "node_modules", pkg), path.join(root, "node_modules", pkg), "dir");
  for (const [rel, text] of Object.entries(files)) writeFile(root, rel, text);
  return root;
}

export function writeFile(root: string, rel: string, text: string): void {
  const file = path.join(root, rel);
  fs.mkdirSync(path.dirname(file), { recursive: true });
  fs.writeFileSync(file, text);
}

export function readFile(root: string, rel: string): string {
  return fs.readFileSync(path.join(root, rel), "utf8");
}

/** Every file under `dir` (relative path -> content), node_modules excluded. */
export function readTree(dir: string): Record<string, string> {
  const out: Record<string, string> = {};
  const walk = (d: string): void => {
    for (const e of fs.readdirSync(d, { withFileTypes: true })) {
      const full = path.join(d, e.name);
      if (e.isDirectory()) {
        if (e.name !== "node_modules" && e.name !== ".statebag-cache") walk(full);
      } else out[path.relative(dir, full).split(path.sep).join("/")] = fs.readFileSync(full, "utf8");
    }
  };
  walk(dir);
  return out;
}

export function removeTempProjects(): void {
  for (const dir of created.splice(0)) fs.rmSync(dir, { recursive: true, force: true });
}

/** Type-checks every .ts file under the project's src/ (the TypeScript compiler API, in-process): `file:line message` per error. */
export async function typeErrors(root: string): Promise<string[]> {
  const { default: ts } = await import("typescript");
  const files: string[] = [];
  const walk = (dir: string) => {
    for (const e of fs.readdirSync(dir, { withFileTypes: true })) {
      if (e.name === "node_modules" || e.name.startsWith(".")) continue;
      const full = path.join(dir, e.name);
      if (e.isDirectory()) walk(full);
      else if (e.name.endsWith(".ts")) files.push(full);
    }
  };
  walk(path.join(root, "src"));
  const program = ts.createProgram(files, {
    strict: true,
    noEmit: true,
    skipLibCheck: true,
    target: ts.ScriptTarget.ES2022,
    module: ts.ModuleKind.ESNext,
    moduleResolution: ts.ModuleResolutionKind.Bundler,
    lib: ["lib.es2023.d.ts"],
    typeRoots: [path.join(REPO, "node_modules/@types")],
    types: ["node"],
  });
  return ts.getPreEmitDiagnostics(program).map((d) => {
    const where = d.file
      ? `${path.relative(root, d.file.fileName).split(path.sep).join("/")}:${d.file.getLineAndCharacterOfPosition(d.start ?? 0).line + 1}`
      : "";
    return `${where} ${ts.flattenDiagnosticMessageText(d.messageText, "\n")}`;
  });
}
