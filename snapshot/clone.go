package snapshot

import (
	"context"
	"errors"
	"fmt"
	"io"
	"sort"
	"strings"

	"github.com/lancekeeper/lancekeeper/commit"
	"github.com/lancekeeper/lancekeeper/manifest"
	"github.com/lancekeeper/lancekeeper/manifest/pb"
	"github.com/lancekeeper/lancekeeper/store"
)

// CloneOptions configure Clone.
type CloneOptions struct {
	// Source selects the version to clone (latest of main by default; a
	// version, a tag, or a branch).
	Source Ref
	// Deep copies every file the source version references into the
	// target (§8.2); otherwise the clone references them (§8.1).
	Deep bool
	// Progress, when set, is called as a deep clone copies files.
	Progress func(CopyProgress)
	// Commit tunes the clone's commit (retries, unsafe stores, clock).
	Commit commit.Options
}

// CopyProgress reports a deep clone's file copying.
type CopyProgress struct {
	// File is the target key of the file just handled ("" for the initial
	// report before any file).
	File string
	// Skipped is true when File was already present with the right size
	// (a resumed deep clone).
	Skipped bool
	// FilesDone/FilesTotal and BytesDone/BytesTotal count handled files and
	// their bytes (skipped files included).
	FilesDone, FilesTotal int
	BytesDone, BytesTotal int64
}

// CloneResult describes a committed clone.
type CloneResult struct {
	// Snapshot is the clone's first version, opened for reading.
	Snapshot *Snapshot
	// Commit is the commit engine's report.
	Commit *commit.Result
	// Copied and Skipped count the files a deep clone copied and found
	// already in place; Bytes is the number of bytes copied.
	Copied, Skipped int
	Bytes           int64
}

// Clone clones one version of the dataset at srcURI into a new dataset at
// dstURI and returns the clone's first version, which keeps the source's
// version number.
//
// Shallow (§8.1): the new manifest references the source's files through a
// new base path {id: max(source ids)+1 or 0, path: the source root, name:
// the source's branch (absent for main), is_dataset_root: true}; files
// without a base_id get that id; reader/writer bit 4 is set. Files written
// to the clone later live under the clone's root.
//
// Deep (§8.2): every data, deletion, row-id and index file the version
// references is copied to the same relative path under the clone (a re-run
// skips files already present with the right size, so an interrupted deep
// clone resumes), then the manifest is committed with base paths, base ids
// and branch cleared, so bit 4 is dropped.
//
// Both recompute the derived flag bits and carry the source's sticky
// paired bits 8 and 16 (§6.5, R57). The source is never written.
func Clone(ctx context.Context, srcURI, dstURI string, opts CloneOptions) (*CloneResult, error) {
	src, err := OpenDataset(ctx, srcURI)
	if err != nil {
		return nil, err
	}
	defer src.Close()
	dst, err := store.Open(ctx, dstURI)
	if err != nil {
		return nil, err
	}
	res, err := src.CloneTo(ctx, NewDataset(dstURI, dst), opts)
	if err != nil {
		dst.Close()
		return nil, err
	}
	res.Snapshot.Dataset.owned = true
	return res, nil
}

// CloneTo clones one version of d into the dataset dst (which must have no
// version yet); see Clone.
func (d *Dataset) CloneTo(ctx context.Context, dst *Dataset, opts CloneOptions) (*CloneResult, error) {
	// The source must be readable; the commit engine also applies the
	// write check to the source manifest (§8.1 "must pass read and write").
	s, err := d.Checkout(ctx, Options{Ref: opts.Source})
	if err != nil {
		return nil, err
	}
	refPath, err := d.branchRootPath(s.Branch)
	if err != nil {
		return nil, err
	}
	spec := commit.CloneSpec{
		Source:        s.Manifest(),
		SourceIndices: s.Indices(),
		SourcePrelude: s.File.Prelude,
		Shallow:       !opts.Deep,
		RefVersion:    s.Version,
		RefPath:       refPath,
	}
	if s.Branch != "" {
		b := s.Branch
		spec.RefName = &b
	}
	res := &CloneResult{}
	if opts.Deep {
		if err := d.copyFiles(ctx, s, dst.st, opts.Progress, res); err != nil {
			return nil, err
		}
	}
	copts := opts.Commit
	if copts.Now == nil {
		copts.Now = dst.now
	}
	cr, err := commit.Commit(ctx, dst.st, commit.NewClone(spec), copts)
	if err != nil {
		return nil, fmt.Errorf("clone %s at %s into %s: %w", d.uri, opts.Source, dst.uri, err)
	}
	res.Commit = cr
	out, err := dst.load(ctx, Ref{Version: cr.Version})
	if err != nil {
		return nil, err
	}
	res.Snapshot = out
	return res, nil
}

// fileCopy is one file a deep clone copies.
type fileCopy struct {
	from    *store.Store
	fromKey string
	toKey   string
	size    int64 // -1: unknown until stat
}

