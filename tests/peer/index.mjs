// Peer commands about scalar indices (ZoneMap segments lancekeeper writes,
// Lance's own BTree builds), imported by peer.mjs.
//
//   explain DIR --where PRED [--version N] [--analyze] [--column C]...
//       {plan, analyze?, scalar_index_queries: [{query, index, type}]}:
//       Lance's physical plan for a filtered scan (explainPlan(true)), with
//       --analyze also the executed plan and its metrics (analyzePlan), and
//       every ScalarIndexQuery node parsed out of the plan.
//   index-stats DIR NAME
//       {name, stats}: Table.indexStats(NAME) (type, rows indexed, segments).
//   filter DIR --where PRED [--version N] [--column C]...
//       {version, num_rows, row_addrs, plan_uses: [...]}: the row addresses a
//       filtered scan returns, sorted, and the scalar index queries the plan
//       used — one call answers "which rows" and "through which index".
//   nearest DIR --column C --dim N [--fill X] [--k K] [--nprobes P] [--version N] [--flat]
//       {num_rows, row_ids, distances, plan}: a vector query (the vector of
//       N times X, default 0.5) through Lance's index (--flat: bypassing
//       it), _rowid and _distance of the K (default 10) nearest rows in
//       Lance's order, and the plan.
//   time-btree DIR COL [--name N]
//       {seconds}: wall time of Lance building a BTree index on COL.

// parseScalarIndexQueries extracts "ScalarIndexQuery: query=[...]@name(Type)"
// nodes from a plan.
export function parseScalarIndexQueries(plan) {
  const out = [];
  const re = /ScalarIndexQuery: (?:elapsed=[^,]*, )?query=\[(.*?)\]@([^\s(]+)\((\w+)\)/g;
  for (const line of String(plan).split("\n")) {
    re.lastIndex = 0;
    let m;
    while ((m = re.exec(line)) !== null) out.push({ query: m[1], index: m[2], type: m[3] });
  }
  return out;
}

export function indexCommands(h) {
  const { Dataset, L, need } = h;

  function query(t, flags) {
    const q = t.query();
    if (flags.where === undefined) throw new h.UsageError("--where PRED is required");
    q.where(String(flags.where));
    if (flags.column) q.select(flags.column);
    return q;
  }

  async function cmdExplain(mods, pos, flags) {
    need(pos, 1, "explain DIR --where PRED [--version N] [--analyze] [--column C]...");
    const ds = new Dataset(mods, pos[0]);
    try {
      const t = await ds.openAt(flags);
      const plan = await L("explainPlan", () => query(t, flags).explainPlan(true));
      const out = { plan, scalar_index_queries: parseScalarIndexQueries(plan) };
      if (flags.analyze) out.analyze = await L("analyzePlan", () => query(t, flags).analyzePlan());
      return out;
    } finally {
      ds.cleanup();
    }
  }

  async function cmdIndexStats(mods, pos) {
    need(pos, 2, "index-stats DIR NAME");
    const ds = new Dataset(mods, pos[0]);
    try {
      const t = await ds.open();
      const s = await L("indexStats", () => t.indexStats(pos[1]));
      return { name: pos[1], stats: s ?? null };
    } finally {
      ds.cleanup();
    }
  }

  async function cmdFilter(mods, pos, flags) {
    need(pos, 1, "filter DIR --where PRED [--version N] [--column C]...");
    const ds = new Dataset(mods, pos[0]);
    try {
      const t = await ds.openAt(flags);
      const version = await L("version", () => t.version());
      const q = query(t, flags);
      q.select([...(flags.column ?? []), "_rowaddr"]);
      const acc = { schema: null, columns: null, numRows: 0, dictionaries: new Map() };
      const it = await L("query", () => q.nativeExecute());
      for (;;) {
        const buf = await L("query", () => it.next());
        if (!buf) break;
        mods.ipc.decode(buf, acc);
      }
      const names = acc.schema ? acc.schema.fields.map((f) => f.name) : [];
      const ai = names.indexOf("_rowaddr");
      const addrs = ai >= 0 ? acc.columns[ai].map((a) => BigInt(a)) : [];
      addrs.sort((a, b) => (a < b ? -1 : a > b ? 1 : 0));
      const plan = await L("explainPlan", () => query(t, flags).explainPlan(true));
      return {
        version,
        num_rows: acc.numRows,
        row_addrs: addrs.map((a) => a.toString()),
        plan_uses: parseScalarIndexQueries(plan),
      };
    } finally {
      ds.cleanup();
    }
  }

  async function cmdNearest(mods, pos, flags) {
    need(pos, 1, "nearest DIR --column C --dim N [--fill X] [--k K] [--nprobes P] [--version N] [--flat]");
    if (flags.column === undefined || flags.dim === undefined) throw new h.UsageError("--column C and --dim N are required");
    const ds = new Dataset(mods, pos[0]);
    try {
      const t = await ds.openAt(flags);
      const vec = new Array(Number(flags.dim)).fill(flags.fill === undefined ? 0.5 : Number(flags.fill));
      const build = () => {
        const q = t.query().nearestTo(vec).column(String([flags.column].flat()[0])).limit(Number(flags.k ?? 10)).withRowId();
        if (flags.nprobes !== undefined) q.nprobes(Number(flags.nprobes));
        if (flags.flat) q.bypassVectorIndex();
        return q;
      };
      const acc = { schema: null, columns: null, numRows: 0, dictionaries: new Map() };
      const it = await L("query", () => build().nativeExecute());
      for (;;) {
        const buf = await L("query", () => it.next());
        if (!buf) break;
        mods.ipc.decode(buf, acc);
      }
      const names = acc.schema ? acc.schema.fields.map((f) => f.name) : [];
      const col = (n) => (names.indexOf(n) >= 0 ? acc.columns[names.indexOf(n)] : []);
      const plan = await L("explainPlan", () => build().explainPlan(true));
      return {
        num_rows: acc.numRows,
        row_ids: col("_rowid").map((a) => BigInt(a).toString()),
        distances: col("_distance").map((d) => d?.f32 ?? d?.f64 ?? null),
        plan,
      };
    } finally {
      ds.cleanup();
    }
  }

  async function cmdTimeBTree(mods, pos, flags) {
    need(pos, 2, "time-btree DIR COL [--name N]");
    const ds = new Dataset(mods, pos[0]);
    try {
      const t = await ds.open();
      const opts = { config: mods.lancedb.Index.btree(), replace: true };
      if (flags.name !== undefined) opts.name = String(flags.name);
      const t0 = process.hrtime.bigint();
      await L("createIndex", () => t.createIndex(pos[1], opts));
      const ns = process.hrtime.bigint() - t0;
      return { seconds: Number(ns) / 1e9 };
    } finally {
      ds.cleanup();
    }
  }

  return {
    explain: cmdExplain,
    "index-stats": cmdIndexStats,
    filter: cmdFilter,
    nearest: cmdNearest,
    "time-btree": cmdTimeBTree,
  };
}
