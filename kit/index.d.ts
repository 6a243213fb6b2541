export * from "./dist/generator/index.js";
