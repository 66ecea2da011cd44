package snapshot

import (
	"context"
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"google.golang.org/protobuf/proto"

	"github.com/lancekeeper/lancekeeper/flags"
	"github.com/lancekeeper/lancekeeper/manifest"
	"github.com/lancekeeper/lancekeeper/manifest/pb"
)

// expectFile is the part of a corpus .expect.json these tests use.
type expectFile struct {
	LatestVersion uint64 `json:"latest_version"`
	Versions      []struct {
		Version  uint64   `json:"version"`
		Tags     []string `json:"tags"`
		Manifest struct {
			Path   string `json:"path"`
			Reader uint64 `json:"reader_feature_flags"`
			Writer uint64 `json:"writer_feature_flags"`
			Branch string `json:"branch"`
		} `json:"manifest"`
	} `json:"versions"`
	Tags map[string]struct {
		Version      uint64 `json:"version"`
		ManifestSize uint64 `json:"manifest_size"`
	} `json:"tags"`
	Branches map[string]struct {
		ParentBranch  *string `json:"parent_branch"`
		ParentVersion uint64  `json:"parent_version"`
		ManifestSize  uint64  `json:"manifest_size"`
		LatestVersion uint64  `json:"latest_version"`
		Versions      []struct {
			Version  uint64 `json:"version"`
			Manifest struct {
				Path   string `json:"path"`
				Reader uint64 `json:"reader_feature_flags"`
				Writer uint64 `json:"writer_feature_flags"`
				Branch string `json:"branch"`
			} `json:"manifest"`
		} `json:"versions"`
	} `json:"branches"`
}

func readExpect(t testing.TB, rel string) expectFile {
	t.Helper()
	b, err := os.ReadFile(corpusPath(t, rel+".expect.json"))
	if err != nil {
		t.Fatal(err)
	}
	var e expectFile
	if err := json.Unmarshal(b, &e); err != nil {
		t.Fatal(err)
	}
	return e
}

