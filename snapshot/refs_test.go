package snapshot

import (
	"bytes"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// §7.1: decoding Lance 12's tag files and re-encoding them gives the same
// bytes (key order, 2-space indent, no trailing newline, ns timestamps).
func TestTagGoldenLance12RoundTrip(t *testing.T) {
	tests := []struct {
		file    string
		name    string
		version uint64
		size    uint64
		created string
		updated string
	}{
		{"tag_first.json", "first", 1, 688, "2026-11-30T19:57:05.768693133Z", "2026-11-30T19:57:05.768693133Z"},
		{"tag_release.json", "release", 3, 685, "2026-11-30T19:57:05.769271754Z", "2026-11-30T19:57:05.770748832Z"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			raw, err := os.ReadFile(filepath.Join("testdata", "golden", tt.file))
			if err != nil {
				t.Fatal(err)
			}
			tag, err := DecodeTag(tt.name, raw)
			if err != nil {
				t.Fatal(err)
			}
			if tag.Name != tt.name || tag.Branch != "" || tag.Version != tt.version || tag.ManifestSize != tt.size {
				t.Fatalf("decoded %+v", tag)
			}
			if got := FormatRefTime(tag.CreatedAt); got != tt.created {
				t.Errorf("createdAt = %s, want %s", got, tt.created)
			}
			if got := FormatRefTime(tag.UpdatedAt); got != tt.updated {
				t.Errorf("updatedAt = %s, want %s", got, tt.updated)
			}
			if got := EncodeTag(tag); !bytes.Equal(got, raw) {
				t.Errorf("re-encoded tag differs:\n%s\nwant\n%s", got, raw)
			}
		})
	}
}

// §7.1: a tag built from scratch encodes to the golden bytes Lance 12 wrote.
func TestTagEncodeMatchesLance12Golden(t *testing.T) {
	ts, _ := time.Parse(time.RFC3339Nano, "2026-11-30T19:57:05.768693133Z")
	got := EncodeTag(Tag{Name: "first", Version: 1, CreatedAt: ts, UpdatedAt: ts, ManifestSize: 688})
	want, err := os.ReadFile(filepath.Join("testdata", "golden", "tag_first.json"))
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(got, want) {
		t.Fatalf("got\n%s\nwant\n%s", got, want)
	}
}

// §7.1: tags on a branch, unknown times and metadata have golden forms too.
func TestTagEncodeVariantsGolden(t *testing.T) {
	ts := time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)
	tests := []struct {
		name string
		tag  Tag
		file string
	}{
		{"branch and metadata", Tag{Branch: "feat/x", Version: 7, CreatedAt: ts, UpdatedAt: ts.Add(1500 * time.Microsecond), ManifestSize: 1234,
			Metadata: map[string]string{"z": "last", "a": "<&>\"\\\n\u2028é"}}, "tag_branch_metadata.json"},
		{"no times (NOV25 shape)", Tag{Version: 2, ManifestSize: 99}, "tag_no_times.json"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := EncodeTag(tt.tag)
			path := filepath.Join("testdata", "golden", tt.file)
			if os.Getenv("UPDATE_GOLDEN") != "" {
				if err := os.WriteFile(path, got, 0o644); err != nil {
					t.Fatal(err)
				}
			}
			want, err := os.ReadFile(path)
			if err != nil {
				t.Fatal(err)
			}
			if !bytes.Equal(got, want) {
				t.Fatalf("got\n%s\nwant\n%s", got, want)
			}
			back, err := DecodeTag("x", got)
			if err != nil {
				t.Fatal(err)
			}
			if back.Branch != tt.tag.Branch || back.Version != tt.tag.Version || !back.CreatedAt.Equal(tt.tag.CreatedAt) ||
				!back.UpdatedAt.Equal(tt.tag.UpdatedAt) || back.ManifestSize != tt.tag.ManifestSize || len(back.Metadata) != len(tt.tag.Metadata) {
				t.Fatalf("round trip: %+v vs %+v", back, tt.tag)
			}
			for k, v := range tt.tag.Metadata {
				if back.Metadata[k] != v {
					t.Errorf("metadata[%q] = %q, want %q", k, back.Metadata[k], v)
				}
			}
		})
	}
}

