// Package check validates the versions of a Lance dataset against the
// files they reference — what `lancekeeper check` prints. Like Lance's
// Dataset.validate(), and more: every data, deletion and index file a
// version references exists with its recorded size; fragment ids are
// unique and not above max_fragment_id; no data file is referenced twice;
// the row counts a manifest records agree with the data files; deletion
// files hold only rows inside their fragment and as many as recorded; the
// paired feature-flag bits are set in both words; and every zone write
// seed of a data file decodes and validates (zone-seeds.md E01–E26, with
// the table's flag).
//
// Check reads and never writes. A problem names the version, the file (or
// fragment) and the reason; an error is returned only when the dataset
// cannot be checked at all (no such dataset, storage failure listing it,
// cancellation).
package check

import (
	"context"
	"errors"
	"fmt"
	"sort"

	"github.com/lancekeeper/lancekeeper/datafile"
	"github.com/lancekeeper/lancekeeper/flags"
	"github.com/lancekeeper/lancekeeper/inspect"
	"github.com/lancekeeper/lancekeeper/manifest"
	"github.com/lancekeeper/lancekeeper/manifest/pb"
	"github.com/lancekeeper/lancekeeper/seedio"
	"github.com/lancekeeper/lancekeeper/store"
)

// Problem kinds.
const (
	KindManifest          = "unreadable_manifest"
	KindMissingFile       = "missing_file"
	KindWrongSize         = "wrong_size"
	KindUnreadableFile    = "unreadable_file"
	KindDuplicateDataFile = "duplicate_data_file"
	KindDuplicateFragment = "duplicate_fragment_id"
	KindFragmentIDAbove   = "fragment_id_above_max"
	KindRowCount          = "row_count_mismatch"
	KindDeletion          = "deletion_out_of_range"
	KindFlags             = "inconsistent_flags"
	KindSeed              = "invalid_seed"
	KindIndex             = "index"
	KindUnsoundSeed       = "unsound_seed"
)

// Problem is one thing wrong with a version.
type Problem struct {
	Version uint64 `json:"version"`
	// Fragment is the fragment id (nil when the problem is not a
	// fragment's).
	Fragment *uint64 `json:"fragment,omitempty"`
	// File is the file concerned, relative to the dataset root (or a base
	// path's location); "" for a version-wide problem.
	File   string `json:"file,omitempty"`
	Kind   string `json:"kind"`
	Reason string `json:"reason"`
}

func (p Problem) String() string {
	s := fmt.Sprintf("version %d", p.Version)
	if p.Fragment != nil {
		s += fmt.Sprintf(" fragment %d", *p.Fragment)
	}
	if p.File != "" {
		s += " " + p.File
	}
	return s + ": " + p.Kind + ": " + p.Reason
}

// Report is the outcome of a check.
type Report struct {
	Dataset  string    `json:"dataset"`
	Versions []uint64  `json:"versions"`
	Files    int       `json:"files_checked"`
	Seeds    int       `json:"seeds_checked"`
	Problems []Problem `json:"problems"`
}

// OK reports whether no problem was found.
func (r *Report) OK() bool { return len(r.Problems) == 0 }

// Options select what is checked.
type Options struct {
	// Version is the version to check (0: the latest). Ignored with
	// AllVersions.
	Version uint64
	// AllVersions checks every version listed under _versions/.
	AllVersions bool
	// Seeds also audits every seed against the values its data file
	// stores (inspect.AuditSeeds, what `lancekeeper seeds verify` prints):
	// counts exact, every value inside the bounds.
	Seeds bool
}

// Dataset checks the dataset in st: the latest version, the one named by
// opts.Version, or every version.
func Dataset(ctx context.Context, st *store.Store, opts Options) (*Report, error) {
	rep := &Report{Dataset: st.String(), Versions: []uint64{}, Problems: []Problem{}}
	var versions []uint64
	switch {
	case opts.AllVersions:
		infos, err := manifest.ListVersions(ctx, st.Bucket(), st.KeyPrefix())
		if err != nil {
			return nil, err
		}
		for _, vi := range infos {
			versions = append(versions, vi.Version)
		}
		if len(versions) == 0 {
			return nil, fmt.Errorf("%s: %w", st, manifest.ErrNotFound)
		}
	case opts.Version != 0:
		versions = []uint64{opts.Version}
	default:
		info, err := manifest.LatestVersion(ctx, st.Bucket(), st.KeyPrefix())
		if err != nil {
			return nil, err
		}
		versions = []uint64{info.Version}
	}
	c := &checker{st: st, rep: rep, bases: store.NewBases(st), sizes: map[string]int64{}}
	defer c.bases.Close()
	for _, v := range versions {
		if err := ctx.Err(); err != nil {
			return nil, err
		}
		f, err := manifest.ReadVersion(ctx, st.Bucket(), st.KeyPrefix(), v)
		if err != nil {
			if !opts.AllVersions && manifest.IsNotFound(err) {
				return nil, err
			}
			rep.Versions = append(rep.Versions, v)
			c.problem(v, nil, "", KindManifest, err.Error())
			continue
		}
		rep.Versions = append(rep.Versions, v)
		c.version(ctx, f)
		if opts.Seeds {
			if err := c.audit(ctx, f); err != nil {
				return nil, err
			}
		}
	}
	return rep, nil
}

