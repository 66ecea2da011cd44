package commit

import (
	"fmt"
	"maps"

	"github.com/google/uuid"
	"google.golang.org/protobuf/proto"

	"github.com/lancekeeper/lancekeeper/manifest"
	"github.com/lancekeeper/lancekeeper/manifest/pb"
)

// PropertyZoneWriteSeeds is the transaction property an explicit
// FLAG_ZONE_WRITE_SEEDS activation commit records (value "enable"), so the
// intent is visible in the transaction file and the inline transaction.
const PropertyZoneWriteSeeds = "lancekeeper.zone_write_seeds"

// Transaction is one change to a dataset, built against a read version. It
// wraps the lance.table.Transaction message that is written to
// `_transactions/` and inline in the manifest, plus what the commit needs
// beyond the message: which new data files carry v1 seeds, the rows a
// Delete removes (for rebasing), and the source of a Clone.
//
// A Transaction is used by one Commit at a time.
type Transaction struct {
	msg *pb.Transaction

	// seedFiles records, per new data file path (DataFile.path), whether it
	// carries a v1 zone write seed. Files not in the map are inspected by
	// Commit before the first attempt.
	seedFiles map[string]bool
	// activateSeeds marks an explicit activation commit (R56).
	activateSeeds bool
	// stableRowIDs asks a creating Overwrite for stable row ids.
	stableRowIDs bool
	// del is the Delete state used to rebase onto concurrent deletes.
	del *deleteState
	// clone is the source of a Clone.
	clone *CloneSpec
	// pending are keys written without fsync that the commit point makes
	// durable before the manifest (commit/durable.go).
	pending []pendingKey
	// known is a manifest already read (WriteArrow's read version), so
	// Commit need not read it again; versions never change once written.
	known *manifest.File
	// knownInfo is where known was found (zero: not known).
	knownInfo manifest.VersionInfo
}

func newTxn(readVersion uint64) *Transaction {
	return &Transaction{
		msg:       &pb.Transaction{ReadVersion: readVersion, Uuid: uuid.NewString()},
		seedFiles: map[string]bool{},
	}
}

// Kind returns the operation kind.
func (t *Transaction) Kind() OpKind { return KindOf(t.msg) }

// ReadVersion returns the version the transaction was built against.
func (t *Transaction) ReadVersion() uint64 { return t.msg.GetReadVersion() }

// UUID returns the transaction's UUID (also in its file name).
func (t *Transaction) UUID() string { return t.msg.GetUuid() }

// FileName returns the transaction file name, "{read_version}-{uuid}.txn".
func (t *Transaction) FileName() string {
	return fmt.Sprintf("%d-%s.txn", t.msg.GetReadVersion(), t.msg.GetUuid())
}

// Message returns a copy of the transaction message as it stands (after a
// commit: as it was committed, including any rebase).
func (t *Transaction) Message() *pb.Transaction { return proto.Clone(t.msg).(*pb.Transaction) }

// SetTag sets Transaction.tag, which the manifest copies into Manifest.tag.
func (t *Transaction) SetTag(tag string) *Transaction { t.msg.Tag = tag; return t }

// SetProperty sets a transaction property (the key __lance_commit_message
// holds a commit message by Lance's convention).
func (t *Transaction) SetProperty(key, value string) *Transaction {
	if t.msg.TransactionProperties == nil {
		t.msg.TransactionProperties = map[string]string{}
	}
	t.msg.TransactionProperties[key] = value
	return t
}

// MarkSeedFiles records whether new data files carry v1 zone write seeds
// (the writer path knows; externally supplied files are inspected by
// Commit when they are not marked).
func (t *Transaction) MarkSeedFiles(v1 bool, paths ...string) *Transaction {
	for _, p := range paths {
		t.seedFiles[p] = v1
	}
	return t
}

// NewAppend adds fragments (ids are assigned at commit from the dataset's
// high-water mark; stable row ids too when the dataset uses them).
func NewAppend(readVersion uint64, fragments []*pb.DataFragment) *Transaction {
	return newAppendOwning(readVersion, cloneFrags(fragments))
}

// newAppendOwning is NewAppend taking ownership of fragments (no copy): for
// fragments nobody else holds (WriteArrow's own, made by writeFragments).
func newAppendOwning(readVersion uint64, fragments []*pb.DataFragment) *Transaction {
	t := newTxn(readVersion)
	t.msg.Operation = &pb.Transaction_Append_{Append: &pb.Transaction_Append{Fragments: fragments}}
	return t
}