// §7.1 / §9 trap 4: fractions are written with 0, 3, 6 or 9 digits, UTC "Z".
func TestFormatRefTime(t *testing.T) {
	base := time.Date(2026, 11, 30, 19, 57, 5, 0, time.UTC)
	tests := []struct {
		ns   int
		want string
	}{
		{0, "2026-11-30T19:57:05Z"},
		{500_000_000, "2026-11-30T19:57:05.500Z"},
		{768_693_000, "2026-11-30T19:57:05.768693Z"},
		{768_693_133, "2026-11-30T19:57:05.768693133Z"},
		{1, "2026-11-30T19:57:05.000000001Z"},
	}
	for _, tt := range tests {
		if got := FormatRefTime(base.Add(time.Duration(tt.ns))); got != tt.want {
			t.Errorf("ns %d: %s, want %s", tt.ns, got, tt.want)
		}
	}
	loc := time.FixedZone("x", 3600)
	if got := FormatRefTime(time.Date(2026, 11, 30, 20, 57, 5, 0, loc)); got != "2026-11-30T19:57:05Z" {
		t.Errorf("non-UTC: %s", got)
	}
}

// §7.2: Lance 12's branch file decodes and re-encodes to the same bytes.
func TestBranchGoldenLance12RoundTrip(t *testing.T) {
	raw, err := os.ReadFile(filepath.Join("testdata", "golden", "branch_dev.json"))
	if err != nil {
		t.Fatal(err)
	}
	br, err := DecodeBranch("dev", raw)
	if err != nil {
		t.Fatal(err)
	}
	if br.ParentBranch != "" || br.ParentVersion != 2 || br.CreateAt != 1796068625 || br.ManifestSize != 598 ||
		!br.HasIdentifier || len(br.Identifier) != 1 || br.Identifier[0] != (VersionMapping{2, "eb32144fe6cd4b55b8162b1dc8549909"}) {
		t.Fatalf("decoded %+v", br)
	}
	if got := EncodeBranch(br); !bytes.Equal(got, raw) {
		t.Fatalf("re-encoded branch differs:\n%s\nwant\n%s", got, raw)
	}
}

// §7.2: nested branches, the empty main mapping and legacy files.
func TestBranchEncodeVariantsGolden(t *testing.T) {
	tests := []struct {
		name string
		br   Branch
		file string
	}{
		{"child of a branch", Branch{ParentBranch: "dev", HasIdentifier: true,
			Identifier:    []VersionMapping{{2, "eb32144fe6cd4b55b8162b1dc8549909"}, {4, "0123456789abcdef0123456789abcdef"}},
			ParentVersion: 4, CreateAt: 1796068700, ManifestSize: 794, Metadata: map[string]string{"k": "v"}}, "branch_child.json"},
		{"empty mapping", Branch{HasIdentifier: true, Identifier: []VersionMapping{}, ParentVersion: 1, CreateAt: 5, ManifestSize: 10}, "branch_empty_mapping.json"},
		{"legacy without identifier", Branch{ParentVersion: 3, CreateAt: 6, ManifestSize: 11}, "branch_legacy.json"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := EncodeBranch(tt.br)
			path := filepath.Join("testdata", "golden", tt.file)
			if os.Getenv("UPDATE_GOLDEN") != "" {
				if err := os.WriteFile(path, got, 0o644); err != nil {
					t.Fatal(err)
				}
			}
			want, err := os.ReadFile(path)
			if err != nil {
				t.Fatal(err)
			}
			if !bytes.Equal(got, want) {
				t.Fatalf("got\n%s\nwant\n%s", got, want)
			}
			back, err := DecodeBranch("b", got)
			if err != nil {
				t.Fatal(err)
			}
			if back.HasIdentifier != tt.br.HasIdentifier || len(back.Identifier) != len(tt.br.Identifier) ||
				back.ParentBranch != tt.br.ParentBranch || back.ParentVersion != tt.br.ParentVersion || back.CreateAt != tt.br.CreateAt {
				t.Fatalf("round trip %+v vs %+v", back, tt.br)
			}
		})
	}
}

func TestDecodeTagRejects(t *testing.T) {
	tests := []struct {
		name, json, mention string
	}{
		{"empty", ``, "not a JSON object"},
		{"array", `[]`, "not a JSON object"},
		{"null", `null`, "null"},
		{"no version", `{"branch":null,"manifestSize":1}`, `missing "version"`},
		{"negative version", `{"version":-1}`, `"version"`},
		{"float version", `{"version":1.5}`, `"version"`},
		{"huge version", `{"version":18446744073709551616}`, `"version"`},
		{"string version", `{"version":"1"}`, `"version"`},
		{"branch number", `{"version":1,"branch":3}`, `"branch"`},
		{"bad time", `{"version":1,"createdAt":"yesterday"}`, `"createdAt"`},
		{"time number", `{"version":1,"updatedAt":5}`, `"updatedAt"`},
		{"bad metadata", `{"version":1,"metadata":{"a":1}}`, `"metadata"`},
		{"trailing", `{"version":1} {}`, "trailing"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := DecodeTag("t", []byte(tt.json))
			if err == nil || !errors.Is(err, ErrInvalidRef) || !strings.Contains(err.Error(), tt.mention) {
				t.Fatalf("err = %v, want ErrInvalidRef mentioning %q", err, tt.mention)
			}
			if !strings.Contains(err.Error(), "_refs/tags/t.json") {
				t.Errorf("error does not name the file: %v", err)
			}
		})
	}
	// Lenient: extra keys and a missing manifestSize are accepted.
	tag, err := DecodeTag("t", []byte(`{"version":5,"extra":[1,2],"branch":"b"}`))
	if err != nil || tag.Version != 5 || tag.Branch != "b" || tag.ManifestSize != 0 || tag.Metadata == nil {
		t.Fatalf("lenient decode: %+v, %v", tag, err)
	}
}

