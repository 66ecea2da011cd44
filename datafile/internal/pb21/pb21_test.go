package pb21

import (
	"encoding/hex"
	"strings"
	"testing"

	"google.golang.org/protobuf/proto"
)

// TestObservedBytes decodes the PageLayout bytes of spec 2.1 §2.4 (real Lance 12 pages).
func TestObservedBytes(t *testing.T) {
	tests := []struct {
		name, hex string
		check     func(*PageLayout) bool
	}{
		{"mini-block flat64", "0a0f1a040a02084032010138014 80a5001", func(p *PageLayout) bool {
			m := p.GetMiniBlockLayout()
			return m.GetValueCompression().GetFlat().GetBitsPerValue() == 64 && m.GetNumItems() == 10 &&
				m.GetHasLargeChunk() && m.GetNumBuffers() == 1 && len(m.GetLayers()) == 1 && m.GetLayers()[0] == RepDefLayer_REPDEF_ALL_VALID_ITEM
		}},
		{"list_i32 item", "0a280a040a020810120e420c0a040a02081012040a0208081a040a020820320203063801400148 0f5001", func(p *PageLayout) bool {
			m := p.GetMiniBlockLayout()
			r := m.GetDefCompression().GetRle()
			return m.GetRepCompression().GetFlat().GetBitsPerValue() == 16 && r.GetValues().GetFlat().GetBitsPerValue() == 16 &&
				r.GetRunLengths().GetFlat().GetBitsPerValue() == 8 && m.GetRepetitionIndexDepth() == 1 && m.GetNumItems() == 15 &&
				len(m.GetLayers()) == 2 && m.GetLayers()[1] == RepDefLayer_REPDEF_NULL_AND_EMPTY_LIST
		}},
		{"all-null constant", "12032a0103", func(p *PageLayout) bool {
			c := p.GetConstantLayout()
			return c != nil && c.InlineValue == nil && len(c.GetLayers()) == 1 && c.GetLayers()[0] == RepDefLayer_REPDEF_NULLABLE_ITEM
		}},
		{"full-zip variable", "1a1510012020280430043a0812060a040a020820420103", func(p *PageLayout) bool {
			f := p.GetFullZipLayout()
			return f.GetBitsDef() == 1 && f.GetBitsPerOffset() == 32 && f.GetNumItems() == 4 && f.GetNumVisibleItems() == 4 &&
				f.GetValueCompression().GetVariable().GetOffsets().GetFlat().GetBitsPerValue() == 32
		}},
	}
	for _, tt := range tests {
		b, err := hex.DecodeString(strings.ReplaceAll(tt.hex, " ", ""))
		if err != nil {
			t.Fatal(err)
		}
		var p PageLayout
		if err := proto.Unmarshal(b, &p); err != nil {
			t.Fatalf("%s: %v", tt.name, err)
		}
		if !tt.check(&p) {
			t.Errorf("%s: decoded %v", tt.name, &p)
		}
		// Go's encoder writes a set oneof member after the other fields where
		// Lance (prost) writes fields in number order, so compare messages.
		out, err := proto.Marshal(&p)
		var back PageLayout
		if err != nil || proto.Unmarshal(out, &back) != nil || !proto.Equal(&p, &back) {
			t.Errorf("%s: round trip changed the message (%v)", tt.name, err)
		}
	}
}
