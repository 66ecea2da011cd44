#!/usr/bin/env node
// lancekeeper peer driver: drives real Lance 12 (through @lancedb/lancedb
// 0.39.0) so Go tests can compare our behaviour with Lance's.
//
// Usage: node tests/peer/peer.mjs COMMAND ARGS...   (see `help` or README.md)
//
// Output protocol:
//   exit 0  success; one JSON document on stdout
//   exit 3  Lance (or lancedb) refused: stdout is {"error": "<exact message>", ...}
//   exit 2  bad command line (message on stderr)
//   exit 1  driver bug or missing installation (message on stderr)
//
// Modules are found through $LANCEKEEPER_PEER_MODULES (a node_modules dir), else
// the install.sh cache ${LANCEKEEPER_PEER_CACHE:-$HOME/.cache/lancekeeper-peer}/
// <first 16 hex of sha256(package-lock.json)>/node_modules, else ./node_modules.

import { createHash } from "node:crypto";
import { existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, symlinkSync, realpathSync } from "node:fs";
import { createRequire } from "node:module";
import { homedir, tmpdir } from "node:os";
import { basename, dirname, join, resolve } from "node:path";
import { fileURLToPath } from "node:url";
import { makeIpc } from "./ipc.mjs";
import { indexCommands } from "./index.mjs";
import { benchCommands } from "./bench.mjs";

const HERE = dirname(fileURLToPath(import.meta.url));
const EXIT_DRIVER = 1;
const EXIT_USAGE = 2;
const EXIT_LANCE = 3;

class UsageError extends Error {}

// LanceError wraps anything thrown by lancedb/Lance; its message is kept verbatim.
class LanceError extends Error {
  constructor(cause, op) {
    super(cause && cause.message !== undefined ? cause.message : String(cause));
    this.op = op;
  }
}

// L awaits a lancedb call and marks its failure as Lance's refusal.
async function L(op, fn) {
  try {
    return await fn();
  } catch (e) {
    if (e instanceof LanceError) throw e;
    throw new LanceError(e, op);
  }
}

// ------------------------------------------------------------------ modules

export function modulesDir() {
  if (process.env.LANCEKEEPER_PEER_MODULES) return process.env.LANCEKEEPER_PEER_MODULES;
  const lock = readFileSync(join(HERE, "package-lock.json"));
  const hash = createHash("sha256").update(lock).digest("hex").slice(0, 16);
  const cache = process.env.LANCEKEEPER_PEER_CACHE || join(homedir(), ".cache", "lancekeeper-peer");
  const cached = join(cache, hash, "node_modules");
  if (existsSync(join(cached, "@lancedb", "lancedb"))) return cached;
  const local = join(HERE, "node_modules");
  if (existsSync(join(local, "@lancedb", "lancedb"))) return local;
  return cached;
}

function loadModules() {
  const dir = modulesDir();
  if (!existsSync(join(dir, "@lancedb", "lancedb"))) {
    process.stderr.write(`peer not installed: run tests/peer/install.sh (looked for ${dir})\n`);
    process.exit(EXIT_DRIVER);
  }
  const require = createRequire(join(dir, "..", "peer-resolve.js"));
  return { lancedb: require("@lancedb/lancedb"), arrow: require("apache-arrow"), ipc: makeIpc(require) };
}

// ------------------------------------------------------------------ args

const BOOLEAN_FLAGS = new Set(["stable-row-ids", "v1-paths", "replace", "delete-unverified", "deep", "brief", "overwrite", "delete-not-matched", "no-train", "analyze", "flat"]);
const REPEATED_FLAGS = new Set(["set", "sql", "storage-option", "column"]);

function parseArgs(argv) {
  const pos = [];
  const flags = {};
  for (let i = 0; i < argv.length; i++) {
    const a = argv[i];
    if (a.startsWith("--")) {
      const eq = a.indexOf("=");
      let name = a.slice(2);
      let value;
      if (eq > 0 && !BOOLEAN_FLAGS.has(a.slice(2, eq)) && !REPEATED_FLAGS.has(a.slice(2))) {
        name = a.slice(2, eq);
        value = a.slice(eq + 1);
      }
      if (BOOLEAN_FLAGS.has(name)) {
        flags[name] = true;
        continue;
      }
      if (value === undefined) {
        if (i + 1 >= argv.length) throw new UsageError(`--${name} needs a value`);
        value = argv[++i];
      }
      if (REPEATED_FLAGS.has(name)) (flags[name] ??= []).push(value);
      else flags[name] = value;
    } else {
      pos.push(a);
    }
  }
  return { pos, flags };
}