func TestDecodeBranchRejects(t *testing.T) {
	tests := []struct {
		name, json, mention string
	}{
		{"no parentVersion", `{"parentBranch":null}`, `missing "parentVersion"`},
		{"identifier not object", `{"parentVersion":1,"identifier":[]}`, `"identifier"`},
		{"identifier without mapping", `{"parentVersion":1,"identifier":{}}`, `version_mapping`},
		{"mapping not array", `{"parentVersion":1,"identifier":{"version_mapping":5}}`, `version_mapping`},
		{"pair too short", `{"parentVersion":1,"identifier":{"version_mapping":[[1]]}}`, `[0]`},
		{"pair bad version", `{"parentVersion":1,"identifier":{"version_mapping":[[-1,"x"]]}}`, `version_mapping[0][0]`},
		{"pair bad id", `{"parentVersion":1,"identifier":{"version_mapping":[[1,2]]}}`, `[0][1]`},
		{"createAt string", `{"parentVersion":1,"createAt":"now"}`, `"createAt"`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := DecodeBranch("feat/x", []byte(tt.json))
			if err == nil || !errors.Is(err, ErrInvalidRef) || !strings.Contains(err.Error(), tt.mention) {
				t.Fatalf("err = %v, want ErrInvalidRef mentioning %q", err, tt.mention)
			}
			if !strings.Contains(err.Error(), "_refs/branches/feat%2Fx.json") {
				t.Errorf("error does not name the file: %v", err)
			}
		})
	}
}

// §7.1 tag name rules.
func TestTagNameRules(t *testing.T) {
	good := []string{"v1", "release-2026.11", "a_b", "ünïcødé", "数据", "x.y", "1"}
	bad := []string{"", ".hidden", "trailing.", "a..b", "x.lock", "a/b", "sp ace", "a\\b", "tab\t", "star*", "a:b"}
	for _, n := range good {
		if err := ValidateTagName(n); err != nil {
			t.Errorf("ValidateTagName(%q) = %v", n, err)
		}
	}
	for _, n := range bad {
		if err := ValidateTagName(n); !errors.Is(err, ErrInvalidRef) {
			t.Errorf("ValidateTagName(%q) = %v, want ErrInvalidRef", n, err)
		}
	}
}

// §7.2 branch name rules.
func TestBranchNameRules(t *testing.T) {
	good := []string{"dev", "feat/x", "a/b/c", "v1.2", "user_1-x", "ветка"}
	bad := []string{"", "main", "/dev", "dev/", "a//b", "a/../b", "a..b", `a\b`, "x.lock", "a/b.lock", "sp ace", "a/ /b", "a:b"}
	for _, n := range good {
		if err := ValidateBranchName(n); err != nil {
			t.Errorf("ValidateBranchName(%q) = %v", n, err)
		}
	}
	for _, n := range bad {
		if err := ValidateBranchName(n); !errors.Is(err, ErrInvalidRef) {
			t.Errorf("ValidateBranchName(%q) = %v, want ErrInvalidRef", n, err)
		}
	}
}

// §1 / §9 trap 9: ref files encode '/' as %2F, tree/ uses real directories.
func TestRefPaths(t *testing.T) {
	if got := TagPath("v1"); got != "_refs/tags/v1.json" {
		t.Errorf("TagPath = %s", got)
	}
	if got := BranchRefPath("feat/x"); got != "_refs/branches/feat%2Fx.json" {
		t.Errorf("BranchRefPath = %s", got)
	}
	if got := BranchRoot("feat/x"); got != "tree/feat/x" {
		t.Errorf("BranchRoot = %s", got)
	}
	if got := BranchRoot(""); got != "" {
		t.Errorf("BranchRoot(main) = %q", got)
	}
	if n, ok := branchNameFromRefFile("feat%2Fx.json"); !ok || n != "feat/x" {
		t.Errorf("branchNameFromRefFile = %q %v", n, ok)
	}
	if _, ok := branchNameFromRefFile(".json"); ok {
		t.Error("empty ref name accepted")
	}
	if _, ok := tagNameFromFile("x.txt"); ok {
		t.Error("non-json tag file accepted")
	}
}