// Version checks one decoded manifest file of the dataset in st and
// returns its report.
func Version(ctx context.Context, st *store.Store, f *manifest.File) *Report {
	rep := &Report{Dataset: st.String(), Versions: []uint64{f.Manifest.GetVersion()}, Problems: []Problem{}}
	c := &checker{st: st, rep: rep, bases: store.NewBases(st), sizes: map[string]int64{}}
	defer c.bases.Close()
	c.version(ctx, f)
	return rep
}

type checker struct {
	st    *store.Store
	rep   *Report
	bases *store.Bases
	// sizes caches the sizes of files already found (several versions
	// share most of their files).
	sizes map[string]int64
}

func (c *checker) problem(v uint64, frag *uint64, file, kind, reason string) {
	c.rep.Problems = append(c.rep.Problems, Problem{Version: v, Fragment: frag, File: file, Kind: kind, Reason: reason})
}

func (c *checker) version(ctx context.Context, f *manifest.File) {
	m := f.Manifest
	v := m.GetVersion()
	if err := flags.CheckPaired(m.GetReaderFeatureFlags(), m.GetWriterFeatureFlags()); err != nil {
		c.problem(v, nil, "", KindFlags, err.Error())
	}
	res, err := manifest.NewResolver(m)
	if err != nil {
		c.problem(v, nil, "", KindManifest, err.Error())
		return
	}
	flagged := flags.Has(m.GetReaderFeatureFlags(), m.GetWriterFeatureFlags(), flags.ZoneWriteSeeds)
	ids := map[uint64]bool{}
	files := map[string]uint64{}
	for _, frag := range m.GetFragments() {
		id := frag.GetId()
		fid := &id
		if ids[id] {
			c.problem(v, fid, "", KindDuplicateFragment, fmt.Sprintf("fragment id %d appears twice", id))
		}
		ids[id] = true
		if m.MaxFragmentId != nil && id > uint64(m.GetMaxFragmentId()) {
			c.problem(v, fid, "", KindFragmentIDAbove, fmt.Sprintf("fragment id %d is above max_fragment_id %d", id, m.GetMaxFragmentId()))
		}
		for _, df := range frag.GetFiles() {
			loc, err := res.DataFile(df)
			if err != nil {
				c.problem(v, fid, df.GetPath(), KindManifest, err.Error())
				continue
			}
			name := loc.String()
			if other, dup := files[name]; dup {
				c.problem(v, fid, name, KindDuplicateDataFile, fmt.Sprintf("also referenced by fragment %d (its rows would be read twice)", other))
			}
			files[name] = id
			c.dataFile(ctx, v, frag, df, loc, flagged)
		}
		if d := frag.GetDeletionFile(); d != nil {
			c.deletionFile(ctx, v, frag, res)
		}
	}
	for _, idx := range f.Indices() {
		c.index(ctx, v, idx, res)
	}
}

// size returns the size of the file at loc (found=false when missing).
func (c *checker) size(ctx context.Context, loc manifest.Location) (st *store.Store, size int64, found bool, err error) {
	st, err = c.bases.Store(ctx, loc.Base)
	if err != nil {
		return nil, 0, false, err
	}
	if n, ok := c.sizes[loc.String()]; ok {
		return st, n, true, nil
	}
	n, err := st.Size(ctx, loc.Path)
	if errors.Is(err, store.ErrNotFound) {
		return st, 0, false, nil
	}
	if err != nil {
		return st, 0, false, err
	}
	c.sizes[loc.String()] = n
	return st, n, true, nil
}

func (c *checker) dataFile(ctx context.Context, v uint64, frag *pb.DataFragment, df *pb.DataFile, loc manifest.Location, flagged bool) {
	id := frag.GetId()
	name := loc.String()
	c.rep.Files++
	st, size, found, err := c.size(ctx, loc)
	switch {
	case err != nil:
		c.problem(v, &id, name, KindUnreadableFile, err.Error())
		return
	case !found:
		c.problem(v, &id, name, KindMissingFile, "the data file does not exist")
		return
	}
	if want := df.GetFileSizeBytes(); want != 0 && uint64(size) != want {
		c.problem(v, &id, name, KindWrongSize, fmt.Sprintf("file_size_bytes records %d bytes but the file has %d", want, size))
	}
	if df.GetFileMajorVersion() == 0 && df.GetFileMinorVersion() < 3 {
		return // a legacy (0.1) data file: this build does not read its body
	}
	f, err := datafile.Open(ctx, st.Bucket(), st.BucketKey(loc.Path), datafile.OpenOptions{Size: size})
	if err != nil {
		c.problem(v, &id, name, KindUnreadableFile, err.Error())
		return
	}
	if rows := frag.GetPhysicalRows(); rows != 0 && rows != f.NumRows() {
		c.problem(v, &id, name, KindRowCount, fmt.Sprintf("the fragment records %d physical rows but the file holds %d", rows, f.NumRows()))
	}
	seeds, err := f.Seeds(ctx, seedio.DecodeOptions{TableFlagged: flagged})
	if err != nil {
		c.problem(v, &id, name, KindUnreadableFile, err.Error())
		return
	}
	for _, s := range seeds {
		c.rep.Seeds++
		if s.Err != nil {
			c.problem(v, &id, name, KindSeed, fmt.Sprintf("seed of column %q: %v", s.Column, s.Err))
		}
	}
}

