package truncate

import (
	"bytes"
	"math/rand/v2"
	"strings"
	"testing"
	"unicode/utf8"
)

func TestTR2_ShortBoundsAreExact(t *testing.T) {
	for _, s := range []string{"", "a", strings.Repeat("x", 64), strings.Repeat("é", 32)} {
		if got := MinString(s, 64); got != s {
			t.Errorf("min(%q) = %q", s, got)
		}
		if got, ok := MaxString(s, 64, 4096); !ok || got != s {
			t.Errorf("max(%q) = %q, %v", s, got, ok)
		}
		if got := MinBinary([]byte(s), 64); !bytes.Equal(got, []byte(s)) {
			t.Errorf("min binary(%q) = %q", s, got)
		}
		if got, ok := MaxBinary([]byte(s), 64, 4096); !ok || !bytes.Equal(got, []byte(s)) {
			t.Errorf("max binary(%q) = %q, %v", s, got, ok)
		}
	}
}

func TestTruncationCatalogue(t *testing.T) {
	tenKB := strings.Repeat("abcdefghij", 1024)
	cases := []struct {
		name         string
		in           string
		l, h         int
		wantMin      string
		wantMax      string
		wantMaxKnown bool
	}{
		// T53: 10 KB string, L = 64.
		{"T53_10KB", tenKB, 64, 4096, tenKB[:64], tenKB[:63] + "e", true},
		// T54: cut inside a 4-byte character moves back to the boundary.
		{"T54_CutInside4ByteChar", strings.Repeat("a", 62) + "😀" + "z", 64, 4096,
			strings.Repeat("a", 62), strings.Repeat("a", 61) + "b", true},
		// T55: prefix ending in U+D7FF increments to U+E000, not a surrogate.
		{"T55_D7FFtoE000", strings.Repeat("a", 61) + "\uD7FF" + "tail", 64, 4096,
			strings.Repeat("a", 61) + "\uD7FF", strings.Repeat("a", 61) + "\uE000", true},
		// T56: only U+10FFFF characters, longer than H: max unknown.
		{"T56_Only10FFFF", strings.Repeat("\U0010FFFF", 2000), 64, 4096,
			strings.Repeat("\U0010FFFF", 16), "", false},
		// T56 variant: not longer than H: the exact value is written.
		{"T56_Only10FFFFWithinCap", strings.Repeat("\U0010FFFF", 100), 64, 4096,
			strings.Repeat("\U0010FFFF", 16), strings.Repeat("\U0010FFFF", 100), true},
		// T59: U+007F at the cut is skipped (successor U+0080 is wider).
		{"T59_7FSkipped", strings.Repeat("a", 63) + "\x7F" + "more", 64, 4096,
			strings.Repeat("a", 63) + "\x7F", strings.Repeat("a", 62) + "b", true},
		// U+07FF -> U+0800 and U+FFFF -> U+10000 change width too.
		{"WidthChange07FF", strings.Repeat("b", 62) + "\u07FF" + "x", 64, 4096,
			strings.Repeat("b", 62) + "\u07FF", strings.Repeat("b", 61) + "c", true},
		{"WidthChangeFFFF", strings.Repeat("c", 61) + "\uFFFF" + "x", 64, 4096,
			strings.Repeat("c", 61) + "\uFFFF", strings.Repeat("c", 60) + "d", true},
		// A 2-byte character that can be incremented in place.
		{"TwoByteIncrement", strings.Repeat("d", 62) + "é" + "x", 64, 4096,
			strings.Repeat("d", 62) + "é", strings.Repeat("d", 62) + "ê", true},
		// Cut before the only (wide) first character: empty min is valid.
		{"EmptyMinPrefix", "😀😀", 2, 4096, "", "😀😀", true},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			mn := MinString(c.in, c.l)
			if mn != c.wantMin {
				t.Errorf("min = %q, want %q", mn, c.wantMin)
			}
			mx, ok := MaxString(c.in, c.l, c.h)
			if ok != c.wantMaxKnown || mx != c.wantMax {
				t.Errorf("max = %q, %v; want %q, %v", mx, ok, c.wantMax, c.wantMaxKnown)
			}
			checkStringBounds(t, c.in, mn, mx, ok, c.l, c.h)
		})
	}
}

