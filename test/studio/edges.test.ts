/**
 * The studio against a hostile client (issue #34): names from a request find own keys only (no
 * 500 for `/__proto__`), the Host allowlist holds on a wildcard address too and the Origin of a
 * write is checked against it (never against the request's own Host), bad ids and cursors are a
 * fixed 400 that does not echo them, a write's Content-Type is exactly JSON in UTF-8, and a method
 * a route does not take is a 405 with Allow. Servers listen on 127.0.0.1: the wildcard address is
 * tested through the allowlist it builds (hostAllowlist), which is what the server checks.
 */
import { hostname, networkInterfaces } from "node:os";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { openStudio } from "../../src/cli/commands/studio.js";
import { CliError } from "../../src/cli/io.js";
import {
  hostAllowed,
  hostAllowlist,
  isJsonContentType,
  isWildcard,
  machineHostNames,
  originAllowed,
} from "../../src/cli/studio/server.js";
import { rawRequest as raw, seedProject, seedStore, studioContext, type SeededStore } from "./seed.js";

type Studio = Awaited<ReturnType<typeof openStudio>>;

let seeded: SeededStore;
let ro: Studio;
let rw: Studio;

beforeAll(async () => {
  seeded = await seedStore();
  seedProject(seeded.dir, seeded.url);
  ro = await openStudio(studioContext(seeded.dir), { port: "0", host: "127.0.0.1" });
  rw = await openStudio(studioContext(seeded.dir), {
    port: "0",
    host: "127.0.0.1",
    write: true,
    allowHost: ["Studio.LAN", "192.168.77.5"],
  });
}, 60_000);

afterAll(async () => {
  await ro?.closeAll();
  await rw?.closeAll();
  seeded?.cleanup();
});

const INHERITED = ["__proto__", "constructor", "toString", "hasOwnProperty", "valueOf", "__defineGetter__"];

describe("names from a request find own keys only", () => {
  it("an inherited property name is no asset: an empty 404, never a 500", async () => {
    for (const name of INHERITED) {
      for (const method of ["GET", "HEAD", "POST"]) {
        const res = await raw(`${ro.url}${name}`, { method });
        expect(res.status, `${method} ${name}`).toBe(404);
        expect(res.body).toBe("");
      }
    }
  });

  it("nor an API route, a type or a session", async () => {
    for (const name of INHERITED) {
      const route = await raw(`${ro.url}api/${name}`);
      expect(route.status, name).toBe(404);
      expect(JSON.parse(route.body).error).toBe("no such API");
      expect((await raw(`${ro.url}api/type?type=${name}`)).status, name).toBe(404);
      expect((await raw(`${ro.url}api/session?id=${name}`)).status, name).toBe(404);
      expect((await raw(`${ro.url}api/sessions?owner=${name}`)).status, name).toBe(200);
    }
  });
});