func (c *checker) deletionFile(ctx context.Context, v uint64, frag *pb.DataFragment, res *manifest.Resolver) {
	id := frag.GetId()
	d := frag.GetDeletionFile()
	loc, err := res.DeletionFile(id, d)
	if err != nil {
		c.problem(v, &id, "", KindManifest, err.Error())
		return
	}
	name := loc.String()
	c.rep.Files++
	st, _, found, err := c.size(ctx, loc)
	switch {
	case err != nil:
		c.problem(v, &id, name, KindUnreadableFile, err.Error())
		return
	case !found:
		c.problem(v, &id, name, KindMissingFile, "the deletion file does not exist")
		return
	}
	rows, err := manifest.ReadDeletionFile(ctx, st.Bucket(), st.BucketKey(loc.Path), d.GetFileType())
	if err != nil {
		c.problem(v, &id, name, KindUnreadableFile, err.Error())
		return
	}
	if n := d.GetNumDeletedRows(); n != 0 && n != rows.GetCardinality() {
		c.problem(v, &id, name, KindDeletion, fmt.Sprintf("num_deleted_rows records %d but the file deletes %d rows", n, rows.GetCardinality()))
	}
	if phys := frag.GetPhysicalRows(); phys != 0 && !rows.IsEmpty() && uint64(rows.Maximum()) >= phys {
		c.problem(v, &id, name, KindDeletion, fmt.Sprintf("deletes row %d but the fragment has %d rows", rows.Maximum(), phys))
	}
}

func (c *checker) index(ctx context.Context, v uint64, idx *pb.IndexMetadata, res *manifest.Resolver) {
	dir, err := res.IndexDir(idx)
	if err != nil {
		c.problem(v, nil, "", KindIndex, fmt.Sprintf("index %q: %v", idx.GetName(), err))
		return
	}
	files := idx.GetFiles()
	// Writers before the file list (index_metadata.files) record none:
	// nothing says which files the segment needs, so nothing is checked.
	sort.SliceStable(files, func(i, j int) bool { return files[i].GetPath() < files[j].GetPath() })
	for _, fl := range files {
		loc := dir
		loc.Path = dir.Path + "/" + fl.GetPath()
		name := loc.String()
		c.rep.Files++
		_, size, found, err := c.size(ctx, loc)
		switch {
		case err != nil:
			c.problem(v, nil, name, KindUnreadableFile, err.Error())
		case !found:
			c.problem(v, nil, name, KindMissingFile, fmt.Sprintf("file of index %q does not exist", idx.GetName()))
		case fl.GetSizeBytes() != 0 && uint64(size) != fl.GetSizeBytes():
			c.problem(v, nil, name, KindWrongSize, fmt.Sprintf("index %q records %d bytes but the file has %d", idx.GetName(), fl.GetSizeBytes(), size))
		}
	}
}

// audit runs the seed audit of one version and records every seed that is
// not sound.
func (c *checker) audit(ctx context.Context, f *manifest.File) error {
	v := f.Manifest.GetVersion()
	a, err := inspect.AuditSeeds(ctx, c.st, f.Manifest, "")
	if err != nil {
		if ctx.Err() != nil {
			return err
		}
		c.problem(v, nil, "", KindUnsoundSeed, "seed audit: "+err.Error())
		return nil
	}
	for _, fa := range a.Files {
		id := fa.Fragment
		if fa.Err != nil {
			continue // reported by the structural check
		}
		for _, sv := range fa.Seeds {
			if sv.Status == datafile.SeedSound {
				continue
			}
			reason := fmt.Sprintf("seed of column %q is %s", sv.Column, sv.Status)
			if sv.Check != "" {
				reason += fmt.Sprintf(": %s", sv.Check)
				if sv.Zone >= 0 {
					reason += fmt.Sprintf(" in zone %d", sv.Zone)
				}
				if sv.Value != nil || sv.Bound != nil {
					reason += fmt.Sprintf(" (file has %v, seed claims %v)", sv.Value, sv.Bound)
				}
			}
			if sv.Err != nil {
				reason += ": " + sv.Err.Error()
			}
			c.problem(v, &id, fa.Path, KindUnsoundSeed, reason)
		}
	}
	return nil
}
