package commit

import (
	"context"
	"errors"

	"github.com/lancekeeper/lancekeeper/manifest"
	"github.com/lancekeeper/lancekeeper/store"
)

// The durable commit sequence on the local filesystem (store/durable.go):
//
//  1. data files, deletion files and the transaction file are written and
//     renamed to their names without fsync (nothing refers to them yet);
//  2. the commit point, CreateIfAbsentAfter: the manifest's temporary file,
//     every file of step 1 and each of their directories are fsynced in
//     parallel, then the manifest is linked to its name and _versions/
//     fsynced — the commit returns only after that;
//  3. the latest-version hint is written without any fsync: readers never
//     trust it over what exists (manifest.LatestVersion).
//
// The critical path is two fsync latencies (the parallel batch, then the
// _versions/ directory) where a Put per object cost two each: eight for a
// one-file append. A crash anywhere before the link leaves only
// unreferenced files; after it, the manifest names only durable files.
// Stores that do not offer the batched forms (fault-injecting wrappers in
// tests) get the per-object durable writes as before.

// batchStore is the part of *store.Store the batched sequence uses.
type batchStore interface {
	NewDeferredWriter(ctx context.Context, key string) (*store.Writer, error)
	PutDeferred(ctx context.Context, key string, data []byte) error
	SyncKeys(ctx context.Context, keys []string) error
	CreateIfAbsentAfter(ctx context.Context, key string, data []byte, after []string) (synced bool, err error)
}

var _ batchStore = (*store.Store)(nil)

func asBatch(st Store) (batchStore, bool) {
	bs, ok := st.(batchStore)
	return bs, ok
}

// pendingKey is an object written without fsync, with the store that wrote
// it (the commit may go through another Store value, e.g. a wrapper).
type pendingKey struct {
	bs  batchStore
	key string
}

// newDataWriter opens a data file for w: deferred (synced by the commit or
// by syncPending) when the store batches.
func (w *WrittenFiles) newDataWriter(ctx context.Context, path string) (*store.Writer, error) {
	if bs, ok := asBatch(w.st); ok {
		sw, err := bs.NewDeferredWriter(ctx, path)
		if err == nil {
			w.unsynced = append(w.unsynced, path)
		}
		return sw, err
	}
	return w.st.NewWriter(ctx, path)
}

// lazyFile is a data file of w that is created (newDataWriter) only when
// its first bytes are written, so a data-file writer can exist — as the
// check of the schema before anything is written — without a file.
type lazyFile struct {
	ctx  context.Context
	w    *WrittenFiles
	path string // relative to the dataset root: data/<name>.lance
	sw   *store.Writer
}

func (w *WrittenFiles) newLazyFile(ctx context.Context) *lazyFile {
	return &lazyFile{ctx: ctx, w: w, path: manifest.DataDir + "/" + NewDataFileName()}
}

func (f *lazyFile) open() error {
	if f.sw != nil {
		return nil
	}
	sw, err := f.w.newDataWriter(f.ctx, f.path)
	if err != nil {
		return err
	}
	f.sw = sw
	return nil
}

func (f *lazyFile) Write(p []byte) (int, error) {
	if err := f.open(); err != nil {
		return 0, err
	}
	return f.sw.Write(p)
}

// Close completes the file (creating it first if nothing was written).
func (f *lazyFile) Close() error {
	if err := f.open(); err != nil {
		return err
	}
	return f.sw.Close()
}

// Abort discards the file, if it was created.
func (f *lazyFile) Abort() error {
	if f.sw == nil {
		return nil
	}
	return f.sw.Abort()
}

// syncPending makes the files written deferred durable (one parallel batch).
func (w *WrittenFiles) syncPending(ctx context.Context) error {
	if len(w.unsynced) == 0 {
		return nil
	}
	bs, _ := asBatch(w.st)
	if err := bs.SyncKeys(ctx, w.unsynced); err != nil {
		return err
	}
	w.unsynced = nil
	return nil
}

// putPending writes an object the commit must make durable before its
// manifest (transaction file, deletion file): deferred and recorded in
// pending when the store batches, durable at once otherwise. A deferred
// object is created under its own (fresh, random) name in one write; a
// name that exists already — the transaction file rewritten after a rebase
// changed it — is replaced atomically instead.
func putPending(ctx context.Context, st Store, pending *[]pendingKey, key string, data []byte) error {
	bs, ok := asBatch(st)
	if !ok || pending == nil {
		return st.Put(ctx, key, data)
	}
	w, err := bs.NewDeferredWriter(ctx, key)
	switch {
	case errors.Is(err, store.ErrAlreadyExists):
		err = bs.PutDeferred(ctx, key, data)
	case err == nil:
		if _, err = w.Write(data); err != nil {
			_ = w.Abort()
		} else {
			err = w.Close()
		}
	}
	if err != nil {
		return err
	}
	*pending = append(*pending, pendingKey{bs, key})
	return nil
}

// pendingFrom records keys written deferred through st.
func pendingFrom(st Store, keys []string) []pendingKey {
	bs, ok := asBatch(st)
	if !ok {
		return nil
	}
	out := make([]pendingKey, 0, len(keys))
	for _, k := range keys {
		out = append(out, pendingKey{bs, k})
	}
	return out
}

