package seedio

// The utf8/binary candidate filters (nextCandidate: the AVX-512 VBMI kernel
// prefixFilterVBMI where available, nextCandidateKey otherwise) must never
// skip a value that changes a zone's extrema (§4.1: unsigned bytewise order;
// R30, R34). These tests run scanOffsets, which uses them, against a naive
// bytes.Compare scan on data built to hit every edge of the kernel: empty
// values before and after the min becomes empty, zero and 0xFF bytes (keys
// 0 and 2^64-1), ties on the 8-byte prefix, values longer than the kernel's
// 256-byte window, values in the last 256 bytes of the data, nulls, and
// 32- and 64-bit offsets.

import (
	"bytes"
	"math/rand/v2"
	"strings"
	"testing"
)

// scanNaive returns the min and max of the valid values (ok=false: none).
func scanNaive(vals [][]byte, valid []bool) (mn, mx []byte, ok bool) {
	for i, v := range vals {
		if !valid[i] {
			continue
		}
		if !ok || bytes.Compare(v, mn) < 0 {
			mn = v
		}
		if !ok || bytes.Compare(v, mx) > 0 {
			mx = v
		}
		ok = true
	}
	return mn, mx, ok
}

// scanFiltered runs scanOffsets over vals (validity valid) the way
// offsetScan does: the first valid value seeds the extrema.
func scanFiltered[O int32 | int64](vals [][]byte, valid []bool) (mn, mx []byte, ok bool) {
	var data []byte
	offs := []O{0}
	vb := make([]byte, (len(vals)+7)/8)
	for i, v := range vals {
		data = append(data, v...)
		offs = append(offs, O(len(data)))
		if valid[i] {
			vb[i/8] |= 1 << (i % 8)
		}
	}
	data = data[:len(data):len(data)] // nothing readable past the end
	s := 0
	for s < len(vals) && !valid[s] {
		s++
	}
	if s == len(vals) {
		return nil, nil, false
	}
	v := data[offs[s]:offs[s+1]]
	st := extremaScan{minS: v, maxS: v, minK: prefixKeyOf(v), maxK: prefixKeyOf(v)}
	scanOffsets(&st, data, offs[s:], vb, s)
	return st.minS, st.maxS, true
}

// prefixFilterCase generates one column: kind selects the value shape.
func prefixFilterCase(rng *rand.Rand, kind, n int) ([][]byte, []bool) {
	const alphabet = "abcdefghijklmnopqrstuvwxyz0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZ"
	vals := make([][]byte, n)
	valid := make([]bool, n)
	nullRate := []int{0, 2, 20, 90}[rng.IntN(4)]
	for i := range vals {
		valid[i] = rng.IntN(100) >= nullRate
		switch kind {
		case 0: // few distinct bytes, many ties, empties, keys 0 and 2^64-1
			b := make([]byte, rng.IntN(13))
			for j := range b {
				b[j] = []byte{0x00, 0x01, 0x7F, 0xFE, 0xFF}[rng.IntN(5)]
			}
			vals[i] = b
		case 1: // slices of one alphabet (tests/bench's write data)
			p, l := rng.IntN(32), rng.IntN(32)
			vals[i] = []byte(alphabet[p : p+min(l, len(alphabet)-p)])
		case 2: // long values: beyond the 256-byte window
			vals[i] = []byte(strings.Repeat(alphabet[rng.IntN(len(alphabet)):][:1], 100+rng.IntN(300)))
		case 3: // random letters, 8–24 bytes (seedio's benchmark data)
			b := make([]byte, 8+rng.IntN(17))
			for j := range b {
				b[j] = alphabet[rng.IntN(len(alphabet))]
			}
			vals[i] = b
		default: // mixed lengths 0–40 over the full byte range, 0xFF-heavy
			b := make([]byte, rng.IntN(41))
			for j := range b {
				if rng.IntN(3) == 0 {
					b[j] = 0xFF
				} else {
					b[j] = byte(rng.IntN(256))
				}
			}
			vals[i] = b
		}
	}
	return vals, valid
}

func checkPrefixFilter(t *testing.T, what string, vals [][]byte, valid []bool) {
	t.Helper()
	wmn, wmx, wok := scanNaive(vals, valid)
	for _, large := range []bool{false, true} {
		var mn, mx []byte
		var ok bool
		if large {
			mn, mx, ok = scanFiltered[int64](vals, valid)
		} else {
			mn, mx, ok = scanFiltered[int32](vals, valid)
		}
		if ok != wok || !bytes.Equal(mn, wmn) || !bytes.Equal(mx, wmx) {
			t.Fatalf("%s (64-bit offsets %v): got min %q max %q (%v), want %q %q (%v)", what, large, mn, mx, ok, wmn, wmx, wok)
		}
	}
}

