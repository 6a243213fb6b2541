/**
 * The contract on scan metadata, retention (`purgeRetention` over a store's scan) and erasure
 * requests (`store.eraseOwner`).
 */
import { createHash } from "node:crypto";
import { ConfigurationError, type AgentSession } from "../../../index.js";
import { purgeRetention, type SessionStore } from "../../../stores.js";
import { counterSession, scanAll, user, type ContractCase } from "./case.js";

/** A session whose history lives in the message log `storageId` (as `StoredChatHistoryProvider` keeps it). */
function storedHistorySession(id: string, storageId: string): AgentSession {
  return {
    id,
    stateBag: { "statebag.storedChatHistory": { $type: "StoredChatHistoryState", storageId, messageCount: 1 } },
  } as unknown as AgentSession;
}

async function withLog(store: SessionStore, logId: string): Promise<void> {
  await store.messages.appendMessages(logId, [user(`hello ${logId}`)], { operationId: `op-${logId}` });
}

const sha256 = (text: string) => createHash("sha256").update(text, "utf8").digest("hex");

export const scanMetaCases: ContractCase[] = [
  {
    area: "scan",
    clause: "scan items carry the session's metadata",
    requires: ["scan", "listing"],
    async run({ open, close, id, check }) {
      const store = await open();
      try {
        const owned = id("meta-owned");
        const plain = id("meta-plain");
        const owner = id("meta-owner");
        await store.save(counterSession(owned), {
          expectedRevision: null,
          meta: { owner, title: "T", labels: { project: "alpha" } },
        });
        await store.save(counterSession(plain), { expectedRevision: null });
        for (const includeText of [false, true]) {
          const items = await scanAll(store, { includeText });
          for (const sid of [owned, plain]) {
            const item = items.find((i) => i.id === sid);
            check.equal(
              item?.meta,
              (await store.get(sid))!.meta,
              `scan${includeText ? "({ includeText: true })" : "()"} must give each item the metadata get returns (owner, title, labels, createdAt, updatedAt)`,
            );
          }
        }
      } finally {
        await close(store);
      }
    },
  },
];

export const retentionCases: ContractCase[] = [
  {
    area: "retention",
    clause:
      "purgeRetention removes the sessions a policy no longer keeps (first matching rule), with their message logs",
    requires: ["scan", "listing", "messageLog"],
    async run({ open, close, id, check }) {
      const store = await open();
      try {
        const vip = id("vip");
        const ids = { idle: id("r-idle"), vip: id("r-vip"), labelled: id("r-labelled"), unowned: id("r-unowned") };
        await store.save(counterSession(ids.idle), { expectedRevision: null, meta: { owner: id("someone") } });
        await store.save(counterSession(ids.vip), { expectedRevision: null, meta: { owner: vip } });
        await store.save(counterSession(ids.labelled), {
          expectedRevision: null,
          meta: { owner: id("other"), labels: { hold: "legal" } },
        });
        await store.save(counterSession(ids.unowned), { expectedRevision: null });
        for (const sid of Object.values(ids)) await withLog(store, sid);
        const policy = {
          default: { maxIdleMs: 60_000 },
          owners: { [vip]: {} },
          labels: [{ match: { hold: "legal" } }],
        };
        const later = Date.now() + 120_000;
        const dry = await purgeRetention(store, policy, { now: later, dryRun: true });
        check.equal(dry.sessions, 2, "a dry run must count the idle sessions the policy no longer keeps");
        check.ok((await store.get(ids.idle)) !== undefined, "a dry run must remove nothing");
        const report = await purgeRetention(store, policy, { now: later });
        check.equal(
          [report.sessions, report.messageLogs],
          [2, 2],
          "the report must count the removed sessions and their message logs",
        );
        check.equal(
          await store.get(ids.idle),
          undefined,
          "an owned session idle longer than the default's maxIdleMs must be removed",
        );
        check.equal(await store.get(ids.unowned), undefined, "an unowned session falls under the default rule");
        check.equal(
          (await store.messages.readMessages(ids.idle)).version,
          0,
          "a removed session's message log must be removed too",
        );
        check.ok(
          (await store.get(ids.vip)) !== undefined,
          "an owner's empty rule must keep its sessions (owner rules come first)",
        );
        check.ok(
          (await store.get(ids.labelled)) !== undefined,
          "a matching label rule without limits must keep the session",
        );
        check.equal(
          (await store.messages.readMessages(ids.vip)).messages.length,
          1,
          "a kept session's log must be kept",
        );
        const age = await purgeRetention(store, { maxAgeMs: 60_000 }, { now: Date.now() });
        check.equal(age.sessions, 0, "sessions younger than maxAgeMs must be kept");
        await check.rejects(
          purgeRetention(store, { maxIdleMs: -5 }),
          ConfigurationError,
          "a negative maxIdleMs must be refused",
        );
      } finally {
        await close(store);
      }
    },
  },
];

