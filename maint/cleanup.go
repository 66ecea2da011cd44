package maint

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/lancekeeper/lancekeeper/manifest"
	"github.com/lancekeeper/lancekeeper/manifest/pb"
	"github.com/lancekeeper/lancekeeper/snapshot"
	"github.com/lancekeeper/lancekeeper/store"
)

// UnverifiedThreshold is how old a file no manifest references must be
// before cleanup deletes it without DeleteUnverified (Lance: 7 days): it
// may belong to a writer that has not committed yet.
const UnverifiedThreshold = 7 * 24 * time.Hour

// CleanupOptions is Lance's cleanup policy (lance-table-format.md §8.4).
type CleanupOptions struct {
	// OlderThan: versions whose manifest timestamp is before now-OlderThan
	// are removed (unless kept for another reason). Before, when not zero,
	// is the cutoff itself. One of OlderThan, Before or RetainVersions is
	// required.
	OlderThan time.Duration
	Before    time.Time
	// RetainVersions keeps the newest N versions whatever their age (0 =
	// no such rule). With a cutoff too, a version is removed only when both
	// rules remove it.
	RetainVersions uint64
	// DeleteUnverified also deletes files no manifest references that are
	// younger than UnverifiedThreshold (but never newer than the cutoff).
	DeleteUnverified bool
	// KeepTaggedOldVersions is Lance's error_if_tagged_old_versions=false:
	// tagged versions the policy would remove are kept silently. By default
	// (as in Lance) such versions make Cleanup fail with ErrTaggedVersions
	// before anything is deleted.
	KeepTaggedOldVersions bool
	// DryRun computes the result without deleting anything.
	DryRun bool
	// Now is the clock (nil: time.Now).
	Now func() time.Time
	// crashAt, in tests, stops the deletions before the n-th one (1-based)
	// as a crash would.
	crashAt int
}

// CleanupResult lists what Cleanup removed (or, on a dry run, would remove).
type CleanupResult struct {
	Cutoff          time.Time `json:"cutoff"`
	Latest          uint64    `json:"latest_version"`
	RemovedVersions []uint64  `json:"removed_versions"`
	// KeptVersions are the versions left; TaggedVersions and
	// BranchedVersions those kept only because a tag or branch refers to
	// them.
	KeptVersions     []uint64 `json:"kept_versions"`
	TaggedVersions   []uint64 `json:"tagged_versions"`
	BranchedVersions []uint64 `json:"branched_versions"`
	// RemovedFiles are paths relative to the dataset root, sorted.
	RemovedFiles []string `json:"removed_files"`
	BytesRemoved int64    `json:"bytes_removed"`
	DryRun       bool     `json:"dry_run"`
	// Requests counts object-store calls (lists, reads, deletes).
	Requests int `json:"requests"`
}

// fileSet is a set of dataset-root-relative paths; index directories are
// recorded as "_indices/<uuid>/".
type fileSet map[string]bool

func (s fileSet) addManifest(m *pb.Manifest, idx []*pb.IndexMetadata) {
	for _, k := range manifestFiles(m, idx) {
		s[k] = true
	}
}

// manifestFiles lists the keys of the files a manifest references, as
// fileSet records them (a file referenced through another base path is
// prefixed "base:").
func manifestFiles(m *pb.Manifest, idx []*pb.IndexMetadata) []string {
	var out []string
	for _, f := range m.GetFragments() {
		for _, df := range f.GetFiles() {
			if df.BaseId == nil {
				out = append(out, manifest.DataDir+"/"+df.GetPath())
			} else {
				out = append(out, "base:"+manifest.DataDir+"/"+df.GetPath())
			}
		}
		if d := f.GetDeletionFile(); d != nil {
			if name, err := manifest.DeletionFileName(f.GetId(), d); err == nil {
				if d.BaseId == nil {
					out = append(out, manifest.DeletionsDir+"/"+name)
				} else {
					out = append(out, "base:"+manifest.DeletionsDir+"/"+name)
				}
			}
		}
	}
	for _, ix := range idx {
		if u, err := manifest.IndexUUID(ix); err == nil {
			if ix.BaseId == nil {
				out = append(out, manifest.IndicesDir+"/"+u+"/")
			} else {
				out = append(out, "base:"+manifest.IndicesDir+"/"+u+"/")
			}
		}
	}
	if p := manifest.TransactionPath(m); p != "" {
		out = append(out, p)
	}
	return out
}

