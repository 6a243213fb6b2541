// The compatibility check alone (what `statebag diff` loads): it needs no compiler.
export * from "./dist/generator/compat/index.js";
