package commit

import (
	"context"
	"fmt"
	"math/rand/v2"
	"sort"

	"github.com/RoaringBitmap/roaring/v2"
	"google.golang.org/protobuf/proto"

	"github.com/lancekeeper/lancekeeper/manifest"
	"github.com/lancekeeper/lancekeeper/manifest/pb"
	"github.com/lancekeeper/lancekeeper/store"
)

// deleteState is what a Delete needs to rebase onto concurrent deletes:
// the fragments as read, the rows this transaction deletes beyond those
// already deleted at the read version, and the result computed against the
// read version (reused while the fragment's deletion file is unchanged).
type deleteState struct {
	readVersion uint64
	base        map[uint64]*pb.DataFragment
	newRows     map[uint64]*roaring.Bitmap
	// against is the per-fragment result for a given state of the fragment's
	// deletion file: the key is deletionKey of the file the result merged.
	against map[uint64]deleteOutcome
	// pending are the deletion files written without fsync
	// (commit/durable.go).
	pending []pendingKey
}

type deleteOutcome struct {
	key     string
	removed bool
	frag    *pb.DataFragment // updated fragment (nil when removed)
}

// deletionKey identifies a deletion file (or none).
func deletionKey(d *pb.DeletionFile) string {
	if d == nil {
		return "-"
	}
	base := "root"
	if d.BaseId != nil {
		base = fmt.Sprint(d.GetBaseId())
	}
	return fmt.Sprintf("%d/%d/%d/%s", d.GetFileType(), d.GetReadVersion(), d.GetId(), base)
}

// sameDataFiles: the same data files, compared without file_size_bytes —
// a statistic the §5.2 e fix-up recomputes on an old writer's manifest,
// not a change of the file.
func sameDataFiles(a, b *pb.DataFragment) bool {
	if len(a.GetFiles()) != len(b.GetFiles()) {
		return false
	}
	for i := range a.GetFiles() {
		x, y := a.GetFiles()[i], b.GetFiles()[i]
		if x.GetFileSizeBytes() != y.GetFileSizeBytes() && x.GetFileSizeBytes() != 0 && y.GetFileSizeBytes() != 0 {
			return false
		}
		if x.GetFileSizeBytes() != y.GetFileSizeBytes() {
			x, y = proto.Clone(x).(*pb.DataFile), proto.Clone(y).(*pb.DataFile)
			x.FileSizeBytes, y.FileSizeBytes = 0, 0
		}
		if !proto.Equal(x, y) {
			return false
		}
	}
	return true
}

// readDeletionVector returns the deleted rows of a fragment as recorded in
// manifest m (empty when it has no deletion file). Files in another base
// are read through a store opened on that base.
func readDeletionVector(ctx context.Context, st Store, m *pb.Manifest, f *pb.DataFragment) (*roaring.Bitmap, error) {
	d := f.GetDeletionFile()
	if d == nil {
		return roaring.New(), nil
	}
	r, err := manifest.NewResolver(m)
	if err != nil {
		return nil, err
	}
	loc, err := r.DeletionFile(f.GetId(), d)
	if err != nil {
		return nil, err
	}
	if loc.Base == "" {
		return manifest.ReadDeletionFile(ctx, st.Bucket(), st.KeyPrefix()+loc.Path, d.GetFileType())
	}
	other, err := openBase(ctx, st, loc.Base)
	if err != nil {
		return nil, fmt.Errorf("deletion file of fragment %d in base %q: %w", f.GetId(), loc.Base, err)
	}
	defer other.Close()
	return manifest.ReadDeletionFile(ctx, other.Bucket(), other.KeyPrefix()+loc.Path, d.GetFileType())
}

// openBase opens a base path of the dataset in st with the connection
// options of st (store.Store.OpenBase); a Store that is not a *store.Store
// (nor wraps one, exposing OpenBase) opens the base as recorded.
func openBase(ctx context.Context, st Store, base string) (*store.Store, error) {
	if bo, ok := st.(interface {
		OpenBase(context.Context, string) (*store.Store, error)
	}); ok {
		return bo.OpenBase(ctx, base)
	}
	return store.Open(ctx, base)
}

