// Package lancekeeper is the one import for programs that embed lancekeeper:
// open or create a Lance dataset, append and overwrite Arrow record batches
// (with zone write seeds v1 and their explicit activation), list versions,
// check out a version, tag or branch, manage tags and branches, clone,
// restore, ask which fragments and zones a predicate keeps, scan rows with
// a filter, delete by predicate, compact, backfill seeds, clean up old
// versions and check a version against its files. docs/library.md describes it; every journey is an Example.
//
// A *Dataset is one version of a dataset, as in pylance or iceberg-go's
// Table: reading methods describe that version, and every method that
// commits returns a new *Dataset at the version it made. The handles that
// Open or Create returns and every handle derived from them share one
// storage handle; Close it once, on any of them, when done. Base paths
// (shallow clones, branches) are resolved inside with the dataset URL's
// endpoint and options, and the feature-flag state is decided inside: a
// version whose flags this build does not support is refused with an error
// that matches ErrUnsupported (or ErrHalfSet), and seeds written to a table
// without FLAG_ZONE_WRITE_SEEDS need the explicit ActivateZoneWriteSeeds
// (zone-seeds.md R56), else the error matches ErrSeedsNotEnabled.
//
// Options are one Option type shared by every call (AtVersion, WithSeeds,
// Deep, …); an option a call does not use is refused with ErrInvalidOption
// rather than ignored. Results are plain Go structs; no generated protobuf
// type appears in this package's API. The errors of the packages underneath
// stay typed: the sentinels below are those packages' own values, so
// errors.Is works with either name.
//
// The packages underneath (store, commit, snapshot, seedio, datafile, …)
// remain available for what the facade does not cover.
package lancekeeper

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/apache/arrow-go/v18/arrow/array"

	"github.com/lancekeeper/lancekeeper/commit"
	"github.com/lancekeeper/lancekeeper/flags"
	"github.com/lancekeeper/lancekeeper/maint"
	"github.com/lancekeeper/lancekeeper/manifest"
	"github.com/lancekeeper/lancekeeper/snapshot"
	"github.com/lancekeeper/lancekeeper/store"
)

// Errors of the facade itself.
var (
	// ErrInvalidOption is wrapped when an option does not apply to the
	// call it was given to, or options contradict each other.
	ErrInvalidOption = errors.New("lancekeeper: invalid option")
	// ErrInvalidPredicate is wrapped when a predicate does not parse, names
	// a column the dataset does not have, or has a literal that does not
	// fit the column's type.
	ErrInvalidPredicate = errors.New("lancekeeper: invalid predicate")
)

// The typed errors of the packages underneath, under one import. Each is
// the other package's own value: errors.Is(err, ErrUnsupported) and
// errors.Is(err, flags.ErrUnsupported) are the same test.
var (
	// ErrUnsupported: the version has feature flags this build does not
	// support (lance-table-format.md §6.3).
	ErrUnsupported = flags.ErrUnsupported
	// ErrHalfSet: a paired flag bit is set in one flag word only (R59).
	ErrHalfSet = flags.ErrHalfSet
	// ErrSeedsNotEnabled: seeds were asked for on a table without
	// FLAG_ZONE_WRITE_SEEDS and without ActivateZoneWriteSeeds (R56).
	ErrSeedsNotEnabled = commit.ErrSeedsNotEnabled
	// ErrDatasetExists: Create found a version at the URI.
	ErrDatasetExists = commit.ErrDatasetExists
	// ErrNotFound: no dataset, version or file where one was asked for.
	ErrNotFound = manifest.ErrNotFound
	// ErrRefExists and ErrRefNotFound: a tag or branch that exists
	// already, or does not exist.
	ErrRefExists   = manifest.ErrRefExists
	ErrRefNotFound = manifest.ErrRefNotFound
	// ErrConflict: a concurrent commit made this one impossible.
	ErrConflict = commit.ErrConflict
)

