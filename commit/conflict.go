package commit

import (
	"fmt"
	"sort"

	"github.com/RoaringBitmap/roaring/v2"
	"github.com/lancekeeper/lancekeeper/manifest/pb"
)

// outcome is the verdict of checking a transaction being committed against
// one that was committed concurrently (lance-table-format.md §5.4).
type outcome int

const (
	// Compatible: the committed transaction does not affect this one.
	outcomeCompatible outcome = iota
	// Rebase: this transaction must be rewritten on top of the committed one
	// (Delete against Delete/Update: deletion vectors are merged).
	outcomeRebase
	// Retryable: this transaction was preempted; rebuilt on the newer
	// version it may succeed.
	outcomeRetryable
	// Incompatible: this transaction can never be committed on top of the
	// committed one.
	outcomeIncompatible
)

func (o outcome) String() string {
	switch o {
	case outcomeCompatible:
		return "compatible"
	case outcomeRebase:
		return "rebase"
	case outcomeRetryable:
		return "retryable"
	case outcomeIncompatible:
		return "incompatible"
	}
	return "invalid"
}

// cell decides one entry of the matrix; reason explains a non-compatible
// verdict (which fragments, which keys).
type cell func(mine, theirs *pb.Transaction) (o outcome, reason string)

// ok, xx and rr are the unconditional cells ✓, X and R.
func ok(_, _ *pb.Transaction) (outcome, string) { return outcomeCompatible, "" }
func xx(_, _ *pb.Transaction) (outcome, string) { return outcomeIncompatible, "" }
func rr(_, _ *pb.Transaction) (outcome, string) { return outcomeRetryable, "" }

// matrixRow returns, for a transaction of kind k being committed, the rule
// for every kind of already-committed transaction. Only the kinds this
// package can commit have a row; the columns cover every arm, so that
// transactions written by Lance itself are judged too. An unknown committed
// arm (a newer Lance) is a retryable conflict: rebuilding on the newer
// version is the only safe answer. The choices where Lance versions differ
// follow NOV25 (see the table in §5.4).
func matrixRow(k OpKind) (row [numOpKinds]cell, known bool) {
	for i := range row {
		row[i] = ok
	}
	row[OpUnknown] = rr
	switch k {
	case OpAppend:
		row[OpOverwrite] = xx
		row[OpRestore] = xx
		row[OpUpdateMemWalState] = xx
		row[OpDataOverlay] = ok
	case OpDelete:
		row[OpDelete] = rebaseDeletes
		row[OpUpdate] = rebaseDeletes
		row[OpOverwrite] = xx
		row[OpRewrite] = retryIfFragmentsOverlap
		row[OpMerge] = rr
		row[OpRestore] = xx
		row[OpDataReplacement] = retryIfFragmentsOverlap
		row[OpUpdateMemWalState] = xx
		row[OpDataOverlay] = rr // its fragment list is not decoded by this build
	case OpOverwrite:
		row[OpOverwrite] = incompatibleIfSameConfigKeys
		row[OpUpdateConfig] = incompatibleIfSameConfigKeys
		row[OpUpdateMemWalState] = xx
	case OpCreateIndex:
		row[OpOverwrite] = xx
		row[OpRestore] = xx
		row[OpUpdateMemWalState] = xx
		row[OpRewrite] = retryIfIndexedFragmentsRewritten
		row[OpDataReplacement] = retryIfReplacedFieldIndexed
		row[OpDataOverlay] = rr
	case OpReserveFragments:
		row[OpOverwrite] = xx
		row[OpRestore] = xx
	case OpUpdateConfig:
		row[OpOverwrite] = updateConfigVsOverwrite
		row[OpUpdateConfig] = updateConfigVsUpdateConfig
	case OpRestore:
		row[OpUpdateMemWalState] = xx
	case OpRewrite:
		rewriteRow(&row)
	case OpClone:
		// Clone is only ever the first commit of a dataset; losing that race
		// means the dataset exists, which is not a matrix question.
		for i := range row {
			row[i] = xx
		}
	default:
		return row, false
	}
	return row, true
}

