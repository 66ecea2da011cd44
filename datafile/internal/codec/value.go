package codec

import (
	"github.com/lancekeeper/lancekeeper/datafile/internal/pb21"
)

// ValueDecoder decodes the items of a full-zip page (per-value context,
// §5.3): feed each visible item's bytes to Append (or AppendNull for a null
// variable-width item, which has no bytes), then take the result with
// Finish.
type ValueDecoder struct {
	enc *pb21.CompressiveEncoding
	d   decoder
	out Block
}

// NewValueDecoder checks enc for the per-value context.
func NewValueDecoder(enc *pb21.CompressiveEncoding, lim Limits) (*ValueDecoder, error) {
	return nil, errf(ErrUnsupported, name(enc), ctxValue, "not implemented yet")
}

// FixedBytes is the size of one item of a fixed-width encoding (flat,
// fixed_size_list, packed_struct), 0 for variable-width encodings.
func (v *ValueDecoder) FixedBytes() uint64 { return 0 }

// Append decodes one item.
func (v *ValueDecoder) Append(item []byte) error { return nil }

// AppendNull appends a null slot: an empty value (variable width) or a
// zero item (fixed width).
func (v *ValueDecoder) AppendNull() error { return nil }

// Finish returns the decoded items and resets the decoder.
func (v *ValueDecoder) Finish() Block { b := v.out; v.out = Block{}; return b }
