package commit

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"time"

	"gocloud.dev/blob"
	"google.golang.org/protobuf/proto"

	"github.com/lancekeeper/lancekeeper/flags"
	"github.com/lancekeeper/lancekeeper/manifest"
	"github.com/lancekeeper/lancekeeper/manifest/pb"
	"github.com/lancekeeper/lancekeeper/store"
)

// Store is the object-store surface the commit path uses. *store.Store
// implements it; tests wrap it to inject faults. Keys are relative to the
// dataset root; Bucket and KeyPrefix give read access for the manifest and
// data-file readers.
type Store interface {
	Bucket() *blob.Bucket
	KeyPrefix() string
	String() string
	// Kind names the backend; commits write the latest-version hint only
	// on local stores.
	Kind() store.Kind
	AtomicCreate() bool
	Get(ctx context.Context, key string) ([]byte, error)
	Exists(ctx context.Context, key string) (bool, error)
	Put(ctx context.Context, key string, data []byte) error
	// CreateIfAbsent is the commit point: it must fail with an error
	// wrapping store.ErrAlreadyExists when key exists.
	CreateIfAbsent(ctx context.Context, key string, data []byte) error
	NewWriter(ctx context.Context, key string) (*store.Writer, error)
	Delete(ctx context.Context, key string) error
}

var _ Store = (*store.Store)(nil)

// DefaultMaxRetries is the number of commit attempts (Lance's default).
const DefaultMaxRetries = 20

// Requirement is an assumption a commit states about the latest version;
// when it no longer holds the commit fails with a *RequirementError instead
// of being rebased (iceberg-style "requirements").
type Requirement interface {
	// Check is called on every attempt with the latest manifest (nil when the
	// dataset has no version yet).
	Check(latest *pb.Manifest) error
	String() string
}

type requireLatest uint64

func (r requireLatest) String() string { return fmt.Sprintf("latest version is %d", uint64(r)) }
func (r requireLatest) Check(latest *pb.Manifest) error {
	if latest.GetVersion() != uint64(r) {
		return &RequirementError{Requirement: r.String(), Latest: latest.GetVersion(),
			Detail: fmt.Sprintf("the dataset moved on to version %d", latest.GetVersion())}
	}
	return nil
}

// RequireLatestVersion fails the commit unless the latest version is still
// v (v = 0: the dataset must not exist).
func RequireLatestVersion(v uint64) Requirement { return requireLatest(v) }

// Options tune a commit.
type Options struct {
	// MaxRetries bounds the attempts (default DefaultMaxRetries).
	MaxRetries int
	// Requirements are checked against the latest version on every attempt.
	Requirements []Requirement
	// EnableZoneWriteSeeds is the explicit opt-in (R56) that lets a commit
	// whose new data files carry v1 seeds set FLAG_ZONE_WRITE_SEEDS on a
	// dataset that does not have it yet.
	EnableZoneWriteSeeds bool
	// AllowUnsafeCommit commits on a store without atomic create-if-absent.
	AllowUnsafeCommit bool
	// NoHint skips writing _versions/latest_version_hint.json, which
	// commits otherwise write on local stores.
	NoHint bool
	// InlineTransactionOnly is an opt-in: the commit writes no
	// _transactions/*.txn file; its transaction is stored only in the
	// manifest's inline section, the manifest's transaction_file is empty
	// and its writer flags carry DISABLE_TRANSACTION_FILE (bit 5, writer
	// only, per commit — lance-table-format.md §6.1, §6.2). It saves one
	// file creation and its syncs per commit. Lance 12 opens such a
	// version and appends after it (it reads the inline section first,
	// §5.2 a); a Lance writer that predates the flag (flags.Supported
	// without bit 5) refuses to write to the table until a later commit
	// without the flag is the latest version. Readers are not affected
	// (the bit is writer-only). Clones always write their .txn file.
	InlineTransactionOnly bool
	// Backoff returns the pause before attempt n (n ≥ 2); nil uses a
	// jittered exponential backoff.
	Backoff func(attempt int) time.Duration
	// Now returns the commit time; nil uses time.Now.
	Now func() time.Time
	// AfterCommit, when set, runs after a successful commit (and its
	// hint), e.g. maint.AfterCommit: Lance's automatic cleanup driven by
	// the lance.auto_cleanup.* config (§5.2 step 4). It cannot fail the
	// commit; it reports its own errors.
	AfterCommit func(ctx context.Context, res *Result)
}

