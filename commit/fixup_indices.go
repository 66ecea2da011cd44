package commit

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"sort"
	"strconv"
	"strings"

	"github.com/RoaringBitmap/roaring/v2"
	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"gocloud.dev/blob"
	"google.golang.org/protobuf/encoding/protowire"
	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/types/known/anypb"

	"github.com/lancekeeper/lancekeeper/datafile"
	"github.com/lancekeeper/lancekeeper/indexfile"
	"github.com/lancekeeper/lancekeeper/manifest"
	"github.com/lancekeeper/lancekeeper/manifest/pb"
)

// fixIndices is the index half of the §5.2 e fix-ups, as Lance 12's
// commit does it (its migrate_indices, run on the indices of the manifest
// being built, after the operation is applied, on every commit):
//
//  1. A vector index without details (none, on a fixed-size-list field, or
//     VectorIndexDetails with an empty value) gets them inferred from its
//     index file (inferVectorDetails), once per index name and applied to
//     every segment of that name.
//  2. An index's fragment bitmap is recomputed from the index's own row ids
//     when segments of the same index cover the same fragment, or — system
//     indices excepted — when it has no bitmap or the version the commit
//     builds on (prev) was written by Lance older than 0.8.15 (whose bitmaps
//     could be wrong — corpus historical/0.8.14/corrupt_index) or by a
//     writer recording no version. Another library's bitmaps are trusted.
//     The recomputed bitmap is the set of fragment ids of the row ids the
//     index holds, not intersected with the version's fragments: it may
//     name fragments deleted since, exactly as Lance's does. Every index of
//     next is considered, not only those carried over (Lance recomputes a
//     segment created by the commit too).
//  3. A non-system index without a file list gets one: every object under
//     its directory with its size.
//  4. index_version is written explicitly (0 when absent), as Lance 12
//     writes every entry.
//
// When the recompute fails (a missing or corrupt file, a legacy stage list
// Lance refuses), Lance 12 logs it and commits anyway: a bitmap it had to
// recompute only because of an old writer is dropped (unknown coverage),
// any other is left as it was; so does this. An index whose recompute
// Lance 12 cannot even attempt — its code for Bitmap, LabelList, Inverted,
// HNSW and v2-format vector indices is unimplemented and panics — fails
// the commit with ErrIndexBitmap, as do the few cases this build does not
// read (see readIndexFragments). A failure to infer details or to list
// files is ignored, as in Lance.
//
// It returns next itself when nothing changes, else a new slice whose
// changed entries are copies: neither next nor its entries are modified.
func fixIndices(ctx context.Context, st Store, prev *pb.Manifest, next []*pb.IndexMetadata) ([]*pb.IndexMetadata, error) {
	out := next
	copied := map[int]bool{}
	edit := func(i int) *pb.IndexMetadata {
		if len(copied) == 0 {
			out = append([]*pb.IndexMetadata(nil), next...)
		}
		if !copied[i] {
			out[i] = proto.Clone(out[i]).(*pb.IndexMetadata)
			copied[i] = true
		}
		return out[i]
	}
	for i, details := range inferVectorDetails(ctx, st, prev, next) {
		edit(i).IndexDetails = details
	}
	overlap := overlappingSegments(next)
	suspect := bitmapsSuspect(prev.GetWriterVersion())
	var fr *pb.IndexMetadata
	for _, idx := range next {
		if idx.GetName() == "__lance_frag_reuse" {
			fr = idx
		}
	}
	for i, idx := range next {
		legacy := len(idx.GetFragmentBitmap()) == 0 || suspect
		if overlap[idx.GetName()] || (legacy && !systemIndex(idx)) {
			bm, err := readIndexFragments(ctx, st, prev, idx, fr)
			switch {
			case err == nil:
				bm.RunOptimize()
				raw, err := bm.ToBytes()
				if err != nil {
					return nil, err
				}
				edit(i).FragmentBitmap = raw
			case errors.Is(err, errLanceCannot) || errors.Is(err, errNotImplemented):
				why := "its segments cover the same fragment"
				switch {
				case overlap[idx.GetName()]:
				case len(idx.GetFragmentBitmap()) == 0:
					why = "it records no fragment bitmap"
				default:
					why = fmt.Sprintf("version %d was written by %s", prev.GetVersion(), writerString(prev.GetWriterVersion()))
				}
				u, _ := manifest.IndexUUID(idx)
				return nil, fmt.Errorf("%w: index %q (%s): %s, so Lance recomputes its fragment bitmap before committing: %w", ErrIndexBitmap, idx.GetName(), u, why, err)
			case ctx.Err() != nil:
				return nil, err
			default:
				// Lance 12: logged; a bitmap kept only by an old writer's
				// word becomes unknown, any other stays.
				if len(idx.GetFragmentBitmap()) != 0 && legacy {
					edit(i).FragmentBitmap = nil
				}
			}
		}
		if len(idx.GetFiles()) == 0 && !systemIndex(idx) {
			if files, err := listIndexFiles(ctx, st, prev, idx); err == nil {
				edit(i).Files = files
			} else if ctx.Err() != nil {
				return nil, err
			}
		}
		if idx.IndexVersion == nil {
			edit(i).IndexVersion = proto.Int32(0)
		}
	}
	return out, nil
}

