/**
 * The JSON the studio's API answers (api.ts), as the page (client/) reads it: types only, no
 * imports, so both the server's program and the browser's can use them. The page still shows every
 * text through `show`/`cut`: a type says what the server sends, not that a stored text is harmless.
 * test/studio/client.test.ts checks that the API's return types are assignable to these.
 */

export type Validity = "valid" | "needs-migration" | "invalid" | "unchecked";

export interface StudioInfo {
  store: string;
  write: boolean;
  encrypted?: { store: string };
  /** The registry module's path, or a phrase for statebag's own types. */
  registry?: string;
  schemas: string;
  canList: boolean;
}

/** What every view of a stored session says about it: where it is, whose, how big. */
export interface StoredFacts {
  id: string;
  revision: number;
  owner?: string;
  title?: string;
  updatedAt?: string;
  /** The stored text's size in UTF-8 bytes. */
  bytes: number;
}

/** One row of the session list. */
export interface SessionRow extends StoredFacts {
  messages: number;
  types: { key: string; $type: string; version: number }[];
  validity: Validity;
  problems: number;
  encrypted?: boolean;
}

export interface SessionPage {
  items: SessionRow[];
  scanned: number;
  cursor?: string;
}

/** A validation problem at a JSON pointer. */
export interface Problem {
  pointer: string;
  message: string;
  hint?: string;
}

/** A value kept as stored: a type this registry does not know, or a newer version. */
export interface Preserved {
  pointer: string;
  $type: string;
  version: number;
}

/** One state-bag entry of a session, checked. */
export interface StateEntry {
  key: string;
  $type: string;
  version: number;
  pointer: string;
  latest?: number;
  known: boolean;
  status: Validity;
  problems: Problem[];
}

/** One session, checked: its problems by pointer, its state bag entries, the stored text. */
export interface SessionView extends StoredFacts {
  encrypted: boolean;
  form?: "session" | "sessions" | "bare";
  validity: Validity;
  problems: Problem[];
  preserved: Preserved[];
  quarantined: unknown[];
  state: StateEntry[];
  /** The stored document, parsed (null when it is not JSON or too big to send parsed). */
  document: unknown;
  /** The stored text (its first part when `rawCut` is set). */
  raw: string;
  /** The stored text's length, when `raw` is cut. */
  rawCut?: number;
  /** Files the session keeps in the blob store (its `statebag.blobReference` contents), for previews. */
  files?: StudioFile[];
}

/** A reference content of a session: an image is previewed from `api/blob`. */
export interface StudioFile {
  hash: string;
  mediaType: string;
  size: number;
  name?: string;
}

/** One change between a migration step's before and after. */
export interface ValueChange {
  pointer: string;
  op: "added" | "removed" | "changed";
  before?: unknown;
  after?: unknown;
}

/** One migration step of a value: before and after, or why it could not run. */
export interface MigrationStep {
  fromType: string;
  from: number;
  toType?: string;
  to?: number;
  /** Where the migration is defined (file:line), or what the step is. */
  source?: string;
  before?: unknown;
  after?: unknown;
  changes?: ValueChange[];
  error?: string;
}

/** One state value behind its type's latest version, migrated step by step. */
export interface PreviewValue {
  key: string;
  pointer: string;
  fromType: string;
  from: number;
  toType: string;
  to: number;
  steps: MigrationStep[];
  valid?: boolean;
  errors: { pointer: string; message: string }[];
}

/** A nested value the load migrates (message contents, annotations). */
export interface NestedMigration {
  pointer: string;
  fromType: string;
  from: number;
  to: number;
}

export interface MigrationPreview {
  id: string;
  revision: number;
  values: PreviewValue[];
  nested: NestedMigration[];
  write: boolean;
}

export interface MigrateResult {
  outcome: string;
  revision?: number;
  failure?: { message: string };
}

export interface TypeRow {
  type: string;
  family: string;
  version?: number;
  registered: boolean;
  retired: boolean;
  frozen: number[];
  fixtures: number[];
  migrations: number;
}

export interface TypeList {
  schemas: string;
  items: TypeRow[];
}

export interface CompatChange {
  kind: string;
  pointer: string;
  message: string;
  witness?: { source: string; document: unknown };
}

export interface Compat {
  from: string;
  to: string;
  fromFile: string;
  toFile: string;
  verdict: string;
  changes: CompatChange[];
  warnings?: string[];
}

export interface TypeView {
  type: string;
  family: string;
  version?: number;
  source?: string;
  formerNames: readonly string[];
  retired?: unknown;
  versions: { version: number; file: string; frozen: boolean; current: boolean; schema: unknown }[];
  compat: Compat[];
  compatError?: string;
  fixtures: { version: number; file: string; document: unknown }[];
  migrations: { type: string; from: number; toType: string; to: number; source?: string }[];
}
