package lancekeeper

import (
	"context"
	"fmt"
	"time"

	"github.com/apache/arrow-go/v18/arrow/array"

	"github.com/lancekeeper/lancekeeper/commit"
	"github.com/lancekeeper/lancekeeper/flags"
	"github.com/lancekeeper/lancekeeper/inspect"
	"github.com/lancekeeper/lancekeeper/snapshot"
)

// Dataset is one version of a Lance dataset, on main or on a branch. It
// is immutable: methods that commit return a new *Dataset at the version
// they made, and the receiver keeps describing its own version. A Dataset
// is safe for concurrent use; commits by several handles (or processes)
// on one dataset are serialized by the commit engine's atomic
// create-if-absent and conflict rules.
type Dataset struct {
	h    *handle
	snap *snapshot.Snapshot
}

// URI returns the dataset's main root as given to Open or Create.
func (d *Dataset) URI() string { return d.h.ds.URI() }

// Version returns the version number of this handle.
func (d *Dataset) Version() uint64 { return d.snap.Version }

// Branch returns the branch of this handle ("" for main).
func (d *Dataset) Branch() string { return d.snap.Branch }

// ZoneWriteSeeds reports whether this version carries
// FLAG_ZONE_WRITE_SEEDS (in both flag words), i.e. whether its v1 seeds
// are usable (R61) and Lance releases without seed support refuse it.
func (d *Dataset) ZoneWriteSeeds() bool { return commit.HasZoneWriteSeeds(d.snap.Manifest()) }

// Close releases the storage handle shared by the handles derived from
// the same Open or Create (closing one closes them all).
func (d *Dataset) Close() error { return d.h.ds.Close() }

// ref is the snapshot reference of this exact version.
func (d *Dataset) ref() snapshot.Ref {
	return snapshot.Ref{Version: d.snap.Version, Branch: d.snap.Branch}
}

// Column is one top-level column of a version.
type Column struct {
	Name string
	// Type is the Lance logical type (e.g. "int64", "string", "struct").
	Type     string
	Nullable bool
}

// Summary describes one version.
type Summary struct {
	Version uint64
	Branch  string // "" for main
	// Timestamp is the commit time recorded in the manifest (zero when
	// absent).
	Timestamp time.Time
	// Rows counts the live rows (after deletions).
	Rows      uint64
	Fragments int
	DataFiles int
	Columns   []Column
	// DataStorageVersion is the Lance file format of the data files
	// (e.g. "2.0").
	DataStorageVersion string
	// ZoneWriteSeeds reports FLAG_ZONE_WRITE_SEEDS.
	ZoneWriteSeeds bool
	// ReaderFlags and WriterFlags are the manifest's feature-flag words.
	ReaderFlags, WriterFlags uint64
	// Tags name the tags that point at this version.
	Tags []string
}

// Summary describes this version: rows, fragments, columns, flags, tags.
// It reads data or deletion files only where the manifest does not record
// the counts.
func (d *Dataset) Summary(ctx context.Context) (*Summary, error) {
	is, err := inspect.Summarize(ctx, d.h.ds, inspect.Options{Version: d.snap.Version, Branch: d.snap.Branch})
	if err != nil {
		return nil, err
	}
	if is.NumRows == nil {
		return nil, fmt.Errorf("%s version %d: counting rows: %s", d.URI(), d.snap.Version, is.NumRowsError)
	}
	s := &Summary{
		Version: is.Version, Branch: d.snap.Branch, Timestamp: parseTime(is.Timestamp),
		Rows: *is.NumRows, Fragments: is.NumFragments, DataFiles: is.NumDataFiles,
		ZoneWriteSeeds: d.ZoneWriteSeeds(), ReaderFlags: is.ReaderFlags, WriterFlags: is.WriterFlags,
		Tags: is.Tags,
	}
	if is.DataFormat != nil {
		s.DataStorageVersion = is.DataFormat.Version
	}
	for _, f := range d.snap.Manifest().GetFields() {
		if f.GetParentId() == -1 {
			s.Columns = append(s.Columns, Column{Name: f.GetName(), Type: f.GetLogicalType(), Nullable: f.GetNullable()})
		}
	}
	return s, nil
}

func parseTime(s string) time.Time {
	if s == "" {
		return time.Time{}
	}
	t, err := time.Parse(time.RFC3339Nano, s)
	if err != nil {
		return time.Time{}
	}
	return t
}

// Append adds the record batches of records (schema equal to the
// dataset's) as new fragments on top of the latest version of this
// handle's branch, and returns the new version. Options: WithSeeds,
// ActivateZoneWriteSeeds, WithRowsPerZone, WithMaxRowsPerFile. Lance 12
// reads what Append writes as long as the table does not carry
// FLAG_ZONE_WRITE_SEEDS.
func (d *Dataset) Append(ctx context.Context, records array.RecordReader, opts ...Option) (*Dataset, error) {
	s, err := collect("Append", useWrite, opts)
	if err != nil {
		return nil, err
	}
	return d.h.write(ctx, d.snap.Branch, commit.ModeAppend, records, s)
}

