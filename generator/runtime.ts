/**
 * The one seam between the generator and statebag's runtime. In this repository it is the sources;
 * the statebag-kit build (kit/build.mjs) replaces this module with a re-export of the installed
 * `statebag/internal/toolchain`, so the kit never carries a second copy of the runtime.
 */
export * from "../src/internal/toolchain.js";
