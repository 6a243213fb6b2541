/**
 * The studio's server and API without a browser: the token (constant-time, nothing served
 * without it), loopback only, the Host check, the read-only refusal of writes, the one-session
 * migration with --write, and pagination and filters from `scan` pages.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { openStudio } from "../../src/cli/commands/studio.js";
import { sameToken } from "../../src/cli/studio/server.js";
import { rawRequest as raw, seedProject, seedStore, studioContext as context, type SeededStore } from "./seed.js";

type Studio = Awaited<ReturnType<typeof openStudio>>;

let seeded: SeededStore;
/** The --write studio's own store: its migration does not change what the read-only tests see. */
let writable: SeededStore;
let ro: Studio;
let rw: Studio;

beforeAll(async () => {
  seeded = await seedStore({ bulk: 30 });
  seedProject(seeded.dir, seeded.url);
  ro = await openStudio(context(seeded.dir), { port: "0", host: "127.0.0.1" });
  writable = await seedStore();
  seedProject(writable.dir, writable.url);
  rw = await openStudio(context(writable.dir), { port: "0", host: "127.0.0.1", write: true });
}, 60_000);

afterAll(async () => {
  await ro?.closeAll();
  await rw?.closeAll();
  seeded?.cleanup();
  writable?.cleanup();
});

describe("token and address", () => {
  it("listens on 127.0.0.1 and prints a URL with a 256-bit token", () => {
    expect((ro.server.address() as { address: string }).address).toBe("127.0.0.1");
    expect(ro.url).toMatch(/^http:\/\/127\.0\.0\.1:\d+\/[A-Za-z0-9_-]{43}\/$/);
    expect(ro.token).not.toBe(rw.token);
  });

  it("serves nothing without the exact token: an empty 404", async () => {
    const origin = `http://127.0.0.1:${ro.port}`;
    for (const path of [
      "/",
      "/app.js",
      "/api/sessions",
      `/${ro.token.slice(0, -1)}/`,
      `/${ro.token}x/api/info`,
      `/${ro.token.toUpperCase()}/`,
      `/${rw.token}/api/info`,
      `//${ro.token}/`,
    ]) {
      const res = await raw(origin + path);
      expect(res.status, path).toBe(404);
      expect(res.body).toBe("");
    }
    expect((await raw(`${origin}/${ro.token}`)).status).toBe(308);
  });

  it("compares tokens in constant time over equal-length digests", () => {
    expect(sameToken("abc", "abc")).toBe(true);
    expect(sameToken("abd", "abc")).toBe(false);
    expect(sameToken("", "abc")).toBe(false);
  });

  it("serves the page script bundled from client/ (one classic script that parses)", async () => {
    const res = await raw(`${ro.url}app.js`);
    expect(res.status).toBe(200);
    expect(String(res.headers["content-type"])).toBe("text/javascript; charset=utf-8");
    expect(res.body).not.toMatch(/^\s*(?:import|export)\s/m);
    expect(res.body).toContain("data-ready");
    expect(() => new Function(res.body)).not.toThrow();
  });

  it("answers with a strict CSP and a page without inline script", async () => {
    const res = await raw(ro.url);
    expect(res.status).toBe(200);
    expect(String(res.headers["content-security-policy"])).toContain("script-src 'self'");
    expect(String(res.headers["content-security-policy"])).not.toMatch(/unsafe-inline|https?:/);
    expect(res.headers["x-content-type-options"]).toBe("nosniff");
    expect(res.body).not.toMatch(/<script(?![^>]*\bsrc=)[^>]*>/);
    expect(res.body).not.toMatch(/\bstyle=|\bon[a-z]+=/);
  });

  it("refuses another Host name (DNS rebinding)", async () => {
    const res = await raw(`${ro.url}api/info`, { headers: { Host: `evil.example:${ro.port}` } });
    expect(res.status).toBe(403);
    expect(res.body).toBe("");
    expect((await raw(`${ro.url}api/info`, { headers: { Host: `localhost:${ro.port}` } })).status).toBe(200);
  });
});