func (o Options) withDefaults() Options {
	if o.MaxRetries <= 0 {
		o.MaxRetries = DefaultMaxRetries
	}
	if o.Backoff == nil {
		o.Backoff = defaultBackoff
	}
	if o.Now == nil {
		o.Now = time.Now
	}
	return o
}

// defaultBackoff: a random slot in [0, 2^min(n,8)) of 2 ms plus up to 1 ms,
// so concurrent losers spread out and the total wait stays bounded.
func defaultBackoff(attempt int) time.Duration {
	slots := int64(1) << min(attempt-1, 8)
	return time.Duration(rand.Int64N(slots))*2*time.Millisecond + time.Duration(rand.Int64N(int64(time.Millisecond)))
}

// Result describes a committed version. Manifest, Indices and Transaction
// are shared with the store's cache of the latest version
// (store.Store.Memo): the next commit through the same store builds on
// them copy on write (and checks conflicts against that transaction), so
// they are read-only — proto.Clone one before changing it.
type Result struct {
	Version      uint64
	ReadVersion  uint64
	ManifestPath string // relative to the dataset root
	Manifest     *pb.Manifest
	Indices      []*pb.IndexMetadata
	// TransactionFile is the .txn name recorded in the manifest.
	TransactionFile string
	// Transaction is the transaction as committed (after any rebase).
	Transaction *pb.Transaction
	// FragmentIDs are the ids given to the new fragments, in order.
	FragmentIDs []uint64
	// ReservedFirst..ReservedLast is the id range of a ReserveFragments.
	ReservedFirst, ReservedLast uint64
	// Attempts is the number of attempts the commit took (1 = no race).
	Attempts int
	// HintError is the (ignored) error of writing the hint file (nil when
	// no hint was written).
	HintError error
}

// errNoTransaction: a version whose transaction is available neither
// inline nor as a .txn file.
var errNoTransaction = errors.New("transaction unavailable")

// dataset caches the manifests and transactions one commit reads.
type dataset struct {
	st    Store
	root  string
	files map[uint64]*manifest.File
}

func (d *dataset) file(ctx context.Context, v uint64) (*manifest.File, error) {
	if f, ok := d.files[v]; ok {
		return f, nil
	}
	f, err := manifest.ReadVersion(ctx, d.st.Bucket(), d.root, v)
	if err != nil {
		return nil, err
	}
	d.files[v] = f
	return f, nil
}

// transactionOf returns the transaction that produced version v: the inline
// section first, else the external .txn file (§2 reader step 4, §5.2 a).
func (d *dataset) transactionOf(ctx context.Context, v uint64) (*pb.Transaction, error) {
	f, err := d.file(ctx, v)
	if err != nil {
		return nil, err
	}
	if f.Transaction != nil {
		return f.Transaction, nil
	}
	p := manifest.TransactionPath(f.Manifest)
	if p == "" {
		return nil, fmt.Errorf("%w: Dataset version %d does not have a transaction file", errNoTransaction, v)
	}
	data, err := d.st.Get(ctx, p)
	if errors.Is(err, store.ErrNotFound) {
		return nil, fmt.Errorf("%w: Dataset version %d does not have a transaction file (%s is missing)", errNoTransaction, v, p)
	}
	if err != nil {
		return nil, err
	}
	t := &pb.Transaction{}
	if err := proto.Unmarshal(data, t); err != nil {
		return nil, fmt.Errorf("%w: %s: %v", manifest.ErrCorrupt, p, err)
	}
	return t, nil
}

