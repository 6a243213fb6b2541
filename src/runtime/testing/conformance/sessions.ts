/** The contract on sessions: create-if-absent, compare-and-swap saves and deletes, copies, validation. */
import { ConfigurationError, type AgentSession } from "../../../index.js";
import { ConflictError, defaultSessionCodec } from "../../../stores.js";
import { counterOf, counterSession, scanAll, type ContractCase } from "./case.js";

/** A document with non-ASCII text, a line separator, quotes, keys out of order and 300 kB of payload. */
function bulkySession(id: string): AgentSession {
  return {
    stateBag: {
      zeta: { value: 'Ünïcødé 🎉 \u2028 "quoted"', $type: "test.Blob", $version: 1 },
      alpha: { $type: "test.Blob", big: "x".repeat(300_000) },
    },
    id,
  };
}

export const sessionCases: ContractCase[] = [
  {
    area: "sessions",
    clause: "get of an unknown id is undefined",
    async run({ store, id, check }) {
      check.equal(await store.get(id("missing")), undefined, "get of an id never saved must resolve to undefined");
    },
  },
  {
    area: "sessions",
    clause: "creates with expectedRevision: null and loads what it saved",
    async run({ store, id, check }) {
      const session = counterSession(id("create"), 1);
      session.kind = "hosted"; // a conversation id belongs to a hosted session (a local one with it is refused)
      session.conversationId = { responses: "resp_1" };
      const revision = await store.save(session, { expectedRevision: null });
      check.ok(
        Number.isSafeInteger(revision) && revision > 0,
        `save must return the new revision, a positive safe integer (got ${String(revision)})`,
      );
      const loaded = await store.get(session.id);
      check.equal(
        loaded && { session: loaded.session, revision: loaded.revision },
        { session: session, revision },
        "get must return the saved session, equal to what was saved, with the revision save returned",
      );
    },
  },
  {
    area: "sessions",
    clause: "create-if-absent conflicts when the session exists, and writes nothing",
    async run({ store, id, check }) {
      const session = counterSession(id("dup"), 1);
      const revision = await store.save(session, { expectedRevision: null });
      const what = "save with expectedRevision: null of an existing session";
      const error = await check.rejects(
        store.save(counterSession(session.id, 99), { expectedRevision: null }),
        ConflictError,
        `${what} must throw ConflictError`,
      );
      check.equal(error.code, "conflict", `${what}: the error's code`);
      check.equal(error.expectedRevision, null, `${what}: the error's expectedRevision`);
      check.equal(error.currentRevision, revision, `${what}: the error's currentRevision must be the stored one`);
      check.equal(error.id, session.id, `${what}: the error's id must be the session's`);
      check.ok(error.hint, `${what}: the error must carry a hint`);
      check.equal(
        counterOf((await store.get(session.id))!.session),
        1,
        `${what} must leave the stored session unchanged`,
      );
    },
  },
  {
    area: "sessions",
    clause: "leaving expectedRevision out never overwrites blindly",
    async run({ store, id, check }) {
      const session = counterSession(id("blind"), 1);
      await store.save(session, undefined as never);
      await check.rejects(
        store.save(counterSession(session.id, 2), {} as never),
        ConflictError,
        "save without expectedRevision of an existing session must throw ConflictError (absent means null)",
      );
      check.equal(
        counterOf((await store.get(session.id))!.session),
        1,
        "save without expectedRevision must not overwrite the stored session",
      );
    },
  },
  {
    area: "sessions",
    clause: "compare-and-swap: the loaded revision saves, a stale one conflicts",
    async run({ store, id, check }) {
      const session = counterSession(id("cas"), 0);
      const r1 = await store.save(session, { expectedRevision: null });
      const r2 = await store.save(counterSession(session.id, 1), { expectedRevision: r1 });
      check.greater(r2, r1, "a save with the current revision must return a greater revision");
      const error = await check.rejects(
        store.save(counterSession(session.id, 100), { expectedRevision: r1 }),
        ConflictError,
        "a save with a stale expectedRevision must throw ConflictError (a lost update otherwise)",
      );
      check.equal(error.expectedRevision, r1, "the ConflictError's expectedRevision must be the one passed");
      check.equal(error.currentRevision, r2, "the ConflictError's currentRevision must be the stored one");
      const loaded = await store.get(session.id);
      check.equal(loaded!.revision, r2, "a conflicting save must not change the stored revision");
      check.equal(counterOf(loaded!.session), 1, "a conflicting save must not change the stored session");
    },
  },
  {
    area: "sessions",
    clause: "saving with a revision of an absent session conflicts with current null",
    async run({ store, id, check }) {
      const error = await check.rejects(
        store.save(counterSession(id("ghost")), { expectedRevision: 5 }),
        ConflictError,
        "a save expecting a revision of an absent session must throw ConflictError",
      );
      check.equal(
        error.currentRevision,
        null,
        "the ConflictError's currentRevision must be null for an absent session",
      );
    },
  },
  {
    area: "sessions",
    clause: "revisions keep increasing across delete and re-create (no ABA)",
    async run({ store, id, check }) {
      const session = counterSession(id("aba"));
      const r1 = await store.save(session, { expectedRevision: null });
      const r2 = await store.save(session, { expectedRevision: r1 });
      check.equal(await store.delete(session.id), true, "delete of a stored session must return true");
      const r3 = await store.save(session, { expectedRevision: null });
      check.greater(r3, r2, "a session re-created after a delete must get a revision greater than any it had");
      await check.rejects(
        store.save(session, { expectedRevision: r1 }),
        ConflictError,
        "a revision from before the delete must conflict with the re-created session",
      );
    },
  },
  {
    area: "sessions",
    clause: "delete: unconditional, conditional, conflicting",
    async run({ store, id, check }) {
      const session = counterSession(id("del"));
      check.equal(await store.delete(session.id), false, "delete of an absent session must return false");
      const r1 = await store.save(session, { expectedRevision: null });
      const error = await check.rejects(
        store.delete(session.id, { expectedRevision: r1 + 1000 }),
        ConflictError,
        "delete with a wrong expectedRevision must throw ConflictError",
      );
      check.equal(error.currentRevision, r1, "the ConflictError's currentRevision must be the stored one");
      check.ok((await store.get(session.id)) !== undefined, "a conflicting delete must leave the session in place");
      check.equal(
        await store.delete(session.id, { expectedRevision: r1 }),
        true,
        "delete with the current revision must delete and return true",
      );
      check.equal(await store.get(session.id), undefined, "get after delete must resolve to undefined");
      check.equal(await store.delete(session.id), false, "a second delete must return false");
      const gone = await check.rejects(
        store.delete(session.id, { expectedRevision: r1 }),
        ConflictError,
        "delete with an expectedRevision of an absent session must throw ConflictError",
      );
      check.equal(gone.currentRevision, null, "the ConflictError's currentRevision must be null for an absent session");
    },
  },
  {
    area: "sessions",
    clause: "keeps no shared objects: mutating a saved or loaded session changes nothing stored",
    async run({ store, id, check }) {
      const session = counterSession(id("copy"), 1);
      const r1 = await store.save(session, { expectedRevision: null });
      (session.stateBag.counter as unknown as { value: number }).value = 42;
      const loaded = await store.get(session.id);
      check.equal(
        counterOf(loaded!.session),
        1,
        "changing the object passed to save must not change the stored session",
      );
      (loaded!.session.stateBag.counter as unknown as { value: number }).value = 7;
      check.equal(
        counterOf((await store.get(session.id))!.session),
        1,
        "changing a loaded session must not change the stored one",
      );
      check.equal((await store.get(session.id))!.revision, r1, "reading must not change the revision");
    },
  },
  {
    area: "sessions",
    clause: "loads non-ASCII and large documents unchanged",
    async run({ store, id, check }) {
      const session = bulkySession(id("bytes-é"));
      await store.save(session, { expectedRevision: null });
      check.equal(
        (await store.get(session.id))!.session,
        session,
        "a session with non-ASCII text and a 300 kB value must load equal to what was saved",
      );
    },
  },
  {
    area: "sessions",
    clause: "stores exactly the serializer's text (no re-ordering), non-ASCII and large documents included",
    requires: ["scan", "verbatimText"],
    async run({ store, id, check }) {
      const session = bulkySession(id("bytes-é"));
      await store.save(session, { expectedRevision: null });
      const text = (await scanAll(store, { includeText: true })).find((item) => item.id === session.id)?.text;
      check.equal(
        text,
        defaultSessionCodec().serialize(session),
        "scan({ includeText: true }) must return exactly the text the codec serialized (no re-parsing, re-ordering or re-encoding)",
      );
    },
  },
  {
    area: "sessions",
    clause: "refuses an invalid session before writing anything",
    async run({ store, id, check }) {
      const sid = id("invalid");
      const bad = { id: sid, stateBag: { counter: 5 } } as unknown as AgentSession;
      await check.rejects(
        store.save(bad, { expectedRevision: null }),
        undefined,
        "save of a session failing validation must throw, naming what is invalid",
        /stateBag\/counter|counter/,
      );
      check.equal(await store.get(sid), undefined, "a save refused by validation must write nothing");
      const r1 = await store.save(counterSession(sid, 1), { expectedRevision: null });
      await check.rejects(
        store.save(bad, { expectedRevision: r1 }),
        undefined,
        "an invalid update of a stored session must throw",
      );
      check.equal(
        (await store.get(sid))!.revision,
        r1,
        "an update refused by validation must leave the stored revision",
      );
      await check.rejects(
        store.save({ stateBag: {} } as unknown as AgentSession, { expectedRevision: null }),
        ConfigurationError,
        "save of a session without an id must throw ConfigurationError",
      );
      await check.rejects(
        store.save(counterSession(id("badrev")), { expectedRevision: 0 }),
        ConfigurationError,
        "save with expectedRevision 0 (not a revision) must throw ConfigurationError",
      );
    },
  },
];