function intArg(s, what) {
  if (!/^[0-9]+$/.test(String(s))) throw new UsageError(`${what} must be a non-negative integer, got ${JSON.stringify(s)}`);
  return Number(s);
}

function need(pos, n, usage) {
  if (pos.length < n) throw new UsageError(`usage: ${usage}`);
}

function readInput(path) {
  if (path === "-") return readFileSync(0);
  return readFileSync(path);
}

// ------------------------------------------------------------------ datasets

// Dataset locates a dataset directory as a lancedb connection + table name.
// lancedb names tables "<name>.lance" inside the connection directory, so a
// directory with another suffix is reached through a symlink in a scratch dir.
// USED_PATHS collects every dataset path of this run, for error reports.
const USED_PATHS = new Set();

class Dataset {
  constructor(mods, dir) {
    this.mods = mods;
    this.dir = resolve(dir);
    USED_PATHS.add(this.dir);
    if (basename(this.dir).endsWith(".lance") && basename(this.dir).length > ".lance".length) {
      this.parent = dirname(this.dir);
      this.name = basename(this.dir).slice(0, -".lance".length);
      this.scratch = null;
    } else {
      this.scratch = mkdtempSync(join(tmpdir(), "lkpeer-"));
      this.parent = this.scratch;
      this.name = "ds";
      this.linked = false;
    }
    this.uri = join(this.parent, `${this.name}.lance`);
    USED_PATHS.add(this.uri);
  }

  link(create) {
    if (!this.scratch || this.linked) return;
    if (create) mkdirSync(this.dir, { recursive: true });
    if (existsSync(this.dir)) symlinkSync(realpathSync(this.dir), this.uri, "dir");
    this.linked = true;
  }

  async connect() {
    if (!this.db) this.db = await L("connect", () => this.mods.lancedb.connect(this.parent));
    return this.db;
  }

  async open() {
    this.link(false);
    const db = await this.connect();
    return L("open", () => db.openTable(this.name));
  }

  async openAt(flags) {
    let t = await this.open();
    if (flags.version !== undefined && flags.tag !== undefined) throw new UsageError("give --version or --tag, not both");
    // --branch NAME: the branch's table handle (its versions, not main's)
    if (flags.branch !== undefined) t = await L("branchCheckout", async () => (await t.branches()).checkout(String(flags.branch)));
    if (flags.version !== undefined) await L("checkout", () => t.checkout(intArg(flags.version, "--version")));
    if (flags.tag !== undefined) await L("checkout", () => t.checkout(String(flags.tag)));
    return t;
  }

  cleanup() {
    if (this.scratch) rmSync(this.scratch, { recursive: true, force: true });
  }
}

// ------------------------------------------------------------------ info

function sortedObject(o) {
  const out = {};
  for (const k of Object.keys(o ?? {}).sort()) out[k] = o[k];
  return out;
}

function indexJSON(ix) {
  // Keys Lance leaves undefined (e.g. created_at of old indices) are omitted.
  const o = {
    name: ix.name,
    index_type: ix.indexType,
    columns: ix.columns,
    index_uuid: ix.indexUuid,
    type_url: ix.typeUrl,
    index_version: ix.indexVersion,
    num_segments: ix.numSegments,
    num_indexed_rows: ix.numIndexedRows,
    num_unindexed_rows: ix.numUnindexedRows,
    index_details: ix.indexDetails,
    created_at: ix.createdAt instanceof Date ? ix.createdAt.toISOString() : ix.createdAt,
  };
  for (const k of Object.keys(o)) if (o[k] === undefined || o[k] === null) delete o[k];
  return o;
}

async function tryInto(entry, key, op, fn) {
  try {
    entry[key] = await L(op, fn);
  } catch (e) {
    if (!(e instanceof LanceError)) throw e;
    entry[`${key}_error`] = e.message;
  }
}

// describeCheckedOut reports the version the table handle is checked out at.
async function describeCheckedOut(mods, t, entry) {
  await tryInto(entry, "row_count", "countRows", () => t.countRows());
  await tryInto(entry, "schema", "schema", async () => mods.ipc.schemaFromIpc(await t.inner.schema()));
  await tryInto(entry, "indices", "listIndices", async () => (await t.listIndices()).map(indexJSON));
  await tryInto(entry, "num_fragments", "stats", async () => (await t.stats()).fragmentStats.numFragments);
  return entry;
}