// has reports whether key (a listed file) is referenced: directly, or as a
// file of a referenced index directory; files referenced through another
// base with the same relative path count too (shallow clones and branches
// reference a parent root through a base).
func (s fileSet) has(key string) bool {
	if s[key] || s["base:"+key] {
		return true
	}
	if rest, ok := strings.CutPrefix(key, manifest.IndicesDir+"/"); ok {
		if u, _, ok := strings.Cut(rest, "/"); ok {
			d := manifest.IndicesDir + "/" + u + "/"
			return s[d] || s["base:"+d]
		}
	}
	return false
}

// Cleanup removes old versions as Lance's cleanup_old_versions does
// (§8.4): a version is removed when its manifest is older than the cutoff
// (and outside the newest RetainVersions), unless it is the latest, a tag
// on the main branch names it, or a branch forks from it. Then every file
// under data/, _deletions/, _indices/ and _transactions/ of the dataset
// root that no kept manifest (nor any branch manifest) references is
// deleted if a removed manifest referenced it ("verified"), or if it is
// older than UnverifiedThreshold (or DeleteUnverified is set) — and never
// when it was modified at or after the cutoff, or after the timestamp of
// the oldest kept manifest (as Lance 12, which lists only files modified
// before that: a newer file may belong to a write in flight, or be a
// copy of the table whose modification times are all recent). Files under other base
// paths are never touched; branch trees (tree/) are left to their branch.
//
// Crash safety: removed manifests are deleted first, oldest first, then
// the files; an interrupted cleanup leaves only unreferenced files, which
// a later cleanup removes.
func Cleanup(ctx context.Context, st *store.Store, opts CleanupOptions) (*CleanupResult, error) {
	now := time.Now
	if opts.Now != nil {
		now = opts.Now
	}
	t0 := now()
	cutoff := opts.Before
	if cutoff.IsZero() {
		if opts.OlderThan < 0 {
			return nil, fmt.Errorf("%w: negative --older-than %v", ErrInvalidOptions, opts.OlderThan)
		}
		if opts.OlderThan == 0 && opts.RetainVersions == 0 {
			return nil, fmt.Errorf("%w: cleanup needs an age (older-than) or a number of versions to retain", ErrInvalidOptions)
		}
		cutoff = t0.Add(-opts.OlderThan)
	}
	res := &CleanupResult{Cutoff: cutoff, DryRun: opts.DryRun}
	// The four file directories are listed while the versions are listed
	// and their manifests read: the listings do not depend on the
	// manifests, and a file that appears after its directory was listed is
	// simply not considered (a later cleanup sees it).
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	listings := listDirs(ctx, st, cleanupDirs)
	versions, err := manifest.ListVersions(ctx, st.Bucket(), st.KeyPrefix())
	res.Requests++
	if err != nil {
		return nil, err
	}
	if len(versions) == 0 {
		return nil, fmt.Errorf("%w: %s has no versions", manifest.ErrNotFound, st)
	}
	slices.SortFunc(versions, func(a, b manifest.VersionInfo) int {
		switch {
		case a.Version < b.Version:
			return -1
		case a.Version > b.Version:
			return 1
		}
		return 0
	})
	latest := versions[len(versions)-1].Version
	res.Latest = latest
	d := snapshot.NewDataset(st.String(), st)
	tags, err := d.ListTags(ctx)
	res.Requests++
	if err != nil {
		return nil, err
	}
	tagged := map[uint64][]string{}
	for _, tg := range tags {
		if tg.Branch == "" {
			tagged[tg.Version] = append(tagged[tg.Version], tg.Name)
		}
	}
	branches, err := d.ListBranches(ctx)
	res.Requests++
	if err != nil {
		return nil, err
	}
	branched := map[uint64]bool{}
	keep := fileSet{}
	for _, b := range branches {
		if b.ParentBranch == "" {
			branched[b.ParentVersion] = true
		}
		// Files a branch's manifests reference through a base are kept.
		bst, err := d.BranchStore(b.Name)
		if err != nil {
			return nil, err
		}
		bvs, err := manifest.ListVersions(ctx, bst.Bucket(), bst.KeyPrefix())
		res.Requests++
		if err != nil && !errors.Is(err, manifest.ErrNotFound) {
			return nil, fmt.Errorf("branch %s: %w", b.Name, err)
		}
		for _, bv := range bvs {
			f, err := manifest.ReadInfo(ctx, bst.Bucket(), bst.KeyPrefix(), bv)
			res.Requests++
			if err != nil {
				return nil, fmt.Errorf("branch %s version %d: %w", b.Name, bv.Version, err)
			}
			for k := range collect(f) {
				if strings.HasPrefix(k, "base:") {
					keep[k] = true
				}
			}
		}
	}
	var beforeVersion uint64
	if opts.RetainVersions > 0 && latest >= opts.RetainVersions {
		beforeVersion = latest - opts.RetainVersions + 1
	}
	removedFiles := fileSet{}
	var removedManifests []manifest.VersionInfo
	refs, err := readManifests(ctx, st, versions)
	res.Requests += len(versions)
	if err != nil {
		return nil, err
	}
	// earliestKept is the oldest timestamp of a kept manifest: a file
	// modified after it may belong to a write in flight (or be a copy) and
	// is never deleted, verified or not, as Lance 12 lists only files
	// modified before it.
	var earliestKept time.Time
	for i, vi := range versions {
		ts := refs[i].timestamp
		remove := vi.Version != latest
		if opts.Before.IsZero() && opts.OlderThan == 0 {
			// retain-versions only
		} else {
			remove = remove && ts.Before(cutoff)
		}
		if opts.RetainVersions > 0 {
			remove = remove && vi.Version < beforeVersion
		}
		switch {
		case remove && len(tagged[vi.Version]) > 0:
			remove = false
			res.TaggedVersions = append(res.TaggedVersions, vi.Version)
		case remove && branched[vi.Version]:
			remove = false
			res.BranchedVersions = append(res.BranchedVersions, vi.Version)
		}
		if remove {
			removedManifests = append(removedManifests, vi)
			res.RemovedVersions = append(res.RemovedVersions, vi.Version)
			for _, k := range refs[i].files {
				removedFiles[k] = true
			}
		} else {
			res.KeptVersions = append(res.KeptVersions, vi.Version)
			if earliestKept.IsZero() || ts.Before(earliestKept) {
				earliestKept = ts
			}
			for _, k := range refs[i].files {
				keep[k] = true
			}
		}
	}
	if len(res.TaggedVersions) > 0 && !opts.KeepTaggedOldVersions {
		var parts []string
		n := 0
		for _, v := range res.TaggedVersions {
			for _, name := range tagged[v] {
				parts = append(parts, fmt.Sprintf("%q: %d", name, v))
				n++
			}
		}
		slices.Sort(parts)
		return nil, fmt.Errorf("%w: %d tagged version(s) have been marked for cleanup. Either set `error_if_tagged_old_versions=false` or delete the following tag(s) to enable cleanup: {%s}",
			ErrTaggedVersions, n, strings.Join(parts, ", "))
	}
	type victim struct {
		key  string
		size int64
	}
	var victims []victim
	for _, vi := range removedManifests {
		victims = append(victims, victim{vi.Path, vi.Size})
	}
	unverifiedBefore := t0.Add(-UnverifiedThreshold)
	for i, dir := range cleanupDirs {
		l := <-listings[i]
		res.Requests++
		if l.err != nil {
			return nil, l.err
		}
		for _, o := range l.objs {
			if o.IsDir || keep.has(o.Key) || !o.ModTime.Before(cutoff) || o.ModTime.After(earliestKept) {
				continue
			}
			if !wantedFile(dir, o.Key) {
				continue
			}
			if removedFiles.has(o.Key) || opts.DeleteUnverified || o.ModTime.Before(unverifiedBefore) {
				victims = append(victims, victim{o.Key, o.Size})
			}
		}
	}
	for _, v := range victims {
		res.RemovedFiles = append(res.RemovedFiles, v.key)
		res.BytesRemoved += v.size
	}
	slices.Sort(res.RemovedFiles)
	if opts.DryRun {
		return res, nil
	}
	if opts.crashAt > 0 {
		for i, v := range victims {
			if opts.crashAt == i+1 {
				return res, errCrash
			}
			if err := st.Delete(ctx, v.key); err != nil && !errors.Is(err, store.ErrNotFound) {
				return res, fmt.Errorf("cleanup: deleting %s: %w", v.key, err)
			}
		}
		return res, nil
	}
	// The removed manifests first, then the files (each phase concurrent).
	phases := [][]victim{victims[:len(removedManifests)], victims[len(removedManifests):]}
	for _, ph := range phases {
		keys := make([]string, len(ph))
		for i, v := range ph {
			keys[i] = v.key
		}
		n, err := st.DeleteMany(ctx, keys)
		res.Requests += n
		if err != nil {
			return res, fmt.Errorf("cleanup: %w", err)
		}
	}
	return res, nil
}

