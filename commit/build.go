package commit

import (
	"cmp"
	"fmt"
	"slices"
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
	// prevChecked: prev is a manifest this package built and checked
	// (checkVersionInvariants), so an append checks only its new
	// fragments against it.
	prevChecked bool
	txn         *pb.Transaction // the transaction, already rebased
	txnFile     string          // name of the .txn file in _transactions/ ("" when none)
	noTxnFile   bool            // no .txn file: the transaction is inline only (flag bit 5)
	version     uint64          // version of the manifest being built
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
	shared := false
	switch {
	case in.prev == nil:
		m = &pb.Manifest{}
	case kind == OpAppend:
		// Copy on write: an append only adds fragments, so the new
		// manifest shares the previous one's messages (fields, fragments,
		// maps) instead of a deep copy; the manifests a commit reads are
		// never modified (see Result), and what would edit a shared
		// message below copies it first.
		m = shareManifest(in.prev)
		shared = true
	default:
		m = proto.Clone(in.prev).(*pb.Manifest)
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
	if shared && len(duplicateFieldIDs(b.m)) > 0 {
		unshare(b.m)
	}
	dedupFieldIDs(b.m) // §5.2 e, on every commit as Lance does (fixup_schema.go)
	var trusted []*pb.DataFragment
	if shared && in.prevChecked {
		trusted = in.prev.GetFragments()
	}
	if err := finishAfter(b.m, b.indices, b.prevR, b.prevW, in, trusted); err != nil {
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
	return finishAfter(m, indices, flagParentR, flagParentW, in, nil)
}

// finishAfter is finish knowing that trusted, the fragments of a manifest
// that passed checkVersionInvariants, are not to be checked against each
// other again (checkVersionInvariantsAfter). A fragment that loses a data
// file is copied first: m may share it with the manifest it follows.
func finishAfter(m *pb.Manifest, indices []*pb.IndexMetadata, flagParentR, flagParentW uint64, in *buildInput, trusted []*pb.DataFragment) error {
	// The trusted fragments went through this loop when their manifest
	// was built: none has a tombstone-only file left.
	skip := 0
	if len(trusted) <= len(m.Fragments) && slices.Equal(m.Fragments[:len(trusted)], trusted) {
		skip = len(trusted)
	}
	for i, f := range m.GetFragments() {
		if i < skip || !slices.ContainsFunc(f.GetFiles(), tombstoneOnly) {
			continue
		}
		nf := proto.Clone(f).(*pb.DataFragment)
		nf.Files = slices.DeleteFunc(nf.Files, tombstoneOnly)
		m.Fragments[i] = nf
	}
	byID := func(a, b *pb.DataFragment) int { return cmp.Compare(a.GetId(), b.GetId()) }
	if !slices.IsSortedFunc(m.Fragments, byID) {
		slices.SortStableFunc(m.Fragments, byID)
	}
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

	if err := checkVersionInvariantsAfter(m, trusted); err != nil {
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

// tombstoneOnly: every field of df is the tombstone -2, so the data file
// holds nothing of the schema and a new manifest drops it.
func tombstoneOnly(df *pb.DataFile) bool {
	if len(df.GetFields()) == 0 {
		return false
	}
	for _, id := range df.GetFields() {
		if id != -2 {
			return false
		}
	}
	return true
}

// shareManifest returns a new Manifest holding the field values of prev
// (the same messages, maps and unknown bytes: a shallow copy) with a
// fragment list of its own, so fragments can be added, removed and
// reordered without touching prev's list.
func shareManifest(prev *pb.Manifest) *pb.Manifest {
	m := prev.ShallowCopy()
	m.Fragments = make([]*pb.DataFragment, len(prev.GetFragments()), len(prev.GetFragments())+4)
	copy(m.Fragments, prev.GetFragments())
	return m
}

// unshare replaces the messages m shares with the manifest it was made
// from (shareManifest) by copies, before an edit in place (dedupFieldIDs).
func unshare(m *pb.Manifest) {
	m.Fields = cloneFields(m.Fields)
	for i, f := range m.Fragments {
		m.Fragments[i] = proto.Clone(f).(*pb.DataFragment)
	}
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
	return checkVersionInvariantsAfter(m, nil)
}

// maxAddedLinear is the most new fragments checkVersionInvariantsAfter
// compares with every other fragment one by one; more take the map.
const maxAddedLinear = 4

// checkVersionInvariantsAfter is checkVersionInvariants when m begins with
// trusted, the fragments of a manifest that passed it (the same messages,
// in order): those are not checked against each other again, only the
// fragments after them against every fragment — no map, no allocation for
// the one-fragment append that made m. Anything else is checked in full.
func checkVersionInvariantsAfter(m *pb.Manifest, trusted []*pb.DataFragment) error {
	frags := m.GetFragments()
	n0 := len(trusted)
	if n0 == 0 || n0 > len(frags) || len(frags)-n0 > maxAddedLinear {
		return checkVersionInvariantsFull(m)
	}
	for i, f := range trusted {
		if frags[i] != f {
			return checkVersionInvariantsFull(m)
		}
	}
	for _, f := range frags {
		if id := f.GetId(); m.MaxFragmentId != nil && id > uint64(m.GetMaxFragmentId()) {
			return fmt.Errorf("%w: fragment id %d is above max_fragment_id %d", ErrInvalidTransaction, id, m.GetMaxFragmentId())
		}
	}
	sameFile := func(a, b *pb.DataFile) bool {
		return a.GetPath() == b.GetPath() && (a.BaseId == nil) == (b.BaseId == nil) && a.GetBaseId() == b.GetBaseId()
	}
	for i := n0; i < len(frags); i++ {
		f := frags[i]
		id := f.GetId()
		for _, g := range frags[:i] {
			if g.GetId() == id {
				return fmt.Errorf("%w: two fragments with id %d", ErrInvalidTransaction, id)
			}
		}
		for k, df := range f.GetFiles() {
			for _, g := range frags[:i] {
				for _, gf := range g.GetFiles() {
					if sameFile(gf, df) {
						return fmt.Errorf("%w: data file %s is referenced by fragments %d and %d (a version never references a data file twice)", ErrInvalidTransaction, df.GetPath(), g.GetId(), id)
					}
				}
			}
			for _, earlier := range f.GetFiles()[:k] {
				if sameFile(earlier, df) {
					return fmt.Errorf("%w: fragment %d references data file %s twice", ErrInvalidTransaction, id, df.GetPath())
				}
			}
		}
	}
	return nil
}

// checkVersionInvariantsFull is checkVersionInvariants over every fragment.
func checkVersionInvariantsFull(m *pb.Manifest) error {
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