describe("the Host allowlist", () => {
  it("on a wildcard address holds the loopback names and the machine's own names and addresses, nothing else", () => {
    const port = 4873;
    for (const wildcard of ["0.0.0.0", "::", "[::]"]) {
      expect(isWildcard(wildcard)).toBe(true);
      const allowed = new Set(hostAllowlist(wildcard));
      for (const name of ["localhost", "127.0.0.1", "[::1]", hostname().toLowerCase()]) expect(allowed).toContain(name);
      for (const a of Object.values(networkInterfaces()).flat())
        if (a && !a.address.includes("%"))
          expect(allowed).toContain(a.family === "IPv6" ? `[${a.address}]` : a.address);
      expect([...allowed].sort()).toEqual(
        [...new Set(["localhost", "127.0.0.1", "[::1]", ...machineHostNames()])].sort(),
      );
      // The reported attack: a forged Host, and a write whose Origin repeats it.
      expect(hostAllowed(`evil.example:${port}`, allowed, port)).toBe(false);
      expect(originAllowed(`http://evil.example:${port}`, allowed, port)).toBe(false);
      expect(hostAllowed(`localhost:${port}`, allowed, port)).toBe(true);
      expect(hostAllowed(`${hostname()}:${port}`, allowed, port)).toBe(true);
      expect(originAllowed(`http://${hostname()}:${port}`, allowed, port)).toBe(true);
    }
  });

  it("--allow-host replaces the machine's names; loopback names stay; a specific address allows itself", () => {
    expect(new Set(hostAllowlist("0.0.0.0", ["studio.lan"]))).toEqual(
      new Set(["localhost", "127.0.0.1", "[::1]", "studio.lan"]),
    );
    expect(new Set(hostAllowlist("192.168.77.5"))).toEqual(
      new Set(["localhost", "127.0.0.1", "[::1]", "192.168.77.5"]),
    );
    expect(hostAllowlist("fe80::1")).toContain("[fe80::1]");
  });

  it("a Host is name[:port] exactly: user info, another port, a path or an empty one is refused", () => {
    const allowed = new Set(hostAllowlist("127.0.0.1", ["studio.lan"]));
    for (const header of [
      "studio.lan:81",
      "evil.example@studio.lan:80",
      "studio.lan:80/x",
      "studio.lan.evil.example:80",
      "",
      "studio.lan:80:80",
      "[::1",
    ])
      expect(hostAllowed(header, allowed, 80), header).toBe(false);
    expect(hostAllowed(undefined, allowed, 80)).toBe(false);
    for (const header of ["studio.lan", "studio.lan:80", "STUDIO.LAN:80", "[::1]:80", "[0:0::1]:80"])
      expect(hostAllowed(header, allowed, 80), header).toBe(true);
    for (const origin of ["null", "https://studio.lan", "http://studio.lan:81", "http://studio.lan/x", "file://"])
      expect(originAllowed(origin, allowed, 80), origin).toBe(false);
  });

  it("a running studio answers an allowed name, refuses others, and checks a write's Origin against the allowlist", async () => {
    expect(new Set(rw.allowedHosts)).toEqual(
      new Set(["localhost", "127.0.0.1", "[::1]", "studio.lan", "192.168.77.5"]),
    );
    const port = rw.port;
    expect((await raw(`${rw.url}api/info`, { headers: { Host: `studio.lan:${port}` } })).status).toBe(200);
    expect((await raw(`${rw.url}api/info`, { headers: { Host: `192.168.77.5:${port}` } })).status).toBe(200);
    expect((await raw(`${rw.url}api/info`, { headers: { Host: `evil.example:${port}` } })).status).toBe(403);
    const migrate = (headers: Record<string, string>) =>
      raw(`${rw.url}api/migrate`, {
        method: "POST",
        headers: { "Content-Type": "application/json", ...headers },
        body: JSON.stringify({ id: seeded.ids.current }),
      });
    // The Origin equal to the forged Host: refused (before, the Host check was off on 0.0.0.0 and this passed).
    expect((await migrate({ Host: `evil.example:${port}`, Origin: `http://evil.example:${port}` })).status).toBe(403);
    // An allowed Host does not make any Origin acceptable.
    const crossOrigin = await migrate({ Host: `studio.lan:${port}`, Origin: `http://evil.example:${port}` });
    expect(crossOrigin.status).toBe(403);
    expect(JSON.parse(crossOrigin.body).error).toBe("cross-origin request refused");
    expect((await migrate({ Host: `studio.lan:${port}`, Origin: "null" })).status).toBe(403);
    // A page of one allowed name may write to another: both are this studio.
    const ok = await migrate({ Host: `127.0.0.1:${port}`, Origin: `http://studio.lan:${port}` });
    expect(ok.status).toBe(200);
    expect(JSON.parse(ok.body).outcome).toBe("unchanged");
  });

  it("--allow-host takes names and addresses only: anything else is a usage error that quotes it", async () => {
    for (const bad of ["http://studio.lan", "studio.lan:8080", "*", "0.0.0.0", "a b", "", "x\u001b[2J"]) {
      const error = await openStudio(studioContext(seeded.dir), {
        port: "0",
        host: "127.0.0.1",
        allowHost: [bad],
      }).then(
        (s) => s.closeAll().then(() => undefined),
        (e: unknown) => e,
      );
      expect(error, JSON.stringify(bad)).toBeInstanceOf(CliError);
      expect((error as Error).message).toContain("--allow-host");
      expect((error as Error).message).not.toContain("\u001b");
    }
  });
});

