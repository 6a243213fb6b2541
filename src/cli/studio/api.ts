/**
 * The JSON API behind `statebag studio`: sessions a page at a time (from `scan`, or `list` for one
 * owner), one session with its validation, a migration preview step by step, the migration of one
 * session (only with --write), and the registered types with their schema history.
 *
 * Nothing here renders HTML: the page (client/) builds its DOM from these documents with
 * textContent (wire.ts types them as the page reads them). Every per-row fact of the session list
 * comes from the texts of the page being read, never from loading every stored body.
 */
import { isBlobHash } from "../../runtime/blobs/blob-store.js";
import { blobReader } from "../../runtime/blobs/references.js";
import { existsSync, readdirSync, readFileSync, statSync } from "node:fs";
import { join, relative } from "node:path";
import type { Migration } from "../../runtime/registry/migrations.js";
import type { TypeRegistry } from "../../runtime/registry/registry.js";
import { pointerSegment } from "../../runtime/core/json.js";
import { isEncryptedText } from "../../runtime/stores/encryption/envelope.js";
import type { ListItem, ScanItem, StoredSessionMeta } from "../../runtime/stores/types.js";
import type { CliRegistry } from "../registry.js";
import { checkDocument, storedQuarantine } from "../session-report.js";
import { scanTextReader, type OpenedStore, type PlaintextCapture } from "../store.js";
import type { MigrationStep, PreviewValue, SessionRow, StudioFile, Validity } from "./wire.js";

/** An error the API answers with a status and a message (JSON `{ error }`). */
export class StudioHttpError extends Error {
  constructor(
    readonly status: number,
    message: string,
  ) {
    super(message);
  }
}

/** Where the project keeps its schemas and golden fixtures (the config's, else the defaults). */
export interface StudioPaths {
  root: string;
  schemas: string;
  fixtures: string;
}

export interface StudioApiOptions {
  opened: OpenedStore;
  /** The codec the store was opened with: it hands over each stored text `get` reads. */
  capture: PlaintextCapture;
  source: CliRegistry;
  paths: StudioPaths;
  /** --write: the one-session migration is allowed. */
  write: boolean;
  /** The compatibility check (`statebag diff`'s), loaded on first use; may throw (no statebag-kit). */
  loadCompat: () => Promise<CompatApi>;
}

/** What the studio uses of the compatibility check. */
export interface CompatApi {
  runDiff(
    oldPath: string,
    newPath: string,
    options?: { seed?: number; samples?: number },
  ): {
    changes: {
      pointer: string;
      rule: string;
      kind: string;
      message: string;
      witness?: { document: unknown; source: string; seed?: number };
    }[];
    verdict: string;
    warnings: string[];
  };
}

export type { SessionRow, Validity };

export interface SessionQuery {
  cursor?: string;
  limit: number;
  q?: string;
  type?: string;
  version?: number;
  validity?: Validity;
  owner?: string;
}

/** Largest stored text the session view sends whole (the raw view says it was cut beyond). */
const MAX_SENT_TEXT = 8 * 1024 * 1024;
/** Store pages read for one filtered list request before answering with what was found. */
const MAX_PAGES_PER_REQUEST = 10;
const VALIDITIES: readonly Validity[] = ["valid", "needs-migration", "invalid", "unchecked"];

/** A mutex: one store read at a time, so the capturing codec hands each text to its own request. */
class Lock {
  #tail: Promise<unknown> = Promise.resolve();
  run<T>(fn: () => Promise<T>): Promise<T> {
    const next = this.#tail.then(fn, fn);
    this.#tail = next.catch(() => undefined);
    return next;
  }
}

/** Media types the studio shows as images (nothing that can carry script). */
const PREVIEWED = new Set(["image/png", "image/jpeg", "image/gif", "image/webp"]);

