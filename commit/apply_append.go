package commit

import (
	"fmt"

	"github.com/lancekeeper/lancekeeper/manifest/pb"
)

// applyAppend adds the transaction's fragments, with new ids (and stable
// row ids when the table uses them), after checking their file versions
// and field ids (§5.5 Append).
func applyAppend(b *builder, op *pb.Transaction_Append) error {
	frags := op.GetFragments()
	if len(frags) == 0 {
		return fmt.Errorf("%w: Append with no fragments", ErrInvalidTransaction)
	}
	if err := checkFileVersions(b.m, frags); err != nil {
		return err
	}
	if err := checkFieldIDs(b.m.GetFields(), frags); err != nil {
		return err
	}
	ids, err := addFragments(b.m, b.in.prev, frags, b.stable)
	if err != nil {
		return err
	}
	b.res.newFragmentIDs = ids
	return nil
}
