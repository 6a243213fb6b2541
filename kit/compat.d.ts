export * from "./dist/generator/compat/index.js";