function versionHeader(v) {
  return {
    version: v.version,
    timestamp: new Date(v.timestamp / 1000).toISOString(),
    timestamp_us: v.timestamp,
    metadata: sortedObject(v.metadata),
  };
}

async function describeVersions(mods, t, tagsByVersion) {
  const list = await L("listVersions", () => t.inner.listVersions());
  list.sort((a, b) => a.version - b.version);
  const out = [];
  for (const v of list) {
    const e = versionHeader(v);
    try {
      await L("checkout", () => t.checkout(v.version));
      await describeCheckedOut(mods, t, e);
    } catch (err) {
      if (!(err instanceof LanceError)) throw err;
      e.checkout_error = err.message;
    }
    const tags = tagsByVersion.get(v.version);
    if (tags) e.tags = tags;
    out.push(e);
  }
  return out;
}

async function cmdInfo(mods, pos, flags) {
  need(pos, 1, "info DIR [--version N | --tag T] [--brief]");
  const ds = new Dataset(mods, pos[0]);
  try {
    const t = await ds.open();
    const out = { dataset: ds.dir, dataset_uri: ds.uri };
    out.latest_version = await L("version", () => t.version());
    out.uses_v2_manifest_paths = await L("usesV2ManifestPaths", () => t.inner.usesV2ManifestPaths());
    const tagList = await L("tags", async () => (await t.tags()).list());
    out.tags = {};
    const tagsByVersion = new Map();
    for (const name of Object.keys(tagList).sort()) {
      const tc = tagList[name];
      out.tags[name] = { version: tc.version, manifest_size: tc.manifestSize };
      if (!tagsByVersion.has(tc.version)) tagsByVersion.set(tc.version, []);
      tagsByVersion.get(tc.version).push(name);
    }
    if (!flags.brief) out.versions = await describeVersions(mods, t, tagsByVersion);

    // The requested view (latest unless --version/--tag).
    await L("checkoutLatest", () => t.checkoutLatest());
    if (flags.version !== undefined && flags.tag !== undefined) throw new UsageError("give --version or --tag, not both");
    if (flags.version !== undefined) await L("checkout", () => t.checkout(intArg(flags.version, "--version")));
    if (flags.tag !== undefined) await L("checkout", () => t.checkout(String(flags.tag)));
    const cur = await L("version", () => t.version());
    const listed = out.versions?.find((v) => v.version === cur);
    if (listed) {
      out.checked_out = listed;
    } else {
      const list = await L("listVersions", () => t.inner.listVersions());
      const v = list.find((x) => x.version === cur);
      const e = v ? versionHeader(v) : { version: cur };
      await describeCheckedOut(mods, t, e);
      if (tagsByVersion.has(cur)) e.tags = tagsByVersion.get(cur);
      out.checked_out = e;
    }

    if (!flags.brief) {
      await L("checkoutLatest", () => t.checkoutLatest());
      const branches = await L("branches", async () => (await t.branches()).list());
      const names = Object.keys(branches).sort();
      if (names.length > 0) {
        out.branches = {};
        for (const name of names) {
          const b = branches[name];
          const bt = await L("branchCheckout", async () => (await t.branches()).checkout(name));
          out.branches[name] = {
            parent_branch: b.parentBranch ?? null,
            parent_version: b.parentVersion,
            manifest_size: b.manifestSize,
            latest_version: await L("version", () => bt.version()),
            versions: await describeVersions(mods, bt, new Map()),
          };
        }
      }
    }
    return out;
  } finally {
    ds.cleanup();
  }
}

// ------------------------------------------------------------------ rows

async function cmdRows(mods, pos, flags) {
  need(pos, 1, "rows DIR [--version N | --tag T] [--order scan|rowaddr] [--where PRED] [--column C]...");
  const order = flags.order ?? "scan";
  if (order !== "scan" && order !== "rowaddr") throw new UsageError(`--order must be scan or rowaddr, got ${order}`);
  const ds = new Dataset(mods, pos[0]);
  try {
    const t = await ds.openAt(flags);
    return await rowsOf(mods, t, flags, order, flags.where);
  } finally {
    ds.cleanup();
  }
}

