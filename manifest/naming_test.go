package manifest

import (
	"errors"
	"testing"
)

func TestSpec4_1_ManifestNames(t *testing.T) {
	for _, tc := range []struct {
		scheme  NamingScheme
		version uint64
		want    string
	}{
		{V1, 1, "1.manifest"},
		{V1, 12, "12.manifest"},
		{V2, 1, "18446744073709551614.manifest"},
		{V2, 3, "18446744073709551612.manifest"},
		{V2, 1<<63 - 1, "09223372036854775808.manifest"},
		{V2, 1 << 63, "d9223372036854775808.manifest"},
		{V1, 1<<63 | 5, "d9223372036854775813.manifest"},
	} {
		if got := ManifestName(tc.scheme, tc.version); got != tc.want {
			t.Errorf("ManifestName(%v, %d) = %q, want %q", tc.scheme, tc.version, got, tc.want)
		}
		v, s, ok := ParseManifestName(tc.want)
		wantScheme := tc.scheme
		if IsDetached(tc.version) {
			wantScheme = V2
		}
		if !ok || v != tc.version || s != wantScheme {
			t.Errorf("ParseManifestName(%q) = %d, %v, %v", tc.want, v, s, ok)
		}
	}
}

func TestSpec4_2_ParseManifestNameRejects(t *testing.T) {
	for _, name := range []string{
		"latest_version_hint.json",
		"18446744073709551610.manifest-0b6e5c1a-8c1f-4e57-9a3e-0d3b5f2f6e0b",
		".tmp_1.manifest_abc",
		"abc.manifest",
		"d12.manifest", // detached names need bit 63
		"-1.manifest",
		"99999999999999999999.manifest", // 20 digits, > u64::MAX
		"9227000000000000000.manifest",  // V1 name with bit 63 set (fuzz regression)
		"00000000000000000001.manifest", // V2 name of a version with bit 63 set
		"",
	} {
		if v, s, ok := ParseManifestName(name); ok {
			t.Errorf("ParseManifestName(%q) = %d, %v, true; want not a manifest", name, v, s)
		}
	}
}

func TestSpec4_1_StagingName(t *testing.T) {
	final, suffix, ok := ParseStagingName("18446744073709551610.manifest-0b6e5c1a")
	if !ok || final != "18446744073709551610.manifest" || suffix != "0b6e5c1a" {
		t.Fatalf("got %q %q %v", final, suffix, ok)
	}
	if _, _, ok := ParseStagingName("18446744073709551610.manifest"); ok {
		t.Fatal("a final name is not a staging name")
	}
}

func TestSpec4_2_DetectScheme(t *testing.T) {
	for _, tc := range []struct {
		names []string
		want  NamingScheme
		err   error
	}{
		{[]string{"1.manifest", "2.manifest", "latest_version_hint.json"}, V1, nil},
		{[]string{"18446744073709551614.manifest", "d9223372036854775808.manifest"}, V2, nil},
		{[]string{"1.manifest", "d9223372036854775808.manifest"}, V1, nil},
		{[]string{"1.manifest", "18446744073709551613.manifest"}, SchemeUnknown, ErrMixedNaming},
		{[]string{"latest_version_hint.json"}, SchemeUnknown, nil},
	} {
		got, err := DetectScheme(tc.names)
		if got != tc.want || !errors.Is(err, tc.err) {
			t.Errorf("DetectScheme(%v) = %v, %v; want %v, %v", tc.names, got, err, tc.want, tc.err)
		}
	}
	if ErrMixedNaming.Error() != "Found multiple manifest naming schemes in the same directory: V2 and V1. Use `migrate_manifest_paths_v2` to migrate the directory." {
		t.Fatal("mixed-naming message must be Lance's")
	}
}

func TestSpec4_5_Hint(t *testing.T) {
	if got := string(EncodeHint(42)); got != `{"version":42}` {
		t.Fatalf("EncodeHint = %q", got)
	}
	for _, tc := range []struct {
		in   string
		want uint64
		ok   bool
	}{
		{`{"version":42}`, 42, true},
		{`{"version": 42}` + "\n", 42, true},
		{`{"other":"x","version":7}`, 7, true},
		{`{"version":18446744073709551615}`, 18446744073709551615, true},
		{`{"version":-1}`, 0, false},
		{`{"version":1.5}`, 0, false},
		{`{"version":"3"}`, 0, false},
		{`{}`, 0, false},
		{`garbage`, 0, false},
		{``, 0, false},
	} {
		got, err := DecodeHint("hint", []byte(tc.in))
		if tc.ok != (err == nil) || got != tc.want {
			t.Errorf("DecodeHint(%q) = %d, %v", tc.in, got, err)
		}
		if err != nil && !errors.Is(err, ErrCorrupt) {
			t.Errorf("DecodeHint(%q) error %v does not match ErrCorrupt", tc.in, err)
		}
	}
}
