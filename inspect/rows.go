package inspect

import (
	"context"
	"encoding/binary"
	"errors"
	"fmt"

	"google.golang.org/protobuf/encoding/protowire"

	"github.com/lancekeeper/lancekeeper/datafile"
	"github.com/lancekeeper/lancekeeper/manifest"
	"github.com/lancekeeper/lancekeeper/manifest/pb"
	"github.com/lancekeeper/lancekeeper/store"
)

// files reads the data and deletion files a manifest references, opening
// the stores of other bases (base_paths) on demand.
type files struct {
	bases *store.Bases // the dataset (or branch) root and the base roots
	res   *manifest.Resolver
	// distrust: the manifest has no writer_version, so its physical_rows
	// and num_deleted_rows are recomputed from the files as Lance 12 does
	// (lance-table-format.md §5.2 e, §9 trap 3).
	distrust bool
}

func (fs *files) close() { fs.bases.Close() }

// storeFor returns the store a location lives in and the key inside it.
func (fs *files) storeFor(ctx context.Context, loc manifest.Location) (*store.Store, string, error) {
	s, err := fs.bases.Store(ctx, loc.Base)
	if err != nil {
		return nil, "", fmt.Errorf("open base path %s: %w", loc.Base, err)
	}
	return s, loc.Path, nil
}

// fragmentRows returns the physical row count of a fragment: physical_rows
// when the manifest records it, else the row count of its first data file
// (§9 trap 2: 0 means unknown).
func (fs *files) fragmentRows(ctx context.Context, frag *pb.DataFragment) (uint64, error) {
	if frag.GetPhysicalRows() > 0 && !fs.distrust {
		return frag.GetPhysicalRows(), nil
	}
	if len(frag.GetFiles()) == 0 {
		return 0, nil
	}
	df := frag.GetFiles()[0]
	loc, err := fs.res.DataFile(df)
	if err != nil {
		return 0, err
	}
	st, key, err := fs.storeFor(ctx, loc)
	if err != nil {
		return 0, err
	}
	bkey := st.BucketKey(key)
	f, err := datafile.Open(ctx, st.Bucket(), bkey, datafile.OpenOptions{Size: int64(df.GetFileSizeBytes())})
	if err == nil {
		return f.NumRows(), nil
	}
	if errors.Is(err, datafile.ErrLegacyFormat) {
		return legacyNumRows(ctx, st, key)
	}
	if manifest.IsNotFound(err) || errors.Is(err, store.ErrNotFound) {
		return 0, fmt.Errorf("data file %s of fragment %d not found: %w", loc, frag.GetId(), manifest.ErrNotFound)
	}
	return 0, fmt.Errorf("fragment %d: %w", frag.GetId(), err)
}

// deletedRows returns how many rows of a fragment are deleted:
// num_deleted_rows when recorded, else the size of the deletion file's set.
func (fs *files) deletedRows(ctx context.Context, frag *pb.DataFragment) (uint64, error) {
	d := frag.GetDeletionFile()
	if d == nil {
		return 0, nil
	}
	if d.GetNumDeletedRows() > 0 && !fs.distrust {
		return d.GetNumDeletedRows(), nil
	}
	loc, err := fs.res.DeletionFile(frag.GetId(), d)
	if err != nil {
		return 0, err
	}
	st, key, err := fs.storeFor(ctx, loc)
	if err != nil {
		return 0, err
	}
	data, err := st.Get(ctx, key)
	if err != nil {
		if errors.Is(err, store.ErrNotFound) {
			return 0, fmt.Errorf("deletion file %s of fragment %d not found: %w", loc, frag.GetId(), manifest.ErrNotFound)
		}
		return 0, err
	}
	rows, err := manifest.DecodeDeletionFile(loc.String(), d.GetFileType(), data)
	if err != nil {
		return 0, err
	}
	return rows.GetCardinality(), nil
}

// legacyTail is how much of a legacy data file is read first.
const legacyTail = 64 << 10

