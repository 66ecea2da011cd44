// Package commit turns transactions into new versions of a Lance dataset.
//
// A transaction (Append, Overwrite, Delete, CreateIndex, UpdateConfig,
// ReserveFragments, Restore, Clone) is built against a read version. Commit
// writes its `_transactions/{read_version}-{uuid}.txn` file, builds the next
// manifest from the latest version (lance-table-format.md §5.5, §8.3),
// recomputes the derived feature-flag bits and carries the sticky paired
// ones, and publishes the manifest with the store's atomic create-if-absent.
// When another writer won the race, the transactions of the newer versions
// are checked against the conflict matrix (§5.4): compatible ones are
// skipped, rebasable ones (Delete against Delete) are merged, and the rest
// fail with an error wrapping ErrConflict. On local stores the hint file
// _versions/latest_version_hint.json is written last and only as an
// optimisation, as Lance does (lance-table-format.md §4.5).
//
// Zone write seeds (zone-seeds.md R53–R62): a commit whose new data files
// carry v1 seeds sets FLAG_ZONE_WRITE_SEEDS in both flag words, re-derived on
// every attempt (Q18); it is refused unless the caller opted in or the
// dataset already carries the pair. No commit ever clears the pair.
//
// WriteArrow is the end-to-end write path: Arrow record batches to v2.0 data
// files (with optional v1 seeds) to a committed version. Its first half,
// WriteFragments, writes the data files and commits nothing, for callers
// that commit elsewhere (coordclient sends them to a coordinator).
//
// Building a manifest applies the transaction's operation with one apply
// function per operation (apply_<operation>.go) to a builder (build.go);
// fragment-id and row-id rules are in rowids.go, config and metadata rules
// in config.go.
//
// The package exports more than 60 names because OpKind enumerates the 16
// operation arms of lance.table.Transaction (plus OpUnknown), one constant
// each, as the conflict matrix (§5.4) and Transaction.Kind name them;
// without them it exports about 58.
package commit