// physicalRows returns a fragment's physical row count, opening its first
// data file when the manifest does not record it (§9 trap 2).
func physicalRows(ctx context.Context, st Store, m *pb.Manifest, f *pb.DataFragment) (uint64, error) {
	if n := f.GetPhysicalRows(); n > 0 {
		return n, nil
	}
	if len(f.GetFiles()) == 0 {
		return 0, fmt.Errorf("%w: fragment %d has no data files", ErrInvalidTransaction, f.GetId())
	}
	r, err := manifest.NewResolver(m)
	if err != nil {
		return 0, err
	}
	loc, err := r.DataFile(f.GetFiles()[0])
	if err != nil {
		return 0, err
	}
	if loc.Base != "" {
		return 0, fmt.Errorf("%w: fragment %d records no physical_rows and its data file lives in base %q", ErrInvalidTransaction, f.GetId(), loc.Base)
	}
	// Old writers (which leave physical_rows 0) wrote legacy v1 files too:
	// fileRows reads either kind (fixup.go).
	key := st.KeyPrefix() + loc.Path
	attrs, err := st.Bucket().Attributes(ctx, key)
	if err != nil {
		return 0, err
	}
	return fileRows(ctx, st, key, attrs.Size)
}

// writeDeletionFile writes rows of fragment fragID as a new deletion file
// named with readVersion (§4.7): .arrow up to manifest.BitmapThreshold rows,
// .bin above.
func writeDeletionFile(ctx context.Context, st Store, pending *[]pendingKey, fragID, readVersion uint64, rows *roaring.Bitmap) (*pb.DeletionFile, error) {
	typ, data, err := manifest.EncodeDeletionFile(rows)
	if err != nil {
		return nil, err
	}
	d := &pb.DeletionFile{FileType: typ, ReadVersion: readVersion, Id: rand.Uint64(), NumDeletedRows: rows.GetCardinality()}
	name, err := manifest.DeletionFileName(fragID, d)
	if err != nil {
		return nil, err
	}
	if err := putPending(ctx, st, pending, manifest.DeletionsDir+"/"+name, data); err != nil {
		return nil, fmt.Errorf("write deletion file: %w", err)
	}
	return d, nil
}

// NewDelete deletes rows (local row offsets per fragment id) from the
// version in file (the read version). It reads the fragments' current
// deletion vectors and writes a complete new deletion file per touched
// fragment (never a delta, §4.7); a fragment whose rows are all deleted is
// removed instead. predicate is recorded for information.
func NewDelete(ctx context.Context, st Store, file *manifest.File, rows map[uint64]*roaring.Bitmap, predicate string) (*Transaction, error) {
	m := file.Manifest
	rv := m.GetVersion()
	t := newTxn(rv)
	ds := &deleteState{readVersion: rv, base: map[uint64]*pb.DataFragment{}, newRows: map[uint64]*roaring.Bitmap{}, against: map[uint64]deleteOutcome{}}
	byID := map[uint64]*pb.DataFragment{}
	for _, f := range m.GetFragments() {
		byID[f.GetId()] = f
	}
	ids := make([]uint64, 0, len(rows))
	for id := range rows {
		ids = append(ids, id)
	}
	sort.Slice(ids, func(i, j int) bool { return ids[i] < ids[j] })
	del := &pb.Transaction_Delete{Predicate: predicate}
	for _, id := range ids {
		want := rows[id]
		if want == nil || want.IsEmpty() {
			continue
		}
		f := byID[id]
		if f == nil {
			return nil, fmt.Errorf("%w: version %d has no fragment %d", ErrInvalidTransaction, rv, id)
		}
		n, err := physicalRows(ctx, st, m, f)
		if err != nil {
			return nil, err
		}
		if uint64(want.Maximum()) >= n {
			return nil, fmt.Errorf("%w: fragment %d has %d rows; row offset %d is out of range", ErrInvalidTransaction, id, n, want.Maximum())
		}
		existing, err := readDeletionVector(ctx, st, m, f)
		if err != nil {
			return nil, err
		}
		fresh := roaring.AndNot(want, existing)
		if fresh.IsEmpty() {
			continue
		}
		base := proto.Clone(f).(*pb.DataFragment)
		base.PhysicalRows = n
		ds.base[id] = base
		ds.newRows[id] = fresh
		out, err := ds.merge(ctx, st, id, existing, rv)
		if err != nil {
			return nil, err
		}
		out.key = deletionKey(f.GetDeletionFile())
		ds.against[id] = out
		if out.removed {
			del.DeletedFragmentIds = append(del.DeletedFragmentIds, id)
		} else {
			del.UpdatedFragments = append(del.UpdatedFragments, out.frag)
		}
	}
	t.msg.Operation = &pb.Transaction_Delete_{Delete: del}
	t.del = ds
	return t, nil
}

