import { performance } from "node:perf_hooks";
import { TypeRegistry, defaultRegistry } from "../src/runtime/registry.js";
import { validateSession } from "../src/runtime/validate.js";
import { makeModelTypes } from "../test/serialization/model.js";
import { makeSession } from "./sessions.js";
const gen = defaultRegistry();
const hand = new TypeRegistry({ types: makeModelTypes() });
const session = makeSession({ messages: 1000 });
const parsed = JSON.parse(JSON.stringify(session));
const contents: any[] = [];
for (const m of parsed.stateBag["statebag.chatHistory"].messages) for (const c of m.contents) contents.push(c);
function t(name: string, f: () => unknown) {
  for (let i = 0; i < 300; i++) f();
  const xs: number[] = [];
  for (let s = 0; s < 41; s++) { const t0 = performance.now(); for (let i = 0; i < 20; i++) f(); xs.push((performance.now() - t0) / 20); }
  xs.sort((a, b) => a - b);
  console.log(name.padEnd(30), xs[20].toFixed(4));
}
for (const [label, registry] of [["gen", gen], ["hand", hand]] as const) {
  const table = registry.table;
  const hist = registry.get("InMemoryChatHistoryState")!;
  for (let r = 0; r < 2; r++) {
    t(label + " JSON.parse", () => JSON.parse(JSON.stringify(1)));
    t(label + " validate parsed", () => validateSession(parsed, { registry }));
    t(label + " history validator", () => hist.validate(parsed.stateBag["statebag.chatHistory"]));
    t(label + " content validators", () => { let ok = 0; for (let i = 0; i < contents.length; i++) { const c = contents[i]; if (table.get(c.$type)!.def.validate(c)) ok++; } return ok; });
  }
}