// listIndexFiles lists every object under an index's directory (the
// dataset's own; another base is not listed) with its size, relative to
// the directory, sorted by path.
func listIndexFiles(ctx context.Context, st Store, prev *pb.Manifest, idx *pb.IndexMetadata) ([]*pb.IndexFile, error) {
	dir, err := indexDirKey(st, prev, idx)
	if err != nil {
		return nil, err
	}
	var files []*pb.IndexFile
	it := st.Bucket().List(&blob.ListOptions{Prefix: dir})
	for {
		obj, err := it.Next(ctx)
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			return nil, err
		}
		if obj.IsDir {
			continue
		}
		files = append(files, &pb.IndexFile{Path: strings.TrimPrefix(obj.Key, dir), SizeBytes: uint64(obj.Size)})
	}
	if len(files) == 0 {
		return nil, fmt.Errorf("index directory %s is empty", dir)
	}
	sort.Slice(files, func(a, b int) bool { return files[a].Path < files[b].Path })
	return files, nil
}

// indexDirKey is the bucket key prefix of an index's directory, ending in
// "/"; an index under another base path is errNotImplemented.
func indexDirKey(st Store, prev *pb.Manifest, idx *pb.IndexMetadata) (string, error) {
	res, err := manifest.NewResolver(prev)
	if err != nil {
		return "", err
	}
	loc, err := res.IndexDir(idx)
	if err != nil {
		return "", err
	}
	if loc.Base != "" {
		return "", fmt.Errorf("its files are under base path %s, which this fix-up does not read (%w)", loc.Base, errNotImplemented)
	}
	return st.KeyPrefix() + loc.Path + "/", nil
}

// vectorDetailsURL is the type URL Lance 12 writes for inferred details.
const vectorDetailsURL = "/lance.index.pb.VectorIndexDetails"

// inferVectorDetails returns, by position in next, the details Lance 12
// infers for vector indices that lack them: no details and a field that
// is a fixed-size list, or VectorIndexDetails with an empty value. Per
// index name one segment (the last needing it) is read; the result goes
// to every segment of that name: VectorIndexDetails{metric_type,
// compression: pq{num_bits, num_sub_vectors}} (vectorDetails). Legacy
// IVF_PQ and v2-format IVF_PQ files are read; other v2-format kinds
// (IVF_FLAT, IVF_SQ, IVF_HNSW_*, IVF_RQ) are not inferred by this build
// and keep their details.
func inferVectorDetails(ctx context.Context, st Store, prev *pb.Manifest, next []*pb.IndexMetadata) map[int]*anypb.Any {
	fsl := map[int32]bool{}
	for _, f := range prev.GetFields() {
		if strings.HasPrefix(f.GetLogicalType(), "fixed_size_list:") {
			fsl[f.GetId()] = true
		}
	}
	rep := map[string]*pb.IndexMetadata{}
	for _, idx := range next {
		d := idx.GetIndexDetails()
		need := false
		if d == nil {
			for _, id := range idx.GetFields() {
				need = need || fsl[id]
			}
		} else {
			need = strings.HasSuffix(d.GetTypeUrl(), "VectorIndexDetails") && len(d.GetValue()) == 0
		}
		if need {
			rep[idx.GetName()] = idx
		}
	}
	out := map[int]*anypb.Any{}
	for name, idx := range rep {
		dir, err := indexDirKey(st, prev, idx)
		if err != nil {
			continue
		}
		v, ok := vectorDetails(ctx, st, dir)
		if !ok {
			continue
		}
		for i, other := range next {
			if other.GetName() == name {
				out[i] = &anypb.Any{TypeUrl: vectorDetailsURL, Value: v}
			}
		}
	}
	return out
}

