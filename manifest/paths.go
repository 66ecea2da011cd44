package manifest

import (
	"fmt"
	"strconv"
	"strings"

	"github.com/lancekeeper/lancekeeper/manifest/pb"
)

// Directories (relative to a dataset root) that hold referenced files.
const (
	DataDir         = "data"
	DeletionsDir    = "_deletions"
	IndicesDir      = "_indices"
	TransactionsDir = "_transactions"
)

// Location is where a file referenced by a manifest lives
// (lance-table-format.md §4.10).
type Location struct {
	// Base is "" when the file lives under the dataset's own root;
	// otherwise it is BasePath.path of the base the file refers to (an
	// absolute local path or a URL, exactly as recorded in the manifest).
	Base string
	// BaseID is the base_id the location was resolved through (nil: none).
	BaseID *uint32
	// Path is the slash-separated path of the file relative to Base (or to
	// the dataset root when Base is "").
	Path string
}

// String joins Base and Path.
func (l Location) String() string {
	if l.Base == "" {
		return l.Path
	}
	return strings.TrimRight(l.Base, "/") + "/" + l.Path
}

// Resolver resolves the files a manifest references, honouring base_id and
// base_paths.
type Resolver struct {
	bases map[uint32]*pb.BasePath
}

// NewResolver builds a Resolver from the manifest's base_paths. Two base
// paths with the same id make the manifest corrupt.
func NewResolver(m *pb.Manifest) (*Resolver, error) {
	r := &Resolver{bases: make(map[uint32]*pb.BasePath, len(m.GetBasePaths()))}
	for _, bp := range m.GetBasePaths() {
		if _, dup := r.bases[bp.GetId()]; dup {
			return nil, fmt.Errorf("%w: manifest version %d has two base_paths with id %d", ErrCorrupt, m.GetVersion(), bp.GetId())
		}
		r.bases[bp.GetId()] = bp
	}
	return r, nil
}

// resolve places rel (a path under the dataset-root directory dir, e.g.
// "data") according to baseID.
func (r *Resolver) resolve(baseID *uint32, dir, rel string) (Location, error) {
	if baseID == nil {
		return Location{Path: dir + "/" + rel}, nil
	}
	bp, ok := r.bases[*baseID]
	if !ok {
		return Location{}, fmt.Errorf("%w: base_id %d is not in the manifest's base_paths", ErrCorrupt, *baseID)
	}
	loc := Location{Base: bp.GetPath(), BaseID: baseID, Path: rel}
	if bp.GetIsDatasetRoot() {
		loc.Path = dir + "/" + rel
	}
	return loc, nil
}

// DataFile resolves a data file: data/{path} under the dataset root or its base.
func (r *Resolver) DataFile(df *pb.DataFile) (Location, error) {
	if df.GetPath() == "" {
		return Location{}, fmt.Errorf("%w: data file with an empty path", ErrCorrupt)
	}
	return r.resolve(df.BaseId, DataDir, df.GetPath())
}

// DeletionFile resolves the deletion file of fragment fragID.
func (r *Resolver) DeletionFile(fragID uint64, d *pb.DeletionFile) (Location, error) {
	name, err := DeletionFileName(fragID, d)
	if err != nil {
		return Location{}, err
	}
	return r.resolve(d.BaseId, DeletionsDir, name)
}

// IndexDir resolves the directory holding an index segment's files:
// _indices/{uuid}.
func (r *Resolver) IndexDir(idx *pb.IndexMetadata) (Location, error) {
	u, err := IndexUUID(idx)
	if err != nil {
		return Location{}, err
	}
	return r.resolve(idx.BaseId, IndicesDir, u)
}

// IndexUUID returns the hyphenated lower-case UUID of an index segment.
func IndexUUID(idx *pb.IndexMetadata) (string, error) {
	b := idx.GetUuid().GetUuid()
	if len(b) != 16 {
		return "", fmt.Errorf("%w: index %q has a %d-byte uuid, want 16", ErrCorrupt, idx.GetName(), len(b))
	}
	const hex = "0123456789abcdef"
	out := make([]byte, 0, 36)
	for i, c := range b {
		if i == 4 || i == 6 || i == 8 || i == 10 {
			out = append(out, '-')
		}
		out = append(out, hex[c>>4], hex[c&15])
	}
	return string(out), nil
}

// DeletionFileName returns "{fragment_id}-{read_version}-{id}.{arrow|bin}"
// (§4.7). An unknown file_type is an error.
func DeletionFileName(fragID uint64, d *pb.DeletionFile) (string, error) {
	var ext string
	switch d.GetFileType() {
	case pb.DeletionFile_ARROW_ARRAY:
		ext = "arrow"
	case pb.DeletionFile_BITMAP:
		ext = "bin"
	default:
		return "", fmt.Errorf("%w: fragment %d: Unknown deletion file type %d", ErrCorrupt, fragID, int32(d.GetFileType()))
	}
	return strconv.FormatUint(fragID, 10) + "-" + strconv.FormatUint(d.GetReadVersion(), 10) + "-" +
		strconv.FormatUint(d.GetId(), 10) + "." + ext, nil
}

// TransactionPath returns the path (relative to the dataset root) of the
// manifest's external transaction file, or "" when it names none.
func TransactionPath(m *pb.Manifest) string {
	if m.GetTransactionFile() == "" {
		return ""
	}
	return TransactionsDir + "/" + m.GetTransactionFile()
}
