package commit

import (
	"fmt"

	"google.golang.org/protobuf/proto"

	"github.com/lancekeeper/lancekeeper/manifest/pb"
)

// applyCreateIndex drops the removed (and replaced) index segments and adds
// the new ones, each with a 16-byte uuid and fields in the schema (§5.5
// CreateIndex).
func applyCreateIndex(b *builder, ci *pb.Transaction_CreateIndex) error {
	drop := map[string]bool{}
	for _, idx := range append(append([]*pb.IndexMetadata{}, ci.GetRemovedIndices()...), ci.GetNewIndices()...) {
		drop[string(idx.GetUuid().GetUuid())] = true
	}
	fieldIDs := map[int32]bool{}
	for _, f := range b.m.GetFields() {
		fieldIDs[f.GetId()] = true
	}
	kept := b.indices[:0]
	for _, idx := range b.indices {
		if !drop[string(idx.GetUuid().GetUuid())] {
			kept = append(kept, idx)
		}
	}
	b.indices = kept
	for _, idx := range ci.GetNewIndices() {
		if len(idx.GetUuid().GetUuid()) != 16 {
			return fmt.Errorf("%w: new index %q has no 16-byte uuid", ErrInvalidTransaction, idx.GetName())
		}
		for _, fid := range idx.GetFields() {
			if !fieldIDs[fid] {
				return fmt.Errorf("%w: new index %q covers field id %d, which is not in the schema", ErrInvalidTransaction, idx.GetName(), fid)
			}
		}
		b.indices = append(b.indices, proto.Clone(idx).(*pb.IndexMetadata))
	}
	return nil
}