// vectorDetails encodes the VectorIndexDetails Lance 12 infers from an
// index directory: from a legacy index.idx, the Index message's metric
// and its last PQ stage; from a v2-format IVF_PQ index, the distance
// type of index.idx's "lance:index" metadata and nbits/num_sub_vectors of
// the first entry of auxiliary.idx's "storage_metadata". ok is false when
// nothing can be inferred here (other v2-format kinds are not read by this
// build; Lance's inference failures are ignored as Lance ignores them).
func vectorDetails(ctx context.Context, st Store, dir string) ([]byte, bool) {
	foot, size, err := indexfile.OpenFooter(ctx, st.Bucket(), dir+"index.idx")
	if err != nil {
		return nil, false
	}
	var metric uint64
	var pq *indexfile.PQStage
	if foot.Legacy() {
		lv, err := indexfile.ReadLegacyMetadata(ctx, st.Bucket(), dir+"index.idx", size)
		if err != nil {
			return nil, false
		}
		metric, pq = uint64(lv.MetricType), lv.PQ
		if metric > 3 {
			metric = 0
		}
	} else {
		f, err := datafile.Open(ctx, st.Bucket(), dir+"index.idx", datafile.OpenOptions{Size: size})
		if err != nil {
			return nil, false
		}
		var meta struct {
			Type         string `json:"type"`
			DistanceType string `json:"distance_type"`
		}
		if json.Unmarshal([]byte(f.Metadata()["lance:index"]), &meta) != nil || meta.Type != "IVF_PQ" {
			return nil, false
		}
		switch strings.ToUpper(meta.DistanceType) {
		case "COSINE":
			metric = 1
		case "DOT":
			metric = 2
		case "HAMMING":
			metric = 3
		}
		aux, err := datafile.Open(ctx, st.Bucket(), dir+"auxiliary.idx", datafile.OpenOptions{})
		if err != nil {
			return nil, false
		}
		var entries []string
		var pqMeta struct {
			NBits         uint32 `json:"nbits"`
			NumSubVectors uint32 `json:"num_sub_vectors"`
		}
		if json.Unmarshal([]byte(aux.Metadata()["storage_metadata"]), &entries) != nil || len(entries) == 0 ||
			json.Unmarshal([]byte(entries[0]), &pqMeta) != nil {
			return nil, false
		}
		pq = &indexfile.PQStage{NumBits: pqMeta.NBits, NumSubVectors: pqMeta.NumSubVectors}
	}
	var v []byte
	if metric != 0 {
		v = protowire.AppendTag(v, 1, protowire.VarintType)
		v = protowire.AppendVarint(v, metric)
	}
	if pq != nil {
		var b []byte
		if pq.NumBits != 0 {
			b = protowire.AppendTag(b, 1, protowire.VarintType)
			b = protowire.AppendVarint(b, uint64(pq.NumBits))
		}
		if pq.NumSubVectors != 0 {
			b = protowire.AppendTag(b, 2, protowire.VarintType)
			b = protowire.AppendVarint(b, uint64(pq.NumSubVectors))
		}
		v = protowire.AppendTag(v, 4, protowire.BytesType)
		v = protowire.AppendBytes(v, b)
	}
	return v, true
}

// errLanceCannot marks an index Lance 12 cannot recompute a bitmap for
// without panicking; errNotImplemented one Lance can and this build does
// not. Both fail the commit with ErrIndexBitmap.
var (
	errLanceCannot    = errors.New("Lance 12 cannot recompute it either (its code for this kind is unimplemented and panics)")
	errNotImplemented = errors.New("not implemented in this build")
)