// legacyNumRows reads the row count of a Lance v1 ("legacy", footer 0.x
// with x ≤ 2) data file. Such a file ends like a manifest file: a 16-byte
// footer (i64 metadata position, u16 major, u16 minor, "LANC") and, at
// the metadata position, a u32 length and a lance.file.Metadata protobuf
// whose field 2, batch_offsets (repeated int32), holds the cumulative row
// offsets of its batches: the last one is the row count. The package
// datafile refuses v1 files, so this small reader lives here.
func legacyNumRows(ctx context.Context, st *store.Store, key string) (uint64, error) {
	size, err := st.Size(ctx, key)
	if err != nil {
		return 0, fmt.Errorf("legacy data file %s: %w", key, err)
	}
	fail := func(off int64, format string, args ...any) error {
		return &manifest.FormatError{File: key, Offset: off, Reason: "legacy data file: " + fmt.Sprintf(format, args...)}
	}
	if size < manifest.FooterSize {
		return 0, fail(0, "%d bytes is too short for the footer", size)
	}
	n := min(size, legacyTail)
	tail, err := st.GetRange(ctx, key, size-n, n)
	if err != nil {
		return 0, err
	}
	if int64(len(tail)) != n {
		return 0, fail(size-n, "short read")
	}
	if string(tail[n-4:]) != manifest.Magic {
		return 0, fail(size-4, "magic number does not match")
	}
	footer := size - manifest.FooterSize
	pos := int64(binary.LittleEndian.Uint64(tail[n-16:]))
	if pos < 0 || pos > footer-4 {
		return 0, fail(footer, "metadata position %d is outside the file", pos)
	}
	var meta []byte
	if pos >= size-n {
		meta = tail[pos-(size-n) : n-16]
	} else {
		if footer-pos > 64<<20 {
			return 0, fail(pos, "metadata region of %d bytes is implausibly large", footer-pos)
		}
		meta, err = st.GetRange(ctx, key, pos, footer-pos)
		if err != nil {
			return 0, err
		}
	}
	if len(meta) < 4 {
		return 0, fail(pos, "metadata length prefix missing")
	}
	ml := int64(binary.LittleEndian.Uint32(meta))
	if ml > int64(len(meta))-4 {
		return 0, fail(pos, "metadata length %d runs past the footer", ml)
	}
	b := meta[4 : 4+ml]
	var last int64 = -1
	for len(b) > 0 {
		num, typ, n := protowire.ConsumeTag(b)
		if n < 0 {
			return 0, fail(pos+4, "invalid Metadata protobuf: %v", protowire.ParseError(n))
		}
		b = b[n:]
		if num == 2 && typ == protowire.BytesType { // packed batch_offsets
			packed, n := protowire.ConsumeBytes(b)
			if n < 0 {
				return 0, fail(pos+4, "invalid batch_offsets: %v", protowire.ParseError(n))
			}
			b = b[n:]
			for len(packed) > 0 {
				v, k := protowire.ConsumeVarint(packed)
				if k < 0 {
					return 0, fail(pos+4, "invalid batch_offsets entry: %v", protowire.ParseError(k))
				}
				packed = packed[k:]
				last = int64(int32(v))
			}
			continue
		}
		if num == 2 && typ == protowire.VarintType { // unpacked entry
			v, k := protowire.ConsumeVarint(b)
			if k < 0 {
				return 0, fail(pos+4, "invalid batch_offsets entry: %v", protowire.ParseError(k))
			}
			b = b[k:]
			last = int64(int32(v))
			continue
		}
		k := protowire.ConsumeFieldValue(num, typ, b)
		if k < 0 {
			return 0, fail(pos+4, "invalid Metadata protobuf: %v", protowire.ParseError(k))
		}
		b = b[k:]
	}
	if last < 0 {
		return 0, fail(pos+4, "Metadata has no batch_offsets (or a negative row count)")
	}
	return uint64(last), nil
}
