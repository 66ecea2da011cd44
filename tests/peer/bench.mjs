// Timed peer commands for the A/B benchmark harness (tests/bench), imported
// by peer.mjs. Each runs an operation N times inside this node process and
// reports the elapsed time measured here, so starting node and the request
// itself never count:
//
//   bench-append DIR --ipc F.arrow [--n N] [--writers W]
//       N appends of the IPC file's rows (Table.add, mode append), one table
//       handle opened before the clock starts, as an application would;
//       with W writers, W handles append concurrently (N each; ops = N*W).
//       metrics.cpu_s: CPU time of this node process (process.cpuUsage).
//   bench-count DIR [--n N]
//       N times: a fresh connection, open the table at its latest version,
//       countRows() — the cost of discovering and loading the latest version.
//   bench-create DIR --ipc F.arrow [--storage-version V] [--n N]
//       N times: create DIR (mode overwrite after the first) from the IPC
//       file's rows; the file is read into memory before the clock starts.
//       metrics.cpu_s: CPU time of this node process (process.cpuUsage).
//   bench-optimize DIR [--cleanup-older-than-ms EPOCH_MS] [--n 0|1]   (metrics.cpu_s too)
//       one optimize() (compaction, index optimization, cleanup of versions
//       older than the cutoff — 7 days when absent), the table opened
//       before the clock starts; --n 0 opens the table and stops.
//   bench-optimize-uri URI NAME [--cleanup-older-than-ms EPOCH_MS] [--n 0|1]
//       [--storage-option K=V ...]
//       bench-optimize on an object-store table (see bench-count-uri);
//       --n 0 opens the table and stops (its requests are the open's).
//
// Result: {ns, ops, metrics?} with ns a decimal string (nanoseconds).