// readIndexFragments reads the fragment ids of the rows an index holds, as
// the calculate_included_frags of the index Lance opens: a vector index
// (an index.idx file) in the legacy format from its IVF partitions' row
// ids; a scalar index by its kind (from index_details, else inferred as
// Lance does): BTree from the row ids of page_data.lance, ZoneMap and
// BloomFilter from the fragment_id column of their zone file. Errors
// matching errLanceCannot: Bitmap, LabelList and Inverted (FTS) indices,
// vector indices in the IVF_HNSW (footer 0.2) or v2 (0.3, 2.x) index
// format, an index whose field is missing from the schema (Lance's commit
// fails on it). Errors matching errNotImplemented: NGram, JSON and other
// kinds, scalar index files in the legacy v1 file format (Lance ≤ 0.2x),
// system indices, index files under another base path, a dataset with a
// fragment-reuse index (Lance remaps the row ids through it first).
// Any other error is one Lance 12 logs and commits past.
func readIndexFragments(ctx context.Context, st Store, prev *pb.Manifest, idx, fragReuse *pb.IndexMetadata) (*roaring.Bitmap, error) {
	if systemIndex(idx) {
		return nil, fmt.Errorf("recomputing a system index's bitmap: %w", errNotImplemented)
	}
	if fragReuse != nil {
		return nil, fmt.Errorf("the dataset has a fragment-reuse index, through which Lance remaps the index's row ids: %w", errNotImplemented)
	}
	if len(idx.GetFields()) == 0 {
		return nil, fmt.Errorf("the index names no field: %w", errLanceCannot)
	}
	var field *pb.Field
	for _, f := range prev.GetFields() {
		if f.GetId() == idx.GetFields()[0] {
			field = f
		}
	}
	if field == nil {
		return nil, fmt.Errorf("its field id %d is not in the schema of version %d: %w", idx.GetFields()[0], prev.GetVersion(), errLanceCannot)
	}
	dir, err := indexDirKey(st, prev, idx)
	if err != nil {
		return nil, err
	}
	exists := func(name string) (bool, error) { return st.Bucket().Exists(ctx, dir+name) }
	if ok, err := exists("index.idx"); err != nil {
		return nil, err
	} else if ok {
		foot, size, err := indexfile.OpenFooter(ctx, st.Bucket(), dir+"index.idx")
		if err != nil {
			return nil, err
		}
		if foot.Major == 2 || (foot.Major == 0 && (foot.Minor == 2 || foot.Minor == 3)) {
			return nil, fmt.Errorf("vector index file version %d.%d (IVF_HNSW or the v2 index format): %w", foot.Major, foot.Minor, errLanceCannot)
		}
		bm, _, err := indexfile.LegacyFragments(ctx, st.Bucket(), dir+"index.idx", size)
		return bm, err
	}
	kind, err := scalarKind(idx, field, exists)
	if err != nil {
		return nil, err
	}
	switch kind {
	case "BTree":
		return columnFragments(ctx, st, dir+"page_data.lance", "ids", true)
	case "ZoneMap":
		return columnFragments(ctx, st, dir+"zonemap.lance", "fragment_id", false)
	case "BloomFilter":
		return columnFragments(ctx, st, dir+"bloomfilter.lance", "fragment_id", false)
	case "Bitmap", "LabelList", "Inverted":
		return nil, fmt.Errorf("a %s index: %w", kind, errLanceCannot)
	}
	return nil, fmt.Errorf("recomputing the bitmap of a %s index: %w", kind, errNotImplemented)
}

// scalarKind names a scalar index's kind from its index_details type URL
// or, without details, the way Lance infers it: a list column is
// LabelList, a bitmap_page_lookup.lance file means Bitmap, metadata.lance
// or invert.lance Inverted, anything else BTree.
func scalarKind(idx *pb.IndexMetadata, field *pb.Field, exists func(string) (bool, error)) (string, error) {
	if u := idx.GetIndexDetails().GetTypeUrl(); u != "" {
		name := u[strings.LastIndexAny(u, "/.")+1:]
		return strings.TrimSuffix(name, "IndexDetails"), nil
	}
	if t := field.GetLogicalType(); t == "list" || t == "large_list" || strings.HasPrefix(t, "list.") || strings.HasPrefix(t, "large_list.") {
		return "LabelList", nil
	}
	for _, c := range []struct{ file, kind string }{{"bitmap_page_lookup.lance", "Bitmap"}, {"metadata.lance", "Inverted"}, {"invert.lance", "Inverted"}} {
		ok, err := exists(c.file)
		if err != nil {
			return "", err
		}
		if ok {
			return c.kind, nil
		}
	}
	return "BTree", nil
}

