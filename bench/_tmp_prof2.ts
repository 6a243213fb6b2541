import { performance } from "node:perf_hooks";
import { TypeRegistry, defaultRegistry } from "../src/runtime/registry.js";
import { checkJsonLimits } from "../src/runtime/safe-json.js";
import { validateSession } from "../src/runtime/validate.js";
import { makeSession } from "./sessions.js";
const gen = defaultRegistry();
const stub = new TypeRegistry({ types: gen.types().map((d) => ({ ...d, validate: () => true })) });
const session = makeSession({ messages: 1000 });
const text = JSON.stringify(session);
const parsed = JSON.parse(text);
function t(name: string, f: () => unknown) {
  for (let i = 0; i < 300; i++) f();
  const xs: number[] = [];
  for (let s = 0; s < 41; s++) { const t0 = performance.now(); for (let i = 0; i < 20; i++) f(); xs.push((performance.now() - t0) / 20); }
  xs.sort((a, b) => a - b);
  console.log(name.padEnd(30), xs[20].toFixed(4));
}
for (let r = 0; r < 3; r++) {
  t("JSON.parse", () => JSON.parse(text));
  t("limits", () => checkJsonLimits(parsed));
  t("walk only (stub validators)", () => validateSession(parsed, { registry: stub }));
  t("validate gen", () => validateSession(parsed, { registry: gen }));
}
