/**
 * Writes the layer rule of biome.json from the table in CONTRIBUTING.md#layers: one override per
 * room whose `noRestrictedImports` refuses every room the table does not let it import (the rooms
 * above it and its neighbours on the same floor). Other overrides are kept as they are.
 *
 *   node scripts/layers.mjs          rewrite biome.json (then `npx biome format --write biome.json`)
 *   node scripts/layers.mjs --check  exit 1, writing nothing, when biome.json's layer rule is not the table's
 *
 * A specifier names a room by its folder (`../stores/types.js`, `./runtime/agent/x.js`); the entry
 * points (src/*.ts) by their depth from the importing file, which differs per room.
 * test/house/layers.test.ts checks the result against the table, with probes Biome lints.
 */
import { readFileSync, realpathSync, writeFileSync } from "node:fs";
import { fileURLToPath } from "node:url";

const REPO = fileURLToPath(new URL("../", import.meta.url));
const MARK = "see CONTRIBUTING.md#layers";

/** The rows of the table under "## Layers". */
export function readLayers(contributing) {
  const start = contributing.indexOf("\n## Layers\n");
  if (start === -1) throw new Error('CONTRIBUTING.md has no "## Layers" section');
  const end = contributing.indexOf("\n## ", start + 1);
  const rooms = [];
  for (const line of contributing.slice(start, end === -1 ? undefined : end).split("\n")) {
    const cells = /^\| (\d+) \| ([a-z-]+) \| (.+?) \| (.+?) \|$/.exec(line.trim());
    if (cells === null) continue;
    const files = [...cells[3].matchAll(/`([^`]+)`/g)].map((match) => match[1]);
    rooms.push({ floor: Number(cells[1]), name: cells[2], files, may: cells[4] });
  }
  return rooms;
}

/** The names of the rooms `room` may import. */
export function allowedOf(room, rooms) {
  if (room.may === "nothing of statebag") return new Set();
  if (room.may === "every floor below")
    return new Set(rooms.filter((other) => other.floor < room.floor).map((other) => other.name));
  return new Set(room.may.split(",").map((name) => name.trim()));
}

/** How a file of `importer` names room `target` in a relative specifier. */
function patterns(target, importer) {
  if (target === "entries") {
    if (importer === "internal") return ["../*.js", "../../*.js"];
    if (importer === "generator") return ["../src/*.js", "../../src/*.js", "../../../src/*.js"];
    return ["../../*.js", "../../../*.js", "../../../../*.js"];
  }
  if (target === "testing-entry")
    return ["./testing.js", "../testing.js", "../../testing.js", "../../../testing.js", "../../../../testing.js"];
  return [`./**/${target}/**`, `../**/${target}/**`];
}

function overrides(rooms) {
  const floorOf = new Map(rooms.map((room) => [room.name, room.floor]));
  const out = [];
  for (const room of rooms) {
    if (room.name === "generated") continue; // Biome does not lint generated files
    const allowed = allowedOf(room, rooms);
    const forbidden = rooms.filter((other) => other.name !== room.name && !allowed.has(other.name));
    if (forbidden.length === 0) continue;
    const may =
      [...allowed].sort((a, b) => floorOf.get(a) - floorOf.get(b) || a.localeCompare(b)).join(", ") ||
      "nothing of statebag";
    out.push({
      includes: room.files,
      linter: {
        rules: {
          style: {
            noRestrictedImports: {
              level: "error",
              options: {
                patterns: [
                  {
                    group: forbidden.flatMap((other) => patterns(other.name, room.name)),
                    message: `is an arrow out of ${room.name}/ (floor ${room.floor}), which may import ${may} only: ${MARK}; move the shared code down a floor, or this code up`,
                  },
                ],
              },
            },
          },
        },
      },
    });
  }
  return out;
}

// Real paths: run through a symlink, the script still knows it is the one being run.
if (process.argv[1] && realpathSync(process.argv[1]) === realpathSync(fileURLToPath(import.meta.url))) {
  const rooms = readLayers(readFileSync(`${REPO}CONTRIBUTING.md`, "utf8"));
  const biome = JSON.parse(readFileSync(`${REPO}biome.json`, "utf8"));
  const isLayerRule = (override) =>
    JSON.stringify(override.linter?.rules?.style?.noRestrictedImports ?? "").includes(MARK);
  const wanted = overrides(rooms);
  if (process.argv.includes("--check")) {
    // Compared as data, so Biome's formatting of the file does not matter.
    const current = (biome.overrides ?? []).filter(isLayerRule);
    const cycles = biome.linter?.rules?.suspicious?.noImportCycles;
    if (JSON.stringify(current) !== JSON.stringify(wanted) || cycles !== "error") {
      console.error(
        "biome.json: the layer rule differs from the table in CONTRIBUTING.md#layers; run node scripts/layers.mjs && npx biome format --write biome.json",
      );
      process.exit(1);
    }
    console.log(`biome.json: the layer rule of ${rooms.length} rooms matches the table`);
  } else {
    biome.overrides = [...(biome.overrides ?? []).filter((override) => !isLayerRule(override)), ...wanted];
    biome.linter.rules.suspicious = { ...biome.linter.rules.suspicious, noImportCycles: "error" };
    writeFileSync(`${REPO}biome.json`, `${JSON.stringify(biome, null, 2)}\n`);
    console.log(`biome.json: the layer rule of ${rooms.length} rooms; run npx biome format --write biome.json`);
  }
}