// latest returns the latest version and its naming scheme (0 when the
// dataset has no manifest).
func (d *dataset) latest(ctx context.Context) (manifest.VersionInfo, error) {
	info, err := manifest.LatestVersion(ctx, d.st.Bucket(), d.root)
	if err != nil {
		if manifest.IsNotFound(err) {
			return manifest.VersionInfo{Scheme: manifest.V2}, nil
		}
		return manifest.VersionInfo{}, err
	}
	return info, nil
}

// get reads the manifest of version v named under scheme through the
// store (one read on the local backend) and caches it; a missing manifest
// is an error matching manifest.ErrNotFound.
func (d *dataset) get(ctx context.Context, scheme manifest.NamingScheme, v uint64) (*manifest.File, error) {
	if f, ok := d.files[v]; ok {
		return f, nil
	}
	rel := manifest.ManifestPath(scheme, v)
	data, err := d.st.Get(ctx, rel)
	if errors.Is(err, store.ErrNotFound) {
		return nil, fmt.Errorf("%s: %w", rel, manifest.ErrNotFound)
	}
	if err != nil {
		return nil, err
	}
	f, err := manifest.Decode(manifest.Join(d.root, rel), data)
	if err != nil {
		return nil, err
	}
	d.files[v] = f
	return f, nil
}

// maxForward bounds the versions forward reads manifests past a known one
// before falling back to the authoritative discovery.
const maxForward = 64

// forward returns the latest version, knowing that from exists under
// scheme: it reads the manifests from+1, from+2, … until one is missing
// (each read is one a conflict check needs anyway, and the first miss is
// the existence probe), caching them. More than maxForward newer versions,
// or any error, falls back to latest.
func (d *dataset) forward(ctx context.Context, from manifest.VersionInfo) (manifest.VersionInfo, error) {
	cur := from
	for range maxForward {
		_, err := d.get(ctx, cur.Scheme, cur.Version+1)
		if manifest.IsNotFound(err) {
			return cur, nil
		}
		if err != nil {
			break
		}
		cur = manifest.VersionInfo{Version: cur.Version + 1, Scheme: cur.Scheme, Path: manifest.ManifestPath(cur.Scheme, cur.Version+1), Size: -1}
	}
	return d.latest(ctx)
}

// loadLatest discovers the latest version and reads its manifest with the
// fewest reads: on a local store the hint names v, one existence probe
// finds v+1 missing (else forward reads on) and the manifest of v is read
// — the read proves v exists, so the hinted version needs no stat of its
// own. Without a usable hint (object stores: none is written) it is
// one listing and one read. Readers never trust the hint: a
// hinted manifest that is missing falls back to the full discovery.
func (d *dataset) loadLatest(ctx context.Context) (*manifest.File, manifest.VersionInfo, error) {
	if writesHint(d.st) {
		if f, info, ok := d.fromMemo(ctx); ok {
			return f, info, nil
		}
		if raw, err := d.st.Get(ctx, manifest.VersionsDir+"/"+manifest.HintName); err == nil {
			if v, err := manifest.DecodeHint(manifest.HintName, raw); err == nil && v != 0 && !manifest.IsDetached(v) {
				hinted := manifest.VersionInfo{Version: v, Scheme: manifest.V2, Path: manifest.ManifestPath(manifest.V2, v), Size: -1}
				next, err := d.st.Exists(ctx, manifest.ManifestPath(manifest.V2, v+1))
				if err == nil && !next {
					if f, err := d.get(ctx, manifest.V2, v); err == nil {
						return f, hinted, nil
					}
				} else if err == nil {
					if _, err := d.get(ctx, manifest.V2, v); err == nil {
						info, err := d.forward(ctx, hinted)
						if err != nil {
							return nil, manifest.VersionInfo{}, err
						}
						f, err := d.file(ctx, info.Version)
						return f, info, err
					}
				}
			}
		}
		if err := ctx.Err(); err != nil {
			return nil, manifest.VersionInfo{}, err
		}
	}
	var info manifest.VersionInfo
	if writesHint(d.st) {
		var err error
		if info, err = d.latest(ctx); err != nil || info.Version == 0 {
			return nil, info, err
		}
	} else {
		// Object stores: no hint is written there, so a read of one would
		// be a request that finds nothing; one list page (V2 names sort
		// newest first) is the discovery.
		all, err := manifest.ListVersions(ctx, d.st.Bucket(), d.root)
		if manifest.IsNotFound(err) {
			return nil, manifest.VersionInfo{Scheme: manifest.V2}, nil
		}
		if err != nil {
			return nil, info, err
		}
		info = all[len(all)-1]
	}
	f, err := d.file(ctx, info.Version)
	return f, info, err
}

