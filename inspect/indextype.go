package inspect

import (
	"context"
	"encoding/binary"
	"encoding/json"
	"errors"
	"fmt"
	"strings"

	"google.golang.org/protobuf/encoding/protowire"

	"github.com/lancekeeper/lancekeeper/datafile"
	"github.com/lancekeeper/lancekeeper/manifest"
	"github.com/lancekeeper/lancekeeper/manifest/pb"
	"github.com/lancekeeper/lancekeeper/store"
)

// maxLegacyIndexMeta bounds the protobuf message read from a legacy
// index.idx footer; the stage descriptions it holds are small, but the PQ
// codebook travels inside it, so allow a few MiB.
const maxLegacyIndexMeta = 64 << 20

// vectorIndexType reads the kind of a vector index (or of an index whose
// manifest entry has no index_details) from its index.idx file, the way
// Lance does: a 2.x index file names it in the schema metadata key
// "lance:index" ({"type":"IVF_PQ",...}); a legacy file holds an Index
// protobuf whose VectorIndex stages (IVF, PQ, DiskANN; transforms are
// skipped) spell it. It returns "" when the file does not say.
func vectorIndexType(ctx context.Context, fs *files, idx *pb.IndexMetadata) (string, error) {
	dir, err := fs.res.IndexDir(idx)
	if err != nil {
		return "", err
	}
	st, key, err := fs.storeFor(ctx, dir)
	if err != nil {
		return "", err
	}
	key += "/index.idx"
	ok, err := st.Exists(ctx, key)
	if err != nil || !ok {
		return "", err
	}
	f, err := datafile.Open(ctx, st.Bucket(), st.BucketKey(key), datafile.OpenOptions{})
	if err == nil {
		return typeFromIndexMetadata(f.Metadata()["lance:index"]), nil
	}
	if !errors.Is(err, datafile.ErrLegacyFormat) {
		return "", err
	}
	return legacyIndexType(ctx, st, key)
}

// typeFromIndexMetadata turns {"type":"IVF_HNSW_SQ"} into "IvfHnswSq".
func typeFromIndexMetadata(raw string) string {
	var meta struct {
		Type string `json:"type"`
	}
	if raw == "" || json.Unmarshal([]byte(raw), &meta) != nil {
		return ""
	}
	var b strings.Builder
	for _, part := range strings.Split(strings.ToLower(meta.Type), "_") {
		if part == "" {
			continue
		}
		b.WriteString(strings.ToUpper(part[:1]) + part[1:])
	}
	return b.String()
}

// legacyIndexType reads the footer of a legacy index file (i64 metadata
// position, i16 major, i16 minor, "LANC") and the Index message at that
// position, and names its vector stages.
func legacyIndexType(ctx context.Context, st *store.Store, key string) (string, error) {
	size, err := st.Size(ctx, key)
	if err != nil {
		return "", err
	}
	if size < manifest.FooterSize {
		return "", &manifest.FormatError{File: key, Offset: 0, Reason: "legacy index file too short for its footer"}
	}
	foot, err := st.GetRange(ctx, key, size-manifest.FooterSize, manifest.FooterSize)
	if err != nil {
		return "", err
	}
	if string(foot[12:]) != manifest.Magic {
		return "", &manifest.FormatError{File: key, Offset: size - 4, Reason: "legacy index file: magic number does not match"}
	}
	pos := int64(binary.LittleEndian.Uint64(foot))
	if pos < 0 || pos > size-manifest.FooterSize-4 {
		return "", &manifest.FormatError{File: key, Offset: size - manifest.FooterSize, Reason: fmt.Sprintf("legacy index file: metadata position %d is outside the file", pos)}
	}
	lenb, err := st.GetRange(ctx, key, pos, 4)
	if err != nil {
		return "", err
	}
	n := int64(binary.LittleEndian.Uint32(lenb))
	if n > maxLegacyIndexMeta || pos+4+n > size-manifest.FooterSize {
		return "", &manifest.FormatError{File: key, Offset: pos, Reason: fmt.Sprintf("legacy index file: metadata length %d does not fit", n)}
	}
	msg, err := st.GetRange(ctx, key, pos+4, n)
	if err != nil {
		return "", err
	}
	return legacyStages(msg)
}

// legacyStages walks Index{5: VectorIndex{3: repeated stage}} where a stage
// is a oneof {1 flat, 2 ivf, 3 pq, 4 transform, 5 diskann} (index.proto).
func legacyStages(msg []byte) (string, error) {
	vec, err := protoField(msg, 5)
	if err != nil || vec == nil {
		return "", err
	}
	var out strings.Builder
	for b := vec; len(b) > 0; {
		num, typ, n := protowire.ConsumeTag(b)
		if n < 0 {
			return "", fmt.Errorf("legacy index metadata: %w", protowire.ParseError(n))
		}
		b = b[n:]
		if num == 3 && typ == protowire.BytesType {
			stage, m := protowire.ConsumeBytes(b)
			if m < 0 {
				return "", fmt.Errorf("legacy index stage: %w", protowire.ParseError(m))
			}
			b = b[m:]
			s, _, k := protowire.ConsumeTag(stage)
			if k < 0 {
				return "", fmt.Errorf("legacy index stage: %w", protowire.ParseError(k))
			}
			switch s {
			case 2:
				out.WriteString("Ivf")
			case 3:
				out.WriteString("Pq")
			case 5:
				out.WriteString("DiskAnn")
			}
			continue
		}
		m := protowire.ConsumeFieldValue(num, typ, b)
		if m < 0 {
			return "", fmt.Errorf("legacy index metadata: %w", protowire.ParseError(m))
		}
		b = b[m:]
	}
	return out.String(), nil
}

// protoField returns the bytes of the last length-delimited field num of a
// message, or nil when it is absent.
func protoField(msg []byte, num protowire.Number) ([]byte, error) {
	var found []byte
	for b := msg; len(b) > 0; {
		n, typ, k := protowire.ConsumeTag(b)
		if k < 0 {
			return nil, fmt.Errorf("legacy index metadata: %w", protowire.ParseError(k))
		}
		b = b[k:]
		if n == num && typ == protowire.BytesType {
			v, m := protowire.ConsumeBytes(b)
			if m < 0 {
				return nil, fmt.Errorf("legacy index metadata: %w", protowire.ParseError(m))
			}
			found, b = v, b[m:]
			continue
		}
		m := protowire.ConsumeFieldValue(n, typ, b)
		if m < 0 {
			return nil, fmt.Errorf("legacy index metadata: %w", protowire.ParseError(m))
		}
		b = b[m:]
	}
	return found, nil
}

// refineIndexTypes replaces the "Vector" and "Unknown" kinds that
// index_details alone gives with the kind the index file names, as Lance
// reports it (IvfPq, IvfHnswSq, …). A file that cannot be read leaves the
// kind as it was: the summary of a dataset never fails because of an index
// payload.
func refineIndexTypes(ctx context.Context, st *store.Store, f *manifest.File, s *Summary) {
	indices := f.Indices()
	if len(indices) != len(s.Indices) {
		return
	}
	var fs *files
	for i, idx := range indices {
		if s.Indices[i].Type != "Vector" && s.Indices[i].Type != "Unknown" {
			continue
		}
		if fs == nil {
			res, err := manifest.NewResolver(f.Manifest)
			if err != nil {
				return
			}
			fs = &files{bases: store.NewBases(st), res: res}
			defer fs.close()
		}
		if kind, err := vectorIndexType(ctx, fs, idx); err == nil && kind != "" {
			s.Indices[i].Type = kind
		}
	}
}