export const erasureCases: ContractCase[] = [
  {
    area: "erasure",
    clause: "eraseOwner removes the owner's sessions and message logs, and nothing of anyone else",
    requires: ["listing", "messageLog"],
    async run({ store, id, check }) {
      const alice = id("erase-alice");
      const bob = id("erase-bob");
      const mine = [id("ea1"), id("ea2"), id("ea3")];
      const custom = id("ea-custom-log");
      await store.save(counterSession(mine[0]), {
        expectedRevision: null,
        meta: { owner: alice, title: "private", labels: { topic: "health" } },
      });
      await store.save(counterSession(mine[1]), { expectedRevision: null, meta: { owner: alice } });
      await store.save(storedHistorySession(mine[2], custom), { expectedRevision: null, meta: { owner: alice } });
      await withLog(store, mine[0]);
      await withLog(store, custom);
      const theirs = id("eb1");
      const unowned = id("e-unowned");
      await store.save(counterSession(theirs), { expectedRevision: null, meta: { owner: bob } });
      await store.save(counterSession(unowned), { expectedRevision: null });
      await withLog(store, theirs);
      await withLog(store, unowned);

      const before = Date.now();
      const seen: number[] = [];
      const receipt = await store.eraseOwner(alice, { onProgress: (p) => seen.push(p.sessions) });
      check.equal(
        receipt.owner,
        sha256(alice),
        "the receipt must name the owner by the SHA-256 (hex) of its id, never the id",
      );
      check.equal(
        [receipt.sessions, receipt.messageLogs, receipt.complete],
        [3, 2, true],
        "the receipt must count the removed sessions and message logs (including a log the stored history names)",
      );
      check.ok(
        Date.parse(receipt.startedAt) >= before - 1000 &&
          Date.parse(receipt.finishedAt) >= Date.parse(receipt.startedAt),
        "startedAt and finishedAt must be ISO times, in order",
      );
      check.equal(seen.at(-1), 3, "onProgress must report the sessions removed so far");
      for (const sid of mine)
        check.equal(await store.get(sid), undefined, `get(${JSON.stringify(sid)}) must find nothing after the erase`);
      check.equal((await store.list({ owner: alice })).items, [], "list must find nothing of an erased owner");
      check.equal(
        (await store.list({ owner: alice, order: "id" })).items,
        [],
        "list by id must find nothing of an erased owner",
      );
      for (const logId of [mine[0], custom])
        check.equal(
          (await store.messages.readMessages(logId)).version,
          0,
          `the message log ${JSON.stringify(logId)} must be gone`,
        );
      check.ok((await store.get(theirs)) !== undefined, "another owner's session must be untouched");
      check.equal(
        (await store.list({ owner: bob })).items.map((i) => i.id),
        [theirs],
        "another owner's listing must be untouched",
      );
      check.ok((await store.get(unowned)) !== undefined, "an unowned session must be untouched");
      for (const logId of [theirs, unowned])
        check.equal((await store.messages.getMessages(logId)).length, 1, "other sessions' logs must be untouched");
    },
  },
  {
    area: "erasure",
    clause: "eraseOwner is idempotent, and erased ids are gone from scan",
    requires: ["listing", "messageLog", "scan"],
    async run({ store, id, check }) {
      const owner = id("erase-again");
      const sids = [id("eg1"), id("eg2")];
      for (const sid of sids) await store.save(counterSession(sid), { expectedRevision: null, meta: { owner } });
      await withLog(store, sids[0]);
      const first = await store.eraseOwner(owner);
      check.equal([first.sessions, first.messageLogs], [2, 1], "the first erase must remove both sessions and the log");
      const again = await store.eraseOwner(owner);
      check.equal(
        [again.sessions, again.messageLogs, again.complete, again.owner],
        [0, 0, true, first.owner],
        "a second erase must find nothing, and still return a complete receipt",
      );
      const nobody = await store.eraseOwner(id("erase-nobody"));
      check.equal(
        [nobody.sessions, nobody.messageLogs],
        [0, 0],
        "erasing an owner without sessions must succeed with zero counts",
      );
      const scanned = (await scanAll(store)).map((i) => i.id);
      for (const sid of sids) check.excludes(scanned, sid, "scan must not return an erased session");
      // A new session of the owner after an erase is an ordinary session again.
      await store.save(counterSession(sids[0]), { expectedRevision: null, meta: { owner } });
      check.equal(
        (await store.list({ owner })).items.map((i) => i.id),
        [sids[0]],
        "an owner's session saved after the erase must be listed",
      );
      check.equal((await store.eraseOwner(owner)).sessions, 1, "and erased by the next erase");
      await check.rejects(store.eraseOwner(""), ConfigurationError, "eraseOwner without an owner must be refused");
    },
  },
];
