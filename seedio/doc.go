// Package seedio implements zone write seeds: per-zone column statistics that a
// writer stores in a Lance v2 data file next to the column they describe, and
// that readers use to skip zones.
//
// The rules live in the seed specification (zone-seeds.md, requirements
// R1–R66). This package covers both sides of the format:
//
// Writer side (version 1 seeds):
//   - [Collector] observes one column batch by batch, cuts it into zones of
//     rows_per_zone rows (zones span batch boundaries, R19/R49) and computes,
//     per zone, exact logical null counts (R24), NaN counts by sign for float
//     columns (R25–R27), and bounds in Arrow Rust order (R29, §4): IEEE
//     totalOrder for floats with NaN excluded (R31) and signed zeros widened
//     (R39), unsigned bytewise order for strings and binaries, truncated to a
//     configurable length (§6.2). Memory is proportional to the number of
//     zones, never to the number of rows: input arrays are not retained.
//   - [Collector.Finish] encodes the result as a complete, uncompressed Arrow
//     IPC file with exactly one record batch and the version-1 schema
//     (R9–R18, built by [SeedSchema]), including the hex-encoded portable
//     Roaring bitmap of null row offsets ([EncodeNullBitmapHex], R41–R48).
//   - [LocatorKey] and [FormatLocator] give the data-file schema-metadata entry
//     that points at the seed (R1, R2); [ParseLocator] parses it strictly.
//   - The bound order ([CompareValues], [SupportsBounds], [CountsNaN]) is
//     shared with the reader side; float bit-pattern order and NaN tests
//     live in internal/floatorder, bound truncation in internal/truncate.
//
// Reader side: decoding of v0 and v1 seeds, validation with the E-error
// catalogue, pruning and aggregation (see the decode, validate, prune and
// aggregate files of this package).
package seedio