// referencedFiles lists every file snapshot s references (data, deletion,
// external row-id/version sequences, index files), resolved to the store
// holding it and the key it gets under a deep clone's root.
func (d *Dataset) referencedFiles(ctx context.Context, s *Snapshot, bases *store.Bases) ([]fileCopy, error) {
	m := s.Manifest()
	res, err := manifest.NewResolver(m)
	if err != nil {
		return nil, err
	}
	var out []fileCopy
	seen := map[string]bool{}
	add := func(loc manifest.Location, toKey string, size int64) error {
		if seen[toKey] {
			return nil
		}
		seen[toKey] = true
		st, err := bases.Store(ctx, loc.Base)
		if err != nil {
			return fmt.Errorf("open base path %q: %w", loc.Base, err)
		}
		out = append(out, fileCopy{from: st, fromKey: loc.Path, toKey: toKey, size: size})
		return nil
	}
	for _, f := range m.GetFragments() {
		for _, df := range f.GetFiles() {
			loc, err := res.DataFile(df)
			if err != nil {
				return nil, err
			}
			size := int64(-1)
			if n := df.GetFileSizeBytes(); n > 0 && n < 1<<62 {
				size = int64(n)
			}
			if err := add(loc, manifest.DataDir+"/"+df.GetPath(), size); err != nil {
				return nil, err
			}
		}
		if del := f.GetDeletionFile(); del != nil {
			loc, err := res.DeletionFile(f.GetId(), del)
			if err != nil {
				return nil, err
			}
			name, _ := manifest.DeletionFileName(f.GetId(), del)
			if err := add(loc, manifest.DeletionsDir+"/"+name, -1); err != nil {
				return nil, err
			}
		}
		for _, ext := range []*pb.ExternalFile{f.GetExternalRowIds(), f.GetExternalLastUpdatedAtVersions(), f.GetExternalCreatedAtVersions()} {
			if ext == nil || ext.GetPath() == "" {
				continue
			}
			if err := add(manifest.Location{Path: ext.GetPath()}, ext.GetPath(), -1); err != nil {
				return nil, err
			}
		}
	}
	for _, idx := range s.Indices() {
		loc, err := res.IndexDir(idx)
		if err != nil {
			return nil, err
		}
		u, _ := manifest.IndexUUID(idx)
		toDir := manifest.IndicesDir + "/" + u
		if files := idx.GetFiles(); len(files) > 0 {
			for _, f := range files {
				size := int64(-1)
				if n := f.GetSizeBytes(); n > 0 && n < 1<<62 {
					size = int64(n)
				}
				l := loc
				l.Path = loc.Path + "/" + f.GetPath()
				if err := add(l, toDir+"/"+f.GetPath(), size); err != nil {
					return nil, err
				}
			}
			continue
		}
		// Older writers do not list an index's files: copy its directory.
		st, err := bases.Store(ctx, loc.Base)
		if err != nil {
			return nil, fmt.Errorf("open base path %q: %w", loc.Base, err)
		}
		objs, err := st.List(ctx, loc.Path+"/", store.ListOptions{})
		if err != nil {
			return nil, err
		}
		for _, o := range objs {
			if o.IsDir {
				continue
			}
			rel := strings.TrimPrefix(o.Key, loc.Path+"/")
			l := loc
			l.Path = o.Key
			if err := add(l, toDir+"/"+rel, o.Size); err != nil {
				return nil, err
			}
		}
	}
	sort.Slice(out, func(i, j int) bool { return out[i].toKey < out[j].toKey })
	return out, nil
}

// copyFiles copies every file s references into dst, skipping files that
// are already there with the expected size (resume).
func (d *Dataset) copyFiles(ctx context.Context, s *Snapshot, dst *store.Store, progress func(CopyProgress), res *CloneResult) error {
	own, err := d.BranchStore(s.Branch)
	if err != nil {
		return err
	}
	bases := store.NewBases(own)
	defer bases.Close()
	files, err := d.referencedFiles(ctx, s, bases)
	if err != nil {
		return err
	}
	p := CopyProgress{FilesTotal: len(files)}
	for i := range files {
		f := &files[i]
		if f.size < 0 {
			n, err := f.from.Size(ctx, f.fromKey)
			if err != nil {
				return fmt.Errorf("deep clone: source file %s: %w", f.fromKey, err)
			}
			f.size = n
		}
		p.BytesTotal += f.size
	}
	if progress != nil {
		progress(p)
	}
	for _, f := range files {
		if err := ctx.Err(); err != nil {
			return err
		}
		skipped := false
		if oi, err := dst.Stat(ctx, f.toKey); err == nil && oi.Size == f.size {
			skipped = true
		} else if err != nil && !errors.Is(err, store.ErrNotFound) {
			return err
		}
		if skipped {
			res.Skipped++
		} else {
			n, err := copyObject(ctx, f.from, f.fromKey, dst, f.toKey)
			if err != nil {
				return fmt.Errorf("deep clone: copy %s: %w", f.fromKey, err)
			}
			if n != f.size {
				return fmt.Errorf("deep clone: %s has %d bytes, the manifest says %d", f.fromKey, n, f.size)
			}
			res.Copied++
			res.Bytes += n
		}
		p.File, p.Skipped = f.toKey, skipped
		p.FilesDone++
		p.BytesDone += f.size
		if progress != nil {
			progress(p)
		}
	}
	return nil
}

// copyObject streams one object between stores; the target appears only
// when complete (store.Writer publishes on Close).
func copyObject(ctx context.Context, from *store.Store, fromKey string, to *store.Store, toKey string) (int64, error) {
	r, err := from.Bucket().NewReader(ctx, from.BucketKey(fromKey), nil)
	if err != nil {
		return 0, err
	}
	defer r.Close()
	w, err := to.NewWriter(ctx, toKey)
	if err != nil {
		return 0, err
	}
	n, err := io.Copy(w, r)
	if err != nil {
		w.Abort()
		return 0, err
	}
	if err := w.Close(); err != nil {
		return 0, err
	}
	return n, nil
}