// rows-many DIR --sql PRED... [rows options]: the rows answer of `rows
// --where PRED` for every PRED, on one table handle:
// {results: [rows answer | {error, op}]} in the order of the --sql flags
// (a predicate Lance refuses gives its message, not a failed command).
async function cmdRowsMany(mods, pos, flags) {
  need(pos, 1, "rows-many DIR --sql PRED... [--version N | --tag T] [--order scan|rowaddr] [--column C]...");
  const order = flags.order ?? "scan";
  if (order !== "scan" && order !== "rowaddr") throw new UsageError(`--order must be scan or rowaddr, got ${order}`);
  const ds = new Dataset(mods, pos[0]);
  try {
    const t = await ds.openAt(flags);
    const results = [];
    for (const w of flags.sql ?? []) {
      try {
        results.push(await rowsOf(mods, t, flags, order, w === "" ? undefined : w));
      } catch (e) {
        if (!(e instanceof LanceError)) throw e;
        results.push({ error: String(e?.message ?? e), op: e?.op ?? "query" });
      }
    }
    return { results };
  } finally {
    ds.cleanup();
  }
}

async function rowsOf(mods, t, flags, order, where) {
  {
    const version = await L("version", () => t.version());
    const schema = mods.ipc.decode(await L("schema", () => t.inner.schema())).schema;
    const names = flags.column ?? schema.fields.map((f) => f.name);
    const q = t.query();
    q.select([...names, "_rowaddr"]);
    q.withRowId();
    if (where !== undefined) q.where(String(where));
    const acc = { schema: null, columns: null, numRows: 0, dictionaries: new Map() };
    const it = await L("query", () => q.nativeExecute());
    for (;;) {
      const buf = await L("query", () => it.next());
      if (!buf) break;
      mods.ipc.decode(buf, acc);
    }
    const resultSchema = acc.schema ?? null;
    const fieldNames = resultSchema ? resultSchema.fields.map((f) => f.name) : [];
    const idIdx = fieldNames.indexOf("_rowid");
    const addrIdx = fieldNames.indexOf("_rowaddr");
    const dataIdx = fieldNames.map((_, i) => i).filter((i) => i !== idIdx && i !== addrIdx);
    const n = acc.numRows;
    let perm = [...Array(n).keys()];
    const addrs = addrIdx >= 0 ? acc.columns[addrIdx] : null;
    // A scan with no rows (every row deleted, or a --where that matches
    // nothing) may come back without any batch, hence without a _rowaddr
    // column: there is nothing to sort then.
    if (order === "rowaddr" && n > 0) {
      if (!addrs) throw new Error("Lance returned no _rowaddr column");
      perm.sort((a, b) => {
        const x = BigInt(addrs[a]);
        const y = BigInt(addrs[b]);
        return x < y ? -1 : x > y ? 1 : 0;
      });
    }
    const outSchema = resultSchema
      ? mods.ipc.schemaJSON({ fields: dataIdx.map((i) => resultSchema.fields[i]), metadata: resultSchema.metadata })
      : mods.ipc.schemaJSON({ fields: schema.fields.filter((f) => names.includes(f.name)), metadata: schema.metadata });
    return {
      version,
      num_rows: n,
      schema: outSchema,
      columns: outSchema.fields.map((f) => f.name),
      row_ids: idIdx >= 0 ? perm.map((i) => acc.columns[idIdx][i]) : [],
      row_addrs: addrs ? perm.map((i) => addrs[i]) : [],
      rows: perm.map((i) => dataIdx.map((c) => acc.columns[c][i])),
    };
  }
}

// ------------------------------------------------------------------ writes

async function dataBuffer(mods, flags, { required = true } = {}) {
  if (flags.ipc !== undefined && flags.data !== undefined) throw new UsageError("give --ipc or --data, not both");
  if (flags.ipc !== undefined) return readInput(flags.ipc);
  if (flags.data !== undefined) {
    const parsed = JSON.parse(readInput(flags.data).toString("utf8"));
    const rows = Array.isArray(parsed) ? parsed : parsed.rows;
    if (!Array.isArray(rows)) throw new UsageError("--data JSON must be an array of row objects or {\"rows\": [...]}");
    const opts = {};
    if (flags["schema-ipc"] !== undefined) {
      opts.schema = mods.arrow.tableFromIPC(readInput(flags["schema-ipc"])).schema;
    }
    const tbl = mods.lancedb.makeArrowTable(rows, opts);
    return Buffer.from(mods.arrow.tableToIPC(tbl, "file"));
  }
  if (required) throw new UsageError("give --ipc FILE.arrow or --data FILE.json");
  return null;
}

