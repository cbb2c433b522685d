// dynalite ships no type declarations; this covers the part of its API the project uses.
declare module 'dynalite' {
  import type { Server } from 'node:http';
  interface DynaliteOptions {
    /** Folder for LevelDB files; in memory when absent. */
    path?: string;
    createTableMs?: number;
    deleteTableMs?: number;
    updateTableMs?: number;
    maxItemSizeKb?: number;
    ssl?: boolean;
  }
  function dynalite(options?: DynaliteOptions): Server;
  export default dynalite;
}