// merge computes the fragment after deleting newRows[id] on top of the
// already-deleted rows existing, writing a deletion file named with
// nameVersion when rows remain.
func (ds *deleteState) merge(ctx context.Context, st Store, id uint64, existing *roaring.Bitmap, nameVersion uint64) (deleteOutcome, error) {
	base := ds.base[id]
	all := roaring.Or(existing, ds.newRows[id])
	if all.GetCardinality() >= base.GetPhysicalRows() {
		return deleteOutcome{removed: true}, nil
	}
	d, err := writeDeletionFile(ctx, st, &ds.pending, id, nameVersion, all)
	if err != nil {
		return deleteOutcome{}, err
	}
	nf := proto.Clone(base).(*pb.DataFragment)
	nf.DeletionFile = d
	return deleteOutcome{frag: nf}, nil
}

// rebase checks a committed Delete or Update (version v) against this
// Delete fragment by fragment: changed data files or rows deleted by both
// are retryable conflicts; otherwise the deletion vectors merge later, in
// prepare, against the latest version.
func (ds *deleteState) rebase(ctx context.Context, d *dataset, theirs *pb.Transaction, v uint64) (outcome, string, error) {
	var updated []*pb.DataFragment
	switch op := theirs.GetOperation().(type) {
	case *pb.Transaction_Delete_:
		updated = op.Delete.GetUpdatedFragments()
	case *pb.Transaction_Update_:
		updated = op.Update.GetUpdatedFragments()
	}
	var vm *pb.Manifest
	for _, tf := range updated {
		mine := ds.newRows[tf.GetId()]
		if mine == nil {
			continue
		}
		if !sameDataFiles(tf, ds.base[tf.GetId()]) {
			return outcomeRetryable, fmt.Sprintf("the data files of fragment %d changed", tf.GetId()), nil
		}
		if vm == nil {
			f, err := d.file(ctx, v)
			if err != nil {
				return 0, "", err
			}
			vm = f.Manifest
		}
		theirRows, err := readDeletionVector(ctx, d.st, vm, tf)
		if err != nil {
			return 0, "", err
		}
		if common := roaring.And(mine, theirRows); !common.IsEmpty() {
			return outcomeRetryable, fmt.Sprintf("%d row(s) of fragment %d were deleted by both, e.g. row %d", common.GetCardinality(), tf.GetId(), common.Minimum()), nil
		}
	}
	return outcomeRebase, "", nil
}

// prepare rewrites the Delete operation against the latest manifest: a
// fragment whose deletion file is still the one this transaction read keeps
// the result computed then; otherwise the latest deletion vector is merged
// with this transaction's rows into a new deletion file named with the
// latest version (§5.2 use (3) of read_version).
func (ds *deleteState) prepare(ctx context.Context, d *dataset, t *Transaction, latest *pb.Manifest) error {
	byID := map[uint64]*pb.DataFragment{}
	for _, f := range latest.GetFragments() {
		byID[f.GetId()] = f
	}
	del := t.msg.GetDelete()
	del.UpdatedFragments, del.DeletedFragmentIds = nil, nil
	ids := make([]uint64, 0, len(ds.newRows))
	for id := range ds.newRows {
		ids = append(ids, id)
	}
	sort.Slice(ids, func(i, j int) bool { return ids[i] < ids[j] })
	for _, id := range ids {
		cur := byID[id]
		conflict := func(reason string) error {
			return &ConflictError{Op: "Delete", ConcurrentOp: "Unknown", Version: latest.GetVersion(), Retryable: true, Reason: reason}
		}
		if cur == nil {
			return conflict(fmt.Sprintf("fragment %d no longer exists", id))
		}
		if !sameDataFiles(cur, ds.base[id]) {
			return conflict(fmt.Sprintf("the data files of fragment %d changed", id))
		}
		key := deletionKey(cur.GetDeletionFile())
		out, ok := ds.against[id]
		if !ok || out.key != key {
			existing, err := readDeletionVector(ctx, d.st, latest, cur)
			if err != nil {
				return err
			}
			if common := roaring.And(existing, ds.newRows[id]); !common.IsEmpty() {
				return conflict(fmt.Sprintf("%d row(s) of fragment %d were deleted concurrently", common.GetCardinality(), id))
			}
			if out, err = ds.merge(ctx, d.st, id, existing, latest.GetVersion()); err != nil {
				return err
			}
			if out.frag != nil {
				// Keep everything else the latest fragment records.
				nf := proto.Clone(cur).(*pb.DataFragment)
				nf.DeletionFile = out.frag.GetDeletionFile()
				if nf.PhysicalRows == 0 {
					nf.PhysicalRows = ds.base[id].GetPhysicalRows()
				}
				out.frag = nf
			}
			out.key = key
			ds.against[id] = out
		}
		if out.removed {
			del.DeletedFragmentIds = append(del.DeletedFragmentIds, id)
		} else {
			del.UpdatedFragments = append(del.UpdatedFragments, proto.Clone(out.frag).(*pb.DataFragment))
		}
	}
	return nil
}