// maxIndexColumnRows is how many values columnFragments decodes at once.
const maxIndexColumnRows = 1 << 20

// columnFragments reads a UInt64 column of an index file (Lance v2) and
// collects fragment ids: the upper 32 bits of row ids (rowIDs), else the
// values themselves (as u32, as Lance casts them). A null row id fails
// (Lance unwraps it).
func columnFragments(ctx context.Context, st Store, key, column string, rowIDs bool) (*roaring.Bitmap, error) {
	f, err := datafile.Open(ctx, st.Bucket(), key, datafile.OpenOptions{})
	if errors.Is(err, datafile.ErrLegacyFormat) {
		// Lance ≤ 0.2x wrote scalar index pages as self-described v1
		// files, which Lance 12 reads and this build does not.
		return nil, fmt.Errorf("%w: %w", errNotImplemented, err)
	}
	if err != nil {
		return nil, err
	}
	fi := f.Schema().FieldByName(column)
	if fi < 0 {
		return nil, fmt.Errorf("%s has no column %q", key, column)
	}
	bm := roaring.New()
	for start := uint64(0); start < f.NumRows(); start += maxIndexColumnRows {
		end := min(start+maxIndexColumnRows, f.NumRows())
		rec, err := f.ReadRows(ctx, datafile.ReadRequest{Fields: []int{fi}, Ranges: []datafile.RowRange{{Start: start, End: end}}})
		if err != nil {
			return nil, err
		}
		col, ok := rec.Column(0).(*array.Uint64)
		if !ok {
			rec.Release()
			return nil, fmt.Errorf("%s: column %q is %s, want %s", key, column, rec.Column(0).DataType(), arrow.PrimitiveTypes.Uint64)
		}
		for i := 0; i < col.Len(); i++ {
			if col.IsNull(i) {
				rec.Release()
				return nil, fmt.Errorf("%s: column %q has a null at row %d", key, column, start+uint64(i))
			}
			v := col.Value(i)
			if rowIDs {
				v >>= 32
			}
			bm.Add(uint32(v))
		}
		rec.Release()
	}
	return bm, nil
}

// bitmapsSuspect: no writer version, or Lance before 0.8.15 (an
// unparsable Lance version counts as old, as in Lance).
func bitmapsSuspect(wv *pb.Manifest_WriterVersion) bool {
	if wv == nil {
		return true
	}
	if wv.GetLibrary() != "lance" {
		return false
	}
	v := strings.TrimPrefix(wv.GetVersion(), "v")
	if i := strings.IndexAny(v, "-+"); i >= 0 {
		v = v[:i]
	}
	parts := strings.Split(v, ".")
	if len(parts) != 3 {
		return true
	}
	var n [3]uint64
	for i, p := range parts {
		x, err := strconv.ParseUint(p, 10, 64)
		if err != nil {
			return true
		}
		n[i] = x
	}
	return n[0] == 0 && (n[1] < 8 || (n[1] == 8 && n[2] < 15))
}

func writerString(wv *pb.Manifest_WriterVersion) string {
	if wv == nil {
		return "a writer recording no version"
	}
	return wv.GetLibrary() + " " + wv.GetVersion()
}

// overlappingSegments returns the names of indices two of whose segments
// cover the same fragment.
func overlappingSegments(indices []*pb.IndexMetadata) map[string]bool {
	seen := map[string]*roaring.Bitmap{}
	bad := map[string]bool{}
	for _, idx := range indices {
		bm := roaring.New()
		if _, err := bm.FromUnsafeBytes(idx.GetFragmentBitmap()); err != nil || len(idx.GetFragmentBitmap()) == 0 {
			continue
		}
		if s := seen[idx.GetName()]; s != nil {
			if s.Intersects(bm) {
				bad[idx.GetName()] = true
			}
			s.Or(bm)
		} else {
			seen[idx.GetName()] = bm.Clone()
		}
	}
	return bad
}

// systemIndex: Lance's internal indices (fragment reuse, MemWAL), known by
// their names as Lance knows them.
func systemIndex(idx *pb.IndexMetadata) bool {
	return idx.GetName() == "__lance_frag_reuse" || idx.GetName() == "__lance_mem_wal"
}
