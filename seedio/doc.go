// Package seedio implements zone write seeds: per-zone column statistics that a
// writer stores in a Lance v2 data file next to the column they describe, and
// that readers use to skip zones.
//
// The rules live in the seed specification (zone-seeds.md, requirements
// R1–R66). One Seed type, made of Zones (each a Stats of one zone), is shared
// by both sides of the format, as archive/zip's Reader and Writer share
// FileHeader:
//
//   - [Collector] observes one column batch by batch, cuts it into zones of
//     rows_per_zone rows (zones span batch boundaries, R19/R49) and computes,
//     per zone, exact logical null counts (R24), NaN counts by sign for float
//     columns (R25–R27), and bounds in Arrow Rust order (R29, §4): IEEE
//     totalOrder for floats with NaN excluded (R31) and signed zeros widened
//     (R39), unsigned bytewise order for strings and binaries, truncated to a
//     configurable length (§6.2). Memory is proportional to the number of
//     zones, never to the number of rows: input arrays are not retained.
//     [Collector.Finish] returns an [EncodedSeed]: the IPC bytes and the Seed
//     they encode; [Collector.AppendFinish] appends the same bytes to a
//     caller's buffer without building the Seed, reusing its working memory
//     from one data file to the next (what the data-file writer calls).
//   - [Encode] writes a Seed as a complete, uncompressed Arrow IPC file with
//     exactly one record batch and the version-1 schema (R9–R18), including
//     the hex-encoded portable Roaring bitmap of null row offsets (R41–R48).
//     [Decode] reads v0 and v1 seeds back into a Seed, validating them with
//     the E01–E26 error catalogue (§5.1, §5.2); Decode(Encode(s)) gives s.
//   - [LocatorKey] and [FormatLocator] give the data-file schema-metadata entry
//     that points at the seed (R1, R2); [ParseLocator] parses it strictly.
//   - [Seed.Prune], [PruneZones] and [PruneStats] tell which zones a
//     [Predicate] keeps (§5.4); [Aggregate] folds zones into coarser Stats.
//   - The bound order ([CompareValues], [ValueAt], [SupportsBounds],
//     [CountsNaN]) is the one both sides use. Float bit-pattern order and NaN
//     tests live in internal/floatorder, bound truncation in
//     internal/truncate, and the Arrow IPC walk of the container check in
//     internal/arrowipc.
//
// Speed: the collectors' hot loops (int/float min-max, masked by validity;
// the utf8/binary candidate filter) run SIMD kernels (minmax_amd64.s)
// chosen once from the CPU's features — AVX2, AVX-512, and for the string
// filter AVX-512 VBMI (byte permutes build eight 8-byte big-endian value
// prefixes per step) — and portable Go loops elsewhere or with -tags noasm.
// The result never depends on the kernel: the property, fuzz and
// prefix-filter tests compare every path with a naive reference.
//
// The package exports more than 60 names because of the error catalogue:
// the 26 sentinel errors ErrSeed… of E01–E26 are named by the
// specification (§5.2), and callers match them with errors.Is; without them
// it exports about 50.
package seedio