// Commit commits t to the dataset in st (lance-table-format.md §5.2): it
// checks t against every version committed after t's read version, rebases
// or fails per the conflict matrix, writes the transaction file, builds the
// next manifest from the latest version and publishes it with
// create-if-absent, retrying lost races up to opts.MaxRetries times with
// jittered backoff. On a local store the hint file is written last, best
// effort (writesHint).
func Commit(ctx context.Context, st Store, t *Transaction, opts Options) (*Result, error) {
	opts = opts.withDefaults()
	if err := requireAtomicCreate(st, opts.AllowUnsafeCommit); err != nil {
		return nil, err
	}
	if t.Kind() == OpUnknown {
		return nil, fmt.Errorf("%w: transaction has no operation", ErrInvalidTransaction)
	}
	d := &dataset{st: st, root: st.KeyPrefix(), files: map[uint64]*manifest.File{}}
	if k := t.known; k != nil && k.Manifest != nil {
		d.files[k.Manifest.GetVersion()] = k
	}
	if t.clone != nil {
		return commitClone(ctx, d, t, opts)
	}
	if err := inspectSeeds(ctx, d, t); err != nil {
		return nil, err
	}
	// Only an Overwrite with read version 0 creates a dataset (§5.2
	// commit_new_dataset); any other transaction needs one.
	creating := t.ReadVersion() == 0 && t.Kind() == OpOverwrite
	checked := t.ReadVersion()
	var writtenTxn []byte
	triedOptimistic := false
	// lost is the version the last attempt lost the race for (it exists).
	var lost manifest.VersionInfo
	for attempt := 1; ; attempt++ {
		if err := ctx.Err(); err != nil {
			return nil, err
		}
		// The first attempt of a WriteArrow append trusts the version its
		// write just read (optimistic): the create-if-absent below is the
		// arbiter, and a lost race falls back to the full path.
		optimistic := !triedOptimistic && t.knownInfo.Version != 0 && t.knownInfo.Version == t.ReadVersion()
		var info manifest.VersionInfo
		var err error
		switch {
		case optimistic:
			triedOptimistic = true
			info = t.knownInfo
		case lost.Version != 0:
			// The version this attempt lost to exists: read on from it.
			if info, err = d.forward(ctx, lost); err != nil {
				return nil, err
			}
		default:
			if info, err = d.latest(ctx); err != nil {
				return nil, err
			}
		}
		latestV := info.Version
		if creating && latestV != 0 {
			return nil, fmt.Errorf("%w: %s has version %d", ErrDatasetExists, st, latestV)
		}
		if !creating && latestV == 0 {
			return nil, fmt.Errorf("%w: %s has no manifest", ErrDatasetNotFound, st)
		}
		if latestV < checked {
			if attempt == 1 {
				// A read version the dataset never reached is the caller's
				// mistake (issue 15 item 6), not a storage failure.
				return nil, fmt.Errorf("%w: read version %d is beyond the latest version %d of %s", ErrInvalidTransaction, checked, latestV, st)
			}
			return nil, fmt.Errorf("%s: latest version %d is older than version %d seen before; refusing to commit", st, latestV, checked)
		}
		// Conflict checks against every version committed since the last
		// check (cumulative across attempts, §5.2 (1)).
		for v := checked + 1; v <= latestV; v++ {
			theirs, err := d.transactionOf(ctx, v)
			if errors.Is(err, errNoTransaction) || errors.Is(err, manifest.ErrCorrupt) {
				// Without the concurrent transaction nothing can be proven
				// compatible (§4.6).
				return nil, &ConflictError{Op: t.Kind().String(), ConcurrentOp: "Unknown", Version: v, Reason: err.Error()}
			}
			if err != nil {
				return nil, err
			}
			if err := checkAndRebase(ctx, d, t, theirs, v); err != nil {
				return nil, err
			}
			checked = v
		}
		var prev *pb.Manifest
		var prevIdx []*pb.IndexMetadata
		// schemaFile is the file whose schema (and any legacy dictionary
		// prelude) the new manifest keeps: the latest one, or the restore
		// target.
		var schemaFile, prevFile *manifest.File
		if latestV != 0 {
			f, err := d.file(ctx, latestV)
			if err != nil {
				return nil, err
			}
			prev, prevIdx, schemaFile, prevFile = f.Manifest, f.Indices(), f, f
			if err := flags.CheckRead(prev.GetReaderFeatureFlags(), prev.GetWriterFeatureFlags()); err != nil {
				return nil, fmt.Errorf("%s version %d: %w", st, latestV, err)
			}
			if err := flags.CheckWrite(prev.GetReaderFeatureFlags(), prev.GetWriterFeatureFlags()); err != nil {
				return nil, fmt.Errorf("%s version %d: %w", st, latestV, err)
			}
			// §5.2 e: statistics of an old writer are recomputed.
			if prev, err = fixupOldWriter(ctx, st, prev); err != nil {
				return nil, err
			}
		}
		for _, r := range opts.Requirements {
			if err := r.Check(prev); err != nil {
				return nil, err
			}
		}
		in := &buildInput{
			prev: prev, prevIndices: prevIdx, txn: t.msg, version: latestV + 1,
			now: opts.Now(), stableRowIDs: t.stableRowIDs, activateSeeds: t.activateSeeds,
			txnFile: t.FileName(), noTxnFile: opts.InlineTransactionOnly,
			prevChecked: prevFile != nil && prev == prevFile.Manifest && isMemoFile(st, prevFile),
		}
		if in.noTxnFile {
			in.txnFile = ""
		}
		if in.version&manifest.DetachedBit != 0 {
			return nil, fmt.Errorf("%s: version %d would set bit 63 (detached)", st, in.version)
		}
		// Q18: the seed decision is re-derived on every attempt, against the
		// manifest this attempt follows.
		if in.referencesV1Seeds, err = seedDecision(t, prev, opts); err != nil {
			return nil, err
		}
		if t.Kind() == OpRestore {
			f, err := d.file(ctx, t.msg.GetRestore().GetVersion())
			if err != nil {
				return nil, fmt.Errorf("restore: %w", err)
			}
			in.restoreTarget, in.restoreTargetIndices, schemaFile = f.Manifest, f.Indices(), f
		}
		if t.del != nil {
			if err := t.del.prepare(ctx, d, t, prev); err != nil {
				return nil, err
			}
		}
		res, err := build(in)
		if err != nil {
			return nil, err
		}
		if prev != nil {
			// §5.2 e: index bitmaps Lance recomputes (fixup_indices.go).
			if res.indices, err = fixIndices(ctx, st, prev, res.indices); err != nil {
				return nil, err
			}
		}
		if !in.noTxnFile {
			txnBytes, err := proto.MarshalOptions{Deterministic: true}.Marshal(t.msg)
			if err != nil {
				return nil, err
			}
			// The file name depends only on (read_version, uuid): a retry
			// rewrites it only when a rebase changed the transaction.
			if !bytes.Equal(txnBytes, writtenTxn) {
				if err := putPending(ctx, st, &t.pending, manifest.TransactionsDir+"/"+in.txnFile, txnBytes); err != nil {
					return nil, fmt.Errorf("write transaction file: %w", err)
				}
				writtenTxn = txnBytes
			}
		}
		var idx *pb.IndexSection
		if res.indices != nil {
			idx = &pb.IndexSection{Indices: res.indices}
		}
		var prelude []byte
		if schemaFile != nil {
			prelude = dictionaryPrelude(res.manifest, schemaFile.Manifest, schemaFile.Prelude)
		}
		scheme := info.Scheme
		if latestV == 0 || scheme == manifest.SchemeUnknown {
			scheme = manifest.V2
		}
		path := manifest.ManifestPath(scheme, in.version)
		// An append shares the fragments of prevFile (build), whose encoded
		// bytes are then copied instead of marshalled again.
		mf, data, err := manifest.EncodeFile(manifest.Join(d.root, path), prevFile, prelude, res.manifest, idx, t.msg)
		if err != nil {
			return nil, err
		}
		pending := t.pending
		if t.del != nil {
			pending = append(pending[:len(pending):len(pending)], t.del.pending...)
		}
		// The memo and the hint, written while the fsync of the
		// manifest's name runs (then runs only once the manifest is in
		// place; when it did not run, they are written below).
		var hintErr error
		posted := false
		// committed is the transaction as committed, one copy shared by
		// the memo and Result.Transaction (read-only): t stays the caller's.
		var committed *pb.Transaction
		post := func() {
			posted = true
			committed = proto.Clone(t.msg).(*pb.Transaction)
			mf.Transaction = committed
			rememberLatest(ctx, st, manifest.VersionInfo{Version: in.version, Scheme: scheme, Path: path, Size: int64(len(data))}, mf)
			hintErr = writeHint(ctx, st, opts, in.version)
		}
		pub, err := publish(ctx, st, path, data, pending, post)
		if err != nil {
			return nil, err
		}
		won := pub.won
		if !won {
			lost = manifest.VersionInfo{Version: in.version, Scheme: scheme, Path: path, Size: -1}
		}
		if pub.synced {
			// Durable now: a retry syncs only its new manifest.
			t.pending = nil
			if t.del != nil {
				t.del.pending = nil
			}
		}
		if !won {
			if pub.theirs != nil {
				// The winner's manifest, read back anyway: the retry
				// checks against it without reading it again.
				if f, err := manifest.Decode(manifest.Join(d.root, path), pub.theirs); err == nil {
					d.files[in.version] = f
				}
			}
			if creating {
				return nil, fmt.Errorf("%w: another writer created %s first", ErrDatasetExists, st)
			}
			if optimistic {
				attempt-- // not an attempt: the read version was already stale
				continue
			}
			if attempt >= opts.MaxRetries {
				return nil, fmt.Errorf("%w: Failed to commit the transaction after %d retries.", ErrTooManyRetries, opts.MaxRetries)
			}
			select {
			case <-ctx.Done():
				return nil, ctx.Err()
			case <-time.After(opts.Backoff(attempt + 1)):
			}
			continue
		}
		out := &Result{
			Version: in.version, ReadVersion: t.ReadVersion(), ManifestPath: path,
			Manifest: res.manifest, Indices: res.indices, TransactionFile: in.txnFile,
			FragmentIDs: res.newFragmentIDs, Attempts: attempt,
		}
		if res.reserved {
			out.ReservedFirst, out.ReservedLast = res.reservedFirst, res.reservedLast
		}
		if !posted {
			post()
		}
		out.Transaction = committed
		out.HintError = hintErr
		if opts.AfterCommit != nil {
			opts.AfterCommit(ctx, out)
		}
		return out, nil
	}
}

