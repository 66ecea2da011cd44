package commit

import (
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"io"

	"google.golang.org/protobuf/encoding/protowire"
	"google.golang.org/protobuf/proto"

	"github.com/lancekeeper/lancekeeper/datafile"
	"github.com/lancekeeper/lancekeeper/manifest"
	"github.com/lancekeeper/lancekeeper/manifest/pb"
)

// Old-writer fix-ups (lance-table-format.md §5.2 e, §9 trap 3): a manifest
// without writer_version was written by a Lance old enough (≤ 0.8) that
// its statistics cannot be trusted. Before building on such a manifest, a
// commit recomputes every fragment's physical_rows, each deletion file's
// num_deleted_rows and each data file's file_size_bytes from the files
// themselves, as Lance's commit does, so the manifest it writes carries
// corrected statistics. Files in other bases are left as recorded.

// fixupOldWriter returns prev itself when it has a writer_version, else a
// copy with recomputed statistics.
func fixupOldWriter(ctx context.Context, st Store, prev *pb.Manifest) (*pb.Manifest, error) {
	if prev == nil || prev.GetWriterVersion() != nil {
		return prev, nil
	}
	m := proto.Clone(prev).(*pb.Manifest)
	res, err := manifest.NewResolver(m)
	if err != nil {
		return nil, err
	}
	for _, f := range m.GetFragments() {
		for i, df := range f.GetFiles() {
			loc, err := res.DataFile(df)
			if err != nil {
				return nil, err
			}
			if loc.Base != "" {
				continue
			}
			key := st.KeyPrefix() + loc.Path
			attrs, err := st.Bucket().Attributes(ctx, key)
			if err != nil {
				return nil, fmt.Errorf("old-writer fix-up: data file %s of fragment %d: %w", loc.Path, f.GetId(), err)
			}
			df.FileSizeBytes = uint64(attrs.Size)
			if i != 0 {
				continue
			}
			rows, err := fileRows(ctx, st, key, attrs.Size)
			if err != nil {
				return nil, fmt.Errorf("old-writer fix-up: fragment %d: %w", f.GetId(), err)
			}
			f.PhysicalRows = rows
		}
		if d := f.GetDeletionFile(); d != nil && d.BaseId == nil {
			del, err := readDeletionVector(ctx, st, m, f)
			if err != nil {
				return nil, fmt.Errorf("old-writer fix-up: deletion file of fragment %d: %w", f.GetId(), err)
			}
			d.NumDeletedRows = del.GetCardinality()
		}
	}
	return m, nil
}

// fillStatistics gives an updated fragment (a Delete's, built from the
// manifest as its writer read it) the statistics it lacks from the same
// fragment of the version being committed on, which the §5.2 e fix-up
// may have recomputed: physical_rows and each same-path data file's
// file_size_bytes. Lance fills missing statistics in every manifest it
// commits the same way.
func fillStatistics(to, from *pb.DataFragment) {
	if to.GetPhysicalRows() == 0 {
		to.PhysicalRows = from.GetPhysicalRows()
	}
	for _, df := range to.GetFiles() {
		if df.GetFileSizeBytes() != 0 {
			continue
		}
		for _, old := range from.GetFiles() {
			if old.GetPath() == df.GetPath() && old.GetBaseId() == df.GetBaseId() {
				df.FileSizeBytes = old.GetFileSizeBytes()
			}
		}
	}
}

// fileRows returns the row count of a data file: a Lance v2 file through
// datafile, a legacy (v1) one from its footer metadata.
func fileRows(ctx context.Context, st Store, key string, size int64) (uint64, error) {
	f, err := datafile.Open(ctx, st.Bucket(), key, datafile.OpenOptions{Size: size})
	if err == nil {
		return f.NumRows(), nil
	}
	if !errors.Is(err, datafile.ErrLegacyFormat) {
		return 0, err
	}
	return legacyFileRows(ctx, st, key, size)
}

// legacyFileRows reads the row count of a legacy data file: a 16-byte
// footer (i64 metadata position, u16 major, u16 minor, "LANC"), at the
// metadata position a u32 length and a lance.file.Metadata message whose
// field 2 (batch_offsets, repeated int32) ends with the row count.
func legacyFileRows(ctx context.Context, st Store, key string, size int64) (uint64, error) {
	bad := func(format string, args ...any) error {
		return &manifest.FormatError{File: key, Reason: "legacy data file: " + fmt.Sprintf(format, args...)}
	}
	if size < manifest.FooterSize {
		return 0, bad("%d bytes is too short for the footer", size)
	}
	tail, err := st.Bucket().NewRangeReader(ctx, key, size-manifest.FooterSize, manifest.FooterSize, nil)
	if err != nil {
		return 0, err
	}
	foot := make([]byte, manifest.FooterSize)
	_, err = io.ReadFull(tail, foot)
	tail.Close()
	if err != nil {
		return 0, err
	}
	if string(foot[12:]) != manifest.Magic {
		return 0, bad("magic number does not match")
	}
	pos := int64(binary.LittleEndian.Uint64(foot))
	end := size - manifest.FooterSize
	if pos < 0 || pos > end-4 || end-pos > 64<<20 {
		return 0, bad("metadata position %d is outside the file or implausibly far from its end", pos)
	}
	r, err := st.Bucket().NewRangeReader(ctx, key, pos, end-pos, nil)
	if err != nil {
		return 0, err
	}
	meta := make([]byte, end-pos)
	_, err = io.ReadFull(r, meta)
	r.Close()
	if err != nil {
		return 0, err
	}
	ml := int64(binary.LittleEndian.Uint32(meta))
	if ml > int64(len(meta))-4 {
		return 0, bad("metadata length %d runs past the footer", ml)
	}
	b := meta[4 : 4+ml]
	last := int64(-1)
	for len(b) > 0 {
		num, typ, n := protowire.ConsumeTag(b)
		if n < 0 {
			return 0, bad("invalid Metadata protobuf")
		}
		b = b[n:]
		switch {
		case num == 2 && typ == protowire.BytesType:
			packed, n := protowire.ConsumeBytes(b)
			if n < 0 {
				return 0, bad("invalid batch_offsets")
			}
			b = b[n:]
			for len(packed) > 0 {
				v, k := protowire.ConsumeVarint(packed)
				if k < 0 {
					return 0, bad("invalid batch_offsets entry")
				}
				packed = packed[k:]
				last = int64(int32(v))
			}
		case num == 2 && typ == protowire.VarintType:
			v, k := protowire.ConsumeVarint(b)
			if k < 0 {
				return 0, bad("invalid batch_offsets entry")
			}
			b = b[k:]
			last = int64(int32(v))
		default:
			k := protowire.ConsumeFieldValue(num, typ, b)
			if k < 0 {
				return 0, bad("invalid Metadata protobuf")
			}
			b = b[k:]
		}
	}
	if last < 0 {
		return 0, bad("Metadata has no batch_offsets")
	}
	return uint64(last), nil
}