function storageOptions(flags) {
  const so = {};
  if (flags["storage-version"] !== undefined) so.new_table_data_storage_version = String(flags["storage-version"]);
  if (flags["stable-row-ids"]) so.new_table_enable_stable_row_ids = "true";
  if (flags["v1-paths"]) so.new_table_enable_v2_manifest_paths = "false";
  for (const kv of flags["storage-option"] ?? []) {
    const eq = kv.indexOf("=");
    if (eq <= 0) throw new UsageError(`--storage-option wants KEY=VALUE, got ${kv}`);
    so[kv.slice(0, eq)] = kv.slice(eq + 1);
  }
  return so;
}

async function afterWrite(t, extra = {}) {
  await L("checkoutLatest", () => t.checkoutLatest());
  return { ok: true, version: await L("version", () => t.version()), ...extra };
}

async function cmdCreate(mods, pos, flags) {
  need(pos, 1, "create DIR (--ipc FILE.arrow | --data FILE.json | --schema-ipc FILE.arrow) [--storage-version V] [--stable-row-ids] [--v1-paths] [--overwrite]");
  const ds = new Dataset(mods, pos[0]);
  try {
    ds.link(true);
    const db = await ds.connect();
    const so = storageOptions(flags);
    const mode = flags.overwrite ? "overwrite" : "create";
    let t;
    const buf = await dataBuffer(mods, flags, { required: false });
    if (buf) {
      t = await L("createTable", () => db.inner.createTable(ds.name, buf, mode, [], so));
    } else if (flags["schema-ipc"] !== undefined) {
      const schemaBuf = readInput(flags["schema-ipc"]);
      t = await L("createEmptyTable", () => db.inner.createEmptyTable(ds.name, schemaBuf, mode, [], so));
    } else {
      throw new UsageError("create needs --ipc, --data or --schema-ipc");
    }
    return { ok: true, version: await L("version", () => t.version()) };
  } finally {
    ds.cleanup();
  }
}

async function cmdAppend(mods, pos, flags) {
  need(pos, 1, "append DIR (--ipc FILE.arrow | --data FILE.json) [--overwrite]");
  const ds = new Dataset(mods, pos[0]);
  try {
    const t = await ds.open();
    const buf = await dataBuffer(mods, flags);
    const mode = flags.overwrite ? "overwrite" : "append";
    await L("add", () => t.inner.add(buf, mode));
    return afterWrite(t);
  } finally {
    ds.cleanup();
  }
}

async function cmdDelete(mods, pos, flags) {
  need(pos, 1, "delete DIR --where PRED");
  if (flags.where === undefined) throw new UsageError("delete needs --where PRED");
  const ds = new Dataset(mods, pos[0]);
  try {
    const t = await ds.open();
    await L("delete", () => t.delete(String(flags.where)));
    return afterWrite(t);
  } finally {
    ds.cleanup();
  }
}

async function cmdUpdate(mods, pos, flags) {
  need(pos, 1, "update DIR [--where PRED] --set COL=SQL...");
  if (!flags.set) throw new UsageError("update needs at least one --set COL=SQL");
  const cols = flags.set.map((s) => {
    const eq = s.indexOf("=");
    if (eq <= 0) throw new UsageError(`--set wants COL=SQL, got ${s}`);
    return [s.slice(0, eq), s.slice(eq + 1)];
  });
  const ds = new Dataset(mods, pos[0]);
  try {
    const t = await ds.open();
    const r = await L("update", () => t.inner.update(flags.where === undefined ? null : String(flags.where), cols));
    return afterWrite(t, { rows_updated: r?.rowsUpdated ?? null });
  } finally {
    ds.cleanup();
  }
}

async function cmdUpsert(mods, pos, flags) {
  need(pos, 1, "upsert DIR --on COL (--ipc FILE | --data FILE) [--delete-not-matched]");
  if (flags.on === undefined) throw new UsageError("upsert needs --on COL[,COL]");
  const ds = new Dataset(mods, pos[0]);
  try {
    const t = await ds.open();
    const buf = await dataBuffer(mods, flags);
    let b = t.inner.mergeInsert(String(flags.on).split(",")).whenMatchedUpdateAll().whenNotMatchedInsertAll();
    if (flags["delete-not-matched"]) b = b.whenNotMatchedBySourceDelete();
    const r = await L("mergeInsert", () => b.execute(buf));
    return afterWrite(t, {
      inserted: r?.numInsertedRows ?? null,
      updated: r?.numUpdatedRows ?? null,
      deleted: r?.numDeletedRows ?? null,
    });
  } finally {
    ds.cleanup();
  }
}