export function benchCommands(h) {
  const { Dataset, L, need, intArg } = h;

  const count = (flags) => (flags.n === undefined ? 1 : intArg(flags.n, "--n"));

  async function cmdBenchAppend(mods, pos, flags) {
    need(pos, 1, "bench-append DIR --ipc F.arrow [--n N] [--writers W]");
    if (flags.ipc === undefined) throw new h.UsageError("bench-append needs --ipc");
    const n = count(flags);
    const writers = flags.writers === undefined ? 1 : intArg(flags.writers, "--writers");
    const buf = h.readInput(flags.ipc);
    const ds = new Dataset(mods, pos[0]);
    try {
      const tables = [];
      for (let w = 0; w < writers; w++) tables.push(await ds.open());
      const c0 = process.cpuUsage();
      const t0 = process.hrtime.bigint();
      await Promise.all(tables.map(async (t) => {
        for (let i = 0; i < n; i++) await L("add", () => t.inner.add(buf, "append"));
      }));
      const ns = process.hrtime.bigint() - t0;
      const c = process.cpuUsage(c0);
      return { ns: ns.toString(), ops: n * writers, metrics: { cpu_s: (c.user + c.system) / 1e6 } };
    } finally {
      ds.cleanup();
    }
  }

  async function cmdBenchCount(mods, pos, flags) {
    need(pos, 1, "bench-count DIR [--n N]");
    const n = count(flags);
    let rows = 0;
    const t0 = process.hrtime.bigint();
    for (let i = 0; i < n; i++) {
      const ds = new Dataset(mods, pos[0]);
      try {
        const t = await ds.open();
        rows = await L("countRows", () => t.countRows());
      } finally {
        ds.cleanup();
      }
    }
    const ns = process.hrtime.bigint() - t0;
    return { ns: ns.toString(), ops: n, metrics: { rows: rows * n } };
  }

  async function cmdBenchCreate(mods, pos, flags) {
    need(pos, 1, "bench-create DIR --ipc F.arrow [--storage-version V] [--n N]");
    if (flags.ipc === undefined) throw new h.UsageError("bench-create needs --ipc");
    const n = count(flags);
    const buf = h.readInput(flags.ipc);
    const so = {};
    if (flags["storage-version"] !== undefined) so.new_table_data_storage_version = String(flags["storage-version"]);
    const ds = new Dataset(mods, pos[0]);
    try {
      ds.link(true);
      const db = await ds.connect();
      const c0 = process.cpuUsage();
      const t0 = process.hrtime.bigint();
      for (let i = 0; i < n; i++) {
        await L("createTable", () => db.inner.createTable(ds.name, buf, "overwrite", [], so));
      }
      const ns = process.hrtime.bigint() - t0;
      const c = process.cpuUsage(c0);
      return { ns: ns.toString(), ops: n, metrics: { cpu_s: (c.user + c.system) / 1e6 } };
    } finally {
      ds.cleanup();
    }
  }

  // bench-scan DIR --column C... [--where PRED] [--n N] [--analyze]: N
  // scans of the columns (a query selecting them, filtered by PRED when
  // given, every batch pulled out of Lance as Arrow IPC, not decoded in
  // JS), one table handle opened before the clock starts.
  // metrics.ipc_bytes: the Arrow IPC bytes Lance returned (all scans);
  // with --analyze, after the
  // clock, one analyzePlan of the same query: metrics.bytes_read and
  // metrics.iops summed over the plan's nodes (Lance's own I/O counters
  // for one scan), metrics.rows the rows of the plan's top node.
  async function cmdBenchScan(mods, pos, flags) {
    need(pos, 1, "bench-scan DIR --column C... [--where PRED] [--n N] [--analyze]");
    if (flags.column === undefined) throw new h.UsageError("bench-scan needs --column");
    const n = count(flags);
    const ds = new Dataset(mods, pos[0]);
    const query = (t) => {
      const q = t.query();
      q.select(flags.column.map(String));
      if (flags.where !== undefined) q.where(String(flags.where));
      return q;
    };
    try {
      const t = await ds.open();
      let bytes = 0;
      let rows = 0;
      const t0 = process.hrtime.bigint();
      for (let i = 0; i < n; i++) {
        const it = await L("query", () => query(t).nativeExecute());
        for (;;) {
          const buf = await L("query", () => it.next());
          if (!buf) break;
          bytes += buf.length;
        }
      }
      const ns = process.hrtime.bigint() - t0;
      const metrics = { ipc_bytes: bytes };
      if (flags.analyze) {
        const plan = String(await L("analyzePlan", () => query(t).analyzePlan()));
        metrics.bytes_read = sumMetric(plan, "bytes_read");
        metrics.iops = sumMetric(plan, "iops");
        metrics.rows = sumMetric(plan.split("\n").find((l) => l.includes("output_rows=")) ?? "", "output_rows");
      }
      return { ns: ns.toString(), ops: n, metrics };
    } finally {
      ds.cleanup();
    }
  }

  // sumMetric adds every "name=N" (N possibly with a unit suffix K/M/G) of
  // an analyzed plan's text.
  function sumMetric(text, name) {
    const re = new RegExp("\\b" + name + "=([0-9.]+)\\s*([KMG]?)", "g");
    let sum = 0;
    let m;
    while ((m = re.exec(text)) !== null) {
      const mul = { "": 1, K: 1e3, M: 1e6, G: 1e9 }[m[2]];
      sum += Number(m[1]) * mul;
    }
    return sum;
  }

  async function cmdBenchOptimize(mods, pos, flags) {
    need(pos, 1, "bench-optimize DIR [--cleanup-older-than-ms EPOCH_MS] [--n 0|1]");
    const before = flags["cleanup-older-than-ms"] !== undefined ? intArg(flags["cleanup-older-than-ms"], "--cleanup-older-than-ms") : undefined;
    const ds = new Dataset(mods, pos[0]);
    try {
      const t = await ds.open();
      if (count(flags) === 0) return { ns: "0", ops: 0 };
      const c0 = process.cpuUsage();
      const t0 = process.hrtime.bigint();
      const s = await L("optimize", () => t.inner.optimize(before, false));
      const ns = process.hrtime.bigint() - t0;
      const c = process.cpuUsage(c0);
      return {
        ns: ns.toString(),
        ops: 1,
        metrics: {
          fragments_removed: s?.compaction?.fragmentsRemoved ?? 0,
          versions_removed: s?.prune?.oldVersionsRemoved ?? 0,
          cpu_s: (c.user + c.system) / 1e6,
        },
      };
    } finally {
      ds.cleanup();
    }
  }

  // Object-store tables (s3://…): a connection at URI (the table's parent)
  // with storage options, the table NAME inside it.
  function uriStorageOptions(flags) {
    const so = {};
    for (const kv of flags["storage-option"] ?? []) {
      const eq = kv.indexOf("=");
      if (eq <= 0) throw new h.UsageError(`--storage-option wants KEY=VALUE, got ${kv}`);
      so[kv.slice(0, eq)] = kv.slice(eq + 1);
    }
    return so;
  }

  async function cmdBenchCountURI(mods, pos, flags) {
    need(pos, 2, "bench-count-uri URI NAME [--n N] [--storage-option K=V ...]");
    const n = count(flags);
    const so = uriStorageOptions(flags);
    let rows = 0;
    const t0 = process.hrtime.bigint();
    for (let i = 0; i < n; i++) {
      const db = await L("connect", () => mods.lancedb.connect(pos[0], { storageOptions: so }));
      const t = await L("open", () => db.openTable(pos[1]));
      rows = await L("countRows", () => t.countRows());
    }
    const ns = process.hrtime.bigint() - t0;
    return { ns: ns.toString(), ops: n, metrics: { rows: rows * n } };
  }

  async function cmdBenchOptimizeURI(mods, pos, flags) {
    need(pos, 2, "bench-optimize-uri URI NAME [--cleanup-older-than-ms EPOCH_MS] [--n 0|1] [--storage-option K=V ...]");
    const before = flags["cleanup-older-than-ms"] !== undefined ? intArg(flags["cleanup-older-than-ms"], "--cleanup-older-than-ms") : undefined;
    const n = count(flags);
    const db = await L("connect", () => mods.lancedb.connect(pos[0], { storageOptions: uriStorageOptions(flags) }));
    const t = await L("open", () => db.openTable(pos[1]));
    if (n === 0) return { ns: "0", ops: 0 };
    const c0 = process.cpuUsage();
    const t0 = process.hrtime.bigint();
    const s = await L("optimize", () => t.inner.optimize(before, false));
    const ns = process.hrtime.bigint() - t0;
    const c = process.cpuUsage(c0);
    return {
      ns: ns.toString(),
      ops: 1,
      metrics: {
        fragments_removed: s?.compaction?.fragmentsRemoved ?? 0,
        versions_removed: s?.prune?.oldVersionsRemoved ?? 0,
        cpu_s: (c.user + c.system) / 1e6,
      },
    };
  }

  async function cmdBenchAppendURI(mods, pos, flags) {
    need(pos, 2, "bench-append-uri URI NAME --ipc F.arrow [--n N] [--storage-option K=V ...]");
    if (flags.ipc === undefined) throw new h.UsageError("bench-append-uri needs --ipc");
    const n = count(flags);
    const buf = h.readInput(flags.ipc);
    const db = await L("connect", () => mods.lancedb.connect(pos[0], { storageOptions: uriStorageOptions(flags) }));
    const t = await L("open", () => db.openTable(pos[1]));
    const t0 = process.hrtime.bigint();
    for (let i = 0; i < n; i++) await L("add", () => t.inner.add(buf, "append"));
    const ns = process.hrtime.bigint() - t0;
    return { ns: ns.toString(), ops: n };
  }

  return {
    "bench-count-uri": cmdBenchCountURI,
    "bench-append-uri": cmdBenchAppendURI,
    "bench-optimize-uri": cmdBenchOptimizeURI,
    "bench-scan": cmdBenchScan,
    "bench-optimize": cmdBenchOptimize,
    "bench-append": cmdBenchAppend,
    "bench-count": cmdBenchCount,
    "bench-create": cmdBenchCreate,
  };
}