// checkConflict judges mine (being committed) against theirs (committed at
// some version after mine's read version). It is a pure function of the two
// messages, except that the Delete rebase verdict is refined later with the
// deletion vectors themselves (see rebaseDelete).
func checkConflict(mine, theirs *pb.Transaction) (outcome, string) {
	row, known := matrixRow(KindOf(mine))
	if !known {
		return outcomeIncompatible, fmt.Sprintf("this build cannot commit %s transactions", KindOf(mine))
	}
	return row[KindOf(theirs)](mine, theirs)
}

// touchedFragments returns the ids of existing fragments a transaction
// modifies or removes (not the new fragments it adds).
func touchedFragments(t *pb.Transaction) *roaring.Bitmap {
	b := roaring.New()
	add := func(id uint64) {
		if id <= 0xFFFFFFFF {
			b.Add(uint32(id))
		}
	}
	switch op := t.GetOperation().(type) {
	case *pb.Transaction_Delete_:
		for _, f := range op.Delete.GetUpdatedFragments() {
			add(f.GetId())
		}
		for _, id := range op.Delete.GetDeletedFragmentIds() {
			add(id)
		}
	case *pb.Transaction_Update_:
		for _, f := range op.Update.GetUpdatedFragments() {
			add(f.GetId())
		}
		for _, id := range op.Update.GetRemovedFragmentIds() {
			add(id)
		}
	case *pb.Transaction_Rewrite_:
		for _, f := range op.Rewrite.GetOldFragments() {
			add(f.GetId())
		}
		for _, g := range op.Rewrite.GetGroups() {
			for _, f := range g.GetOldFragments() {
				add(f.GetId())
			}
		}
	case *pb.Transaction_DataReplacement_:
		for _, g := range op.DataReplacement.GetReplacements() {
			add(g.GetFragmentId())
		}
	}
	return b
}

func idList(b *roaring.Bitmap) string {
	const max = 8
	s := fmt.Sprint(b.ToArray())
	if b.GetCardinality() > max {
		arr := b.ToArray()[:max]
		s = fmt.Sprint(arr)
		s = s[:len(s)-1] + " …]"
	}
	return s
}

// retryIfFragmentsOverlap: R when both transactions touch a common existing
// fragment, else compatible ("R o" in §5.4).
func retryIfFragmentsOverlap(mine, theirs *pb.Transaction) (outcome, string) {
	common := roaring.And(touchedFragments(mine), touchedFragments(theirs))
	if common.IsEmpty() {
		return outcomeCompatible, ""
	}
	return outcomeRetryable, "both modify fragments " + idList(common)
}

// rebaseDeletes: Delete against a committed Delete or Update. Fragments only
// one side touches are compatible; a common fragment is rebased (deletion
// vectors merged) unless the other side removed the fragment, in which case
// the rows this transaction saw are gone (retryable). Whether the same rows
// were deleted twice, and whether data files changed, is decided with the
// fragments themselves during the rebase.
func rebaseDeletes(mine, theirs *pb.Transaction) (outcome, string) {
	common := roaring.And(touchedFragments(mine), touchedFragments(theirs))
	if common.IsEmpty() {
		return outcomeCompatible, ""
	}
	var removed []uint64
	switch op := theirs.GetOperation().(type) {
	case *pb.Transaction_Delete_:
		removed = op.Delete.GetDeletedFragmentIds()
	case *pb.Transaction_Update_:
		removed = op.Update.GetRemovedFragmentIds()
	}
	for _, id := range removed {
		if id <= 0xFFFFFFFF && common.Contains(uint32(id)) {
			return outcomeRetryable, fmt.Sprintf("fragment %d was removed concurrently", id)
		}
	}
	if d := mine.GetDelete(); d != nil {
		for _, id := range d.GetDeletedFragmentIds() {
			if id <= 0xFFFFFFFF && common.Contains(uint32(id)) {
				return outcomeRetryable, fmt.Sprintf("fragment %d, which this transaction removes, was modified concurrently", id)
			}
		}
	}
	return outcomeRebase, "both modify fragments " + idList(common)
}