// Open opens the dataset at uri — a local path, file://, s3://, gs://,
// azblob:// or mem:// URL — at the latest version of main, or at the
// version AtVersion, AtTag or OnBranch select. It checks the version's
// reader flags (errors match ErrUnsupported or ErrHalfSet) and fails with
// an error matching ErrNotFound when there is no dataset. Options:
// AtVersion, AtTag, OnBranch, AllowUnsafeCommit.
func Open(ctx context.Context, uri string, opts ...Option) (*Dataset, error) {
	s, err := collect("Open", useRef|useHandle, opts)
	if err != nil {
		return nil, err
	}
	sd, err := snapshot.OpenDataset(ctx, uri)
	if err != nil {
		return nil, fmt.Errorf("open %s: %w", uri, err)
	}
	h := &handle{ds: sd, unsafe: s.unsafe}
	d, err := h.checkout(ctx, s.ref())
	if err != nil {
		sd.Close()
		return nil, err
	}
	return d, nil
}

// Create writes the record batches of records as a new dataset at uri
// (data files in storage version 2.2 unless WithStorageVersion says
// otherwise, one fragment per file) and returns its first version. An
// existing dataset fails with an error matching ErrDatasetExists.
// Options: WithSeeds, ActivateZoneWriteSeeds, WithRowsPerZone,
// WithMaxRowsPerFile, WithStorageVersion, AllowUnsafeCommit.
func Create(ctx context.Context, uri string, records array.RecordReader, opts ...Option) (*Dataset, error) {
	s, err := collect("Create", useWrite|useHandle, opts)
	if err != nil {
		return nil, err
	}
	sd, err := snapshot.OpenDataset(ctx, uri)
	if err != nil {
		return nil, fmt.Errorf("create %s: %w", uri, err)
	}
	h := &handle{ds: sd, unsafe: s.unsafe}
	d, err := h.write(ctx, "", commit.ModeCreate, records, s)
	if err != nil {
		sd.Close()
		return nil, err
	}
	return d, nil
}

// handle is the storage handle shared by every *Dataset derived from one
// Open or Create.
type handle struct {
	ds     *snapshot.Dataset
	unsafe bool
}

func (h *handle) commitOptions() commit.Options {
	return commit.Options{AllowUnsafeCommit: h.unsafe}
}

// checkout opens the version ref selects, with the reader flag check.
func (h *handle) checkout(ctx context.Context, ref snapshot.Ref) (*Dataset, error) {
	snap, err := h.ds.Checkout(ctx, snapshot.Options{Ref: ref})
	if err != nil {
		if errors.Is(err, manifest.ErrNotFound) && !strings.Contains(err.Error(), h.ds.URI()) {
			return nil, fmt.Errorf("open %s at %s: %w", h.ds.URI(), ref, err)
		}
		return nil, err
	}
	return &Dataset{h: h, snap: snap}, nil
}

// write writes records into branch with mode and returns the committed
// version.
func (h *handle) write(ctx context.Context, branch string, mode commit.Mode, records array.RecordReader, s *settings) (*Dataset, error) {
	if records == nil {
		return nil, fmt.Errorf("%w: no record reader", ErrInvalidOption)
	}
	st, err := h.ds.BranchStore(branch)
	if err != nil {
		return nil, err
	}
	wo := commit.WriteOptions{
		Mode:               mode,
		SeedColumns:        s.seedColumns,
		SeedAllColumns:     s.seeds && len(s.seedColumns) == 0,
		RowsPerZone:        s.rowsPerZone,
		MaxRowsPerFile:     s.maxRowsPerFile,
		DataStorageVersion: s.storageVersion,
		Commit:             h.commitOptions(),
	}
	wo.Commit.EnableZoneWriteSeeds = s.activate
	wo.Commit.InlineTransactionOnly = s.inlineTxnOnly
	// A table whose config asks for it (lance.auto_cleanup.*) is cleaned
	// after the commit as Lance does; a cleanup error never fails the commit.
	wo.Commit.AfterCommit = maint.AfterCommit(st, nil)
	res, err := commit.WriteArrow(ctx, st, records, wo)
	if err != nil {
		return nil, fmt.Errorf("%s %s: %w", mode, describe(h.ds.URI(), branch), err)
	}
	return h.checkout(ctx, snapshot.Ref{Branch: branch, Version: res.Version})
}

