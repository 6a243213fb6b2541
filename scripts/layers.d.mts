/** A row of the table in CONTRIBUTING.md#layers. */
export interface LayerRoom {
  floor: number;
  name: string;
  /** Biome `includes` globs (a leading `!` excludes). */
  files: string[];
  /** What the table says it may import, as written. */
  may: string;
}
/** The rows of the table under "## Layers" in CONTRIBUTING.md's text. */
export function readLayers(contributing: string): LayerRoom[];
/** The names of the rooms `room` may import. */
export function allowedOf(room: LayerRoom, rooms: readonly LayerRoom[]): Set<string>;