// indexFragments returns the union of the known fragment bitmaps of idx and
// whether any bitmap was unknown (empty bytes).
func indexFragments(idx []*pb.IndexMetadata) (*roaring.Bitmap, bool) {
	all := roaring.New()
	unknown := false
	for _, im := range idx {
		if len(im.GetFragmentBitmap()) == 0 {
			unknown = true
			continue
		}
		b := roaring.New()
		if _, err := b.FromUnsafeBytes(im.GetFragmentBitmap()); err != nil {
			unknown = true
			continue
		}
		all.Or(b)
	}
	return all, unknown
}

// retryIfIndexedFragmentsRewritten: CreateIndex against Rewrite — R when a
// rewritten fragment is covered by a new index (its row addresses moved).
func retryIfIndexedFragmentsRewritten(mine, theirs *pb.Transaction) (outcome, string) {
	newIdx := mine.GetCreateIndex().GetNewIndices()
	if len(newIdx) == 0 {
		return outcomeCompatible, "" // a pure index drop is unaffected by compaction
	}
	covered, unknown := indexFragments(newIdx)
	rewritten := touchedFragments(theirs)
	if unknown && !rewritten.IsEmpty() {
		return outcomeRetryable, "a new index has an unknown fragment bitmap and fragments were rewritten"
	}
	common := roaring.And(covered, rewritten)
	if common.IsEmpty() {
		return outcomeCompatible, ""
	}
	return outcomeRetryable, "indexed fragments " + idList(common) + " were rewritten"
}

// retryIfReplacedFieldIndexed: CreateIndex against DataReplacement — R when
// a replaced data file stores a field a new index covers.
func retryIfReplacedFieldIndexed(mine, theirs *pb.Transaction) (outcome, string) {
	indexed := map[int32]bool{}
	for _, im := range mine.GetCreateIndex().GetNewIndices() {
		for _, f := range im.GetFields() {
			indexed[f] = true
		}
	}
	for _, g := range theirs.GetDataReplacement().GetReplacements() {
		for _, f := range g.GetNewFile().GetFields() {
			if indexed[f] {
				return outcomeRetryable, fmt.Sprintf("indexed field %d was replaced in fragment %d", f, g.GetFragmentId())
			}
		}
	}
	return outcomeCompatible, ""
}

// configKeys returns the config keys a transaction upserts and deletes.
func configKeys(t *pb.Transaction) (upserts, deletes map[string]bool) {
	upserts, deletes = map[string]bool{}, map[string]bool{}
	switch op := t.GetOperation().(type) {
	case *pb.Transaction_Overwrite_:
		for k := range op.Overwrite.GetConfigUpsertValues() {
			upserts[k] = true
		}
	case *pb.Transaction_UpdateConfig_:
		uc := op.UpdateConfig
		for k := range uc.GetUpsertValues() {
			upserts[k] = true
		}
		for _, k := range uc.GetDeleteKeys() {
			deletes[k] = true
		}
		for _, e := range uc.GetConfigUpdates().GetUpdateEntries() {
			if e.Value != nil {
				upserts[e.GetKey()] = true
			} else {
				deletes[e.GetKey()] = true
			}
		}
	}
	return upserts, deletes
}

func replacesConfig(t *pb.Transaction) bool {
	return t.GetUpdateConfig().GetConfigUpdates().GetReplace()
}

// sameConfigKeys: an upsert key of one side appears in the other side's
// upserts or deletes (§5.4), or one side replaces the whole config map while
// the other changes it.
func sameConfigKeys(a, b *pb.Transaction) (bool, string) {
	ua, da := configKeys(a)
	ub, db := configKeys(b)
	if (replacesConfig(a) && len(ub)+len(db) > 0) || (replacesConfig(b) && len(ua)+len(da) > 0) {
		return true, "the config map is replaced by one side and changed by the other"
	}
	var keys []string
	for k := range ua {
		if ub[k] || db[k] {
			keys = append(keys, k)
		}
	}
	for k := range ub {
		if da[k] {
			keys = append(keys, k)
		}
	}
	if len(keys) == 0 {
		return false, ""
	}
	sort.Strings(keys)
	return true, fmt.Sprintf("both change config keys %q", keys)
}

