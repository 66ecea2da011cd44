package datafile

import (
	"bytes"
	"math/rand/v2"
	"strings"
	"testing"
)

// nestedDirectAny is the reference construction of an
// Encoding{direct{Any{url, msg}}} field: each level marshalled into its own
// buffer, as the writer did before session 24.
func nestedDirectAny(b []byte, typeName string, msg []byte) []byte {
	var a []byte
	a = pbAppendStringField(a, 1, "/"+typeName)
	a = pbAppendBytesField(a, 2, msg)
	var d []byte
	d = pbAppendBytesField(d, 1, a)
	return pbAppendBytesField(b, 2, d)
}

// nestedPage is the reference construction of a Page message.
func nestedPage(p *Page, typeName string, enc []byte) []byte {
	var b []byte
	offs := make([]uint64, len(p.Buffers))
	sizes := make([]uint64, len(p.Buffers))
	for i, r := range p.Buffers {
		offs[i], sizes[i] = r.Pos, r.Len
	}
	b = pbAppendPackedUint64s(b, 1, offs)
	b = pbAppendPackedUint64s(b, 2, sizes)
	b = pbAppendVarintFieldNZ(b, 3, p.Length)
	b = pbAppendBytesField(b, 4, nestedDirectAny(nil, typeName, enc))
	b = pbAppendVarintFieldNZ(b, 5, p.Priority)
	return b
}

// TestAppendDirectAny_SameBytesAsNested (W2, spec §4.1: column metadata
// bytes are deterministic): the one-pass encoders of the column metadata
// (lengths computed first) write exactly the bytes of marshalling every
// nested message into its own buffer, across the varint length boundaries
// (127/128, 16383/16384 bytes) of every level.
func TestAppendDirectAny_SameBytesAsNested(t *testing.T) {
	r := rand.New(rand.NewPCG(24, 17))
	msgLens := []int{0, 1, 60, 90, 100, 104, 105, 106, 110, 127, 128, 200, 16300, 16350, 16383, 16384, 70000}
	names := []string{typeColumnEncoding, typePageLayout21, typeArrayEncoding, "", strings.Repeat("x", 130)}
	vals := []uint64{0, 1, 127, 128, 1 << 20, 1<<63 + 5}
	for _, name := range names {
		for _, n := range msgLens {
			msg := make([]byte, n)
			for i := range msg {
				msg[i] = byte(r.Uint32())
			}
			prefix := []byte{9, 9}
			if got, want := appendDirectAny(bytes.Clone(prefix), name, msg), nestedDirectAny(bytes.Clone(prefix), name, msg); !bytes.Equal(got, want) {
				t.Fatalf("appendDirectAny(%q, %d bytes) differs", name, n)
			}
			if got, want := pbAppendDirectAnyField(nil, 4, name, msg), pbAppendBytesField(nil, 4, nestedDirectAny(nil, name, msg)); !bytes.Equal(got, want) {
				t.Fatalf("pbAppendDirectAnyField(%q, %d bytes) differs", name, n)
			}
			for nb := range 4 {
				p := &Page{Length: vals[r.IntN(len(vals))], Priority: vals[r.IntN(len(vals))]}
				for range nb * 20 {
					p.Buffers = append(p.Buffers, BufferRange{Pos: vals[r.IntN(len(vals))], Len: vals[r.IntN(len(vals))]})
				}
				want := pbAppendBytesField(nil, 2, nestedPage(p, name, msg))
				if got := pbAppendPageField(nil, 2, p, name, msg); !bytes.Equal(got, want) {
					t.Fatalf("pbAppendPageField(%q, %d bytes, %d buffers) differs", name, n, len(p.Buffers))
				}
			}
		}
	}
	want := pbAppendBytesField(nil, 1, nestedDirectAny(nil, typeColumnEncoding, columnEncodingValues()))
	if got := columnEncodingValuesField(nil); !bytes.Equal(got, want) {
		t.Fatalf("columnEncodingValuesField = %x, want %x", got, want)
	}
}
