import { defaultRegistry } from "../src/runtime/registry.js";
import { validateSession } from "../src/runtime/validate.js";
import { makeSession } from "./sessions.js";
const registry = defaultRegistry();
const text = JSON.stringify(makeSession({ messages: 1000 }));
const parsed = JSON.parse(text);
const t0 = Date.now();
let n = 0;
while (Date.now() - t0 < 4000) { validateSession(parsed, { registry }); n++; }
console.log(n, "iterations", (4000 / n).toFixed(4), "ms/op");
