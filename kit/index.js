// statebag-kit's generator (what `statebag gen` loads). Before anything runs, it checks that the
// compilers it resolves from its own location are the ones it was built and tested with.
import { readFileSync } from "node:fs";
import { assertCompilers } from "./dist/generator/compilers.js";

const { version } = JSON.parse(readFileSync(new URL("./package.json", import.meta.url), "utf8"));
const built = JSON.parse(readFileSync(new URL("./dist/compilers.json", import.meta.url), "utf8"));
assertCompilers(built, `npm i -D statebag-kit@${version}`);

export * from "./dist/generator/index.js";
export { formatResult } from "./dist/generator/report.js";
export { formatError } from "./dist/generator/errors.js";