// createManifest is the commit point: create-if-absent of the manifest
// after the pending objects are durable. Objects pending on st itself are
// synced in the same parallel batch as the manifest; objects pending on
// another store are synced first. synced reports that every pending object
// is durable now (also when the create then lost the race), so a retry
// need not sync them again.
//
// then (unless nil) runs once the manifest is in place: on a *store.Store
// while the fsync of its name runs (CreateIfAbsentAfterThen), elsewhere
// not at all — the caller runs it itself when it did not.
func createManifest(ctx context.Context, st Store, path string, data []byte, pending []pendingKey, then func()) (synced bool, err error) {
	bs, batch := asBatch(st)
	var mine []string
	others := map[batchStore][]string{}
	for _, p := range pending {
		if batch && p.bs == bs {
			mine = append(mine, p.key)
		} else {
			others[p.bs] = append(others[p.bs], p.key)
		}
	}
	for obs, keys := range others {
		if err := obs.SyncKeys(ctx, keys); err != nil {
			return false, err
		}
	}
	if s, ok := st.(*store.Store); ok && then != nil {
		// Only the concrete store: a wrapper's own CreateIfAbsentAfter
		// (fault injection in tests) must not be bypassed.
		return s.CreateIfAbsentAfterThen(ctx, path, data, mine, then)
	}
	if batch {
		return bs.CreateIfAbsentAfter(ctx, path, data, mine)
	}
	return len(mine) == 0, st.CreateIfAbsent(ctx, path, data)
}

// inPlaceStore writes an object with neither atomicity nor durability
// (store.Store.PutInPlace).
type inPlaceStore interface {
	PutInPlace(ctx context.Context, key string, data []byte) error
}

// putHint writes the latest-version hint, which needs no durability and no
// atomicity (readers never trust it; a torn or garbage hint only sends them
// to the listing): in place where the store can (no temporary file, no
// rename), else without fsync.
func putHint(ctx context.Context, st Store, key string, data []byte) error {
	if ip, ok := st.(inPlaceStore); ok {
		return ip.PutInPlace(ctx, key, data)
	}
	if bs, ok := asBatch(st); ok {
		return bs.PutDeferred(ctx, key, data)
	}
	return st.Put(ctx, key, data)
}

// memoStore keeps per-store state across commits (store.Store.Memo).
type memoStore interface {
	Memo(name string) any
	SetMemo(name string, v any)
	Identity(ctx context.Context, key string) (string, error)
}

// latestMemo is the manifest a commit through this store just published:
// the next commit on the same dataset starts from it instead of reading
// the hint and the manifest back (loadLatest). It is trusted only while
// the next version is missing and the manifest file still has the identity
// it had right after the link (store.Store.Identity: same inode, size and
// times) — a dataset deleted and made again under the same path, or a
// manifest replaced by hand, is read from the store as before.
//
// file is the manifest as committed (manifest.EncodeFile: the File its
// bytes decode to, made without decoding, which also lets the next append
// copy the encoded fragment list). Nothing reachable from it is ever
// modified: commits build on it copy on write (build.go).
type latestMemo struct {
	info  manifest.VersionInfo
	file  *manifest.File
	ident string
}

func memoName(root string) string { return "commit/latest " + root }

// rememberLatest records the manifest just published at info (local
// stores only: elsewhere the identity costs a request, as much as the read
// it saves). A newer memo is kept.
func rememberLatest(ctx context.Context, st Store, info manifest.VersionInfo, file *manifest.File) {
	ms, ok := st.(memoStore)
	if !ok || !writesHint(st) {
		return
	}
	name := memoName(st.KeyPrefix())
	if old, ok := ms.Memo(name).(*latestMemo); ok && old.info.Version > info.Version {
		return
	}
	id, err := ms.Identity(ctx, info.Path)
	if err != nil {
		ms.SetMemo(name, nil)
		return
	}
	ms.SetMemo(name, &latestMemo{info: info, file: file, ident: id})
}

// fromMemo returns the latest manifest from the memo of rememberLatest
// when it is still the latest: its successor is missing (one existence
// probe, as the hinted path makes) and the file is unchanged (one stat).
func (d *dataset) fromMemo(ctx context.Context) (*manifest.File, manifest.VersionInfo, bool) {
	ms, ok := d.st.(memoStore)
	if !ok {
		return nil, manifest.VersionInfo{}, false
	}
	m, ok := ms.Memo(memoName(d.root)).(*latestMemo)
	if !ok {
		return nil, manifest.VersionInfo{}, false
	}
	next, err := d.st.Exists(ctx, manifest.ManifestPath(m.info.Scheme, m.info.Version+1))
	if err != nil || next {
		return nil, manifest.VersionInfo{}, false
	}
	if id, err := ms.Identity(ctx, m.info.Path); err != nil || id != m.ident {
		return nil, manifest.VersionInfo{}, false
	}
	d.files[m.info.Version] = m.file
	return m.file, m.info, true
}

// isMemoFile reports whether f is the manifest the memo of st holds for
// its dataset: one this package built and checked (checkVersionInvariants).
func isMemoFile(st Store, f *manifest.File) bool {
	ms, ok := st.(memoStore)
	if !ok || f == nil {
		return false
	}
	m, ok := ms.Memo(memoName(st.KeyPrefix())).(*latestMemo)
	return ok && m.file == f
}
