/** The contract on session metadata (owner, title, labels, times), `list`, and the codec context. */
import { ConfigurationError } from "../../../index.js";
import {
  ConflictError,
  defaultMessageCodec,
  InvalidCursorError,
  defaultSessionCodec,
  SessionOwnerError,
  type ListItem,
  type ListOptions,
  type MessageCodec,
  type SessionCodec,
  type SessionStore,
} from "../../../stores.js";
import { compareIds, counterSession, user, type ContractCase } from "./case.js";

/** Every item of a listing, page by page, with the number of pages. */
async function listAll(
  store: SessionStore,
  options: Omit<ListOptions, "cursor">,
  between?: (soFar: readonly ListItem[]) => Promise<void>,
) {
  const items: ListItem[] = [];
  let cursor: string | undefined;
  let pages = 0;
  do {
    const page = await store.list({ ...options, cursor });
    items.push(...page.items);
    cursor = page.cursor;
    pages++;
    if (cursor && between) await between(items);
  } while (cursor);
  return { items, pages };
}

const ids = (items: ListItem[]) => items.map((i) => i.id);

/** Newest first, ties by descending id. */
function byTimeDesc(a: ListItem, b: ListItem): number {
  return a.meta.updatedAt !== b.meta.updatedAt
    ? a.meta.updatedAt < b.meta.updatedAt
      ? 1
      : -1
    : compareIds(b.id, a.id);
}