func incompatibleIfSameConfigKeys(mine, theirs *pb.Transaction) (outcome, string) {
	if same, why := sameConfigKeys(mine, theirs); same {
		return outcomeIncompatible, why
	}
	return outcomeCompatible, ""
}

// changesSchemaMetadata reports whether an UpdateConfig touches schema-level
// or field-level metadata.
func changesSchemaMetadata(uc *pb.Transaction_UpdateConfig) (schema, fields bool) {
	schema = len(uc.GetSchemaMetadata()) > 0 || len(uc.GetSchemaMetadataUpdates().GetUpdateEntries()) > 0 ||
		uc.GetSchemaMetadataUpdates().GetReplace()
	fields = len(uc.GetFieldMetadata()) > 0 || len(uc.GetFieldMetadataUpdates()) > 0
	return schema, fields
}

// updateConfigVsOverwrite: X if the UpdateConfig changes schema or field
// metadata (the Overwrite replaced the schema) or shares config keys.
func updateConfigVsOverwrite(mine, theirs *pb.Transaction) (outcome, string) {
	schema, fields := changesSchemaMetadata(mine.GetUpdateConfig())
	if schema || fields {
		return outcomeIncompatible, "the schema this metadata change applies to was replaced"
	}
	return incompatibleIfSameConfigKeys(mine, theirs)
}

func metadataKeys(m *pb.Transaction_UpdateMap) map[string]bool {
	out := map[string]bool{}
	for _, e := range m.GetUpdateEntries() {
		out[e.GetKey()] = true
	}
	return out
}

func mapsCollide(a, b *pb.Transaction_UpdateMap) bool {
	if a == nil || b == nil {
		return false
	}
	if (a.GetReplace() && (b.GetReplace() || len(b.GetUpdateEntries()) > 0)) ||
		(b.GetReplace() && len(a.GetUpdateEntries()) > 0) {
		return true
	}
	kb := metadataKeys(b)
	for k := range metadataKeys(a) {
		if kb[k] {
			return true
		}
	}
	return false
}

// updateConfigVsUpdateConfig: X if the two change the same config keys, the
// same table-metadata keys, both change schema metadata, or both change the
// metadata of the same field.
func updateConfigVsUpdateConfig(mine, theirs *pb.Transaction) (outcome, string) {
	if same, why := sameConfigKeys(mine, theirs); same {
		return outcomeIncompatible, why
	}
	a, b := mine.GetUpdateConfig(), theirs.GetUpdateConfig()
	if mapsCollide(a.GetTableMetadataUpdates(), b.GetTableMetadataUpdates()) {
		return outcomeIncompatible, "both change the same table metadata keys"
	}
	sa, _ := changesSchemaMetadata(a)
	sb, _ := changesSchemaMetadata(b)
	if sa && sb {
		return outcomeIncompatible, "both change schema metadata"
	}
	for id := range a.GetFieldMetadataUpdates() {
		if _, both := b.GetFieldMetadataUpdates()[id]; both {
			return outcomeIncompatible, fmt.Sprintf("both change the metadata of field %d", id)
		}
	}
	for id := range a.GetFieldMetadata() {
		if _, both := b.GetFieldMetadata()[id]; both {
			return outcomeIncompatible, fmt.Sprintf("both change the metadata of field %d", id)
		}
	}
	// Deprecated full-replace field metadata vs the new form, by id.
	for id := range a.GetFieldMetadataUpdates() {
		if id >= 0 {
			if _, both := b.GetFieldMetadata()[uint32(id)]; both {
				return outcomeIncompatible, fmt.Sprintf("both change the metadata of field %d", id)
			}
		}
	}
	for id := range b.GetFieldMetadataUpdates() {
		if id >= 0 {
			if _, both := a.GetFieldMetadata()[uint32(id)]; both {
				return outcomeIncompatible, fmt.Sprintf("both change the metadata of field %d", id)
			}
		}
	}
	return outcomeCompatible, ""
}
