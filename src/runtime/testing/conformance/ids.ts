/** The contract on session ids: ill-formed ones are refused everywhere; look-alikes stay apart. */
import { InvalidIdError } from "../../../stores.js";
import { compareIds, counterOf, counterSession, scanAll, user, type CaseContext, type ContractCase } from "./case.js";

// Ids that differ only in a lone surrogate (or hold a NUL) would share one record on PostgreSQL
// and Redis (both store U+FFFD instead) and come back changed from SQLite's scan.
const illFormed = ["user-\udbff", "user-\ud800", "\udc00-user", "a\udc00\ud800b", "user-\u0000"];

async function refused(
  { check }: CaseContext,
  promise: Promise<unknown>,
  operation: string,
  bad: string,
): Promise<void> {
  const what = `${operation} with the ill-formed id ${JSON.stringify(bad)} must throw InvalidIdError (code "invalid-id", a hint saying ids must be well-formed)`;
  const error = await check.rejects(promise, InvalidIdError, what);
  check.equal(error.code, "invalid-id", what);
  check.ok(/well-formed/.test(error.hint), `${what}; the hint was ${JSON.stringify(error.hint)}`);
}

/** Sessions saved under ids that differ only in code points SQL/Redis encodings could merge. */
async function saveLookAlikes(context: CaseContext, prefix: string): Promise<string[]> {
  const { store, check } = context;
  const ids = [
    `${prefix}-\ufffd`,
    `${prefix}-\u{10FFFF}`,
    `${prefix}-\u{1F600}`,
    `${prefix}-e\u0301`,
    `${prefix}-\u00e9`,
  ];
  for (const [counter, sid] of ids.entries())
    await store.save(counterSession(sid, counter), { expectedRevision: null });
  for (const [counter, sid] of ids.entries()) {
    check.equal(
      counterOf((await store.get(sid))!.session),
      counter,
      `get(${JSON.stringify(sid)}) must load the session saved under exactly that id`,
    );
  }
  return ids;
}

export const idCases: ContractCase[] = [
  {
    area: "ids",
    clause: "refuses ill-formed ids in every session operation",
    async run(context) {
      const { store } = context;
      for (const bad of illFormed) {
        await refused(context, store.get(bad), "get", bad);
        await refused(context, store.save(counterSession(bad, 1), { expectedRevision: null }), "save", bad);
        await refused(context, store.delete(bad), "delete", bad);
      }
    },
  },
  {
    area: "ids",
    clause: "the message log refuses ill-formed ids and operation ids, writing nothing",
    requires: ["messageLog"],
    async run(context) {
      const log = context.store.messages;
      const fine = context.id("fine");
      for (const bad of illFormed) {
        await refused(
          context,
          log.appendMessages(bad, [user("x")], { operationId: "op" }),
          "messages.appendMessages",
          bad,
        );
        await refused(
          context,
          log.appendMessages(fine, [user("x")], { operationId: bad }),
          "messages.appendMessages (as operationId)",
          bad,
        );
        await refused(context, log.getMessages(bad), "messages.getMessages", bad);
        await refused(context, log.readMessages(bad), "messages.readMessages", bad);
        await refused(context, log.replaceMessages(bad, [user("x")]), "messages.replaceMessages", bad);
        await refused(context, log.trimMessages(bad, { keepLast: 0 }), "messages.trimMessages", bad);
        await refused(context, log.deleteMessages(bad), "messages.deleteMessages", bad);
      }
      context.check.equal(
        await log.getMessages(fine),
        [],
        "an append refused for its ill-formed operation id must append nothing",
      );
    },
  },
  {
    area: "ids",
    clause: "keeps ids that look alike apart",
    async run(context) {
      await saveLookAlikes(context, context.id("alike"));
    },
  },
  {
    area: "ids",
    clause: "scan returns look-alike ids exactly as saved",
    requires: ["scan"],
    async run(context) {
      const prefix = context.id("alike-scan");
      const ids = await saveLookAlikes(context, prefix);
      const scanned = (await scanAll(context.store)).map((item) => item.id);
      context.check.equal(
        scanned.filter((sid) => sid.startsWith(prefix)).sort(compareIds),
        [...ids].sort(compareIds),
        "scan must return each saved id once, code point for code point",
      );
    },
  },
];
