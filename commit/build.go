package commit

import (
	"fmt"
	"sort"
	"time"

	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/types/known/timestamppb"

	"github.com/lancekeeper/lancekeeper/flags"
	"github.com/lancekeeper/lancekeeper/manifest/pb"
)

// Library and Version identify this writer in Manifest.writer_version
// (lance-table-format.md §3.1, §9 trap 3).
const (
	Library = "lancekeeper"
	Version = "0.1.0"
)

// writerVersion returns the writer_version this package records.
func writerVersion() *pb.Manifest_WriterVersion {
	return &pb.Manifest_WriterVersion{Library: Library, Version: Version}
}

// buildInput is everything the manifest builder needs; building is a pure
// function of it, so every attempt of a commit re-derives the manifest (and
// its flags, Q18) from the latest version it is about to follow.
type buildInput struct {
	prev        *pb.Manifest        // latest manifest; nil when creating a dataset
	prevIndices []*pb.IndexMetadata // its index section
	txn         *pb.Transaction     // the transaction, already rebased
	txnFile     string              // name of the .txn file in _transactions/ ("" when none)
	noTxnFile   bool                // no .txn file: the transaction is inline only (flag bit 5)
	version     uint64              // version of the manifest being built
	now         time.Time

	// Restore: the manifest (and indices) of the version being restored.
	restoreTarget        *pb.Manifest
	restoreTargetIndices []*pb.IndexMetadata

	// Seeds: the transaction's new data files carry v1 seeds (R54), or the
	// transaction is an explicit activation commit (R56).
	referencesV1Seeds bool
	activateSeeds     bool
	// stableRowIDs requests stable row ids when creating a dataset.
	stableRowIDs bool
}

// buildResult is the manifest to write plus what the caller reports back.
type buildResult struct {
	manifest *pb.Manifest
	indices  []*pb.IndexMetadata // nil: no index section
	// newFragmentIDs are the ids assigned to the transaction's new
	// fragments, in transaction order.
	newFragmentIDs []uint64
	// reserved is the first and last fragment id reserved by a
	// ReserveFragments transaction (ok=false otherwise).
	reservedFirst, reservedLast uint64
	reserved                    bool
}

// builder is the manifest under construction for one transaction. Each
// operation has one apply function, in its own file (apply_<operation>.go),
// that edits the builder — as iceberg-go applies each Update to a metadata
// builder; finish then derives what every manifest recomputes. Adding an
// operation is adding its apply function and its case in (*builder).apply.
type builder struct {
	in      *buildInput
	m       *pb.Manifest        // the new manifest, starting as a copy of in.prev
	indices []*pb.IndexMetadata // the new index list, starting as in.prevIndices
	res     *buildResult
	// stable: new fragments get stable row ids (requested, or the
	// previous version uses them).
	stable bool
	// prevR, prevW are the previous version's flag words (0 when creating).
	prevR, prevW uint64
}

// build builds the next manifest for the transaction (§5.5; §8.3 for
// Restore). Clone has its own builder (buildClone).
func build(in *buildInput) (*buildResult, error) {
	kind := KindOf(in.txn)
	if in.prev == nil && kind != OpOverwrite {
		return nil, fmt.Errorf("%w: a %s transaction needs an existing dataset", ErrDatasetNotFound, kind)
	}
	if kind == OpRestore {
		return buildRestore(in)
	}
	var m *pb.Manifest
	if in.prev != nil {
		m = proto.Clone(in.prev).(*pb.Manifest)
	} else {
		m = &pb.Manifest{}
	}
	common(m, in)
	m.WriterVersion = writerVersion()
	b := &builder{
		in:      in,
		m:       m,
		indices: cloneIndices(in.prevIndices),
		res:     &buildResult{manifest: m},
		stable:  in.stableRowIDs || usesStableRowIDs(in.prev),
	}
	if in.prev != nil {
		b.prevR, b.prevW = in.prev.GetReaderFeatureFlags(), in.prev.GetWriterFeatureFlags()
	}
	if err := b.apply(in.txn); err != nil {
		return nil, err
	}
	dedupFieldIDs(b.m) // §5.2 e, on every commit as Lance does (fixup_schema.go)
	if err := finish(b.m, b.indices, b.prevR, b.prevW, in); err != nil {
		return nil, err
	}
	if in.prevIndices != nil || len(b.indices) > 0 {
		b.res.indices = b.indices
	}
	return b.res, nil
}