async function withTable(mods, dir, fn) {
  const ds = new Dataset(mods, dir);
  try {
    const t = await ds.open();
    return await fn(t);
  } finally {
    ds.cleanup();
  }
}

async function cmdTag(mods, pos, flags, which) {
  if (which === "delete") need(pos, 2, "tag-delete DIR NAME");
  else need(pos, 3, `tag-${which} DIR NAME VERSION`);
  return withTable(mods, pos[0], async (t) => {
    const tags = await L("tags", () => t.tags());
    if (which === "create") await L("tagCreate", () => tags.create(pos[1], intArg(pos[2], "VERSION")));
    if (which === "update") await L("tagUpdate", () => tags.update(pos[1], intArg(pos[2], "VERSION")));
    if (which === "delete") await L("tagDelete", () => tags.delete(pos[1]));
    return afterWrite(t);
  });
}

async function cmdTags(mods, pos) {
  need(pos, 1, "tags DIR");
  return withTable(mods, pos[0], async (t) => {
    const list = await L("tags", async () => (await t.tags()).list());
    const out = {};
    for (const name of Object.keys(list).sort()) out[name] = { version: list[name].version, manifest_size: list[name].manifestSize };
    return { tags: out };
  });
}

async function cmdRestore(mods, pos, flags) {
  need(pos, 2, "restore DIR VERSION|TAG");
  return withTable(mods, pos[0], async (t) => {
    const target = /^[0-9]+$/.test(pos[1]) ? Number(pos[1]) : pos[1];
    await L("checkout", () => t.checkout(target));
    await L("restore", () => t.restore());
    return afterWrite(t);
  });
}

function indexConfig(lancedb, type) {
  switch (type) {
    case "btree": return lancedb.Index.btree();
    case "bitmap": return lancedb.Index.bitmap();
    case "label_list": return lancedb.Index.labelList();
    case "fts": return lancedb.Index.fts();
    case "ivf_flat": return lancedb.Index.ivfFlat();
    case "ivf_pq": return lancedb.Index.ivfPq();
    default: throw new UsageError(`--type must be btree, bitmap, label_list, fts, ivf_flat or ivf_pq; got ${type}`);
  }
}

async function cmdCreateIndex(mods, pos, flags) {
  need(pos, 2, "create-index DIR COL --type btree|bitmap|label_list|fts|ivf_flat|ivf_pq [--name N] [--replace]");
  const cfg = indexConfig(mods.lancedb, flags.type ?? "btree");
  return withTable(mods, pos[0], async (t) => {
    const opts = { config: cfg, replace: !!flags.replace };
    if (flags.name !== undefined) opts.name = String(flags.name);
    await L("createIndex", () => t.createIndex(pos[1], opts));
    return afterWrite(t);
  });
}

async function cmdDropIndex(mods, pos) {
  need(pos, 2, "drop-index DIR NAME");
  return withTable(mods, pos[0], async (t) => {
    await L("dropIndex", () => t.dropIndex(pos[1]));
    return afterWrite(t);
  });
}

async function cmdOptimize(mods, pos, flags) {
  need(pos, 1, "optimize DIR [--cleanup-older-than-ms EPOCH_MS] [--delete-unverified]");
  return withTable(mods, pos[0], async (t) => {
    const before = flags["cleanup-older-than-ms"] !== undefined ? intArg(flags["cleanup-older-than-ms"], "--cleanup-older-than-ms") : undefined;
    const s = await L("optimize", () => t.inner.optimize(before, !!flags["delete-unverified"]));
    return afterWrite(t, {
      compaction: s?.compaction ?? null,
      prune: s?.prune ?? null,
    });
  });
}

async function cmdAddColumns(mods, pos, flags) {
  need(pos, 1, "add-columns DIR (--sql NAME=SQL... | --schema-ipc FILE.arrow)");
  return withTable(mods, pos[0], async (t) => {
    if (flags.sql) {
      const tr = flags.sql.map((s) => {
        const eq = s.indexOf("=");
        if (eq <= 0) throw new UsageError(`--sql wants NAME=SQL, got ${s}`);
        return { name: s.slice(0, eq), valueSql: s.slice(eq + 1) };
      });
      await L("addColumns", () => t.inner.addColumns(tr));
    } else if (flags["schema-ipc"] !== undefined) {
      const buf = readInput(flags["schema-ipc"]);
      await L("addColumns", () => t.inner.addColumnsWithSchema(buf));
    } else {
      throw new UsageError("add-columns needs --sql NAME=SQL or --schema-ipc FILE");
    }
    return afterWrite(t);
  });
}