func TestTruncationBinaryCatalogue(t *testing.T) {
	ff100 := bytes.Repeat([]byte{0xFF}, 100)
	ff5000 := bytes.Repeat([]byte{0xFF}, 5000)
	abff := append([]byte("ab"), bytes.Repeat([]byte{0xFF}, 100)...)
	cases := []struct {
		name    string
		in      []byte
		l       int
		wantMin []byte
		wantMax []byte
		known   bool
	}{
		{"T57_FFx100WithinCap", ff100, 64, ff100[:64], ff100, true},
		{"T57_FFx5000BeyondCap", ff5000, 64, ff5000[:64], nil, false},
		{"T58_abFF", abff, 64, abff[:64], []byte("ac"), true},
		{"Carry", append(bytes.Repeat([]byte{7}, 63), 0xFE, 0), 64, append(bytes.Repeat([]byte{7}, 63), 0xFE), append(bytes.Repeat([]byte{7}, 63), 0xFF), true},
		{"ZeroBytes", bytes.Repeat([]byte{0}, 70), 64, bytes.Repeat([]byte{0}, 64), append(bytes.Repeat([]byte{0}, 63), 1), true},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			mn := MinBinary(c.in, c.l)
			if !bytes.Equal(mn, c.wantMin) {
				t.Errorf("min = %x, want %x", mn, c.wantMin)
			}
			mx, ok := MaxBinary(c.in, c.l, 4096)
			if ok != c.known || !bytes.Equal(mx, c.wantMax) {
				t.Errorf("max = %x, %v; want %x, %v", mx, ok, c.wantMax, c.known)
			}
			if bytes.Compare(mn, c.in) > 0 || (ok && bytes.Compare(mx, c.in) < 0) {
				t.Errorf("T-R8: bounds do not enclose the value")
			}
		})
	}
}

// checkStringBounds checks T-R3…T-R8 for one value.
func checkStringBounds(t *testing.T, s, mn, mx string, mxOK bool, l, h int) {
	t.Helper()
	if !utf8.ValidString(mn) || (mxOK && !utf8.ValidString(mx)) {
		t.Fatalf("R38: invalid UTF-8 bound for %q: %q %q", s, mn, mx)
	}
	if len(mn) > l && len(s) > l {
		t.Fatalf("min %d bytes > L = %d", len(mn), l)
	}
	if mn > s {
		t.Fatalf("min %q > value %q", mn, s)
	}
	if !strings.HasPrefix(s, mn) {
		t.Fatalf("min %q is not a prefix of %q", mn, s)
	}
	if mxOK {
		if mx < s {
			t.Fatalf("max %q < value %q", mx, s)
		}
		if len(s) > l && len(mx) > l && mx != s {
			t.Fatalf("incremented max %d bytes > L", len(mx))
		}
		if mx == s && len(s) > h {
			t.Fatalf("untruncated max beyond hard cap")
		}
		for _, r := range mx {
			if r >= 0xD800 && r <= 0xDFFF {
				t.Fatalf("surrogate in max")
			}
		}
	} else if len(s) <= h {
		t.Fatalf("max unknown although %d <= H", len(s))
	}
}

// Property: for random (mostly non-ASCII) strings and lengths, truncated
// bounds are valid UTF-8 and bound the value, and every string sharing the
// kept max prefix stays below the max (T-R5, T-R8).
func TestTR8_TruncatedBoundsEncloseValueProperty(t *testing.T) {
	rng := rand.New(rand.NewPCG(53, 60))
	alphabet := []rune{'a', 'z', 0x7F, 0x80, 0x7FF, 0x800, 0xD7FF, 0xE000, 0xFFFF, 0x10000, 0x10FFFF, 'é', '日'}
	n := 4000
	if testing.Short() {
		n = 500
	}
	for i := 0; i < n; i++ {
		var sb strings.Builder
		for k := rng.IntN(40); k > 0; k-- {
			sb.WriteRune(alphabet[rng.IntN(len(alphabet))])
		}
		s := sb.String()
		l := rng.IntN(20)
		h := l + rng.IntN(60)
		mn := MinString(s, l)
		mx, ok := MaxString(s, l, h)
		checkStringBounds(t, s, mn, mx, ok, l, h)
		if ok && mx != s {
			// mx = prefix + successor: any extension of s's kept prefix is < mx.
			ext := s + "\U0010FFFF\U0010FFFF"
			if ext >= mx {
				t.Fatalf("extension %q of %q not below max %q", ext, s, mx)
			}
		}
		b := []byte(s)
		bm := MinBinary(b, l)
		bx, bok := MaxBinary(b, l, h)
		if bytes.Compare(bm, b) > 0 || (bok && bytes.Compare(bx, b) < 0) || (!bok && len(b) <= h) {
			t.Fatalf("binary bounds of %x: %x %x %v", b, bm, bx, bok)
		}
	}
}
