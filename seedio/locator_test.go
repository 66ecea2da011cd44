package seedio

import (
	"errors"
	"strconv"
	"strings"
	"testing"
)

// R1, R7, T61: the key is the literal prefix plus the exact column bytes.
func TestR1_LocatorKeyExactBytes(t *testing.T) {
	for _, col := range []string{"a", "a.b", "a:b", "", "日本", "lance.seed.x", "A", " sp ", "\x00"} {
		want := "lance.seed." + col
		if got := LocatorKey(col); got != want {
			t.Errorf("LocatorKey(%q) = %q, want %q", col, got, want)
		}
	}
	if LocatorKey("A") == LocatorKey("a") {
		t.Error("R1: keys must be case-sensitive")
	}
	// T61: exact lookup in a metadata map works for every name, including
	// names that contain '.' or ':' or look like a key themselves.
	md := map[string]string{}
	names := []string{"a.b", "a:b", "", "日本", "lance.seed.x"}
	for i, col := range names {
		md[LocatorKey(col)] = FormatLocator(uint32(i+1), 16)
	}
	for i, col := range names {
		loc, err := ParseLocator(md[LocatorKey(col)])
		if err != nil || loc.BufferIndex != uint32(i+1) {
			t.Errorf("T61 %q: %+v, %v", col, loc, err)
		}
	}
}

// R2: writers emit canonical decimal.
func TestR2_FormatLocatorCanonical(t *testing.T) {
	cases := []struct {
		buf  uint32
		rpz  uint64
		want string
	}{
		{1, 8192, "1:8192"},
		{3, 16, "3:16"},
		{4294967295, 4294967295, "4294967295:4294967295"},
		{7, 18446744073709551615, "7:18446744073709551615"},
	}
	for _, c := range cases {
		got := FormatLocator(c.buf, c.rpz)
		if got != c.want {
			t.Errorf("FormatLocator(%d, %d) = %q, want %q", c.buf, c.rpz, got, c.want)
		}
		loc, err := ParseLocator(got)
		if err != nil || loc != (Locator{c.buf, c.rpz}) || loc.String() != got {
			t.Errorf("round trip %q: %+v, %v", got, loc, err)
		}
	}
}

// R2–R4, T62, Q13: strict parsing; E01 for shape, E02 for range.
func TestT62_R2_R3_R4_ParseLocatorStrict(t *testing.T) {
	cases := []struct {
		in   string
		want error
	}{
		{"1:8192", nil},
		{"0:8192", ErrSeedLocatorRange},                 // R3: buffer 0 is the file descriptor
		{"3:0", ErrSeedLocatorRange},                    // R4
		{"4294967296:8192", ErrSeedLocatorRange},        // R3: > u32
		{"1:18446744073709551616", ErrSeedLocatorRange}, // R4: > u64
		{"99999999999999999999999:1", ErrSeedLocatorRange},
		{"3:8192:7", ErrSeedLocatorSyntax}, // fork style
		{"+3:8192", ErrSeedLocatorSyntax},
		{"03:8192", ErrSeedLocatorSyntax},
		{"3:08192", ErrSeedLocatorSyntax},
		{"00:1", ErrSeedLocatorSyntax},
		{" 3:8192", ErrSeedLocatorSyntax},
		{"3:8192 ", ErrSeedLocatorSyntax},
		{"3 :8192", ErrSeedLocatorSyntax},
		{"3:", ErrSeedLocatorSyntax},
		{":8192", ErrSeedLocatorSyntax},
		{":", ErrSeedLocatorSyntax},
		{"", ErrSeedLocatorSyntax},
		{"38192", ErrSeedLocatorSyntax},
		{"-1:8192", ErrSeedLocatorSyntax},
		{"3:-1", ErrSeedLocatorSyntax},
		{"0x3:8192", ErrSeedLocatorSyntax},
		{"３:8192", ErrSeedLocatorSyntax}, // full-width digit
		{"3:8_192", ErrSeedLocatorSyntax},
		{"3:8192\n", ErrSeedLocatorSyntax},
		{"1e3:1", ErrSeedLocatorSyntax},
	}
	for _, c := range cases {
		loc, err := ParseLocator(c.in)
		if c.want == nil {
			if err != nil {
				t.Errorf("ParseLocator(%q): %v", c.in, err)
			}
			continue
		}
		if !errors.Is(err, c.want) {
			t.Errorf("ParseLocator(%q) = %+v, %v; want %v", c.in, loc, err, c.want)
			continue
		}
		var le *LocatorError
		if !errors.As(err, &le) || le.Reason == "" || !strings.Contains(err.Error(), strconv.Quote(c.in)) {
			t.Errorf("ParseLocator(%q): error %q does not name the value and reason", c.in, err)
		}
		if loc != (Locator{}) {
			t.Errorf("ParseLocator(%q) returned %+v with an error", c.in, loc)
		}
	}
	// Hostile long value: error message stays bounded.
	long := strings.Repeat("9", 100000) + ":1"
	if _, err := ParseLocator(long); !errors.Is(err, ErrSeedLocatorRange) || len(err.Error()) > 400 {
		t.Errorf("long value: %d-byte error %v", len(err.Error()), errors.Unwrap(err))
	}
}

func FuzzParseLocator(f *testing.F) {
	for _, s := range []string{"1:8192", "3:16", "0:8192", "3:0", "3:8192:7", "+3:8192", "03:8192",
		"4294967295:18446744073709551615", "4294967296:1", ":", "", "日本:1", "1:1\x00"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		loc, err := ParseLocator(s)
		if err != nil {
			if !errors.Is(err, ErrSeedLocatorSyntax) && !errors.Is(err, ErrSeedLocatorRange) {
				t.Fatalf("ParseLocator(%q): untyped error %v", s, err)
			}
			return
		}
		// Accepted values are canonical: formatting gives the input back.
		if loc.BufferIndex == 0 || loc.RowsPerZone == 0 || FormatLocator(loc.BufferIndex, loc.RowsPerZone) != s {
			t.Fatalf("ParseLocator(%q) accepted non-canonical %+v", s, loc)
		}
	})
}