// describe names a dataset and branch for messages.
func describe(uri, branch string) string {
	if branch == "" {
		return uri
	}
	return uri + " (branch " + branch + ")"
}

// Option configures one call; see each call for the options it takes.
type Option struct {
	name string
	use  use
	set  func(*settings)
}

// use is the set of calls an option applies to.
type use uint16

const (
	useRef      use = 1 << iota // Open, Checkout
	useHandle                   // Open, Create
	useWrite                    // Create, Append, Overwrite
	useClone                    // Clone
	useScan                     // Scan
	useCompact                  // Compact
	useBackfill                 // BackfillSeeds
	useCleanup                  // Cleanup
	useCheck                    // Check
)

// useSeeds are the calls that write seeds.
const useSeeds = useWrite | useCompact | useBackfill

// settings is what the options of one call say.
type settings struct {
	version        uint64
	tag, branch    string
	hasBranch      bool
	seeds          bool
	seedColumns    []string
	activate       bool
	rowsPerZone    uint64
	maxRowsPerFile int
	deep           bool
	unsafe         bool
	where          string
	columns        []string
	limit          int64
	rowID          bool
	targetRows     uint64
	olderThan      time.Duration
	retain         uint64
	dryRun         bool
	allVersions    bool
	storageVersion string
	inlineTxnOnly  bool
}

func (s *settings) ref() snapshot.Ref {
	return snapshot.Ref{Version: s.version, Tag: s.tag, Branch: s.branch}
}

// collect applies opts for call, refusing those that do not apply.
func collect(call string, allowed use, opts []Option) (*settings, error) {
	s := &settings{}
	var seen []string
	for _, o := range opts {
		if o.set == nil {
			return nil, fmt.Errorf("%w: zero Option given to %s", ErrInvalidOption, call)
		}
		if o.use&allowed == 0 {
			return nil, fmt.Errorf("%w: %s does not apply to %s", ErrInvalidOption, o.name, call)
		}
		if slices.Contains(seen, o.name) {
			return nil, fmt.Errorf("%w: %s given twice to %s", ErrInvalidOption, o.name, call)
		}
		seen = append(seen, o.name)
		o.set(s)
	}
	if s.tag != "" && s.version != 0 {
		return nil, fmt.Errorf("%w: AtVersion and AtTag both given to %s", ErrInvalidOption, call)
	}
	if s.activate && !s.seeds && allowed&useBackfill == 0 {
		return nil, fmt.Errorf("%w: ActivateZoneWriteSeeds without WithSeeds in %s (EnableZoneWriteSeeds activates without writing)", ErrInvalidOption, call)
	}
	return s, nil
}

// AtVersion selects version v (of main, or of the branch OnBranch names or
// the handle is on). For Open and Checkout.
func AtVersion(v uint64) Option {
	return Option{name: "AtVersion", use: useRef, set: func(s *settings) { s.version = v }}
}

// AtTag selects the version a tag points at, on the tag's branch. For Open
// and Checkout.
func AtTag(name string) Option {
	return Option{name: "AtTag", use: useRef, set: func(s *settings) { s.tag = name }}
}

// OnBranch selects a branch ("main" is the main line): its latest version,
// or the one AtVersion gives. For Open and Checkout.
func OnBranch(name string) Option {
	return Option{name: "OnBranch", use: useRef, set: func(s *settings) {
		s.branch, s.hasBranch = name, true
		if name == snapshot.MainBranch {
			s.branch = ""
		}
	}}
}