describe("read-only unless --write", () => {
  it("refuses a migration and leaves the store as it was", async () => {
    const before = JSON.parse((await raw(`${ro.url}api/session?id=${seeded.ids.old}`)).body);
    const res = await raw(`${ro.url}api/migrate`, {
      method: "POST",
      headers: { "Content-Type": "application/json" },
      body: JSON.stringify({ id: seeded.ids.old }),
    });
    expect(res.status).toBe(403);
    expect(JSON.parse(res.body).error).toMatch(/read-only.*--write/);
    const after = JSON.parse((await raw(`${ro.url}api/session?id=${seeded.ids.old}`)).body);
    expect(after.revision).toBe(before.revision);
    expect(after.validity).toBe("needs-migration");
    expect(JSON.parse((await raw(`${ro.url}api/info`)).body).write).toBe(false);
    for (const method of ["PUT", "DELETE", "PATCH"])
      expect((await raw(`${ro.url}api/session?id=x`, { method })).status).toBe(405);
  });

  it("with --write: refuses a form post and a cross-origin request, then migrates one session with a CAS save", async () => {
    const post = (headers: Record<string, string>) =>
      raw(`${rw.url}api/migrate`, { method: "POST", headers, body: JSON.stringify({ id: seeded.ids.old }) });
    expect((await post({ "Content-Type": "application/x-www-form-urlencoded" })).status).toBe(415);
    expect((await post({ "Content-Type": "application/json", Origin: "http://evil.example" })).status).toBe(403);
    const before = JSON.parse((await raw(`${rw.url}api/session?id=${seeded.ids.old}`)).body);
    const res = await post({ "Content-Type": "application/json", Origin: `http://127.0.0.1:${rw.port}` });
    expect(res.status).toBe(200);
    const done = JSON.parse(res.body);
    expect(done.outcome).toBe("migrated");
    expect(done.revision).toBeGreaterThan(before.revision);
    const after = JSON.parse((await raw(`${rw.url}api/session?id=${seeded.ids.old}`)).body);
    expect(after.validity).toBe("valid");
    expect(after.state[0].version).toBe(3);
    // Nothing else was written.
    const others = JSON.parse((await raw(`${rw.url}api/session?id=${seeded.ids.invalid}`)).body);
    expect(others.revision).toBe(3);
    // Again: nothing to do.
    expect(JSON.parse((await post({ "Content-Type": "application/json" })).body).outcome).toBe("unchanged");
  });
});

describe("sessions, a page at a time", () => {
  it("pages through every session once, with the facts of each row", async () => {
    const seen: string[] = [];
    let cursor: string | undefined;
    let pages = 0;
    do {
      const page = JSON.parse(
        (await raw(`${ro.url}api/sessions?limit=10${cursor ? `&cursor=${encodeURIComponent(cursor)}` : ""}`)).body,
      );
      expect(page.items.length).toBeLessThanOrEqual(10);
      for (const item of page.items) seen.push(item.id);
      cursor = page.cursor;
      pages++;
    } while (cursor !== undefined && pages < 20);
    const all = [
      seeded.ids.current,
      seeded.ids.old,
      seeded.ids.invalid,
      seeded.ids.deep,
      seeded.ids.long,
      ...seeded.ids.hostile,
      ...seeded.ids.bulk,
    ];
    expect(new Set(seen).size).toBe(seen.length);
    expect([...seen].sort()).toEqual([...all].sort());
    expect(pages).toBe(Math.ceil(all.length / 10));
  });

  it("describes each row from its stored text: size, messages, types and versions, validity, metadata", async () => {
    const page = JSON.parse((await raw(`${ro.url}api/sessions?limit=200`)).body);
    const row = (id: string) => page.items.find((i: { id: string }) => i.id === id);
    expect(row(seeded.ids.current)).toMatchObject({
      validity: "valid",
      messages: 5,
      types: [{ key: "statebag.chatHistory", $type: "InMemoryChatHistoryState", version: 3 }],
    });
    expect(row(seeded.ids.current).bytes).toBeGreaterThan(500);
    expect(row(seeded.ids.old)).toMatchObject({ validity: "needs-migration", types: [{ version: 1 }] });
    expect(row(seeded.ids.invalid)).toMatchObject({ validity: "invalid", problems: 1 });
    if (row(seeded.ids.current).owner !== undefined)
      expect(row(seeded.ids.current)).toMatchObject({ owner: "ada", title: "Lisbon trip" });
  });

  it("filters by $type, version, validity and search text, reading pages until the page is full", async () => {
    const get = async (q: string) =>
      JSON.parse((await raw(`${ro.url}api/sessions?limit=50&${q}`)).body).items.map((i: { id: string }) => i.id);
    expect(await get("type=InMemoryChatHistoryState&version=1")).toEqual([seeded.ids.old]);
    expect(await get("validity=invalid")).toEqual([seeded.ids.invalid, seeded.ids.deep]);
    expect(await get("validity=unchecked")).toEqual([...seeded.ids.hostile].sort());
    expect(await get("q=BULK-00")).toHaveLength(10);
    const small = JSON.parse((await raw(`${ro.url}api/sessions?limit=2&validity=valid`)).body);
    expect(small.items).toHaveLength(2);
    expect(small.cursor).toBeDefined();
  });

  it("rejects bad parameters with a 400 and a message", async () => {
    for (const q of ["limit=0", "limit=201", "limit=x", "validity=nope", "version=-1"]) {
      const res = await raw(`${ro.url}api/sessions?${q}`);
      expect(res.status, q).toBe(400);
      expect(JSON.parse(res.body).error).toBeTruthy();
    }
    expect((await raw(`${ro.url}api/session?id=missing`)).status).toBe(404);
    expect((await raw(`${ro.url}api/type?type=..%2F..%2Fetc`)).status).toBe(404);
  });
});