/** The reference contents of a parsed stored document (at most 200), as the session view lists them. */
function studioFiles(doc: unknown): StudioFile[] {
  const files = new Map<string, StudioFile>();
  const stack: unknown[] = [doc];
  while (stack.length > 0 && files.size < 200) {
    const value = stack.pop();
    if (typeof value !== "object" || value === null) continue;
    if (Array.isArray(value)) {
      for (const item of value) stack.push(item);
      continue;
    }
    const object = value as Record<string, unknown>;
    if (object.$type === "statebag.blobReference" && isBlobHash(object.hash) && typeof object.mediaType === "string") {
      files.set(object.hash, {
        hash: object.hash,
        mediaType: object.mediaType.toLowerCase(),
        size: typeof object.size === "number" ? object.size : 0,
        ...(typeof object.name === "string" ? { name: object.name } : {}),
      });
      continue;
    }
    for (const key of Object.keys(object)) stack.push(object[key]);
  }
  return [...files.values()];
}

function isObject(v: unknown): v is Record<string, unknown> {
  return typeof v === "object" && v !== null && !Array.isArray(v);
}

/** The state bag of a parsed stored document, in any of the stored forms, and its pointer. */
function stateBagOf(doc: unknown): { bag: Record<string, unknown>; base: string } | undefined {
  if (!isObject(doc)) return undefined;
  if (isObject(doc.session) && isObject(doc.session.stateBag))
    return { bag: doc.session.stateBag, base: "/session/stateBag" };
  if (isObject(doc.stateBag)) return { bag: doc.stateBag, base: "/stateBag" };
  return undefined;
}

function versionOf(v: unknown): number {
  return isObject(v) && typeof v.$version === "number" ? v.$version : 1;
}

/** Facts of one stored text: size, messages, types and versions, validity. */
function rowFacts(text: string, registry: TypeRegistry, id: string): Omit<SessionRow, "id" | "revision"> {
  let types: SessionRow["types"] = [];
  let messages = 0;
  const report = checkDocument(text, {
    registry,
    strict: false,
    onParsed: (doc) => {
      // Read before the load runs its migrations on the document.
      const found = stateBagOf(doc);
      if (!found) return;
      types = Object.entries(found.bag).map(([key, v]) => ({
        key,
        $type: isObject(v) ? String(v.$type) : typeof v,
        version: versionOf(v),
      }));
      // The active path: a branched history keeps its other messages in `branches`, not counted here.
      for (const value of Object.values(found.bag))
        if (isObject(value) && Array.isArray(value.messages)) messages += value.messages.length;
    },
  });
  let validity: Validity = !report.ok
    ? "invalid"
    : report.preserved.length > 0
      ? "unchecked"
      : report.migrated
        ? "needs-migration"
        : "valid";
  let problems = report.problems.length;
  if (report.ok && report.loaded?.length === 1 && report.loaded[0].id !== id) {
    validity = "invalid";
    problems++;
  }
  return { bytes: Buffer.byteLength(text), messages, types, validity, problems };
}

function metaFields(meta: Partial<StoredSessionMeta> | undefined): Pick<SessionRow, "owner" | "title" | "updatedAt"> {
  if (!meta) return {};
  return {
    ...(typeof meta.owner === "string" ? { owner: meta.owner } : {}),
    ...(typeof meta.title === "string" ? { title: meta.title } : {}),
    ...(typeof meta.updatedAt === "string" ? { updatedAt: meta.updatedAt } : {}),
  };
}

function readJsonFile(file: string, max = 4 * 1024 * 1024): unknown {
  if (statSync(file).size > max) return { $comment: `(not shown: larger than ${max} bytes)` };
  try {
    return JSON.parse(readFileSync(file, "utf8"));
  } catch (error) {
    return { $comment: `(not valid JSON: ${(error as Error).message})` };
  }
}

function listDir(dir: string, dirs: boolean): string[] {
  if (!existsSync(dir)) return [];
  return readdirSync(dir, { withFileTypes: true })
    .filter((e) => (dirs ? e.isDirectory() : e.isFile()))
    .map((e) => e.name)
    .sort();
}