// writesHint reports whether commits on st write
// _versions/latest_version_hint.json. Lance writes the hint only on stores
// whose listing does not give the newest manifest cheaply (the local
// filesystem and S3 Express; lance-table-format.md §4.5); object stores with
// lexically ordered listings (S3, GCS, Azure, memory) never get one. Of
// those, our stores can tell only the local filesystem apart, so the hint is
// written on local stores alone. Readers never trust the hint over what
// exists (manifest.LatestVersion).
func writesHint(st Store) bool { return st.Kind() == store.KindLocal }

// writeHint writes the hint for version when writesHint(st) and the caller
// did not opt out; its error is returned for Result.HintError, never
// failing the commit.
func writeHint(ctx context.Context, st Store, opts Options, version uint64) error {
	if opts.NoHint || !writesHint(st) {
		return nil
	}
	return putHint(ctx, st, manifest.VersionsDir+"/"+manifest.HintName, manifest.EncodeHint(version))
}

// requireAtomicCreate is the commit path's gate (store.RequireAtomicCreate
// for any Store): a store without an atomic create-if-absent is refused
// with an error wrapping store.ErrNoAtomicCreate unless the caller set
// AllowUnsafeCommit, accepting that two concurrent commits may both succeed.
func requireAtomicCreate(st Store, allowUnsafeCommit bool) error {
	if s, ok := st.(*store.Store); ok {
		return s.RequireAtomicCreate(allowUnsafeCommit)
	}
	if st.AtomicCreate() || allowUnsafeCommit {
		return nil
	}
	return fmt.Errorf("store %s: %w: refusing to commit (set AllowUnsafeCommit to accept that two concurrent commits may both succeed)", st, store.ErrNoAtomicCreate)
}