describe("bad ids: a fixed 400 that does not echo them", () => {
  const FIXED = "id: not a valid session id (1 to 1024 characters of well-formed Unicode text without NUL)";

  // A query cannot carry a lone surrogate (its UTF-8 bytes decode to U+FFFD): a body can (below).
  it("a NUL or an overlong id in a query", async () => {
    for (const route of ["session", "preview"])
      for (const id of ["a%00b", `${"i".repeat(1025)}`, "evil%00%3Cscript%3E"]) {
        const res = await raw(`${ro.url}api/${route}?id=${id}`);
        expect(res.status, `${route} ${id}`).toBe(400);
        expect(JSON.parse(res.body)).toEqual({ error: FIXED });
        expect(res.body).not.toMatch(/a\\u0000b|<script>|iiiiiiii/);
      }
  });

  it("a lone surrogate or a NUL in POST migrate", async () => {
    for (const body of ['{"id":"\\ud800"}', '{"id":"\\udc00x"}', '{"id":"a\\u0000b"}']) {
      const res = await raw(`${rw.url}api/migrate`, {
        method: "POST",
        headers: { "Content-Type": "application/json" },
        body,
      });
      expect(res.status, body).toBe(400);
      expect(JSON.parse(res.body)).toEqual({ error: FIXED });
    }
  });

  it("a forged cursor or a bad owner", async () => {
    for (const q of ["cursor=%00", "cursor=a%00b", "owner=a%00b", `owner=${"o".repeat(1025)}`]) {
      const res = await raw(`${ro.url}api/sessions?${q}`);
      expect(res.status, q).toBe(400);
      expect(res.body).not.toMatch(/\\u0000|\\ud800/i);
    }
  });

  it("a body that is not UTF-8 is a 400", async () => {
    const res = await raw(`${rw.url}api/migrate`, {
      method: "POST",
      headers: { "Content-Type": "application/json" },
      body: Buffer.from([0x7b, 0x22, 0x69, 0x64, 0x22, 0x3a, 0x22, 0xff, 0x22, 0x7d]),
    });
    expect(res.status).toBe(400);
  });
});

describe("methods and media types", () => {
  it("a write's Content-Type is application/json exactly, in UTF-8 or with no charset", () => {
    for (const ok of [
      "application/json",
      "application/json; charset=utf-8",
      "Application/JSON;charset=UTF-8",
      'application/json; charset="utf-8"',
    ])
      expect(isJsonContentType(ok), ok).toBe(true);
    for (const bad of [
      "application/jsonfoo",
      "application/json-patch+json",
      "application/json;charset=utf-16",
      "application/json; charset=latin1",
      "application/json; boundary=x",
      "application/json; charset=utf-8; charset=utf-16",
      "text/plain",
      undefined,
    ])
      expect(isJsonContentType(bad), String(bad)).toBe(false);
  });

  it("refuses application/jsonfoo and a UTF-16 body with a 415", async () => {
    for (const type of ["application/jsonfoo", "application/json;charset=utf-16"]) {
      const res = await raw(`${rw.url}api/migrate`, {
        method: "POST",
        headers: { "Content-Type": type },
        body: JSON.stringify({ id: seeded.ids.current }),
      });
      expect(res.status, type).toBe(415);
    }
  });

  it("a method a route does not take is a 405 with Allow", async () => {
    const trace = await raw(`${ro.url}api/sessions`, { method: "TRACE" });
    expect(trace.status).toBe(405);
    expect(trace.headers.allow).toBe("GET");
    const get = await raw(`${rw.url}api/migrate`);
    expect(get.status).toBe(405);
    expect(get.headers.allow).toBe("POST");
    const page = await raw(ro.url, { method: "DELETE" });
    expect(page.status).toBe(405);
    expect(page.headers.allow).toBe("GET, HEAD");
  });
});