var errCrash = errors.New("maint: simulated crash")

// wantedFile: the file kinds cleanup may delete in each directory.
func wantedFile(dir, key string) bool {
	switch dir {
	case manifest.DataDir:
		return strings.HasSuffix(key, ".lance")
	case manifest.DeletionsDir:
		return strings.HasSuffix(key, ".arrow") || strings.HasSuffix(key, ".bin")
	case manifest.TransactionsDir:
		return strings.HasSuffix(key, ".txn")
	}
	return true
}

func collect(f *manifest.File) fileSet {
	s := fileSet{}
	s.addManifest(f.Manifest, f.Indices())
	return s
}

// cleanupDirs are the directories whose files cleanup may delete.
var cleanupDirs = [...]string{manifest.DataDir, manifest.DeletionsDir, manifest.IndicesDir, manifest.TransactionsDir}

type listing struct {
	objs []store.ObjectInfo
	err  error
}

// listDirs lists each of dirs (recursively) in its own goroutine; the
// i-th channel receives the i-th listing.
func listDirs(ctx context.Context, st *store.Store, dirs [len(cleanupDirs)]string) [len(cleanupDirs)]chan listing {
	var out [len(cleanupDirs)]chan listing
	for i, dir := range dirs {
		out[i] = make(chan listing, 1)
		go func() {
			objs, err := st.List(ctx, dir+"/", store.ListOptions{})
			out[i] <- listing{objs, err}
		}()
	}
	return out
}

