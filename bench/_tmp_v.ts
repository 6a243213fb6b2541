import { defaultRegistry } from "../src/runtime/registry.js";
import { validateSession } from "../src/runtime/validate.js";
import { checkJsonLimits } from "../src/runtime/safe-json.js";
import { makeSession } from "./sessions.js";
import { sessionSchema } from "./zod-session.js";
const registry = defaultRegistry();
const text = JSON.stringify(makeSession({ messages: 1000 }));
const parsed = JSON.parse(text);
const cpu = () => { const u = process.cpuUsage(); return (u.user + u.system) / 1000; };
function t(name: string, f: () => unknown) {
  for (let i = 0; i < 300; i++) f();
  let best = Infinity; const xs: number[] = [];
  for (let r = 0; r < 15; r++) { const t0 = cpu(); let n = 0; while (cpu() - t0 < 40) { f(); n++; } xs.push((cpu() - t0) / n); }
  xs.sort((a, b) => a - b);
  console.log(name.padEnd(12), "min", xs[0].toFixed(4), "p25", xs[3].toFixed(4), "med", xs[7].toFixed(4));
}
t("parse", () => JSON.parse(text));
t("limits", () => checkJsonLimits(parsed));
t("validate", () => validateSession(parsed, { registry }));
t("zod", () => sessionSchema.parse(parsed));
const table = registry.table;
const hist = registry.get("InMemoryChatHistoryState")!;
const contents: any[] = [];
for (const m of parsed.stateBag["statebag.chatHistory"].messages) for (const c of m.contents) contents.push(c);
t("history v", () => hist.validate(parsed.stateBag["statebag.chatHistory"]));
t("content v", () => { let ok = 0; for (let i = 0; i < contents.length; i++) { const c = contents[i]; if (table.get(c.$type)!.def.validate(c)) ok++; } return ok; });
t("map.get", () => { let ok = 0; for (let i = 0; i < contents.length; i++) { const c = contents[i]; if (table.get(c.$type)) ok++; } return ok; });
import { isDateTime } from "../src/runtime/formats.js";
const dates = parsed.stateBag["statebag.chatHistory"].messages.map((m: any) => m.createdAt);
t("isDateTime", () => { let ok = 0; for (let i = 0; i < dates.length; i++) if (isDateTime(dates[i])) ok++; return ok; });