export const listingCases: ContractCase[] = [
  {
    area: "listing",
    clause: "lists only the given owner's sessions; unowned sessions are listed by no owner",
    requires: ["listing"],
    async run({ store, id, check }) {
      const alice = id("owner-a");
      const bob = id("owner-b");
      const mine = [id("a1"), id("a2")];
      for (const sid of mine) await store.save(counterSession(sid), { expectedRevision: null, meta: { owner: alice } });
      const theirs = id("b1");
      await store.save(counterSession(theirs), { expectedRevision: null, meta: { owner: bob } });
      const unowned = id("none");
      await store.save(counterSession(unowned), { expectedRevision: null });
      const alicePage = await listAll(store, { owner: alice });
      check.equal(
        ids(alicePage.items).sort(compareIds),
        [...mine].sort(compareIds),
        "list({ owner }) must return exactly that owner's sessions",
      );
      check.equal(
        ids((await listAll(store, { owner: bob })).items),
        [theirs],
        "another owner's listing must hold only its own session",
      );
      check.equal(
        (await store.list({ owner: id("nobody") })).items,
        [],
        "an owner without sessions gets an empty page",
      );
      check.equal((await store.get(unowned))!.meta.owner, undefined, "a session saved without an owner has none");
      check.equal(alicePage.items[0].meta.owner, alice, "a listed item carries its owner");
      await check.rejects(store.list({ owner: "" }), ConfigurationError, "list without an owner must be refused");
      await check.rejects(
        store.list({ owner: alice, cursor: "not a cursor" }),
        ConfigurationError,
        "a cursor list() did not return must be refused",
      );
    },
  },
  {
    area: "listing",
    clause:
      "refuses a forged list or scan cursor with InvalidCursorError before any query (times past bigint or the store's range, ids no store writes), never echoing it",
    requires: ["listing", "scan"],
    async run({ store, id, check }) {
      const owner = id("cursor-owner");
      const sessions = [id("c1"), id("c2")];
      for (const sid of sessions) await store.save(counterSession(sid), { expectedRevision: null, meta: { owner } });
      // The built-in cursor format, forged: base64url of [order, time, last id].
      const forge = (value: unknown) => Buffer.from(JSON.stringify(value), "utf8").toString("base64url");
      const forged: [string, "updatedAt desc" | "id", string][] = [
        ["a time past PostgreSQL's bigint", "updatedAt desc", forge(["u", "99999999999999999999", "x"])],
        ["bigint's largest value", "updatedAt desc", forge(["u", "9223372036854775807", "x"])],
        ["a time past the safe integers", "updatedAt desc", forge(["u", "9007199254740992", "x"])],
        ["a negative time", "updatedAt desc", forge(["u", "-1", "x"])],
        ["a time in exponent notation", "updatedAt desc", forge(["u", "1e5", "x"])],
        ["a time with a leading zero", "updatedAt desc", forge(["u", "0123", "x"])],
        ["an id order cursor past bigint", "id", forge(["i", "99999999999999999999", "x"])],
        ["an id with NUL", "id", forge(["i", "0", "a\u0000b"])],
        ["an id with a lone surrogate", "updatedAt desc", forge(["u", "5", "\ud800"])],
        ["an empty id", "id", forge(["i", "0", ""])],
        ["an id longer than any id", "id", forge(["i", "0", "x".repeat(1025)])],
        ["not an array", "id", forge({ order: "i" })],
        ["a huge text", "id", "A".repeat(100_000)],
      ];
      for (const [what, order, cursor] of forged) {
        const error = await check.rejects(
          store.list({ owner, order, cursor }),
          InvalidCursorError,
          `list must refuse a forged cursor (${what}) with InvalidCursorError`,
        );
        check.ok(
          error instanceof InvalidCursorError && !error.message.includes(cursor.slice(0, 40)),
          `the error for a forged cursor (${what}) must not echo it`,
        );
      }
      // The edges a store can write are accepted: the largest safe time (after every stored time)
      // lists the owner's sessions from the newest; time 0 with any id lists none newer.
      const top = await store.list({ owner, cursor: forge(["u", "9007199254740991", "zzz"]) });
      check.equal(
        top.items.map((i) => i.id).sort(compareIds),
        [...sessions].sort(compareIds),
        "a cursor at the largest time a store writes starts at the newest session",
      );
      check.equal((await store.list({ owner, cursor: forge(["u", "0", "a"]) })).items, [], "time 0: nothing older");
      for (const [what, cursor] of [
        ["NUL", "a\u0000b"],
        ["a lone surrogate", "\udc00x"],
        ["more characters than any id", "x".repeat(1025)],
      ] as const) {
        await check.rejects(
          store.scan({ cursor }),
          InvalidCursorError,
          `scan must refuse a cursor with ${what} with InvalidCursorError`,
        );
      }
      const longest = await store.scan({ cursor: "\u{10FFFF}".repeat(512) });
      check.equal(longest.items, [], "a scan cursor as long as the longest id, after every id, is a last page");
    },
  },
  {
    area: "listing",
    clause: "pages never skip or repeat a session while other sessions are saved, in both orders",
    requires: ["listing"],
    async run({ open, close, check }) {
      const store = await open();
      try {
        const owner = "pager";
        const all = Array.from({ length: 23 }, (_, i) => `p-${String(i).padStart(2, "0")}`);
        const revisions = new Map<string, number>();
        for (const sid of all)
          revisions.set(sid, await store.save(counterSession(sid), { expectedRevision: null, meta: { owner } }));
        for (const order of ["updatedAt desc", "id"] as const) {
          const touched = new Set<string>();
          // Between pages, another writer saves two sessions not yet returned (and one already returned).
          const { items, pages } = await listAll(store, { owner, order, limit: 5 }, async (soFar) => {
            const returned = ids([...soFar]);
            const pending = all.filter((x) => !returned.includes(x) && !touched.has(x));
            for (const sid of [pending[pending.length - 1], pending[0], returned[0]].filter(Boolean)) {
              touched.add(sid);
              revisions.set(
                sid,
                await store.save(counterSession(sid, touched.size), {
                  expectedRevision: revisions.get(sid)!,
                  meta: { owner },
                }),
              );
            }
          });
          const seen = ids(items);
          check.greater(pages, 3, "a listing of 23 sessions by 5 must take several pages");
          check.equal(new Set(seen).size, seen.length, `no session may be returned twice (order ${order})`);
          for (const sid of all.filter((x) => !touched.has(x)))
            check.includes(seen, sid, `a session unchanged during the listing must be returned (order ${order})`);
          if (order === "id")
            check.equal(
              seen,
              [...all].sort(compareIds),
              "order id: every session exactly once, in byte order of the ids",
            );
        }
      } finally {
        await close(store);
      }
    },
  },
  {
    area: "listing",
    clause: "orders newest first (ties by descending id) or by id, and filters by labels and update time",
    requires: ["listing"],
    async run({ store, id, check }) {
      const owner = id("filters");
      const made: string[] = [];
      for (let i = 0; i < 6; i++) {
        const sid = id(`f${i}`);
        made.push(sid);
        await store.save(counterSession(sid), {
          expectedRevision: null,
          meta: { owner, labels: { team: i % 2 ? "odd" : "even", tier: i < 3 ? "low" : "high" } },
        });
      }
      const newest = (await listAll(store, { owner, limit: 4 })).items;
      check.equal(
        ids(newest),
        ids([...newest].sort(byTimeDesc)),
        'order "updatedAt desc" (the default): newest first, ties by descending id',
      );
      check.equal(
        ids((await listAll(store, { owner, order: "id", limit: 4 })).items),
        [...made].sort(compareIds),
        'order "id": ascending byte order of the ids',
      );
      const oddHigh = await listAll(store, { owner, labels: { team: "odd", tier: "high" } });
      check.equal(
        ids(oddHigh.items).sort(compareIds),
        [made[3], made[5]].sort(compareIds),
        "a labels filter keeps the sessions carrying all the given labels",
      );
      check.equal(
        (await store.list({ owner, labels: { team: "odd", other: "x" } })).items,
        [],
        "a label the sessions lack matches none",
      );
      // Time bounds are exclusive; taken from the stored times, not the clock.
      const times = [...new Set(newest.map((i) => i.meta.updatedAt))].sort();
      const pivot = times[Math.floor(times.length / 2)];
      const before = (await listAll(store, { owner, updatedBefore: pivot })).items;
      const after = (await listAll(store, { owner, updatedAfter: pivot })).items;
      const all = (await listAll(store, { owner })).items;
      check.equal(
        ids(before).sort(),
        ids(all.filter((i) => i.meta.updatedAt < pivot)).sort(),
        "updatedBefore keeps sessions last saved strictly before it",
      );
      check.equal(
        ids(after).sort(),
        ids(all.filter((i) => i.meta.updatedAt > pivot)).sort(),
        "updatedAfter keeps sessions last saved strictly after it",
      );
      await check.rejects(
        store.list({ owner, updatedAfter: "yesterday" }),
        ConfigurationError,
        "a time bound that is not ISO 8601 must be refused",
      );
      await check.rejects(
        store.list({
          owner,
          order: "updatedAt desc",
          cursor: (await store.list({ owner, order: "id", limit: 1 })).cursor,
        }),
        ConfigurationError,
        "a cursor of another order must be refused",
      );
    },
  },
  {
    area: "listing",
    clause: "keeps metadata across saves: omitted fields kept, given ones replaced, times set by the store",
    requires: ["listing"],
    async run({ store, id, check }) {
      const owner = id("meta");
      const sid = id("meta-s");
      const r1 = await store.save(counterSession(sid), {
        expectedRevision: null,
        meta: { owner, title: "First", labels: { a: "1" } },
      });
      const first = (await store.get(sid))!.meta;
      check.equal(
        [first.owner, first.title, first.labels],
        [owner, "First", { a: "1" }],
        "create stores owner, title and labels",
      );
      check.ok(
        !Number.isNaN(Date.parse(first.createdAt)) && first.createdAt === first.updatedAt,
        "createdAt and updatedAt are ISO 8601, equal on create",
      );
      const r2 = await store.save(counterSession(sid, 1), { expectedRevision: r1 });
      const second = (await store.get(sid))!.meta;
      check.equal(
        [second.owner, second.title, second.labels, second.createdAt],
        [owner, "First", { a: "1" }, first.createdAt],
        "a save without meta keeps owner, title, labels and createdAt",
      );
      check.ok(second.updatedAt >= first.updatedAt, "updatedAt never goes backwards");
      const r3 = await store.save(counterSession(sid, 2), { expectedRevision: r2, meta: { title: "Second" } });
      check.equal((await store.get(sid))!.meta.labels, { a: "1" }, "a save giving only a title keeps the labels");
      await store.save(counterSession(sid, 3), { expectedRevision: r3, meta: { owner, labels: {} } });
      const last = (await store.get(sid))!.meta;
      check.equal([last.title, last.labels], ["Second", undefined], "labels: {} clears the labels; the title is kept");
      const listed = (await store.list({ owner })).items[0];
      check.equal(listed.meta, last, "list returns the same metadata as get");
    },
  },
  {
    area: "listing",
    clause: "refuses a save that changes the owner, and writes nothing",
    requires: ["listing"],
    async run({ store, id, check }) {
      const owner = id("keeper");
      const sid = id("owned");
      const r1 = await store.save(counterSession(sid), { expectedRevision: null, meta: { owner } });
      await check.rejects(
        store.save(counterSession(sid, 9), { expectedRevision: r1, meta: { owner: id("thief") } }),
        SessionOwnerError,
        "a save naming another owner must throw SessionOwnerError",
      );
      const after = (await store.get(sid))!;
      check.equal([after.revision, after.meta.owner], [r1, owner], "the refused save wrote nothing");
      const loose = id("unowned");
      const r2 = await store.save(counterSession(loose), { expectedRevision: null });
      await check.rejects(
        store.save(counterSession(loose), { expectedRevision: r2, meta: { owner } }),
        SessionOwnerError,
        "an unowned session cannot be given an owner",
      );
      check.equal((await store.get(loose))!.revision, r2, "the refused save wrote nothing");
    },
  },
  {
    area: "listing",
    clause: "passes the codecs their context: the row's owner, the message log's id",
    requires: ["listing", "codec", "messageLog"],
    async run({ open, close, check }) {
      const base = defaultSessionCodec();
      const seen: string[] = [];
      const codec: SessionCodec = {
        serialize(session, context) {
          seen.push(`serialize:${context?.owner ?? "-"}`);
          return base.serialize(session);
        },
        deserialize(text, _key, context) {
          seen.push(`deserialize:${context?.owner ?? "-"}`);
          return base.deserialize(text);
        },
      };
      const logs: string[] = [];
      const messageCodec: MessageCodec = {
        serialize(message, context) {
          logs.push(`serialize:${context?.logId}`);
          return defaultMessageCodec.serialize(message);
        },
        deserialize(text, context) {
          logs.push(`deserialize:${context?.logId}`);
          return defaultMessageCodec.deserialize(text);
        },
      };
      const store = await open({ codec, messageCodec });
      try {
        const r1 = await store.save(counterSession("ctx"), { expectedRevision: null, meta: { owner: "tenant-1" } });
        await store.get("ctx");
        await store.save(counterSession("ctx", 1), { expectedRevision: r1 }); // owner omitted: the store supplies the stored one
        await store.save(counterSession("ctx-none"), { expectedRevision: null });
        await store.get("ctx-none");
        check.equal(
          seen,
          ["serialize:tenant-1", "deserialize:tenant-1", "serialize:tenant-1", "serialize:-", "deserialize:-"],
          "the session codec must see the row's owner on every write and read",
        );
        await store.messages.appendMessages("log-ctx", [user("hi")], { operationId: "op" });
        await store.messages.getMessages("log-ctx");
        check.equal(logs, ["serialize:log-ctx", "deserialize:log-ctx"], "the message codec must see the log id");
      } finally {
        await close(store);
      }
    },
  },
  {
    area: "listing",
    clause:
      "passes the session codec the revision the row is written under, and the stored revision on read (an encrypting codec binds it: a rollback fails)",
    requires: ["listing", "codec"],
    async run({ open, close, check }) {
      const base = defaultSessionCodec();
      const written: (number | undefined)[] = [];
      const read: (number | undefined)[] = [];
      const codec: SessionCodec = {
        serialize(session, context) {
          written.push(context?.revision);
          return base.serialize(session);
        },
        deserialize(text, _key, context) {
          read.push(context?.revision);
          return base.deserialize(text);
        },
      };
      const store = await open({ codec });
      try {
        const r1 = await store.save(counterSession("rev"), { expectedRevision: null, meta: { owner: "tenant-1" } });
        const r2 = await store.save(counterSession("rev", 1), { expectedRevision: r1 });
        const r3 = await store.save(counterSession("rev", 2), { expectedRevision: r2, meta: { owner: "tenant-1" } });
        const other = await store.save(counterSession("rev-unowned"), { expectedRevision: null });
        check.equal(written, [r1, r2, r3, other], "serialize must be given the revision the save then returns");
        check.equal((await store.get("rev"))?.revision, r3, "the last save is what is stored");
        await store.get("rev-unowned");
        check.equal(read, [r3, other], "deserialize must be given the stored revision");
        await check.rejects(
          store.save(counterSession("rev", 3), { expectedRevision: r2 }),
          ConflictError,
          "compare-and-swap on the revision holds for a codec that is given it",
        );
        check.equal((await store.get("rev"))?.revision, r3, "the refused save wrote nothing");
      } finally {
        await close(store);
      }
    },
  },
];