// apply hands the transaction's operation to its apply function.
func (b *builder) apply(t *pb.Transaction) error {
	switch op := t.GetOperation().(type) {
	case *pb.Transaction_Append_:
		return applyAppend(b, op.Append)
	case *pb.Transaction_Overwrite_:
		return applyOverwrite(b, op.Overwrite)
	case *pb.Transaction_Delete_:
		return applyDelete(b, op.Delete)
	case *pb.Transaction_CreateIndex_:
		return applyCreateIndex(b, op.CreateIndex)
	case *pb.Transaction_UpdateConfig_:
		return applyUpdateConfig(b, op.UpdateConfig)
	case *pb.Transaction_ReserveFragments_:
		return applyReserveFragments(b, op.ReserveFragments)
	case *pb.Transaction_Rewrite_:
		return applyRewrite(b, op.Rewrite)
	}
	return fmt.Errorf("%w: this build cannot commit %s transactions", ErrInvalidTransaction, KindOf(t))
}

// finish applies the rules common to every derived manifest: fragments
// sorted by id, tombstone-only data files dropped, max_fragment_id covering
// every id, and the feature flags recomputed from content with the sticky
// pairs of flagParent carried (§5.5, §6.2, R57), then checks the result can
// be written by this build (never a half-set pair, R59).
func finish(m *pb.Manifest, indices []*pb.IndexMetadata, flagParentR, flagParentW uint64, in *buildInput) error {
	for _, f := range m.GetFragments() {
		kept := f.Files[:0]
		for _, df := range f.GetFiles() {
			tomb := len(df.GetFields()) > 0
			for _, id := range df.GetFields() {
				if id != -2 {
					tomb = false
					break
				}
			}
			if !tomb {
				kept = append(kept, df)
			}
		}
		f.Files = kept
	}
	sort.SliceStable(m.Fragments, func(i, j int) bool { return m.Fragments[i].GetId() < m.Fragments[j].GetId() })
	for i := 1; i < len(m.Fragments); i++ {
		if m.Fragments[i].GetId() == m.Fragments[i-1].GetId() {
			return fmt.Errorf("%w: two fragments with id %d", ErrInvalidTransaction, m.Fragments[i].GetId())
		}
	}
	if n := len(m.Fragments); n > 0 {
		top := m.Fragments[n-1].GetId()
		if top > 0xFFFFFFFF {
			return fmt.Errorf("%w: fragment id %d exceeds uint32", ErrInvalidTransaction, top)
		}
		if m.MaxFragmentId == nil || uint64(m.GetMaxFragmentId()) < top {
			t := uint32(top)
			m.MaxFragmentId = &t
		}
	}

	if err := checkVersionInvariants(m); err != nil {
		return err
	}

	c := flags.Content{
		Config:            len(m.GetConfig()) > 0,
		BasePaths:         len(m.GetBasePaths()) > 0,
		ReferencesV1Seeds: in.referencesV1Seeds,
		ActivateZoneSeeds: in.activateSeeds,
		NoTransactionFile: in.noTxnFile,
	}
	stable := in.stableRowIDs || flagParentR&flags.StableRowIDs != 0
	withRowIDs := 0
	for _, f := range m.GetFragments() {
		if f.GetDeletionFile() != nil {
			c.DeletionFiles = true
		}
		if hasRowIDs(f) {
			withRowIDs++
		}
	}
	if withRowIDs > 0 {
		stable = true
	}
	if stable {
		if withRowIDs != len(m.GetFragments()) {
			return fmt.Errorf("%w: All fragments must have row ids", ErrInvalidTransaction)
		}
		c.StableRowIDs = true
	}
	for _, idx := range indices {
		if len(idx.GetCoveringFields()) > 0 {
			c.CoveringFields = true
		}
	}
	r, w, err := flags.Next(flagParentR, flagParentW, c)
	if err != nil {
		return err
	}
	if err := flags.CheckWrite(r, w); err != nil {
		return fmt.Errorf("refusing to produce manifest version %d: %w", m.GetVersion(), err)
	}
	m.ReaderFeatureFlags, m.WriterFeatureFlags = r, w
	return nil
}