func TestR30_R34_Utf8PrefixFilterMatchesNaiveScan(t *testing.T) {
	rng := rand.New(rand.NewPCG(24, 17))
	for iter := range 400 {
		kind := iter % 5
		n := []int{1, 7, 8, 9, 17, 40, 300, 3000}[rng.IntN(8)]
		vals, valid := prefixFilterCase(rng, kind, n)
		checkPrefixFilter(t, "case", vals, valid)
	}
	// Hand-made edges: the min's prefix is all 0xFF (minK = 2^64-1); the
	// min becomes empty mid-scan and later values are empty or zero bytes;
	// the extremum is the very last value, inside the last 256 bytes.
	ff := bytes.Repeat([]byte{0xFF}, 9)
	long := bytes.Repeat([]byte("m"), 300)
	cases := map[string][][]byte{
		"all-0xFF":            {ff, ff, append(ff, 0), ff[:8], ff, ff, ff, ff, ff, ff, ff},
		"empty-min-then-zero": append(append([][]byte{[]byte("m")}, bytes.Split(bytes.Repeat([]byte("k,"), 40), []byte(","))...), []byte{0}, []byte{}, []byte{0, 0}, []byte("z")),
		"last-is-max":         append(bytes.Split(bytes.Repeat([]byte("bbbbbbbbbb,"), 100), []byte(",")), []byte("c")),
		"last-is-min":         append(bytes.Split(bytes.Repeat([]byte("bbbbbbbbbb,"), 100)[1:], []byte(",")), []byte("a")),
		"long-then-short":     {long, long, long, long, long, long, long, long, long, []byte("a"), []byte("n")},
		"tie-on-prefix":       bytes.Split([]byte("abcdefgh1,abcdefgh,abcdefgh2,abcdefgh0,abcdefgh,abcdefgh,abcdefgh,abcdefgh,abcdefgh,abcdefgh22,abcdefgh"), []byte(",")),
	}
	// A value starting 250 bytes into a kernel step's window (the step
	// starts at value 2, after the candidate value 1), whose 7th byte lies
	// past the window: a kernel reading it from the window's start (wrapped,
	// 'n') would see "mmmmmmn", inside the bounds, and skip the new min.
	filler := append([]byte("n"), bytes.Repeat([]byte("m"), 34)...)
	wrapped := [][]byte{append([]byte("z"), bytes.Repeat([]byte("y"), 34)...), bytes.Repeat([]byte("m"), 35)}
	for range 6 {
		wrapped = append(wrapped, filler)
	}
	wrapped = append(wrapped, append([]byte("n"), bytes.Repeat([]byte("m"), 39)...), []byte("mmmmmma"))
	for range 30 {
		wrapped = append(wrapped, filler)
	}
	cases["wrapped-window"] = wrapped
	for name, vals := range cases {
		all := make([]bool, len(vals))
		for i := range all {
			all[i] = true
		}
		checkPrefixFilter(t, name, vals, all)
	}
}

// FuzzUtf8PrefixFilter splits the input into values (byte 0xFE ends a
// value; a value starting with 0xFD is null) and checks scanOffsets against
// the naive scan.
//
//	go test -run '^$' -fuzz FuzzUtf8PrefixFilter ./seedio/
func FuzzUtf8PrefixFilter(f *testing.F) {
	f.Add([]byte("abc\xfeab\xfe\xfeabcdefghij\xfe\xfdnull\xfezz\xfe"))
	f.Add(bytes.Repeat([]byte("abcdefgh\xfe\xfe\xff\xff\xff\xff\xff\xff\xff\xff\xff\xfe"), 40))
	f.Add(bytes.Repeat([]byte("0123456789abcdefghijklmnopqrstuvwxyz\xfe"), 30))
	f.Fuzz(func(t *testing.T, in []byte) {
		parts := bytes.Split(in, []byte{0xFE})
		valid := make([]bool, len(parts))
		for i, p := range parts {
			valid[i] = len(p) == 0 || p[0] != 0xFD
		}
		checkPrefixFilter(t, "fuzz", parts, valid)
	})
}
