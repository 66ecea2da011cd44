package lancekeeper

import (
	"context"
	"fmt"

	"github.com/lancekeeper/lancekeeper/check"
)

// Problem is one thing wrong with a version, as Check finds it.
type Problem struct {
	Version uint64
	// Fragment is the fragment concerned (HasFragment false when the
	// problem is version-wide).
	Fragment    uint64
	HasFragment bool
	// File is the file concerned, relative to the dataset root or a base
	// path ("" for a version-wide problem).
	File string
	// Kind is one of package check's kinds: "missing_file", "wrong_size",
	// "unreadable_file", "duplicate_data_file", "duplicate_fragment_id",
	// "fragment_id_above_max", "row_count_mismatch",
	// "deletion_out_of_range", "inconsistent_flags", "invalid_seed",
	// "index", "unreadable_manifest".
	Kind   string
	Reason string
}

// CheckReport is the outcome of Check.
type CheckReport struct {
	// Versions are the versions checked.
	Versions []uint64
	// Files and Seeds count the files and seeds checked.
	Files, Seeds int
	// Problems is empty when everything holds.
	Problems []Problem
}

// OK reports whether Check found no problem.
func (r *CheckReport) OK() bool { return len(r.Problems) == 0 }

// Check validates this version against the files it references — every
// data, deletion and index file exists with its recorded size, fragment
// ids are unique and within max_fragment_id, no data file is referenced
// twice, row counts agree with the files, deletion files stay inside
// their fragment, paired flag bits are set in both words, and every seed
// decodes and validates with the version's flag — or, with AllVersions,
// every version of the handle's branch. It reads and never writes; a
// problem is reported, an error only means the dataset could not be
// checked at all.
func (d *Dataset) Check(ctx context.Context, opts ...Option) (*CheckReport, error) {
	s, err := collect("Check", useCheck, opts)
	if err != nil {
		return nil, err
	}
	st, err := d.h.ds.BranchStore(d.snap.Branch)
	if err != nil {
		return nil, err
	}
	var rep *check.Report
	if s.allVersions {
		if rep, err = check.Dataset(ctx, st, check.Options{AllVersions: true}); err != nil {
			return nil, fmt.Errorf("check %s: %w", describe(d.URI(), d.snap.Branch), err)
		}
	} else {
		rep = check.Version(ctx, st, d.snap.File)
	}
	out := &CheckReport{Versions: rep.Versions, Files: rep.Files, Seeds: rep.Seeds, Problems: []Problem{}}
	for _, p := range rep.Problems {
		q := Problem{Version: p.Version, File: p.File, Kind: p.Kind, Reason: p.Reason}
		if p.Fragment != nil {
			q.Fragment, q.HasFragment = *p.Fragment, true
		}
		out.Problems = append(out.Problems, q)
	}
	return out, nil
}

// AllVersions makes Check validate every version of the handle's branch.
func AllVersions() Option {
	return Option{name: "AllVersions", use: useCheck, set: func(s *settings) { s.allVersions = true }}
}
