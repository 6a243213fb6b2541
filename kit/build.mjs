// Builds statebag-kit from this repository's generator. `npm run build:kit` builds it from the
// output of `npm run build` (which compiles generator/ into dist/generator); `node build.mjs
// --compile`, the kit's own `prepack`, runs that compile first, so any way of packing the kit
// (`npm pack ./kit`, `cd kit && npm pack`, `npm publish` in kit/) packs a complete, fresh build.
// The kit's generator is that output with one change: generator/runtime.js, the seam to statebag's
// runtime, re-exports the installed `statebag/internal/toolchain`, so an app has one copy of the
// runtime's classes.
import { execFileSync } from "node:child_process";
import { cpSync, existsSync, readdirSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { join, relative, resolve } from "node:path";
import { fileURLToPath } from "node:url";

// `node kit/build.mjs [--compile] [<built dist> <kit folder>]`: the e2e test builds into a staging copy.
const args = process.argv.slice(2);
const compile = args.includes("--compile");
const [distArg, kitArg] = args.filter((a) => a !== "--compile");
const kitSources = fileURLToPath(new URL(".", import.meta.url));
const repo = join(kitSources, "..");
const dist = resolve(distArg ?? join(repo, "dist"));
const built = join(dist, "generator");
const kit = resolve(kitArg ?? kitSources);
const out = join(kit, "dist");

const fail = (message) => {
  console.error(`build:kit: ${message}`);
  process.exit(1);
};
if (compile) {
  // What `npm run build` does (into `dist`), with this repository's own compiler: a stale or
  // missing dist/ must never be what a packed kit holds.
  const tsc = join(repo, "node_modules/typescript/bin/tsc");
  if (!existsSync(tsc)) fail(`${relative(process.cwd(), tsc)} is missing: run npm ci in statebag's repository first`);
  rmSync(built, { recursive: true, force: true });
  console.log(`build:kit: compiling statebag and its generator into ${relative(process.cwd(), dist) || "."}`);
  try {
    execFileSync(process.execPath, [tsc, "-p", join(repo, "tsconfig.build.json"), "--outDir", dist], {
      cwd: repo,
      stdio: "inherit",
    });
    // The second half of `npm run build`: the studio's page script, bundled into the same dist/.
    execFileSync(process.execPath, [join(repo, "scripts/build-studio.mjs"), dist], { cwd: repo, stdio: "inherit" });
  } catch {
    fail("the TypeScript build failed (its errors are above): nothing was packed");
  }
}
if (!existsSync(join(built, "index.js")))
  fail(`${relative(repo, built)}/index.js is missing: run npm run build first (or node kit/build.mjs --compile)`);

// The kit is released with statebag: same version, and the toolchain ranges this repository tests.
const root = JSON.parse(readFileSync(join(repo, "package.json"), "utf8"));
const pkg = JSON.parse(readFileSync(join(kit, "package.json"), "utf8"));
if (pkg.version !== root.version || pkg.peerDependencies.statebag !== root.version) {
  fail(
    `kit/package.json has version ${pkg.version} and peer statebag ${pkg.peerDependencies.statebag}; both must be statebag's ${root.version}`,
  );
}
for (const [name, range] of Object.entries(pkg.dependencies)) {
  const tested = root.devDependencies[name] ?? root.dependencies[name];
  if (tested !== range)
    fail(`kit/package.json asks for ${name}@${range}, but this repository builds and tests with ${tested}`);
}

rmSync(out, { recursive: true, force: true });
// generator/cli.ts is this repository's `npm run gen`; the kit's command is `statebag gen`.
cpSync(built, join(out, "generator"), {
  recursive: true,
  filter: (src) => !/[\\/]cli\.(js|d\.ts)$/.test(src) && !src.endsWith(".map"),
});
const seam =
  '// statebag\'s runtime helpers, from the installed statebag (see generator/runtime.ts).\nexport * from "statebag/internal/toolchain";\n';
writeFileSync(join(out, "generator/runtime.js"), seam);
writeFileSync(join(out, "generator/runtime.d.ts"), seam);

// Nothing may reach outside the kit by relative path (the runtime comes through the seam only).
const walk = (dir) =>
  readdirSync(dir, { withFileTypes: true }).flatMap((e) =>
    e.isDirectory() ? walk(join(dir, e.name)) : [join(dir, e.name)],
  );
for (const file of walk(out)) {
  const text = readFileSync(file, "utf8");
  for (const m of text.matchAll(/(?:from |import\()\s*["'](\.{1,2}\/[^"']+)["']/g)) {
    const target = join(file, "..", m[1]);
    if (!target.startsWith(out)) fail(`${relative(repo, file)} imports ${m[1]}, outside the kit`);
  }
}

// The compilers this build was made with, checked by index.js when the kit loads.
const { compilerVersions } = await import(new URL("compilers.js", `file://${built}/`).href);
// Resolved from this repository, whose toolchain (the kit's dependency ranges, checked above) built and tested it.
const compilers = compilerVersions(join(repo, "package.json"));
if (Object.values(compilers).includes("?"))
  fail(`the toolchain is not installed in ${repo} (found ${JSON.stringify(compilers)}): run npm ci`);
writeFileSync(join(out, "compilers.json"), JSON.stringify(compilers, null, 2) + "\n");
console.log(
  `build:kit: kit/dist (statebag-kit ${pkg.version}, compilers ${readFileSync(join(out, "compilers.json"), "utf8").replace(/\s+/g, " ").trim()})`,
);
