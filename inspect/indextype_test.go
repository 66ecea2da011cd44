package inspect

import (
	"testing"

	"google.golang.org/protobuf/encoding/protowire"
)

// Lance names a 2.x vector index file's kind in schema metadata "lance:index".
func TestIndexType_FromLanceIndexMetadata(t *testing.T) {
	for _, tt := range []struct{ raw, want string }{
		{`{"type":"IVF_PQ","distance_type":"l2"}`, "IvfPq"},
		{`{"type":"IVF_FLAT"}`, "IvfFlat"},
		{`{"type":"IVF_HNSW_SQ"}`, "IvfHnswSq"},
		{`{"type":"ivf_rq"}`, "IvfRq"},
		{`{"type":""}`, ""},
		{`not json`, ""},
		{``, ""},
	} {
		if got := typeFromIndexMetadata(tt.raw); got != tt.want {
			t.Errorf("typeFromIndexMetadata(%q) = %q, want %q", tt.raw, got, tt.want)
		}
	}
}

func legacyIndexMessage(stages ...protowire.Number) []byte {
	var vec []byte
	vec = protowire.AppendTag(vec, 1, protowire.VarintType)
	vec = protowire.AppendVarint(vec, 1)
	for _, s := range stages {
		var stage []byte
		stage = protowire.AppendTag(stage, s, protowire.BytesType)
		stage = protowire.AppendBytes(stage, []byte{0x10, 0x01})
		vec = protowire.AppendTag(vec, 3, protowire.BytesType)
		vec = protowire.AppendBytes(vec, stage)
	}
	var msg []byte
	msg = protowire.AppendTag(msg, 1, protowire.BytesType)
	msg = protowire.AppendString(msg, "vector_idx")
	msg = protowire.AppendTag(msg, 5, protowire.BytesType)
	return protowire.AppendBytes(msg, vec)
}

// A legacy index.idx (Lance ≤ 0.8) spells its kind in VectorIndex stages
// (index.proto: 1 flat, 2 IVF, 3 PQ, 4 transform, 5 DiskANN); flat and
// transform stages do not count.
func TestIndexType_LegacyStages(t *testing.T) {
	for _, tt := range []struct {
		stages []protowire.Number
		want   string
	}{
		{[]protowire.Number{2, 3}, "IvfPq"},
		{[]protowire.Number{1, 2, 3}, "IvfPq"},
		{[]protowire.Number{4, 2, 3}, "IvfPq"},
		{[]protowire.Number{5}, "DiskAnn"},
		{nil, ""},
	} {
		got, err := legacyStages(legacyIndexMessage(tt.stages...))
		if err != nil || got != tt.want {
			t.Errorf("stages %v: got %q, %v; want %q", tt.stages, got, err, tt.want)
		}
	}
	if _, err := legacyStages([]byte{0x2a, 0x05, 0x1a}); err == nil {
		t.Error("truncated VectorIndex accepted")
	}
}

func FuzzLegacyIndexStages(f *testing.F) {
	f.Add(legacyIndexMessage(2, 3))
	f.Add(legacyIndexMessage(1, 4))
	f.Add([]byte{0x2a, 0x02, 0x1a, 0x00})
	f.Fuzz(func(t *testing.T, b []byte) {
		_, _ = legacyStages(b)
	})
}
