/**
 * The session: pure data, nothing but JSON. Behaviour (providers, clients) lives on the agent;
 * the session carries only state, so `JSON.stringify(session)` is its stored form and an array of
 * sessions serializes with one call. `serializeSession` wraps it in a
 * versioned envelope; `deserializeSession` reads both forms.
 */
import { randomUUID } from "node:crypto";
import type { TaggedValue } from "./tagged.js";
import type { ValidationProblem } from "./problems.js";

/**
 * How a session keeps history. `local`: the history provider keeps it and the client gets all of
 * it each turn. `hosted`: the model service keeps it under `conversationId`. Absent: not decided
 * yet; fixed by the first response (a conversation id back means hosted).
 */
export type SessionKind = "local" | "hosted";

/** A service's id(s) for its stored conversation: one string, or named ids for services that need more. */
export type ServiceSessionId = string | { [name: string]: string };

/** Provider key -> that provider's `$type`-tagged state. Keys nobody reads are kept as they are. */
export interface StateBag {
  [providerKey: string]: TaggedValue;
}

export interface AgentSession {
  /** The stable public/local id (what an app stores the session under). */
  id: string;
  kind?: SessionKind;
  /** The model service's conversation id, for hosted sessions only. */
  conversationId?: ServiceSessionId;
  stateBag: StateBag;
  /**
   * Values a quarantine load (`deserializeSession(text, { quarantine: true })`) set aside because
   * they failed validation or migration: absent from `stateBag` (and from the history the model
   * sees), kept here verbatim and written back unchanged on every save. A load without
   * `quarantine` refuses a session holding any, with each value's own problems. Absent when empty.
   */
  quarantine?: QuarantinedValue[];
}

/** One value a quarantine load set aside (see `AgentSession.quarantine`). */
export interface QuarantinedValue {
  /** Where it was, from the session object: `/stateBag/<key>` or `/stateBag/<key>/messages/<n>`. */
  pointer: string;
  /** Its JSON text exactly as it was in the loaded document (the same characters). */
  text: string;
  /** Why: the first problem the load found in it (its pointer from that document's root). */
  reason: ValidationProblem;
  /** How many problems the value had, when more than one. */
  problemCount?: number;
}

export interface CreateSessionOptions {
  id?: string;
  kind?: SessionKind;
  conversationId?: ServiceSessionId;
  stateBag?: StateBag;
}

export function newSessionId(): string {
  return randomUUID();
}

/** A new, empty session. Keys with no value are left out, so the stored form stays minimal. */
export function createSessionData(options: CreateSessionOptions = {}): AgentSession {
  const session: AgentSession = { id: options.id ?? newSessionId(), stateBag: options.stateBag ?? {} };
  if (options.kind !== undefined) session.kind = options.kind;
  if (options.conversationId !== undefined) session.conversationId = options.conversationId;
  return session;
}
