package commit

import (
	"fmt"
	"sort"
	"strings"
	"time"

	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/types/known/timestamppb"

	"github.com/RoaringBitmap/roaring/v2"
	"github.com/lancekeeper/lancekeeper/flags"
	"github.com/lancekeeper/lancekeeper/manifest/pb"
)

// Library and Version identify this writer in Manifest.writer_version
// (lance-table-format.md §3.1, §9 trap 3).
const (
	Library = "lancekeeper"
	Version = "0.1.0"
)

// WriterVersion returns the writer_version this package records.
func WriterVersion() *pb.Manifest_WriterVersion {
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

// highWater returns the highest fragment id ever used: max_fragment_id when
// present, else the largest id in fragments; ok=false when neither exists
// (§3.1 field 11, §9 trap 10).
func highWater(m *pb.Manifest) (uint64, bool) {
	if m == nil {
		return 0, false
	}
	if m.MaxFragmentId != nil {
		hw := uint64(m.GetMaxFragmentId())
		for _, f := range m.GetFragments() {
			hw = max(hw, f.GetId())
		}
		return hw, true
	}
	if len(m.GetFragments()) == 0 {
		return 0, false
	}
	var hw uint64
	for _, f := range m.GetFragments() {
		hw = max(hw, f.GetId())
	}
	return hw, true
}

// FileVersion maps a DataFile's (major, minor) to the data storage version
// string (§3.4).
func FileVersion(major, minor uint32) string {
	switch {
	case major == 0 && minor <= 2:
		return "0.1"
	case major == 0 && minor == 3:
		return "2.0"
	case major == 2:
		return fmt.Sprintf("2.%d", minor)
	}
	return fmt.Sprintf("%d.%d", major, minor)
}

// DataFormatVersion returns the table's data storage version: data_format
// when present, else inferred from the data files, else from the
// deprecated writer bit 2 (§9 trap 11).
func DataFormatVersion(m *pb.Manifest) string {
	if v := m.GetDataFormat().GetVersion(); v != "" {
		return v
	}
	for _, f := range m.GetFragments() {
		for _, df := range f.GetFiles() {
			return FileVersion(df.GetFileMajorVersion(), df.GetFileMinorVersion())
		}
	}
	if m.GetWriterFeatureFlags()&flags.UseV2FormatDeprecated != 0 {
		return "2.0"
	}
	return "0.1"
}

func hasRowIDs(f *pb.DataFragment) bool { return f.GetRowIdSequence() != nil }

// usesStableRowIDs reports whether a manifest has stable row ids (bit 1 or
// any row-id sequence).
func usesStableRowIDs(m *pb.Manifest) bool {
	if m == nil {
		return false
	}
	if m.GetReaderFeatureFlags()&flags.StableRowIDs != 0 {
		return true
	}
	for _, f := range m.GetFragments() {
		if hasRowIDs(f) {
			return true
		}
	}
	return false
}

// rangeSegment encodes a U64Segment Range [start, end).
func rangeSegment(start, end uint64) *pb.U64Segment {
	return &pb.U64Segment{Segment: &pb.U64Segment_Range_{Range: &pb.U64Segment_Range{Start: start, End: end}}}
}

// assignRowIDs gives a new fragment stable row ids [next, next+rows) and
// created-at / last-updated-at sequences naming version (§3.5, §5.5).
func assignRowIDs(f *pb.DataFragment, next, version uint64) (uint64, error) {
	rows := f.GetPhysicalRows()
	if rows == 0 {
		return next, fmt.Errorf("%w: new fragment has physical_rows 0 (unknown); stable row ids need the row count", ErrInvalidTransaction)
	}
	seq, err := proto.MarshalOptions{Deterministic: true}.Marshal(&pb.RowIdSequence{Segments: []*pb.U64Segment{rangeSegment(next, next+rows)}})
	if err != nil {
		return next, err
	}
	vs, err := proto.MarshalOptions{Deterministic: true}.Marshal(&pb.RowDatasetVersionSequence{Runs: []*pb.RowDatasetVersionRun{{Span: rangeSegment(0, rows), Version: version}}})
	if err != nil {
		return next, err
	}
	f.RowIdSequence = &pb.DataFragment_InlineRowIds{InlineRowIds: seq}
	f.LastUpdatedAtVersionSequence = &pb.DataFragment_InlineLastUpdatedAtVersions{InlineLastUpdatedAtVersions: vs}
	f.CreatedAtVersionSequence = &pb.DataFragment_InlineCreatedAtVersions{InlineCreatedAtVersions: vs}
	return next + rows, nil
}

// addFragments assigns ids (and, with stable row ids, row ids) to the
// transaction's new fragments and appends copies to m.Fragments.
func addFragments(m *pb.Manifest, prevForIDs *pb.Manifest, frags []*pb.DataFragment, stable bool) ([]uint64, error) {
	hw, ok := highWater(prevForIDs)
	next := uint64(0)
	if ok {
		next = hw + 1
	}
	ids := make([]uint64, 0, len(frags))
	for _, f := range frags {
		nf := proto.Clone(f).(*pb.DataFragment)
		nf.Id = next
		if next > 0xFFFFFFFF {
			return nil, fmt.Errorf("%w: fragment id %d exceeds max_fragment_id's uint32 range", ErrInvalidTransaction, next)
		}
		ids = append(ids, next)
		next++
		if stable && !hasRowIDs(nf) {
			var err error
			if m.NextRowId, err = assignRowIDs(nf, m.GetNextRowId(), m.GetVersion()); err != nil {
				return nil, err
			}
		}
		m.Fragments = append(m.Fragments, nf)
	}
	if len(ids) > 0 {
		last := uint32(ids[len(ids)-1])
		m.MaxFragmentId = &last
	}
	return ids, nil
}

// checkFileVersions refuses data files whose version differs from the
// table's data storage version, unless the table allows mixed versions
// (bit 8) (§5.2 e).
func checkFileVersions(m *pb.Manifest, frags []*pb.DataFragment) error {
	if m.GetReaderFeatureFlags()&flags.MixedDataFileVersions != 0 {
		return nil
	}
	want := DataFormatVersion(m)
	for _, f := range frags {
		for _, df := range f.GetFiles() {
			if got := FileVersion(df.GetFileMajorVersion(), df.GetFileMinorVersion()); got != want {
				return fmt.Errorf("%w: data file %s has file version %s but the dataset's data storage version is %s (mixing versions needs flag MIXED_DATA_FILE_VERSIONS)",
					ErrInvalidTransaction, df.GetPath(), got, want)
			}
		}
	}
	return nil
}

// checkFieldIDs refuses data files that store field ids the schema lacks.
func checkFieldIDs(fields []*pb.Field, frags []*pb.DataFragment) error {
	ids := map[int32]bool{}
	for _, f := range fields {
		ids[f.GetId()] = true
	}
	for _, f := range frags {
		for _, df := range f.GetFiles() {
			if len(df.GetColumnIndices()) != 0 && len(df.GetColumnIndices()) != len(df.GetFields()) {
				return fmt.Errorf("%w: data file %s has %d fields but %d column indices", ErrInvalidTransaction, df.GetPath(), len(df.GetFields()), len(df.GetColumnIndices()))
			}
			for _, id := range df.GetFields() {
				if id < 0 {
					continue
				}
				if !ids[id] {
					return fmt.Errorf("%w: data file %s stores field id %d, which is not in the dataset schema", ErrInvalidTransaction, df.GetPath(), id)
				}
			}
		}
	}
	return nil
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

	c := flags.Content{
		Config:            len(m.GetConfig()) > 0,
		BasePaths:         len(m.GetBasePaths()) > 0,
		ReferencesV1Seeds: in.referencesV1Seeds,
		ActivateZoneSeeds: in.activateSeeds,
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
	m.WriterVersion = WriterVersion()
	res := &buildResult{manifest: m}
	indices := cloneIndices(in.prevIndices)
	var pr, pw uint64
	if in.prev != nil {
		pr, pw = in.prev.GetReaderFeatureFlags(), in.prev.GetWriterFeatureFlags()
	}
	stable := in.stableRowIDs || usesStableRowIDs(in.prev)

	switch op := in.txn.GetOperation().(type) {
	case *pb.Transaction_Append_:
		frags := op.Append.GetFragments()
		if len(frags) == 0 {
			return nil, fmt.Errorf("%w: Append with no fragments", ErrInvalidTransaction)
		}
		if err := checkFileVersions(m, frags); err != nil {
			return nil, err
		}
		if err := checkFieldIDs(m.GetFields(), frags); err != nil {
			return nil, err
		}
		ids, err := addFragments(m, in.prev, frags, stable)
		if err != nil {
			return nil, err
		}
		res.newFragmentIDs = ids

	case *pb.Transaction_Overwrite_:
		ow := op.Overwrite
		if len(ow.GetSchema()) == 0 {
			return nil, fmt.Errorf("%w: Overwrite without a schema", ErrInvalidTransaction)
		}
		if err := checkFieldIDs(ow.GetSchema(), ow.GetFragments()); err != nil {
			return nil, err
		}
		m.Fields = cloneFields(ow.GetSchema())
		m.SchemaMetadata = cloneBytesMap(ow.GetSchemaMetadata())
		m.Fragments = nil
		indices = nil
		if in.prev == nil {
			m.BasePaths = nil
			for _, bp := range ow.GetInitialBases() {
				m.BasePaths = append(m.BasePaths, proto.Clone(bp).(*pb.BasePath))
			}
		}
		if len(ow.GetConfigUpsertValues()) > 0 {
			if m.Config == nil {
				m.Config = map[string]string{}
			}
			for k, v := range ow.GetConfigUpsertValues() {
				m.Config[k] = v
			}
		}
		// The data storage version follows the new data files.
		for _, f := range ow.GetFragments() {
			for _, df := range f.GetFiles() {
				m.DataFormat = &pb.Manifest_DataStorageFormat{FileFormat: "lance", Version: FileVersion(df.GetFileMajorVersion(), df.GetFileMinorVersion())}
				break
			}
			break
		}
		if m.DataFormat == nil {
			m.DataFormat = &pb.Manifest_DataStorageFormat{FileFormat: "lance", Version: "2.0"}
		}
		if pr&flags.MixedDataFileVersions == 0 {
			if err := checkFileVersions(m, ow.GetFragments()); err != nil {
				return nil, err
			}
		}
		// Fragment ids continue from the high-water mark (L12, §5.5).
		ids, err := addFragments(m, in.prev, ow.GetFragments(), stable)
		if err != nil {
			return nil, err
		}
		res.newFragmentIDs = ids

	case *pb.Transaction_Delete_:
		d := op.Delete
		byID := map[uint64]*pb.DataFragment{}
		for _, f := range m.GetFragments() {
			byID[f.GetId()] = f
		}
		for _, uf := range d.GetUpdatedFragments() {
			if byID[uf.GetId()] == nil {
				return nil, fmt.Errorf("%w: Delete updates fragment %d, which version %d does not have", ErrInvalidTransaction, uf.GetId(), in.prev.GetVersion())
			}
		}
		removed := map[uint64]bool{}
		for _, id := range d.GetDeletedFragmentIds() {
			removed[id] = true
		}
		updated := map[uint64]*pb.DataFragment{}
		for _, uf := range d.GetUpdatedFragments() {
			updated[uf.GetId()] = uf
		}
		kept := m.Fragments[:0]
		for _, f := range m.GetFragments() {
			if removed[f.GetId()] {
				continue
			}
			if uf := updated[f.GetId()]; uf != nil {
				f = proto.Clone(uf).(*pb.DataFragment)
			}
			kept = append(kept, f)
		}
		m.Fragments = kept
		indices = retainRelevantIndices(indices, m)

	case *pb.Transaction_CreateIndex_:
		ci := op.CreateIndex
		drop := map[string]bool{}
		for _, idx := range append(append([]*pb.IndexMetadata{}, ci.GetRemovedIndices()...), ci.GetNewIndices()...) {
			drop[string(idx.GetUuid().GetUuid())] = true
		}
		fieldIDs := map[int32]bool{}
		for _, f := range m.GetFields() {
			fieldIDs[f.GetId()] = true
		}
		kept := indices[:0]
		for _, idx := range indices {
			if !drop[string(idx.GetUuid().GetUuid())] {
				kept = append(kept, idx)
			}
		}
		indices = kept
		for _, idx := range ci.GetNewIndices() {
			if len(idx.GetUuid().GetUuid()) != 16 {
				return nil, fmt.Errorf("%w: new index %q has no 16-byte uuid", ErrInvalidTransaction, idx.GetName())
			}
			for _, fid := range idx.GetFields() {
				if !fieldIDs[fid] {
					return nil, fmt.Errorf("%w: new index %q covers field id %d, which is not in the schema", ErrInvalidTransaction, idx.GetName(), fid)
				}
			}
			indices = append(indices, proto.Clone(idx).(*pb.IndexMetadata))
		}

	case *pb.Transaction_UpdateConfig_:
		if err := applyUpdateConfig(m, op.UpdateConfig); err != nil {
			return nil, err
		}

	case *pb.Transaction_ReserveFragments_:
		n := uint64(op.ReserveFragments.GetNumFragments())
		if n > 0 {
			hw, ok := highWater(in.prev)
			first := uint64(0)
			if ok {
				first = hw + 1
			}
			last := first + n - 1
			if last > 0xFFFFFFFF {
				return nil, fmt.Errorf("%w: reserving %d fragments would exceed the uint32 id range", ErrInvalidTransaction, n)
			}
			l32 := uint32(last)
			m.MaxFragmentId = &l32
			res.reserved, res.reservedFirst, res.reservedLast = true, first, last
		}

	default:
		return nil, fmt.Errorf("%w: this build cannot commit %s transactions", ErrInvalidTransaction, kind)
	}

	if err := finish(m, indices, pr, pw, in); err != nil {
		return nil, err
	}
	if in.prevIndices != nil || len(indices) > 0 {
		res.indices = indices
	}
	return res, nil
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

// buildRestore: the new manifest is the target manifest with version =
// latest+1, a fresh timestamp and transaction, the larger fragment-id and
// row-id high-water marks, the target's writer_version, and flags recomputed
// from the target's content with the current head's sticky pairs OR-ed in
// (§8.3, §6.5, R57).
func buildRestore(in *buildInput) (*buildResult, error) {
	target, cur := in.restoreTarget, in.prev
	if target == nil {
		return nil, fmt.Errorf("%w: Restore without its target manifest", ErrInvalidTransaction)
	}
	if err := checkCopiedFlags(target, "restore"); err != nil {
		return nil, err
	}
	if usesStableRowIDs(cur) && !usesStableRowIDs(target) {
		return nil, fmt.Errorf("%w: Cannot restore version %d: stable row ids were enabled after it, and turning them back off would let row addresses collide with ids this table has already used",
			ErrInvalidTransaction, target.GetVersion())
	}
	m := proto.Clone(target).(*pb.Manifest)
	common(m, in)
	// writer_version stays the target's [C].
	thw, tok := highWater(target)
	chw, cok := highWater(cur)
	if tok || cok {
		hw := uint32(max(thw, chw))
		m.MaxFragmentId = &hw
	}
	m.NextRowId = max(target.GetNextRowId(), cur.GetNextRowId())
	indices := cloneIndices(in.restoreTargetIndices)
	if err := finish(m, indices, cur.GetReaderFeatureFlags(), cur.GetWriterFeatureFlags(), in); err != nil {
		return nil, err
	}
	res := &buildResult{manifest: m}
	if in.restoreTargetIndices != nil {
		res.indices = indices
	}
	return res, nil
}

// CloneSpec describes a Clone commit (§8.1 shallow, §8.2 deep): the source
// version's manifest and indices, and where it was read from.
type CloneSpec struct {
	Source        *pb.Manifest
	SourceIndices []*pb.IndexMetadata
	// SourcePrelude is the source manifest file's prelude
	// (manifest.File.Prelude): a legacy-storage source keeps dictionary
	// values there, and the clone's manifest must carry them (see
	// dictionaryPrelude).
	SourcePrelude []byte
	Shallow       bool
	RefName       *string // branch name of the source ref (nil for main)
	RefVersion    uint64
	RefPath       string  // the source dataset root exactly as addressed (absolute path or URL)
	BranchName    *string // branch the new dataset belongs to (nil for main)
}

// buildClone builds the first manifest of a cloned dataset. A shallow clone
// references the source's files through a new base path; a deep clone
// expects the files to have been copied and clears every base reference.
// Sticky pairs (and bit 7 via the index list) come from the source (§6.5).
func buildClone(spec *CloneSpec, in *buildInput) (*buildResult, error) {
	src := spec.Source
	if src == nil {
		return nil, fmt.Errorf("%w: Clone without a source manifest", ErrInvalidTransaction)
	}
	if err := checkCopiedFlags(src, "clone"); err != nil {
		return nil, err
	}
	m := proto.Clone(src).(*pb.Manifest)
	in.version = src.GetVersion()
	common(m, in)
	m.Tag = ""
	m.Branch = spec.BranchName
	indices := cloneIndices(spec.SourceIndices)
	if spec.Shallow {
		var newID uint32
		if len(m.GetBasePaths()) > 0 {
			for _, bp := range m.GetBasePaths() {
				newID = max(newID, bp.GetId())
			}
			newID++
		}
		for _, f := range m.GetFragments() {
			for _, df := range f.GetFiles() {
				if df.BaseId == nil {
					id := newID
					df.BaseId = &id
				}
			}
			if d := f.GetDeletionFile(); d != nil && d.BaseId == nil {
				id := newID
				d.BaseId = &id
			}
		}
		for _, idx := range indices {
			if idx.BaseId == nil {
				id := newID
				idx.BaseId = &id
			}
		}
		bp := &pb.BasePath{Id: newID, IsDatasetRoot: true, Path: spec.RefPath}
		if spec.RefName != nil {
			n := *spec.RefName
			bp.Name = &n
		}
		m.BasePaths = append(m.BasePaths, bp)
	} else {
		m.BasePaths = nil
		m.Branch = nil
		for _, f := range m.GetFragments() {
			for _, df := range f.GetFiles() {
				df.BaseId = nil
			}
			if d := f.GetDeletionFile(); d != nil {
				d.BaseId = nil
			}
		}
		for _, idx := range indices {
			idx.BaseId = nil
		}
	}
	if err := finish(m, indices, src.GetReaderFeatureFlags(), src.GetWriterFeatureFlags(), in); err != nil {
		return nil, err
	}
	res := &buildResult{manifest: m}
	if spec.SourceIndices != nil {
		res.indices = indices
	}
	return res, nil
}

// retainRelevantIndices drops indices whose fields left the schema and
// segments that no longer cover any remaining fragment, but keeps at least
// one segment per index name so the index definition survives (§5.5
// Delete). Segments with an unknown bitmap are kept.
func retainRelevantIndices(indices []*pb.IndexMetadata, m *pb.Manifest) []*pb.IndexMetadata {
	fieldIDs := map[int32]bool{}
	for _, f := range m.GetFields() {
		fieldIDs[f.GetId()] = true
	}
	frags := roaring.New()
	for _, f := range m.GetFragments() {
		if f.GetId() <= 0xFFFFFFFF {
			frags.Add(uint32(f.GetId()))
		}
	}
	type cand struct {
		idx   *pb.IndexMetadata
		empty bool
	}
	var cands []cand
	live := map[string]int{}
	for _, idx := range indices {
		allFields := true
		for _, fid := range idx.GetFields() {
			if !fieldIDs[fid] {
				allFields = false
			}
		}
		if !allFields {
			continue
		}
		empty := false
		if bm := idx.GetFragmentBitmap(); len(bm) > 0 {
			b := roaring.New()
			if _, err := b.FromUnsafeBytes(bm); err == nil {
				empty = !b.Intersects(frags)
			}
		}
		if !empty {
			live[idx.GetName()]++
		}
		cands = append(cands, cand{idx, empty})
	}
	out := indices[:0]
	keptEmpty := map[string]bool{}
	for _, c := range cands {
		if c.empty {
			if live[c.idx.GetName()] > 0 || keptEmpty[c.idx.GetName()] {
				continue
			}
			keptEmpty[c.idx.GetName()] = true
		}
		out = append(out, c.idx)
	}
	return out
}

// applyUpdateMap applies an UpdateMap (§3.7): replace clears the target
// first; entries with a value are upserted, entries without one deleted.
func applyUpdateMap(dst map[string]string, u *pb.Transaction_UpdateMap) map[string]string {
	if u == nil {
		return dst
	}
	if u.GetReplace() || dst == nil {
		dst = map[string]string{}
	}
	for _, e := range u.GetUpdateEntries() {
		if e.Value != nil {
			dst[e.GetKey()] = e.GetValue()
		} else {
			delete(dst, e.GetKey())
		}
	}
	if len(dst) == 0 {
		return nil
	}
	return dst
}

func applyUpdateMapBytes(dst map[string][]byte, u *pb.Transaction_UpdateMap) map[string][]byte {
	if u == nil {
		return dst
	}
	if u.GetReplace() || dst == nil {
		old := dst
		dst = map[string][]byte{}
		if !u.GetReplace() {
			for k, v := range old {
				dst[k] = v
			}
		}
	}
	for _, e := range u.GetUpdateEntries() {
		if e.Value != nil {
			dst[e.GetKey()] = []byte(e.GetValue())
		} else {
			delete(dst, e.GetKey())
		}
	}
	if len(dst) == 0 {
		return nil
	}
	return dst
}

// primaryKeyMetadata is the field-metadata key prefix Lance treats as
// immutable once set (§5.5 UpdateConfig).
const primaryKeyMetadata = "lance-schema:unenforced-primary-key"

// applyUpdateConfig applies both the current (6–9) and the deprecated
// (1–4) forms of UpdateConfig to m (§3.7, §5.5).
func applyUpdateConfig(m *pb.Manifest, uc *pb.Transaction_UpdateConfig) error {
	// Deprecated forms.
	if len(uc.GetUpsertValues()) > 0 || len(uc.GetDeleteKeys()) > 0 {
		if m.Config == nil {
			m.Config = map[string]string{}
		}
		for k, v := range uc.GetUpsertValues() {
			m.Config[k] = v
		}
		for _, k := range uc.GetDeleteKeys() {
			delete(m.Config, k)
		}
	}
	if len(uc.GetSchemaMetadata()) > 0 {
		m.SchemaMetadata = map[string][]byte{}
		for k, v := range uc.GetSchemaMetadata() {
			m.SchemaMetadata[k] = []byte(v)
		}
	}
	byID := map[int32]*pb.Field{}
	for _, f := range m.GetFields() {
		byID[f.GetId()] = f
	}
	for id, fm := range uc.GetFieldMetadata() {
		f := byID[int32(id)]
		if f == nil || id > 0x7FFFFFFF {
			return fmt.Errorf("%w: UpdateConfig changes the metadata of field %d, which is not in the schema", ErrInvalidTransaction, id)
		}
		// The deprecated form replaces the whole map: it must restate every
		// primary-key key unchanged.
		replace := &pb.Transaction_UpdateMap{Replace: true}
		for k, v := range fm.GetMetadata() {
			v := v
			replace.UpdateEntries = append(replace.UpdateEntries, &pb.Transaction_UpdateMapEntry{Key: k, Value: &v})
		}
		if err := checkPrimaryKeyKept(f, replace); err != nil {
			return err
		}
		f.Metadata = map[string][]byte{}
		for k, v := range fm.GetMetadata() {
			f.Metadata[k] = []byte(v)
		}
	}
	// Current forms.
	m.Config = applyUpdateMap(m.Config, uc.GetConfigUpdates())
	m.TableMetadata = applyUpdateMap(m.TableMetadata, uc.GetTableMetadataUpdates())
	m.SchemaMetadata = applyUpdateMapBytes(m.SchemaMetadata, uc.GetSchemaMetadataUpdates())
	ids := make([]int32, 0, len(uc.GetFieldMetadataUpdates()))
	for id := range uc.GetFieldMetadataUpdates() {
		ids = append(ids, id)
	}
	sort.Slice(ids, func(i, j int) bool { return ids[i] < ids[j] })
	for _, id := range ids {
		u := uc.GetFieldMetadataUpdates()[id]
		f := byID[id]
		if f == nil {
			return fmt.Errorf("%w: UpdateConfig changes the metadata of field %d, which is not in the schema", ErrInvalidTransaction, id)
		}
		if err := checkPrimaryKeyKept(f, u); err != nil {
			return err
		}
		f.Metadata = applyUpdateMapBytes(f.Metadata, u)
	}
	return nil
}

func hasPrimaryKeyMetadata(f *pb.Field) bool {
	for k := range f.GetMetadata() {
		if strings.HasPrefix(k, primaryKeyMetadata) {
			return true
		}
	}
	return false
}

// checkPrimaryKeyKept refuses an update that would change or remove a
// primary-key metadata key that is already set.
func checkPrimaryKeyKept(f *pb.Field, u *pb.Transaction_UpdateMap) error {
	if !hasPrimaryKeyMetadata(f) {
		return nil
	}
	for k, v := range f.GetMetadata() {
		if !strings.HasPrefix(k, primaryKeyMetadata) {
			continue
		}
		if u.GetReplace() {
			kept := false
			for _, e := range u.GetUpdateEntries() {
				if e.GetKey() == k && e.Value != nil && e.GetValue() == string(v) {
					kept = true
				}
			}
			if !kept {
				return fmt.Errorf("%w: field %q (id %d): primary-key metadata %q cannot be changed once set", ErrInvalidTransaction, f.GetName(), f.GetId(), k)
			}
			continue
		}
		for _, e := range u.GetUpdateEntries() {
			if e.GetKey() == k && (e.Value == nil || e.GetValue() != string(v)) {
				return fmt.Errorf("%w: field %q (id %d): primary-key metadata %q cannot be changed once set", ErrInvalidTransaction, f.GetName(), f.GetId(), k)
			}
		}
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