// WithSeeds writes v1 zone write seeds for the named top-level columns, or
// for every column when none is named. The table must carry
// FLAG_ZONE_WRITE_SEEDS already, or the call must also have
// ActivateZoneWriteSeeds. For Create, Append, Overwrite, Compact and
// BackfillSeeds.
func WithSeeds(columns ...string) Option {
	cols := slices.Clone(columns)
	return Option{name: "WithSeeds", use: useSeeds, set: func(s *settings) { s.seeds, s.seedColumns = true, cols }}
}

// ActivateZoneWriteSeeds is the explicit activation (zone-seeds.md R56):
// the commit that adds the seeded files also sets FLAG_ZONE_WRITE_SEEDS,
// after which Lance releases without seed support refuse the dataset.
// Only with WithSeeds (except for BackfillSeeds); Dataset.EnableZoneWriteSeeds
// activates without writing. For Create, Append, Overwrite, Compact and
// BackfillSeeds.
func ActivateZoneWriteSeeds() Option {
	return Option{name: "ActivateZoneWriteSeeds", use: useSeeds, set: func(s *settings) { s.activate = true }}
}

// WithRowsPerZone sets the rows per zone of the seeds written (default
// 8192). For Create, Append, Overwrite, Compact and BackfillSeeds.
func WithRowsPerZone(n uint64) Option {
	return Option{name: "WithRowsPerZone", use: useSeeds, set: func(s *settings) { s.rowsPerZone = n }}
}

// WithMaxRowsPerFile bounds the rows of each data file, hence fragment
// (default 1 Mi). For Create, Append and Overwrite.
func WithMaxRowsPerFile(n int) Option {
	return Option{name: "WithMaxRowsPerFile", use: useWrite, set: func(s *settings) { s.maxRowsPerFile = n }}
}

// WithStorageVersion sets the data storage version of the files written:
// "2.0", "2.1", "2.2" (Create's default, as Lance 12's; "stable") or
// "2.3" (Lance 12's "next"; 2.2's encodings, footer (2,3)). An append
// always writes the table's version; an overwrite keeps it unless this is
// given. For Create and Overwrite (and Append, where it must equal the
// table's).
func WithStorageVersion(v string) Option {
	return Option{name: "WithStorageVersion", use: useWrite, set: func(s *settings) { s.storageVersion = v }}
}

// InlineTransactionOnly is an opt-in for faster durable commits: the
// commit writes no _transactions/*.txn file, only the manifest's inline
// transaction, and sets the writer flag DISABLE_TRANSACTION_FILE (bit 5)
// on that version — one file creation and its fsyncs fewer per commit.
// Lance 12 reads such a table and appends to it; a Lance writer that
// predates the flag refuses to write to it while such a version is the
// latest. Never the default. For Create, Append and Overwrite
// (commit.Options.InlineTransactionOnly).
func InlineTransactionOnly() Option {
	return Option{name: "InlineTransactionOnly", use: useWrite, set: func(s *settings) { s.inlineTxnOnly = true }}
}

// Deep makes Clone copy every file the version references (§8.2) instead
// of referencing them from the clone (a shallow clone, §8.1).
func Deep() Option {
	return Option{name: "Deep", use: useClone, set: func(s *settings) { s.deep = true }}
}

// AllowUnsafeCommit lets the handle commit on a store that does not
// declare an atomic create-if-absent (see `lancekeeper doctor`), where two
// concurrent writers can lose a commit. For Open and Create; the handle
// and those derived from it keep it.
func AllowUnsafeCommit() Option {
	return Option{name: "AllowUnsafeCommit", use: useHandle, set: func(s *settings) { s.unsafe = true }}
}

// storeOf is for the tests of this package: the main root's store.
func (d *Dataset) storeOf() *store.Store { return d.h.ds.Store() }
