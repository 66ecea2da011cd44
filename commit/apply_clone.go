package commit

import (
	"fmt"

	"google.golang.org/protobuf/proto"

	"github.com/lancekeeper/lancekeeper/manifest/pb"
)

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
