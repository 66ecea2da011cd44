package commit

import (
	"fmt"

	"google.golang.org/protobuf/proto"

	"github.com/lancekeeper/lancekeeper/manifest/pb"
)

// buildRestore: the new manifest is the target manifest with version =
// latest+1, a fresh timestamp and transaction, the larger fragment-id and
// row-id high-water marks, the target's writer_version, and flags recomputed
// from the target's content with the current head's sticky pairs OR-ed in
// (§8.3, §6.5, R57).
func buildRestore(in *buildInput) (*buildResult, error) {
	target, cur := in.restoreTarget, in.prev
	if target == nil {
		return nil, fmt.Errorf("%w: Restore without its target manifest", ErrInvalidTransaction)
	}
	if err := checkCopiedFlags(target, "restore"); err != nil {
		return nil, err
	}
	if usesStableRowIDs(cur) && !usesStableRowIDs(target) {
		return nil, fmt.Errorf("%w: Cannot restore version %d: stable row ids were enabled after it, and turning them back off would let row addresses collide with ids this table has already used",
			ErrInvalidTransaction, target.GetVersion())
	}
	m := proto.Clone(target).(*pb.Manifest)
	common(m, in)
	// writer_version stays the target's [C].
	thw, tok := highWater(target)
	chw, cok := highWater(cur)
	if tok || cok {
		hw := uint32(max(thw, chw))
		m.MaxFragmentId = &hw
	}
	m.NextRowId = max(target.GetNextRowId(), cur.GetNextRowId())
	indices := cloneIndices(in.restoreTargetIndices)
	if err := finish(m, indices, cur.GetReaderFeatureFlags(), cur.GetWriterFeatureFlags(), in); err != nil {
		return nil, err
	}
	res := &buildResult{manifest: m}
	if in.restoreTargetIndices != nil {
		res.indices = indices
	}
	return res, nil
}