async function cmdDropColumns(mods, pos) {
  need(pos, 2, "drop-columns DIR COL...");
  return withTable(mods, pos[0], async (t) => {
    await L("dropColumns", () => t.dropColumns(pos.slice(1)));
    return afterWrite(t);
  });
}

async function cmdAlterColumns(mods, pos, flags) {
  need(pos, 1, "alter-columns DIR --json '[{\"path\":\"a\",\"rename\":\"b\",\"nullable\":true,\"dataType\":\"int64\"}]'");
  if (flags.json === undefined) throw new UsageError("alter-columns needs --json");
  const alts = JSON.parse(flags.json === "-" ? readFileSync(0, "utf8") : flags.json);
  return withTable(mods, pos[0], async (t) => {
    await L("alterColumns", () => t.alterColumns(alts));
    return afterWrite(t);
  });
}

async function cmdClone(mods, pos, flags) {
  need(pos, 2, "clone SRC DST [--version N | --tag T] [--deep]");
  const src = resolve(pos[0]);
  USED_PATHS.add(src);
  const dst = new Dataset(mods, pos[1]);
  try {
    dst.link(true);
    const db = await dst.connect();
    const opts = { isShallow: !flags.deep };
    if (flags.version !== undefined) opts.sourceVersion = intArg(flags.version, "--version");
    if (flags.tag !== undefined) opts.sourceTag = String(flags.tag);
    const t = await L("cloneTable", () => db.cloneTable(dst.name, src, opts));
    return { ok: true, version: await L("version", () => t.version()) };
  } finally {
    dst.cleanup();
  }
}

async function cmdCount(mods, pos, flags) {
  need(pos, 1, "count DIR [--version N | --tag T] [--where PRED]");
  const ds = new Dataset(mods, pos[0]);
  try {
    const t = await ds.openAt(flags);
    const n = await L("countRows", () => t.countRows(flags.where === undefined ? undefined : String(flags.where)));
    return { version: await L("version", () => t.version()), row_count: n };
  } finally {
    ds.cleanup();
  }
}

// script DIR: stdin is a JSON array of argv arrays without DIR, e.g.
// [["create","--ipc","a.arrow"],["delete","--where","id < 3"],["tag-create","t","2"]].
// DIR is inserted as each command's first positional argument (for clone it is the SRC).
async function cmdScript(mods, pos) {
  need(pos, 1, "script DIR < steps.json");
  const steps = JSON.parse(readFileSync(0, "utf8"));
  if (!Array.isArray(steps) || !steps.every((s) => Array.isArray(s) && s.length > 0 && s.every((x) => typeof x === "string"))) {
    throw new UsageError("script stdin must be a JSON array of non-empty string arrays");
  }
  const results = [];
  for (let i = 0; i < steps.length; i++) {
    const [cmd, ...rest] = steps[i];
    if (cmd === "script") throw new UsageError("script steps cannot nest script");
    const { pos: p, flags } = parseArgs(rest);
    try {
      results.push(await dispatch(mods, cmd, [pos[0], ...p], flags));
    } catch (e) {
      if (e instanceof LanceError) {
        e.step = i;
        e.results = results;
      }
      throw e;
    }
  }
  return { ok: true, results };
}

const COMMANDS = {
  info: cmdInfo,
  rows: cmdRows,
  "rows-many": cmdRowsMany,
  count: cmdCount,
  tags: cmdTags,
  create: cmdCreate,
  append: cmdAppend,
  delete: cmdDelete,
  update: cmdUpdate,
  upsert: cmdUpsert,
  "tag-create": (m, p, f) => cmdTag(m, p, f, "create"),
  "tag-update": (m, p, f) => cmdTag(m, p, f, "update"),
  "tag-delete": (m, p, f) => cmdTag(m, p, f, "delete"),
  restore: cmdRestore,
  "create-index": cmdCreateIndex,
  "drop-index": cmdDropIndex,
  optimize: cmdOptimize,
  "add-columns": cmdAddColumns,
  "drop-columns": cmdDropColumns,
  "alter-columns": cmdAlterColumns,
  clone: cmdClone,
  script: cmdScript,
};
for (const [k, fn] of Object.entries(indexCommands({ Dataset, L, need, intArg, UsageError }))) {
  if (!k.startsWith("_")) COMMANDS[k] = fn;
}
for (const [k, fn] of Object.entries(benchCommands({ Dataset, L, need, intArg, UsageError, readInput }))) COMMANDS[k] = fn;