// ioConcurrency bounds the manifest reads cleanup keeps in flight
// (object stores answer each in tens of milliseconds; local
// directories serialize on their own locks).
const ioConcurrency = 32

// versionRefs is what cleanup needs of one manifest: its timestamp and the
// files it references (manifestFiles), so that the decoded manifest need
// not be kept.
type versionRefs struct {
	timestamp time.Time
	files     []string
}

// readManifests reads the manifests of versions with ioConcurrency
// workers and keeps of each only its versionRefs.
func readManifests(ctx context.Context, st *store.Store, versions []manifest.VersionInfo) ([]versionRefs, error) {
	out := make([]versionRefs, len(versions))
	errs := make([]error, len(versions))
	forEach(ctx, len(versions), func(i int) {
		vi := versions[i]
		f, err := manifest.ReadInfo(ctx, st.Bucket(), st.KeyPrefix(), vi)
		if err != nil {
			errs[i] = fmt.Errorf("version %d: %w", vi.Version, err)
			return
		}
		out[i] = versionRefs{f.Manifest.GetTimestamp().AsTime(), manifestFiles(f.Manifest, f.Indices())}
	})
	for _, err := range errs {
		if err != nil {
			return nil, err
		}
	}
	return out, ctx.Err()
}

// forEach calls fn(0…n-1) from min(n, ioConcurrency) workers; after ctx
// is cancelled no further call starts.
func forEach(ctx context.Context, n int, fn func(i int)) {
	var next atomic.Int64
	var wg sync.WaitGroup
	for range min(n, ioConcurrency) {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for ctx.Err() == nil {
				i := int(next.Add(1) - 1)
				if i >= n {
					return
				}
				fn(i)
			}
		}()
	}
	wg.Wait()
}