// published is the outcome of publish.
type published struct {
	// won: the manifest is ours.
	won bool
	// synced: the pending objects are durable (see createManifest).
	synced bool
	// theirs: the bytes of the manifest that won instead (read back to
	// resolve the outcome), nil when unknown.
	theirs []byte
}

// publish writes a manifest with create-if-absent, the commit point. It
// reports won=false when another writer's manifest holds the name. An
// ambiguous failure (a timeout, a conditional PUT retried by the SDK after
// the first one landed) is resolved by reading the name back: our own bytes
// mean the commit happened. When even that is impossible, or the manifest
// is in place but the fsync of its name failed (store.ErrNotDurable), the
// error wraps ErrCommitOutcomeUnknown and the caller must not clean
// anything up.
func publish(ctx context.Context, st Store, path string, data []byte, pending []pendingKey, then func()) (published, error) {
	synced, cerr := createManifest(ctx, st, path, data, pending, then)
	if cerr == nil {
		return published{won: true, synced: synced}, nil
	}
	if errors.Is(cerr, store.ErrNotDurable) {
		// Linked, so visible (other writers may build on it), but the
		// fsync of its name failed: not a durable commit, and not one
		// that can be cleaned up either.
		return published{}, fmt.Errorf("%w: manifest %s is in place but was not made durable: %w", ErrCommitOutcomeUnknown, path, cerr)
	}
	got, gerr := st.Get(context.WithoutCancel(ctx), path)
	switch {
	case gerr == nil:
		if bytes.Equal(got, data) {
			return published{won: true, synced: synced}, nil
		}
		return published{synced: synced, theirs: got}, nil
	case errors.Is(gerr, store.ErrNotFound):
		if errors.Is(cerr, store.ErrAlreadyExists) {
			return published{synced: synced}, nil
		}
		return published{}, fmt.Errorf("write manifest %s: %w", path, cerr)
	}
	return published{}, fmt.Errorf("%w: write manifest %s: %w (reading it back failed: %v)", ErrCommitOutcomeUnknown, path, cerr, gerr)
}

// checkAndRebase applies the conflict matrix to t against the transaction
// committed at version v.
func checkAndRebase(ctx context.Context, d *dataset, t *Transaction, theirs *pb.Transaction, v uint64) error {
	o, why := checkConflict(t.msg, theirs)
	conflict := func(retryable bool, reason string) error {
		return &ConflictError{Op: t.Kind().String(), ConcurrentOp: KindOf(theirs).String(), Version: v, Retryable: retryable, Reason: reason}
	}
	switch o {
	case outcomeCompatible:
		return nil
	case outcomeRetryable:
		return conflict(true, why)
	case outcomeIncompatible:
		return conflict(false, why)
	}
	// Rebase: only Delete rebases in this build.
	if t.del == nil {
		return conflict(true, why)
	}
	if r, reason, err := t.del.rebase(ctx, d, theirs, v); err != nil {
		return err
	} else if r != outcomeCompatible && r != outcomeRebase {
		return conflict(r == outcomeRetryable, reason)
	}
	return nil
}