interface TypeFiles {
  type: string;
  family: string;
  current?: string;
  frozen: Map<number, string>;
  fixtures: Map<number, string>;
}

export class StudioApi {
  readonly #lock = new Lock();
  readonly #compat = new Map<string, unknown>();
  #types: Map<string, TypeFiles> | undefined;

  constructor(readonly options: StudioApiOptions) {}

  get registry(): TypeRegistry {
    return this.options.source.registry;
  }

  info() {
    const { opened, source, write, paths } = this.options;
    return {
      store: opened.url,
      ...(opened.empty ? { empty: opened.empty } : {}),
      write,
      encrypted: opened.encryption ? { store: opened.encryption.store } : undefined,
      registry: source.origin === "none" ? "statebag's own types" : source.module,
      schemas: relative(paths.root, paths.schemas) || ".",
      canList: typeof opened.store.list === "function",
    };
  }

  /** The stored text of one session (decrypted with the keyring), its revision and metadata. */
  async #read(id: string): Promise<{ text: string; revision: number; meta?: StoredSessionMeta } | undefined> {
    const { opened, capture } = this.options;
    return this.#lock.run(async () => {
      const stored = await opened.store.get(id);
      const text = capture.take(id);
      if (stored === undefined || text === undefined) return undefined;
      return { text, revision: stored.revision, ...(stored.meta ? { meta: stored.meta } : {}) };
    });
  }

  /** One page of sessions, filtered, from `scan` (or `list` for one owner). */
  async sessions(query: SessionQuery) {
    if (!Number.isInteger(query.limit) || query.limit < 1 || query.limit > 200)
      throw new StudioHttpError(400, "limit: expected an integer from 1 to 200");
    if (query.validity !== undefined && !VALIDITIES.includes(query.validity))
      throw new StudioHttpError(400, `validity: expected one of ${VALIDITIES.join(", ")}`);
    const rows: SessionRow[] = [];
    let cursor = query.cursor;
    let scanned = 0;
    let pages = 0;
    const { store } = this.options.opened;
    const search = query.q?.toLowerCase();
    const matches = (row: SessionRow) =>
      (search === undefined ||
        row.id.toLowerCase().includes(search) ||
        (row.title ?? "").toLowerCase().includes(search)) &&
      (query.type === undefined ||
        row.types.some(
          (t) => t.$type === query.type && (query.version === undefined || t.version === query.version),
        )) &&
      (query.type !== undefined || query.version === undefined || row.types.some((t) => t.version === query.version)) &&
      (query.validity === undefined || row.validity === query.validity);
    do {
      pages++;
      let items: { id: string; revision: number; text?: string; meta?: Partial<StoredSessionMeta> }[];
      let next: string | undefined;
      if (query.owner !== undefined) {
        const page = await this.#lock.run(() =>
          store.list({ owner: query.owner!, limit: query.limit, order: "id", ...(cursor ? { cursor } : {}) }),
        );
        items = page.items.map((i: ListItem) => ({ id: i.id, revision: i.revision, meta: i.meta }));
        next = page.cursor;
      } else {
        const page = await this.#lock.run(() =>
          store.scan({ limit: query.limit, includeText: true, ...(cursor ? { cursor } : {}) }),
        );
        // `meta` on scan items: stores that keep it beside the row hand it over (feature check).
        items = page.items.map((i: ScanItem & { meta?: Partial<StoredSessionMeta> }) => ({
          id: i.id,
          revision: i.revision,
          ...(i.text !== undefined ? { text: i.text } : {}),
          ...(i.meta ? { meta: i.meta } : {}),
        }));
        next = page.cursor;
      }
      for (const item of items) {
        scanned++;
        let text = item.text;
        let revision = item.revision;
        let meta = item.meta;
        let encrypted = false;
        if (text === undefined || (isEncryptedText(text) && this.options.opened.encryption)) {
          // A listing has no bodies, and an encrypted row is decrypted by `get` (which binds its owner).
          encrypted = text !== undefined;
          const read = await this.#read(item.id).catch((error: unknown) => ({ error }));
          if (read === undefined) continue;
          if ("error" in read) {
            rows.push({
              id: item.id,
              revision,
              ...metaFields(meta),
              bytes: 0,
              messages: 0,
              types: [],
              validity: "invalid",
              problems: 1,
              encrypted: true,
            });
            continue;
          }
          text = read.text;
          revision = read.revision;
          meta ??= read.meta;
        } else if (isEncryptedText(text)) {
          rows.push({
            id: item.id,
            revision,
            ...metaFields(meta),
            bytes: Buffer.byteLength(text),
            messages: 0,
            types: [],
            validity: "unchecked",
            problems: 0,
            encrypted: true,
          });
          continue;
        }
        const row: SessionRow = {
          id: item.id,
          revision,
          ...metaFields(meta),
          ...rowFacts(text, this.registry, item.id),
          ...(encrypted ? { encrypted } : {}),
        };
        if (matches(row)) rows.push(row);
      }
      cursor = next;
    } while (cursor !== undefined && rows.length < query.limit && pages < MAX_PAGES_PER_REQUEST);
    return { items: rows, scanned, ...(cursor !== undefined ? { cursor } : {}) };
  }

  /** One session: the stored text, each state value with its validation, the problems by pointer. */
  async session(id: string) {
    const read = await this.#read(id);
    if (read === undefined) throw new StudioHttpError(404, "no session with this id in the store");
    const { text } = read;
    let parsed: unknown;
    let found: ReturnType<typeof stateBagOf>;
    const before: { key: string; $type: string; version: number }[] = [];
    const report = checkDocument(text, {
      registry: this.registry,
      strict: false,
      onParsed: (doc) => {
        found = stateBagOf(doc);
        // The document as stored: a copy taken before the load migrates it.
        parsed = text.length <= MAX_SENT_TEXT ? structuredClone(doc) : undefined;
        if (found)
          for (const [key, value] of Object.entries(found.bag))
            before.push({
              key,
              $type: isObject(value) ? String(value.$type) : typeof value,
              version: versionOf(value),
            });
      },
    });
    const base = found?.base ?? "/session/stateBag";
    const state = before.map((s) => {
      const pointer = `${base}/${pointerSegment(s.key)}`;
      const def = this.registry.get(s.$type);
      const problems = report.problems.filter((p) => p.pointer === pointer || p.pointer.startsWith(`${pointer}/`));
      const preserved = report.preserved.filter((p) => p.pointer === pointer || p.pointer.startsWith(`${pointer}/`));
      const migrated = report.migrations.some((m) => m.pointer === pointer);
      const behind =
        def !== undefined
          ? s.version < def.version
          : this.registry.needsUpgrade({ $type: s.$type, $version: s.version });
      const status: Validity =
        problems.length > 0
          ? "invalid"
          : preserved.length > 0
            ? "unchecked"
            : behind || migrated
              ? "needs-migration"
              : "valid";
      return {
        ...s,
        pointer,
        family: def?.family,
        latest: def?.version,
        known: def !== undefined,
        status,
        problems,
        preserved,
      };
    });
    if (report.ok && report.loaded?.length === 1 && report.loaded[0].id !== id) {
      report.ok = false;
      report.problems.push({
        code: "session-id" as never,
        pointer: "/session/id",
        expected: JSON.stringify(id),
        found: JSON.stringify(report.loaded[0].id),
        message: `the stored session's id is not the id it is stored under`,
      });
    }
    const cut = text.length > MAX_SENT_TEXT;
    return {
      id,
      revision: read.revision,
      ...metaFields(read.meta),
      bytes: Buffer.byteLength(text),
      encrypted: this.options.opened.encryption !== undefined,
      form: report.form,
      ok: report.ok,
      validity: (!report.ok
        ? "invalid"
        : report.preserved.length > 0
          ? "unchecked"
          : report.migrated
            ? "needs-migration"
            : "valid") as Validity,
      problems: report.problems,
      preserved: report.preserved,
      migrations: report.migrations,
      quarantined: parsed ? storedQuarantine(parsed) : [],
      state,
      document: parsed ?? null,
      raw: cut ? text.slice(0, MAX_SENT_TEXT) : text,
      rawCut: cut ? text.length : undefined,
      write: this.options.write,
      files: parsed ? studioFiles(parsed) : [],
    };
  }

  /**
   * The bytes of an image a session refers to (a raster image of at most 16 MiB), for the preview:
   * only hashes the session names, read from the blob store under the session's owner.
   */
  async blob(id: string, hash: string): Promise<{ bytes: Buffer; mediaType: string }> {
    const read = await this.#read(id);
    if (read === undefined) throw new StudioHttpError(404, "no session with this id in the store");
    const file = studioFiles(JSON.parse(read.text) as unknown).find((f) => f.hash === hash);
    if (!file || !PREVIEWED.has(file.mediaType))
      throw new StudioHttpError(404, "no image with this hash in the session");
    const blobs = this.options.opened.store.blobs;
    if (!blobs) throw new StudioHttpError(404, "the store has no blob store");
    if (file.size > 16 * 1024 * 1024) throw new StudioHttpError(413, "the image is too large to preview");
    const reader = blobReader(blobs, read.meta?.owner);
    const bytes = await reader.read(hash);
    if (!bytes) throw new StudioHttpError(404, "the image is no longer in the blob store");
    return { bytes: Buffer.from(bytes), mediaType: file.mediaType };
  }

  /** The step of `type` at `version`: a declared migration, or a pure rename to the type's new name. */
  #step(type: string, version: number): { migration?: Migration; renamedTo?: string } | undefined {
    const migration = this.registry.migrations().find((m) => m.type === type && m.from === version);
    if (migration) return { migration };
    if (this.registry.get(type) === undefined) {
      const renamedTo = this.registry.renamedTo(type);
      if (renamedTo !== undefined) return { renamedTo };
    }
    return undefined;
  }

  /** Each state value that is behind, migrated one step at a time: the value before and after each step. */
  async migrationPreview(id: string) {
    const read = await this.#read(id);
    if (read === undefined) throw new StudioHttpError(404, "no session with this id in the store");
    let doc: unknown;
    const report = checkDocument(read.text, {
      registry: this.registry,
      strict: false,
      onParsed: (d) => (doc = structuredClone(d)),
    });
    const found = stateBagOf(doc);
    const values: PreviewValue[] = [];
    for (const [key, stored] of Object.entries(found?.bag ?? {})) {
      if (!isObject(stored) || typeof stored.$type !== "string") continue;
      if (!this.registry.needsUpgrade({ $type: stored.$type, $version: versionOf(stored) })) continue;
      const pointer = `${found!.base}/${pointerSegment(key)}`;
      const steps: MigrationStep[] = [];
      let current: Record<string, unknown> = stored;
      let type = stored.$type;
      let version = versionOf(stored);
      for (let n = 0; n < 100; n++) {
        const latest = this.registry.get(type)?.version;
        if (latest !== undefined && version >= latest) break;
        const step = this.#step(type, version);
        if (step === undefined) {
          steps.push({ fromType: type, from: version, error: `no migration reads "${type}" v${version}` });
          break;
        }
        const beforeValue = structuredClone(current);
        if (step.renamedTo !== undefined) {
          const after = { ...structuredClone(current), $type: step.renamedTo };
          steps.push({
            fromType: type,
            from: version,
            toType: step.renamedTo,
            to: version,
            source: "a former name (formerNames): a pure rename",
            before: beforeValue,
            after,
            changes: diffValues(beforeValue, after),
          });
          current = after;
          type = step.renamedTo;
          continue;
        }
        const migration = step.migration!;
        let out: unknown;
        try {
          out = migration.up(structuredClone(current), {
            pointer,
            type,
            from: version,
            toType: migration.toType,
            to: migration.to,
          });
        } catch (error) {
          steps.push({
            fromType: type,
            from: version,
            toType: migration.toType,
            to: migration.to,
            source: migration.source,
            before: beforeValue,
            error: `the migration threw: ${error instanceof Error ? error.message : String(error)}`,
          });
          break;
        }
        if (!isObject(out)) {
          steps.push({
            fromType: type,
            from: version,
            toType: migration.toType,
            to: migration.to,
            source: migration.source,
            before: beforeValue,
            error: "the migration did not return an object",
          });
          break;
        }
        const after: Record<string, unknown> = { ...out, $type: migration.toType };
        if (migration.to > 1) after.$version = migration.to;
        else delete after.$version;
        steps.push({
          fromType: type,
          from: version,
          toType: migration.toType,
          to: migration.to,
          source: migration.source,
          before: beforeValue,
          after,
          changes: diffValues(beforeValue, after),
        });
        current = after;
        type = migration.toType;
        version = migration.to;
      }
      const def = this.registry.get(type);
      let valid: boolean | undefined;
      let errors: { pointer: string; message: string }[] = [];
      if (def && steps.every((s) => !("error" in s))) {
        valid = def.validate(current);
        errors = (def.validate.errors ?? [])
          .slice(0, 20)
          .map((e) => ({ pointer: e.instancePath, message: e.message ?? e.keyword }));
      }
      values.push({
        key,
        pointer,
        fromType: stored.$type,
        from: versionOf(stored),
        toType: type,
        to: version,
        steps,
        valid,
        errors,
      });
    }
    // Nested values (message contents, annotations) the load migrates too.
    const nested = report.migrations.filter((m) => !values.some((v) => v.pointer === m.pointer));
    return {
      id,
      revision: read.revision,
      ok: report.ok,
      problems: report.problems.slice(0, 50),
      values,
      nested,
      write: this.options.write,
    };
  }

  /**
   * Migrates this one session as `statebag migrate` does (the bulk migration: a compare-and-swap
   * save, re-read and retried on a concurrent change, its time to live kept), nothing else.
   */
  async migrateOne(id: string) {
    if (!this.options.write)
      throw new StudioHttpError(403, "the studio is read-only: start it with --write to migrate a session");
    const { migrateStore } = await import("../../runtime/stores/migrate.js");
    const { compareIds } = await import("../../runtime/stores/common.js");
    const { opened, capture } = this.options;
    const reader = scanTextReader(opened, capture);
    const abort = new AbortController();
    // The scan starts just before the id (after a proper prefix of it) and stops once past it.
    const chars = Array.from(id);
    const startAfter = chars.length > 1 ? chars.slice(0, -1).join("") : undefined;
    const report = await this.#lock.run(() =>
      migrateStore(opened.store, {
        registry: this.registry,
        batchSize: 10,
        signal: abort.signal,
        ...(startAfter !== undefined ? { startAfter } : {}),
        readText: async (item) => (item.id === id ? reader(item) : undefined),
        onProgress: (_done, _total, progress) => {
          if (progress.cursor !== undefined && compareIds(progress.cursor, id) >= 0) abort.abort();
        },
      }),
    );
    const failure = report.failed.find((f) => f.id === id);
    const outcome = failure
      ? "failed"
      : report.migrated > 0
        ? "migrated"
        : report.unchanged > 0
          ? "unchanged"
          : "not-found";
    const after = await this.#read(id);
    return {
      id,
      outcome,
      ...(failure ? { failure } : {}),
      conflicts: report.conflicts,
      revision: after?.revision,
      states: report.states,
    };
  }

  /** The types: the registry's, and those with a schema history (a retired type keeps its history). */
  #typeFiles(): Map<string, TypeFiles> {
    if (this.#types) return this.#types;
    const { schemas, fixtures } = this.options.paths;
    const map = new Map<string, TypeFiles>();
    const entry = (type: string, family: string) => {
      let files = map.get(type);
      if (!files) map.set(type, (files = { type, family, frozen: new Map(), fixtures: new Map() }));
      return files;
    };
    for (const def of this.registry.types()) entry(def.$type, def.family);
    const history = join(schemas, "history");
    for (const family of listDir(history, true)) {
      for (const type of listDir(join(history, family), true)) {
        const files = entry(type, family);
        for (const file of listDir(join(history, family, type), false)) {
          const match = /^v([1-9][0-9]*)\.schema\.json$/.exec(file);
          if (match) files.frozen.set(Number(match[1]), join(history, family, type, file));
        }
      }
    }
    for (const files of map.values()) {
      const current = join(schemas, files.family, `${files.type}.schema.json`);
      if (existsSync(current)) files.current = current;
      const dir = join(fixtures, files.type);
      for (const file of listDir(dir, false)) {
        const match = /^v([1-9][0-9]*)\.json$/.exec(file);
        if (match) files.fixtures.set(Number(match[1]), join(dir, file));
      }
    }
    this.#types = map;
    return map;
  }

  #retired(): { $type: string; [k: string]: unknown }[] {
    const file = join(this.options.paths.schemas, "history", "retired.json");
    if (!existsSync(file)) return [];
    const parsed = readJsonFile(file) as { retired?: unknown };
    const list =
      isObject(parsed) && Array.isArray(parsed.retired) ? parsed.retired : Array.isArray(parsed) ? parsed : [];
    return list.filter((r): r is { $type: string } => isObject(r) && typeof r.$type === "string");
  }

  types() {
    const retired = new Set(this.#retired().map((r) => r.$type));
    const items = [...this.#typeFiles().values()]
      .map((t) => {
        const def = this.registry.get(t.type);
        return {
          type: t.type,
          family: t.family,
          version: def?.version,
          registered: def !== undefined,
          retired: retired.has(t.type),
          frozen: [...t.frozen.keys()].sort((a, b) => a - b),
          fixtures: [...t.fixtures.keys()].sort((a, b) => a - b),
          migrations: this.registry.migrations().filter((m) => m.type === t.type).length,
        };
      })
      .sort((a, b) => (a.family === b.family ? (a.type < b.type ? -1 : 1) : a.family < b.family ? -1 : 1));
    return { schemas: relative(this.options.paths.root, this.options.paths.schemas) || ".", items };
  }

  /** One type: every version's schema, the verdict between consecutive versions (witnesses), fixtures, migrations. */
  async type(name: string) {
    // Looked up among the known types: the name is never joined into a path.
    const typeFiles = this.#typeFiles().get(name);
    if (!typeFiles) throw new StudioHttpError(404, "no such type in the registry or the schema history");
    const { root } = this.options.paths;
    const def = this.registry.get(typeFiles.type);
    const rel = (file: string) => relative(root, file) || file;
    const versions: { version: number; file: string; frozen: boolean; current: boolean; schema: unknown }[] = [
      ...typeFiles.frozen.entries(),
    ]
      .sort((a, b) => a[0] - b[0])
      .map(([version, file]) => ({
        version,
        file: rel(file),
        frozen: true,
        current: false,
        schema: readJsonFile(file),
      }));
    if (typeFiles.current) {
      const schema = readJsonFile(typeFiles.current) as { "x-statebag"?: { version?: unknown } };
      const currentVersion =
        typeof schema?.["x-statebag"]?.version === "number"
          ? (schema["x-statebag"].version as number)
          : (def?.version ?? 1);
      versions.push({ version: currentVersion, file: rel(typeFiles.current), frozen: false, current: true, schema });
    }
    const files: { version: number; file: string; label: string }[] = [...typeFiles.frozen.entries()]
      .sort((a, b) => a[0] - b[0])
      .map(([version, file]) => ({ version, file, label: `v${version}` }));
    if (typeFiles.current)
      files.push({ version: versions[versions.length - 1].version, file: typeFiles.current, label: "current" });
    const compat = [];
    let compatError: string | undefined;
    let compatApi: CompatApi | undefined;
    try {
      compatApi = files.length > 1 ? await this.options.loadCompat() : undefined;
    } catch (error) {
      compatError =
        error instanceof Error
          ? `${error.message}${(error as { hint?: string }).hint ? ` (${(error as { hint?: string }).hint})` : ""}`
          : String(error);
    }
    for (let i = 1; compatApi && i < files.length; i++) {
      const older = files[i - 1];
      const newer = files[i];
      const key = `${older.file}\u0000${newer.file}`;
      let result = this.#compat.get(key) as ReturnType<CompatApi["runDiff"]> | undefined;
      if (!result) {
        result = compatApi.runDiff(older.file, newer.file, { seed: 1 });
        this.#compat.set(key, result);
      }
      compat.push({
        from: older.label,
        fromVersion: older.version,
        to: newer.label,
        toVersion: newer.version,
        fromFile: rel(older.file),
        toFile: rel(newer.file),
        verdict: result.verdict,
        changes: result.changes,
        warnings: result.warnings,
      });
    }
    const fixtures = [...typeFiles.fixtures.entries()]
      .sort((a, b) => a[0] - b[0])
      .map(([version, file]) => ({ version, file: rel(file), document: readJsonFile(file, 512 * 1024) }));
    const migrations = this.registry
      .migrations()
      .filter((m) => m.type === typeFiles.type || m.toType === typeFiles.type)
      .map((m) => ({ type: m.type, from: m.from, toType: m.toType, to: m.to, source: m.source }));
    const retired = this.#retired().find((r) => r.$type === typeFiles.type);
    return {
      type: typeFiles.type,
      family: typeFiles.family,
      version: def?.version,
      registered: def !== undefined,
      source: def?.source,
      formerNames: def?.formerNames ?? [],
      retired,
      versions,
      compat,
      compatError,
      fixtures,
      migrations,
    };
  }
}

/** A structural diff of two JSON values: the pointers added, removed and changed (at most 500). */
export function diffValues(
  before: unknown,
  after: unknown,
): { pointer: string; op: "added" | "removed" | "changed"; before?: unknown; after?: unknown }[] {
  const out: { pointer: string; op: "added" | "removed" | "changed"; before?: unknown; after?: unknown }[] = [];
  const walk = (a: unknown, b: unknown, pointer: string) => {
    if (out.length >= 500) return;
    if (Array.isArray(a) && Array.isArray(b)) {
      const length = Math.max(a.length, b.length);
      for (let i = 0; i < length; i++) {
        if (i >= a.length) out.push({ pointer: `${pointer}/${i}`, op: "added", after: b[i] });
        else if (i >= b.length) out.push({ pointer: `${pointer}/${i}`, op: "removed", before: a[i] });
        else walk(a[i], b[i], `${pointer}/${i}`);
      }
      return;
    }
    if (isObject(a) && isObject(b)) {
      for (const key of Object.keys(a)) {
        const childPointer = `${pointer}/${pointerSegment(key)}`;
        if (!Object.hasOwn(b, key)) out.push({ pointer: childPointer, op: "removed", before: a[key] });
        else walk(a[key], b[key], childPointer);
      }
      for (const key of Object.keys(b))
        if (!Object.hasOwn(a, key))
          out.push({ pointer: `${pointer}/${pointerSegment(key)}`, op: "added", after: b[key] });
      return;
    }
    if (JSON.stringify(a) !== JSON.stringify(b)) out.push({ pointer, op: "changed", before: a, after: b });
  };
  walk(before, after, "");
  return out;
}