async function dispatch(mods, cmd, pos, flags) {
  const fn = COMMANDS[cmd];
  if (!fn) throw new UsageError(`unknown command ${JSON.stringify(cmd)}; commands: ${Object.keys(COMMANDS).join(", ")}, serve, version, modules, help`);
  return fn(mods, pos, flags);
}

function help() {
  return readFileSync(join(HERE, "README.md"), "utf8");
}

// emit writes to stdout and resolves once the data reached the OS: node may
// queue pipe writes, and process.exit() would drop whatever is still queued.
function emit(text, stream = process.stdout) {
  return new Promise((res, rej) => stream.write(text, (err) => (err ? rej(err) : res())));
}

// errorDoc renders a failure as [exit code, JSON document or null, stderr text].
function errorDoc(e) {
  if (e instanceof LanceError) {
    const o = { error: e.message, op: e.op, paths: [...USED_PATHS] };
    if (e.step !== undefined) {
      o.step = e.step;
      o.results = e.results;
    }
    return [EXIT_LANCE, o, ""];
  }
  if (e instanceof UsageError) return [EXIT_USAGE, null, `peer: ${e.message}`];
  return [EXIT_DRIVER, null, `peer: driver error: ${e && e.stack ? e.stack : e}`];
}

// serve answers requests from stdin, one per line, in order, until EOF:
//   request:  ["COMMAND", "ARG", ...]            (commands that read stdin are refused)
//   response: {"code": 0, "result": {...}} | {"code": 3, "result": {"error": ...}}
//             | {"code": 1|2, "stderr": "..."}
// It saves loading node and Lance for every command.
async function serve(mods) {
  const { createInterface } = await import("node:readline");
  const rl = createInterface({ input: process.stdin, crlfDelay: Infinity });
  for await (const line of rl) {
    if (line.trim() === "") continue;
    let resp;
    USED_PATHS.clear();
    try {
      const argv = JSON.parse(line);
      if (!Array.isArray(argv) || argv.length === 0 || !argv.every((x) => typeof x === "string")) {
        throw new UsageError("serve request must be a non-empty JSON array of strings");
      }
      const [cmd, ...rest] = argv;
      if (cmd === "script" || cmd === "serve" || rest.includes("-")) throw new UsageError(`${cmd} ${rest.join(" ")}: stdin is not available in serve mode`);
      const { pos, flags } = parseArgs(rest);
      resp = { code: 0, result: await dispatch(mods, cmd, pos, flags) };
    } catch (e) {
      const [code, doc, stderr] = errorDoc(e);
      resp = doc ? { code, result: doc } : { code, stderr };
    }
    await emit(`${JSON.stringify(resp)}\n`);
  }
  return 0;
}

async function main() {
  const argv = process.argv.slice(2);
  const cmd = argv[0];
  if (!cmd || cmd === "help" || cmd === "--help") {
    await emit(help());
    return 0;
  }
  if (cmd === "modules") {
    await emit(`${JSON.stringify({ modules: modulesDir() })}\n`);
    return 0;
  }
  const mods = loadModules();
  if (cmd === "version") {
    const ver = (p) => JSON.parse(readFileSync(join(modulesDir(), p, "package.json"), "utf8")).version;
    const out = {
      lancedb: ver("@lancedb/lancedb"),
      apache_arrow: ver("apache-arrow"),
      node: process.version,
      modules: modulesDir(),
    };
    await emit(`${JSON.stringify(out)}\n`);
    return 0;
  }
  if (cmd === "serve") return serve(mods);
  try {
    const { pos, flags } = parseArgs(argv.slice(1));
    const out = await dispatch(mods, cmd, pos, flags);
    await emit(`${JSON.stringify(out)}\n`);
    return 0;
  } catch (e) {
    const [code, doc, stderr] = errorDoc(e);
    if (doc) await emit(`${JSON.stringify(doc)}\n`);
    if (stderr) await emit(`${stderr}\n`, process.stderr);
    return code;
  }
}

process.exit(await main());
