/** The contract on the codec a store is opened with, on scanning, and on time to live. */
import { ConfigurationError } from "../../../index.js";
import { ConflictError, defaultSessionCodec, type SessionCodec } from "../../../stores.js";
import { compareIds, counterOf, counterSession, scanAll, sleep, type ContractCase } from "./case.js";

export const codecCases: ContractCase[] = [
  {
    area: "codec",
    clause: "goes through the injected codec: validate on save, migrate on load",
    requires: ["codec"],
    async run({ open, close, id, check }) {
      const base = defaultSessionCodec();
      const calls = { serialize: 0, deserialize: 0 };
      const codec: SessionCodec = {
        serialize(session) {
          calls.serialize++;
          if (counterOf(session) < 0) throw new Error("negative counters are invalid");
          return base.serialize(session);
        },
        deserialize(text) {
          calls.deserialize++;
          const session = base.deserialize(text);
          // A "migration": v1 counters stored tens, the current shape stores units.
          const counter = session.stateBag.counter as unknown as { value: number; unit?: string };
          if (counter.unit === "tens") session.stateBag.counter = { $type: "test.Counter", value: counter.value * 10 };
          return session;
        },
      };
      const custom = await open({ codec });
      try {
        const sid = id("codec");
        await custom.save(counterSession(sid, 4, { unit: "tens" }), { expectedRevision: null });
        check.equal(
          counterOf((await custom.get(sid))!.session),
          40,
          "get must return what the codec's deserialize (a migration) made of the stored text",
        );
        await check.rejects(
          custom.save(counterSession(id("neg"), -1), { expectedRevision: null }),
          undefined,
          "save must throw what the codec's serialize (validation) throws",
          "negative",
        );
        check.equal(
          calls,
          { serialize: 2, deserialize: 1 },
          "the store must call its codec once per save (serialize) and once per loaded session (deserialize)",
        );
      } finally {
        await close(custom);
      }
    },
  },
];

export const scanCases: ContractCase[] = [
  {
    area: "scan",
    clause: "with includeText, each item carries its session's stored text, as the codec wrote it",
    requires: ["scan", "verbatimText"],
    async run({ open, close, check }) {
      const store = await open();
      try {
        for (const sid of ["text-a", "text-b"]) await store.save(counterSession(sid), { expectedRevision: null });
        const page = await store.scan({ limit: 2, includeText: true });
        check.equal(
          page.items.map((i) => defaultSessionCodec().deserialize(i.text!).id),
          ["text-a", "text-b"],
          "with includeText, each item must carry its session's stored text",
        );
      } finally {
        await close(store);
      }
    },
  },
  {
    area: "scan",
    clause: "scans in pages: every id once, in byte order, with or without text",
    requires: ["scan"],
    async run({ open, close, check }) {
      const store = await open();
      try {
        const ids = Array.from({ length: 23 }, (_, i) => `scan-${String(i).padStart(2, "0")}`).concat([
          "scan-Ω",
          "scan-é",
          "scan-Z",
          "scan-😀",
        ]);
        for (const sid of ids) await store.save(counterSession(sid), { expectedRevision: null });
        await store.delete("scan-05");
        const expected = ids.filter((x) => x !== "scan-05").sort(compareIds);
        const seen: string[] = [];
        let pages = 0;
        for (let cursor: string | undefined, first = true; first || cursor; first = false) {
          const page = await store.scan({ cursor, limit: 10 });
          pages++;
          check.atMost(page.items.length, 10, "a page must hold at most `limit` items");
          for (const item of page.items) {
            check.equal(item.text, undefined, "without includeText, scan items must have no text");
            check.equal(
              item.revision,
              (await store.get(item.id))!.revision,
              `scan's revision of ${JSON.stringify(item.id)} must be the one get returns`,
            );
          }
          seen.push(...page.items.map((item) => item.id));
          cursor = page.cursor;
        }
        check.equal(
          seen,
          expected,
          "paging through scan (a fresh store) must return every stored id once, deleted ones left out, in binary order of their UTF-8 bytes",
        );
        check.equal(
          pages,
          3,
          "26 sessions at limit 10 must come in 3 pages (full pages until the last, no cursor after it)",
        );
        const withText = await store.scan({ limit: 2, includeText: true });
        check.equal(
          withText.items.map((i) => i.id),
          expected.slice(0, 2),
          "a page with includeText must hold the same ids as one without",
        );
        check.equal(
          withText.items.filter((i) => typeof i.text !== "string" || i.text === "").length,
          0,
          "with includeText, each item must carry its stored text",
        );
        check.equal(
          withText.cursor,
          expected[1],
          "a page's cursor must be its last id (migrateStore resumes with a session id as the cursor)",
        );
        await check.rejects(
          store.scan({ limit: 0 }),
          ConfigurationError,
          "scan with limit 0 must throw ConfigurationError",
        );
        check.equal(
          (await store.scan({ cursor: expected[expected.length - 1] })).items,
          [],
          "scan after the last id must return no items",
        );
      } finally {
        await close(store);
      }
    },
  },
];

/** Saves one session that expires after 250 ms and one whose TTL a later save removed, then waits 600 ms. */
async function expireOne({ store, id }: Parameters<ContractCase["run"]>[0]) {
  const expiring = counterSession(id("ttl"), 1);
  const r1 = await store.save(expiring, { expectedRevision: null, ttlMs: 250 });
  const loaded = await store.get(expiring.id);
  const keep = counterSession(id("ttl-keep"), 1);
  const k1 = await store.save(keep, { expectedRevision: null, ttlMs: 250 });
  await store.save(keep, { expectedRevision: k1 }); // saved again without a TTL: kept
  await sleep(600);
  return { expiring, r1, loaded, keep };
}

export const ttlCases: ContractCase[] = [
  {
    area: "ttl",
    clause: "expires a session saved with a time to live",
    requires: ["ttl"],
    async run(context) {
      const { store, check } = context;
      const { expiring, r1, loaded, keep } = await expireOne(context);
      check.equal(loaded?.revision, r1, "a session saved with a ttlMs must be there until it expires");
      check.equal(await store.get(expiring.id), undefined, "get of an expired session must resolve to undefined");
      check.ok((await store.get(keep.id)) !== undefined, "a session saved again without ttlMs must no longer expire");
      const error = await check.rejects(
        store.save(expiring, { expectedRevision: r1 }),
        ConflictError,
        "a save expecting an expired session's revision must throw ConflictError",
      );
      check.equal(error.currentRevision, null, "an expired session must count as absent (currentRevision null)");
      check.ok((await store.purgeExpired()) >= 0, "purgeExpired must return how many it removed (>= 0)");
      const r2 = await store.save(counterSession(expiring.id, 2), { expectedRevision: null });
      check.greater(r2, r1, "a session re-created after expiring must get a greater revision (no ABA)");
      check.equal(
        counterOf((await store.get(expiring.id))!.session),
        2,
        "a session re-created after expiring must load as re-created",
      );
      await check.rejects(
        store.save(expiring, { expectedRevision: r2, ttlMs: -1 }),
        ConfigurationError,
        "save with a negative ttlMs must throw ConfigurationError",
      );
    },
  },
  {
    area: "ttl",
    clause: "scan leaves expired sessions out",
    requires: ["ttl", "scan"],
    async run(context) {
      const { expiring, keep } = await expireOne(context);
      const all = (await scanAll(context.store)).map((i) => i.id);
      context.check.excludes(all, expiring.id, "scan must not return an expired session");
      context.check.includes(all, keep.id, "scan must return a session saved again without ttlMs");
    },
  },
];