// OverwriteSpec is the content of an Overwrite: the complete new table.
type OverwriteSpec struct {
	Fragments      []*pb.DataFragment
	Schema         []*pb.Field
	SchemaMetadata map[string][]byte
	ConfigUpserts  map[string]string
	// InitialBases are recorded only when the Overwrite creates the dataset.
	InitialBases []*pb.BasePath
	// StableRowIDs creates the dataset with stable row ids (creation only).
	StableRowIDs bool
}

// NewOverwrite replaces the whole table. With readVersion 0 it creates the
// dataset, and the commit fails with ErrDatasetExists if any version exists.
func NewOverwrite(readVersion uint64, s OverwriteSpec) *Transaction {
	t := newTxn(readVersion)
	ow := &pb.Transaction_Overwrite{
		Fragments:          cloneFrags(s.Fragments),
		Schema:             cloneFields(s.Schema),
		SchemaMetadata:     cloneBytesMap(s.SchemaMetadata),
		ConfigUpsertValues: maps.Clone(s.ConfigUpserts),
	}
	if readVersion == 0 {
		for _, bp := range s.InitialBases {
			ow.InitialBases = append(ow.InitialBases, proto.Clone(bp).(*pb.BasePath))
		}
		t.stableRowIDs = s.StableRowIDs
	}
	t.msg.Operation = &pb.Transaction_Overwrite_{Overwrite: ow}
	return t
}

// NewCreateIndex adds index segments and removes others (by uuid). With no
// new indices it is an index drop (§3.7 arm 103).
func NewCreateIndex(readVersion uint64, newIndices, removed []*pb.IndexMetadata) *Transaction {
	t := newTxn(readVersion)
	ci := &pb.Transaction_CreateIndex{}
	for _, idx := range newIndices {
		ci.NewIndices = append(ci.NewIndices, proto.Clone(idx).(*pb.IndexMetadata))
	}
	for _, idx := range removed {
		ci.RemovedIndices = append(ci.RemovedIndices, proto.Clone(idx).(*pb.IndexMetadata))
	}
	t.msg.Operation = &pb.Transaction_CreateIndex_{CreateIndex: ci}
	return t
}

// NewDropIndex removes every segment of the named index from the given
// index list (the index section of the read version). It fails when no
// segment has that name.
func NewDropIndex(readVersion uint64, indices []*pb.IndexMetadata, name string) (*Transaction, error) {
	var removed []*pb.IndexMetadata
	for _, idx := range indices {
		if idx.GetName() == name {
			removed = append(removed, idx)
		}
	}
	if len(removed) == 0 {
		return nil, fmt.Errorf("%w: version %d has no index named %q", ErrInvalidTransaction, readVersion, name)
	}
	return NewCreateIndex(readVersion, nil, removed), nil
}

// ConfigChange is one key of an UpdateConfig: Value nil deletes the key.
type ConfigChange struct {
	Key   string
	Value *string
}

// UpdateConfigSpec lists the changes of an UpdateConfig (each written as an
// UpdateMap, §3.7 fields 6–9). Replace* clears the map before applying.
type UpdateConfigSpec struct {
	Config                []ConfigChange
	ReplaceConfig         bool
	TableMetadata         []ConfigChange
	ReplaceTableMetadata  bool
	SchemaMetadata        []ConfigChange
	ReplaceSchemaMetadata bool
	FieldMetadata         map[int32][]ConfigChange
}

func updateMap(changes []ConfigChange, replace bool) *pb.Transaction_UpdateMap {
	if len(changes) == 0 && !replace {
		return nil
	}
	m := &pb.Transaction_UpdateMap{Replace: replace}
	for _, c := range changes {
		e := &pb.Transaction_UpdateMapEntry{Key: c.Key}
		if c.Value != nil {
			v := *c.Value
			e.Value = &v
		}
		m.UpdateEntries = append(m.UpdateEntries, e)
	}
	return m
}

// NewUpdateConfig changes table config, table metadata, schema metadata or
// field metadata.
func NewUpdateConfig(readVersion uint64, s UpdateConfigSpec) *Transaction {
	t := newTxn(readVersion)
	uc := &pb.Transaction_UpdateConfig{
		ConfigUpdates:         updateMap(s.Config, s.ReplaceConfig),
		TableMetadataUpdates:  updateMap(s.TableMetadata, s.ReplaceTableMetadata),
		SchemaMetadataUpdates: updateMap(s.SchemaMetadata, s.ReplaceSchemaMetadata),
	}
	for id, ch := range s.FieldMetadata {
		if uc.FieldMetadataUpdates == nil {
			uc.FieldMetadataUpdates = map[int32]*pb.Transaction_UpdateMap{}
		}
		uc.FieldMetadataUpdates[id] = updateMap(ch, false)
	}
	t.msg.Operation = &pb.Transaction_UpdateConfig_{UpdateConfig: uc}
	return t
}