// Overwrite replaces the rows of this handle's branch by the record
// batches of records as a new version; earlier versions stay readable.
// The input must match the table's schema (as for Append: the table keeps
// its field ids and types) and the table keeps its storage version unless
// WithStorageVersion is given. Options as Append.
func (d *Dataset) Overwrite(ctx context.Context, records array.RecordReader, opts ...Option) (*Dataset, error) {
	s, err := collect("Overwrite", useWrite, opts)
	if err != nil {
		return nil, err
	}
	return d.h.write(ctx, d.snap.Branch, commit.ModeOverwrite, records, s)
}

// Version is one entry of a branch's history.
type Version struct {
	Number uint64
	// Timestamp is the commit time recorded in the manifest (zero when
	// absent).
	Timestamp time.Time
	Fragments int
	// ZoneWriteSeeds reports FLAG_ZONE_WRITE_SEEDS in this version.
	ZoneWriteSeeds bool
	// Tags name the tags that point at this version.
	Tags []string
}

// Versions lists the versions of this handle's branch, oldest first.
func (d *Dataset) Versions(ctx context.Context) ([]Version, error) {
	es, err := inspect.Versions(ctx, d.h.ds, d.snap.Branch)
	if err != nil {
		return nil, err
	}
	out := make([]Version, 0, len(es))
	for _, e := range es {
		out = append(out, Version{
			Number: e.Version, Timestamp: parseTime(e.Timestamp), Fragments: e.NumFragments,
			ZoneWriteSeeds: flags.Has(e.ReaderFlags, e.WriterFlags, flags.ZoneWriteSeeds), Tags: e.Tags,
		})
	}
	return out, nil
}

// Checkout returns another version of the dataset: AtVersion (on this
// handle's branch unless OnBranch is given), AtTag (the tag's own
// branch), OnBranch (its latest version); without options, the latest
// version of this handle's branch. The reader flags are checked as by
// Open.
func (d *Dataset) Checkout(ctx context.Context, opts ...Option) (*Dataset, error) {
	s, err := collect("Checkout", useRef, opts)
	if err != nil {
		return nil, err
	}
	ref := s.ref()
	if !s.hasBranch && s.tag == "" {
		ref.Branch = d.snap.Branch
	}
	return d.h.checkout(ctx, ref)
}

// Restore makes this handle's version the new head of its branch (§8.3):
// a new version whose content equals this one's, keeping the sticky flag
// bits of the current head (R57). Earlier versions are not touched.
func (d *Dataset) Restore(ctx context.Context) (*Dataset, error) {
	snap, _, err := d.h.ds.Restore(ctx, d.ref(), snapshot.RestoreOptions{Commit: d.h.commitOptions()})
	if err != nil {
		return nil, err
	}
	return &Dataset{h: d.h, snap: snap}, nil
}

// Clone clones this handle's version into a new dataset at dst and returns
// the clone's first version (which keeps this version's number). Shallow
// by default: the clone references this dataset's files through a base
// path; with Deep, every file is copied (an interrupted deep clone resumes
// when run again). The returned handle has its own storage handle: Close
// it too.
func (d *Dataset) Clone(ctx context.Context, dst string, opts ...Option) (*Dataset, error) {
	s, err := collect("Clone", useClone, opts)
	if err != nil {
		return nil, err
	}
	dd, err := snapshot.OpenDataset(ctx, dst)
	if err != nil {
		return nil, fmt.Errorf("clone to %s: %w", dst, err)
	}
	co := snapshot.CloneOptions{Source: d.ref(), Deep: s.deep, Commit: d.h.commitOptions()}
	res, err := d.h.ds.CloneTo(ctx, dd, co)
	if err != nil {
		dd.Close()
		return nil, err
	}
	h := &handle{ds: dd, unsafe: d.h.unsafe}
	return &Dataset{h: h, snap: res.Snapshot}, nil
}

// EnableZoneWriteSeeds is the explicit activation of FLAG_ZONE_WRITE_SEEDS
// (R54, R56) on this handle's branch: a commit that sets the bit in both
// flag words and changes nothing else. After it, v1 seeds are usable and
// Append writes them without ActivateZoneWriteSeeds; Lance releases
// without seed support refuse the dataset from that version on. When the
// latest version carries the flag already nothing is written and the
// latest version is returned.
func (d *Dataset) EnableZoneWriteSeeds(ctx context.Context) (*Dataset, error) {
	st, err := d.h.ds.BranchStore(d.snap.Branch)
	if err != nil {
		return nil, err
	}
	res, already, err := commit.EnableZoneWriteSeeds(ctx, st, d.h.commitOptions())
	if err != nil {
		return nil, fmt.Errorf("enable zone write seeds on %s: %w", describe(d.URI(), d.snap.Branch), err)
	}
	ref := snapshot.Ref{Branch: d.snap.Branch}
	if !already {
		ref.Version = res.Version
	}
	return d.h.checkout(ctx, ref)
}