// Open at latest, at a version and by tag over Lance 12's tags.lance, as
// its expect.json reports.
func TestOpenCorpusTagsVersionsAndTags(t *testing.T) {
	ctx := context.Background()
	dir := corpusPath(t, "lance12/tags.lance")
	exp := readExpect(t, "lance12/tags.lance")
	s, err := Open(ctx, dir, Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Dataset.Close()
	if s.Version != exp.LatestVersion || s.Branch != "" {
		t.Fatalf("latest = %d on %q, want %d", s.Version, s.Branch, exp.LatestVersion)
	}
	for _, v := range exp.Versions {
		got, err := s.Dataset.Checkout(ctx, Options{Ref: Ref{Version: v.Version}})
		if err != nil {
			t.Fatal(err)
		}
		if got.Path != v.Manifest.Path || got.Manifest().GetReaderFeatureFlags() != v.Manifest.Reader {
			t.Errorf("version %d: path %s flags %d, want %s %d", v.Version, got.Path, got.Manifest().GetReaderFeatureFlags(), v.Manifest.Path, v.Manifest.Reader)
		}
	}
	tags, err := s.Dataset.ListTags(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if len(tags) != len(exp.Tags) {
		t.Fatalf("tags = %+v, want %+v", tags, exp.Tags)
	}
	for _, tag := range tags {
		want := exp.Tags[tag.Name]
		if tag.Version != want.Version || tag.ManifestSize != want.ManifestSize {
			t.Errorf("tag %s = v%d size %d, want v%d size %d", tag.Name, tag.Version, tag.ManifestSize, want.Version, want.ManifestSize)
		}
		got, err := s.Dataset.Checkout(ctx, Options{Ref: Ref{Tag: tag.Name}})
		if err != nil {
			t.Fatal(err)
		}
		if got.Version != want.Version || uint64(got.Size()) != want.ManifestSize || got.Tag != tag.Name {
			t.Errorf("checkout tag %s: version %d size %d", tag.Name, got.Version, got.Size())
		}
	}
	if _, err := s.Dataset.Checkout(ctx, Options{Ref: Ref{Tag: "temp"}}); !errors.Is(err, manifest.ErrRefNotFound) {
		t.Errorf("deleted tag temp: err = %v, want manifest.ErrRefNotFound", err)
	}
	if _, err := s.Dataset.Checkout(ctx, Options{Ref: Ref{Tag: "first", Version: 1}}); !errors.Is(err, ErrBadOptions) {
		t.Errorf("tag+version: err = %v, want ErrBadOptions", err)
	}
	if _, err := s.Dataset.Checkout(ctx, Options{Ref: Ref{Version: 99}}); !errors.Is(err, manifest.ErrNotFound) {
		t.Errorf("missing version: err = %v, want manifest.ErrNotFound", err)
	}
}

// §7.2: reading Lance 12's branch "dev" of branches.lance: its ref file,
// versions, manifests (branch set, flags 16 then 17) as expect.json says.
func TestBranchReadCorpus(t *testing.T) {
	ctx := context.Background()
	dir := corpusPath(t, "lance12/branches.lance")
	exp := readExpect(t, "lance12/branches.lance")
	d := openDS(t, dir)
	brs, err := d.ListBranches(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if len(brs) != len(exp.Branches) {
		t.Fatalf("branches = %+v, want %d", brs, len(exp.Branches))
	}
	for _, br := range brs {
		want, ok := exp.Branches[br.Name]
		if !ok {
			t.Fatalf("unexpected branch %q", br.Name)
		}
		if (want.ParentBranch == nil) != (br.ParentBranch == "") || br.ParentVersion != want.ParentVersion || br.ManifestSize != want.ManifestSize {
			t.Errorf("branch %s = %+v, want %+v", br.Name, br, want)
		}
		vs, err := d.Versions(ctx, br.Name)
		if err != nil {
			t.Fatal(err)
		}
		if len(vs) != len(want.Versions) {
			t.Fatalf("branch %s: %d versions, want %d", br.Name, len(vs), len(want.Versions))
		}
		for i, v := range want.Versions {
			if vs[i].Version != v.Version {
				t.Errorf("branch %s version[%d] = %d, want %d", br.Name, i, vs[i].Version, v.Version)
			}
			s, err := d.Checkout(ctx, Options{Ref: Ref{Branch: br.Name, Version: v.Version}})
			if err != nil {
				t.Fatal(err)
			}
			m := s.Manifest()
			if "tree/"+br.Name+"/"+s.Path != v.Manifest.Path || m.GetReaderFeatureFlags() != v.Manifest.Reader ||
				m.GetWriterFeatureFlags() != v.Manifest.Writer || m.GetBranch() != v.Manifest.Branch || s.Branch != br.Name {
				t.Errorf("branch %s v%d: %s flags %d/%d branch %q", br.Name, v.Version, s.Path, m.GetReaderFeatureFlags(), m.GetWriterFeatureFlags(), m.GetBranch())
			}
		}
		latest, err := d.Checkout(ctx, Options{Ref: Ref{Branch: br.Name}})
		if err != nil {
			t.Fatal(err)
		}
		if latest.Version != want.LatestVersion {
			t.Errorf("branch %s latest = %d, want %d", br.Name, latest.Version, want.LatestVersion)
		}
		// The branch's first manifest keeps the parent's version number.
		if vs[0].Version != br.ParentVersion {
			t.Errorf("branch %s starts at %d, parent version %d", br.Name, vs[0].Version, br.ParentVersion)
		}
	}
	main, err := d.Versions(ctx, "main")
	if err != nil {
		t.Fatal(err)
	}
	if len(main) != len(exp.Versions) || main[len(main)-1].Version != exp.LatestVersion {
		t.Errorf("main versions = %+v", main)
	}
	if _, err := d.Checkout(ctx, Options{Ref: Ref{Branch: "nope"}}); !errors.Is(err, manifest.ErrRefNotFound) {
		t.Errorf("missing branch: err = %v", err)
	}
	if _, err := d.Checkout(ctx, Options{Ref: Ref{Branch: "a//b"}}); !errors.Is(err, ErrInvalidRef) {
		t.Errorf("bad branch name: err = %v", err)
	}
}

// withFlags writes, on a copy of Lance 12's tags.lance (latest version 4), a
// new latest version 5 whose flag words are r/w.
func withFlags(t *testing.T, r, w uint64) string {
	t.Helper()
	dir := copyCorpus(t, "lance12/tags.lance")
	f := readManifestFile(t, filepath.Join(dir, "_versions", manifest.ManifestName(manifest.V2, 4)))
	m := proto.Clone(f.Manifest).(*pb.Manifest)
	m.Version = 5
	m.ReaderFeatureFlags, m.WriterFeatureFlags = r, w
	writeVersion(t, dir, m, f.IndexSection, nil)
	return dir
}

// R55, §6.3: a reader refuses unknown reader bits and half-set pairs with
// an error naming the bits; a writer also refuses unknown writer bits; a
// read-only open ignores unsupported writer bits.
func TestR55_OpenRefusesUnknownBits(t *testing.T) {
	ctx := context.Background()
	tests := []struct {
		name           string
		r, w           uint64
		readErr        error
		writeErr       error
		mentionOnWrite string
	}{
		{"supported bits", 1 | flags.ZoneWriteSeeds, 1 | 8 | flags.ZoneWriteSeeds, nil, nil, ""},
		{"unknown reader bit 15", 1 << 15, 1 << 15, flags.ErrUnsupported, flags.ErrUnsupported, "bit 15"},
		{"Lance bit 9 in reader", 1 << 9, 0, flags.ErrUnsupported, flags.ErrUnsupported, "bit 9"},
		{"unknown writer bit only: readable", 0, 1 << 14, nil, flags.ErrUnsupported, "bit 14"},
		{"unknown writer bit 40 only", 1, 1 | 1<<40, nil, flags.ErrUnsupported, "bit 40"},
		{"R59 half-set 16 in reader", flags.ZoneWriteSeeds, 0, flags.ErrHalfSet, flags.ErrHalfSet, "FLAG_ZONE_WRITE_SEEDS"},
		{"R59 half-set 16 in writer", 0, flags.ZoneWriteSeeds, flags.ErrHalfSet, flags.ErrHalfSet, "FLAG_ZONE_WRITE_SEEDS"},
		{"half-set bit 8", 256, 0, flags.ErrHalfSet, flags.ErrHalfSet, "MIXED_DATA_FILE_VERSIONS"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			dir := withFlags(t, tt.r, tt.w)
			for _, forWrite := range []bool{false, true} {
				want := tt.readErr
				if forWrite {
					want = tt.writeErr
				}
				s, err := Open(ctx, dir, Options{ForWrite: forWrite})
				if want == nil {
					if err != nil {
						t.Fatalf("forWrite=%v: %v", forWrite, err)
					}
					if s.Version != 5 {
						t.Fatalf("opened version %d", s.Version)
					}
					s.Dataset.Close()
					continue
				}
				if !errors.Is(err, want) {
					t.Fatalf("forWrite=%v: err = %v, want %v", forWrite, err, want)
				}
				if tt.mentionOnWrite != "" && !strings.Contains(err.Error(), tt.mentionOnWrite) {
					t.Errorf("error does not name the bit %q: %v", tt.mentionOnWrite, err)
				}
			}
			// An older, clean version stays readable and writable.
			s, err := Open(ctx, dir, Options{Ref: Ref{Version: 4}, ForWrite: true})
			if err != nil {
				t.Fatalf("version 4: %v", err)
			}
			s.Dataset.Close()
		})
	}
}

// R56: opening (for read or write, at any ref, refused or not) never
// writes: the dataset directory is byte-identical afterwards.
func TestR56_OpenNeverWrites(t *testing.T) {
	ctx := context.Background()
	dir := copyCorpus(t, "lance12/branches.lance")
	// Add a refused version and a tag so refusals are exercised too.
	tagsDir := filepath.Join(dir, "_refs", "tags")
	if err := os.MkdirAll(tagsDir, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(tagsDir, "t.json"), EncodeTag(Tag{Branch: "dev", Version: 3, ManifestSize: 752}), 0o644); err != nil {
		t.Fatal(err)
	}
	f := readManifestFile(t, filepath.Join(dir, "_versions", manifest.ManifestName(manifest.V2, 3)))
	m := proto.Clone(f.Manifest).(*pb.Manifest)
	m.Version = 4
	m.ReaderFeatureFlags = 1 << 20
	writeVersion(t, dir, m, nil, nil)
	before := treeState(t, dir)
	refs := []Options{
		{}, {ForWrite: true}, {Ref: Ref{Version: 1}}, {Ref: Ref{Version: 2}, ForWrite: true},
		{Ref: Ref{Branch: "dev"}}, {Ref: Ref{Branch: "dev", Version: 2}, ForWrite: true},
		{Ref: Ref{Tag: "t"}}, {Ref: Ref{Tag: "missing"}}, {Ref: Ref{Branch: "missing"}},
	}
	refused := 0
	for _, o := range refs {
		s, err := Open(ctx, dir, o)
		if err != nil {
			refused++
			continue
		}
		if _, err := s.Dataset.Versions(ctx, s.Branch); err != nil {
			t.Fatal(err)
		}
		if _, err := s.Dataset.ListTags(ctx); err != nil {
			t.Fatal(err)
		}
		if _, err := s.Dataset.ListBranches(ctx); err != nil {
			t.Fatal(err)
		}
		s.Dataset.Close()
	}
	if refused != 4 {
		t.Errorf("%d opens refused, want 4 (latest twice, missing tag, missing branch)", refused)
	}
	if diffs := diffStates(before, treeState(t, dir)); len(diffs) > 0 {
		t.Fatalf("opening wrote to the dataset: %v", diffs)
	}
}

// A manifest whose version field disagrees with its file name is corrupt.
func TestOpenRejectsMisnamedManifest(t *testing.T) {
	dir := copyCorpus(t, "lance12/tags.lance")
	f := readManifestFile(t, filepath.Join(dir, "_versions", manifest.ManifestName(manifest.V2, 4)))
	m := proto.Clone(f.Manifest).(*pb.Manifest)
	m.Version = 3
	b, err := manifest.Encode(m, nil, nil)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "_versions", manifest.ManifestName(manifest.V2, 5)), b, 0o644); err != nil {
		t.Fatal(err)
	}
	if _, err := Open(context.Background(), dir, Options{}); !errors.Is(err, manifest.ErrCorrupt) {
		t.Fatalf("err = %v, want ErrCorrupt", err)
	}
}

func TestRefString(t *testing.T) {
	for ref, want := range map[Ref]string{{}: "main@latest", {Branch: "main", Version: 3}: "main@3", {Branch: "dev"}: "dev@latest", {Tag: "v1"}: "tag v1"} {
		if got := ref.String(); got != want {
			t.Errorf("%+v.String() = %q, want %q", ref, got, want)
		}
	}
}