// common resets what every new manifest recomputes.
func common(m *pb.Manifest, in *buildInput) {
	m.Version = in.version
	m.VersionAuxData = 0
	m.Timestamp = timestamppb.New(in.now.UTC())
	m.Tag = in.txn.GetTag()
	m.TransactionFile = in.txnFile
	m.IndexSection = nil
	m.TransactionSection = nil
}

// checkCopiedFlags: a restore or a clone publishes the flags of m, so this
// build must be able to both read and write m.
func checkCopiedFlags(m *pb.Manifest, verb string) error {
	if err := flags.CheckRead(m.GetReaderFeatureFlags(), m.GetWriterFeatureFlags()); err != nil {
		return fmt.Errorf("cannot %s version %d: %w", verb, m.GetVersion(), err)
	}
	if err := flags.CheckWrite(m.GetReaderFeatureFlags(), m.GetWriterFeatureFlags()); err != nil {
		return fmt.Errorf("cannot %s version %d: %w", verb, m.GetVersion(), err)
	}
	return nil
}

func cloneIndices(in []*pb.IndexMetadata) []*pb.IndexMetadata {
	if in == nil {
		return nil
	}
	out := make([]*pb.IndexMetadata, len(in))
	for i, idx := range in {
		out[i] = proto.Clone(idx).(*pb.IndexMetadata)
	}
	return out
}

func cloneFields(in []*pb.Field) []*pb.Field {
	out := make([]*pb.Field, len(in))
	for i, f := range in {
		out[i] = proto.Clone(f).(*pb.Field)
	}
	return out
}

func cloneBytesMap(in map[string][]byte) map[string][]byte {
	if len(in) == 0 {
		return nil
	}
	out := make(map[string][]byte, len(in))
	for k, v := range in {
		out[k] = append([]byte(nil), v...)
	}
	return out
}

// checkVersionInvariants is the last check before a manifest is published,
// whatever built it (an append, a merged batch of appends, an overwrite):
// no data file is referenced twice, fragment ids are unique and none is
// above max_fragment_id. A version that broke one of them would make Lance
// 12 return rows twice or read the wrong fragment (issue 15 item 2).
func checkVersionInvariants(m *pb.Manifest) error {
	type fileKey struct {
		base int64 // -1: the dataset's own data/ directory
		path string
	}
	// Sized for one data file per fragment (the common case): growing
	// the map was most of this check's cost on every commit.
	seen := make(map[fileKey]uint64, len(m.GetFragments()))
	ids := make(map[uint64]bool, len(m.GetFragments()))
	for _, f := range m.GetFragments() {
		id := f.GetId()
		if ids[id] {
			return fmt.Errorf("%w: two fragments with id %d", ErrInvalidTransaction, id)
		}
		ids[id] = true
		if m.MaxFragmentId != nil && id > uint64(m.GetMaxFragmentId()) {
			return fmt.Errorf("%w: fragment id %d is above max_fragment_id %d", ErrInvalidTransaction, id, m.GetMaxFragmentId())
		}
		for _, df := range f.GetFiles() {
			k := fileKey{base: -1, path: df.GetPath()}
			if df.BaseId != nil {
				k.base = int64(df.GetBaseId())
			}
			if other, dup := seen[k]; dup {
				if other == id {
					return fmt.Errorf("%w: fragment %d references data file %s twice", ErrInvalidTransaction, id, df.GetPath())
				}
				return fmt.Errorf("%w: data file %s is referenced by fragments %d and %d (a version never references a data file twice)", ErrInvalidTransaction, df.GetPath(), other, id)
			}
			seen[k] = id
		}
	}
	return nil
}
