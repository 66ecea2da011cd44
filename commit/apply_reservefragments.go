package commit

import (
	"fmt"

	"github.com/lancekeeper/lancekeeper/manifest/pb"
)

// applyReserveFragments reserves the next num_fragments fragment ids by
// raising max_fragment_id (§5.5 ReserveFragments).
func applyReserveFragments(b *builder, op *pb.Transaction_ReserveFragments) error {
	n := uint64(op.GetNumFragments())
	if n == 0 {
		return nil
	}
	hw, ok := highWater(b.in.prev)
	first := uint64(0)
	if ok {
		first = hw + 1
	}
	last := first + n - 1
	if last > 0xFFFFFFFF {
		return fmt.Errorf("%w: reserving %d fragments would exceed the uint32 id range", ErrInvalidTransaction, n)
	}
	l32 := uint32(last)
	b.m.MaxFragmentId = &l32
	b.res.reserved, b.res.reservedFirst, b.res.reservedLast = true, first, last
	return nil
}
