/** Blob stores: files kept once beside the sessions, by SHA-256 (the contract, the shared engine, the backends). */
export * from "./blob-store.js";
export { memoryBlobStore } from "./memory.js";
export type { MemoryBlobStoreOptions } from "./memory.js";