// NewEnableZoneWriteSeeds is the explicit activation commit of
// FLAG_ZONE_WRITE_SEEDS (zone-seeds.md R54, R56): an UpdateConfig that
// changes nothing, carrying the property lancekeeper.zone_write_seeds =
// "enable". Its manifest sets the bit in both flag words; every later
// manifest carries it (R57). The UpdateConfig arm is used because it is the
// one operation that every Lance conflict resolver treats as touching
// nothing when it has no entries.
func NewEnableZoneWriteSeeds(readVersion uint64) *Transaction {
	t := NewUpdateConfig(readVersion, UpdateConfigSpec{})
	t.activateSeeds = true
	t.SetProperty(PropertyZoneWriteSeeds, "enable")
	return t
}

// NewReserveFragments reserves n fragment ids (max_fragment_id += n).
func NewReserveFragments(readVersion uint64, n uint32) *Transaction {
	t := newTxn(readVersion)
	t.msg.Operation = &pb.Transaction_ReserveFragments_{ReserveFragments: &pb.Transaction_ReserveFragments{NumFragments: n}}
	return t
}

// NewRestore makes version the new head (§8.3). The target manifest is read
// by Commit.
func NewRestore(readVersion, version uint64) *Transaction {
	t := newTxn(readVersion)
	t.msg.Operation = &pb.Transaction_Restore_{Restore: &pb.Transaction_Restore{Version: version}}
	return t
}

// NewClone is the first commit of a dataset cloned from spec.Source
// (§8.1 shallow, §8.2 deep; the caller copies the files of a deep clone
// first). Its read version is spec.RefVersion, and the new dataset's first
// version keeps the source's version number.
func NewClone(spec CloneSpec) *Transaction {
	t := newTxn(spec.RefVersion)
	c := &pb.Transaction_Clone{IsShallow: spec.Shallow, RefVersion: spec.RefVersion, RefPath: spec.RefPath}
	if spec.RefName != nil {
		n := *spec.RefName
		c.RefName = &n
	}
	if spec.BranchName != nil {
		n := *spec.BranchName
		c.BranchName = &n
	}
	t.msg.Operation = &pb.Transaction_Clone_{Clone: c}
	s := spec
	t.clone = &s
	return t
}

// newFragments returns the fragments a transaction adds (Append,
// Overwrite, Rewrite), whose data files are new.
func newFragments(m *pb.Transaction) []*pb.DataFragment {
	switch op := m.GetOperation().(type) {
	case *pb.Transaction_Append_:
		return op.Append.GetFragments()
	case *pb.Transaction_Overwrite_:
		return op.Overwrite.GetFragments()
	case *pb.Transaction_Rewrite_:
		var out []*pb.DataFragment
		for _, g := range rewriteGroups(op.Rewrite) {
			out = append(out, g.GetNewFragments()...)
		}
		return out
	}
	return nil
}

func cloneFrags(in []*pb.DataFragment) []*pb.DataFragment {
	out := make([]*pb.DataFragment, len(in))
	for i, f := range in {
		out[i] = proto.Clone(f).(*pb.DataFragment)
	}
	return out
}

// MergeAppends combines Append transactions into one, for group commit
// (several compatible appends published as one version). The fragments are
// concatenated in argument order, so the merged commit's
// Result.FragmentIDs[off_i : off_i+n_i] are the ids of transaction i's n_i
// fragments. The read version is the smallest one (every version after it
// is conflict-checked); seed marks are kept; properties and tags must be
// empty, since one transaction cannot carry several callers' metadata.
func MergeAppends(txns ...*Transaction) (*Transaction, error) {
	if len(txns) == 0 {
		return nil, fmt.Errorf("%w: nothing to merge", ErrInvalidTransaction)
	}
	read := txns[0].ReadVersion()
	var frags []*pb.DataFragment
	seeds := map[string]bool{}
	for i, t := range txns {
		if t.Kind() != OpAppend {
			return nil, fmt.Errorf("%w: transaction %d is %s, only Append transactions merge", ErrInvalidTransaction, i, t.Kind())
		}
		if t.msg.GetTag() != "" || len(t.msg.GetTransactionProperties()) > 0 {
			return nil, fmt.Errorf("%w: transaction %d carries a tag or properties and cannot be merged", ErrInvalidTransaction, i)
		}
		read = min(read, t.ReadVersion())
		frags = append(frags, t.msg.GetAppend().GetFragments()...)
		for p, v1 := range t.seedFiles {
			seeds[p] = seeds[p] || v1
		}
	}
	out := NewAppend(read, frags)
	for p, v1 := range seeds {
		out.seedFiles[p] = v1
	}
	return out, nil
}
