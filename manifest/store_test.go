package manifest

import (
	"context"
	"errors"
	"path/filepath"
	"testing"

	"gocloud.dev/blob"
	"gocloud.dev/blob/fileblob"
	"gocloud.dev/blob/memblob"

	"github.com/lancekeeper/lancekeeper/manifest/pb"
)

// putVersion writes a minimal manifest for version under scheme.
func putVersion(t *testing.T, b *blob.Bucket, root string, scheme NamingScheme, v uint64) {
	t.Helper()
	data, err := Encode(&pb.Manifest{Version: v}, nil, nil)
	if err != nil {
		t.Fatal(err)
	}
	if err := b.WriteAll(context.Background(), Join(root, ManifestPath(scheme, v)), data, nil); err != nil {
		t.Fatal(err)
	}
}

func seq(from, to uint64) []uint64 {
	var out []uint64
	for v := from; v <= to; v++ {
		out = append(out, v)
	}
	return out
}

func TestSpec4_3_LatestVersion(t *testing.T) {
	ctx := context.Background()
	for _, tc := range []struct {
		name     string
		scheme   NamingScheme
		versions []uint64
		hint     string // "" = no hint file
		want     uint64
	}{
		{"V2 no hint", V2, []uint64{1, 2, 3}, "", 3},
		{"V1 no hint, 10 sorts before 9", V1, []uint64{8, 9, 10}, "", 10},
		{"V2 exact hint", V2, []uint64{1, 2, 3}, `{"version":3}`, 3},
		{"stale hint loses to probing", V2, []uint64{1, 2, 3, 4}, `{"version":2}`, 4},
		{"hint past the end loses to the listing", V2, []uint64{1, 2}, `{"version":9}`, 2},
		{"garbage hint", V1, []uint64{1, 2}, `xx`, 2},
		{"V1 stale hint", V1, []uint64{1, 2, 3}, `{"version":1}`, 3},
		{"hint 0", V2, []uint64{5}, `{"version":0}`, 5},
		{"V2 no hint, versions past one list page", V2, seq(1, 2100), "", 2100},
		{"V1 no hint, versions past one list page", V1, seq(1, 2100), "", 2100},
		{"V2 hint two behind", V2, []uint64{1, 2, 3, 4, 5}, `{"version":3}`, 5},
	} {
		t.Run(tc.name, func(t *testing.T) {
			b := memblob.OpenBucket(nil)
			defer b.Close()
			for _, v := range tc.versions {
				putVersion(t, b, "ds", tc.scheme, v)
			}
			// A detached version is never latest.
			putVersion(t, b, "ds", V2, 1<<63|77)
			if tc.hint != "" {
				if err := b.WriteAll(ctx, "ds/_versions/"+HintName, []byte(tc.hint), nil); err != nil {
					t.Fatal(err)
				}
			}
			info, err := LatestVersion(ctx, b, "ds")
			if err != nil {
				t.Fatal(err)
			}
			if info.Version != tc.want || info.Scheme != tc.scheme || info.Path != ManifestPath(tc.scheme, tc.want) {
				t.Fatalf("latest = %+v, want %d %v", info, tc.want, tc.scheme)
			}
			f, err := ReadInfo(ctx, b, "ds", info)
			if err != nil || f.Manifest.GetVersion() != tc.want {
				t.Fatalf("ReadInfo: %v", err)
			}
			// LoadLatest (the hinted manifest read instead of stated)
			// finds the same version.
			lf, linfo, err := LoadLatest(ctx, b, "ds")
			if err != nil || linfo.Version != tc.want || linfo.Scheme != tc.scheme || linfo.Path != info.Path || lf.Manifest.GetVersion() != tc.want || linfo.Size != f.Size {
				t.Fatalf("LoadLatest = %+v, %v; want %+v", linfo, err, info)
			}
			all, err := ListVersions(ctx, b, "ds")
			if err != nil || len(all) != len(tc.versions) {
				t.Fatalf("ListVersions = %v, %v", all, err)
			}
			for i, vi := range all {
				if vi.Version != tc.versions[i] {
					t.Fatalf("ListVersions order: %v", all)
				}
			}
		})
	}
}

// TestSpec4_5_FarStaleHintFallsBackToListing: a hint MaxHintProbes or more
// versions behind (e.g. left on an object store, where commits no longer
// write one) is abandoned after MaxHintProbes probes for the listing; a
// hint fewer versions behind is followed by probing.
func TestSpec4_5_FarStaleHintFallsBackToListing(t *testing.T) {
	ctx := context.Background()
	for _, tc := range []struct {
		name      string
		latest    uint64
		hint      uint64
		wantStale bool
	}{
		{"lag one less than the bound", MaxHintProbes, 1, false},
		{"lag equal to the bound", MaxHintProbes + 1, 1, true},
		{"lag far past the bound", 3 * MaxHintProbes, 2, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			b := memblob.OpenBucket(nil)
			defer b.Close()
			for v := uint64(1); v <= tc.latest; v++ {
				putVersion(t, b, "ds", V2, v)
			}
			if err := WriteHint(ctx, b, "ds", tc.hint); err != nil {
				t.Fatal(err)
			}
			_, err := latestFromHint(ctx, b, "ds")
			if got := errors.Is(err, errHintTooStale); got != tc.wantStale {
				t.Fatalf("latestFromHint: %v, want too stale = %v", err, tc.wantStale)
			}
			info, err := LatestVersion(ctx, b, "ds")
			if err != nil || info.Version != tc.latest {
				t.Fatalf("LatestVersion = %+v, %v; want %d", info, err, tc.latest)
			}
			_, _, err = loadFromHint(ctx, b, "ds")
			if got := errors.Is(err, errHintTooStale); got != tc.wantStale {
				t.Fatalf("loadFromHint: %v, want too stale = %v", err, tc.wantStale)
			}
			f, linfo, err := LoadLatest(ctx, b, "ds")
			if err != nil || linfo.Version != tc.latest || f.Manifest.GetVersion() != tc.latest {
				t.Fatalf("LoadLatest = %+v, %v; want %d", linfo, err, tc.latest)
			}
		})
	}
}

func TestSpec4_2_MixedNamingIsAnError(t *testing.T) {
	b := memblob.OpenBucket(nil)
	defer b.Close()
	putVersion(t, b, "", V1, 1)
	putVersion(t, b, "", V2, 2)
	if _, err := ListVersions(context.Background(), b, ""); !errors.Is(err, ErrMixedNaming) {
		t.Fatalf("err = %v", err)
	}
	if _, err := LatestVersion(context.Background(), b, ""); !errors.Is(err, ErrMixedNaming) {
		t.Fatalf("err = %v", err)
	}
}

func TestSpec4_3_ReadVersionFallsBackToV1(t *testing.T) {
	ctx := context.Background()
	b := memblob.OpenBucket(nil)
	defer b.Close()
	putVersion(t, b, "", V1, 4)
	putVersion(t, b, "", V2, 1<<63|9)
	f, err := ReadVersion(ctx, b, "", 4)
	if err != nil || f.Manifest.GetVersion() != 4 || f.Name != "_versions/4.manifest" {
		t.Fatalf("ReadVersion = %v, %v", f, err)
	}
	if f, err := ReadVersion(ctx, b, "", 1<<63|9); err != nil || f.Name != "_versions/d9223372036854775817.manifest" {
		t.Fatalf("detached: %v", err)
	}
	if _, err := ReadVersion(ctx, b, "", 5); !errors.Is(err, ErrNotFound) {
		t.Fatalf("missing version: %v", err)
	}
	if _, err := LatestVersion(ctx, memblob.OpenBucket(nil), ""); !errors.Is(err, ErrNotFound) {
		t.Fatalf("empty dataset: %v", err)
	}
}

func TestSpec4_5_WriteHintExactBytes(t *testing.T) {
	ctx := context.Background()
	b := memblob.OpenBucket(nil)
	defer b.Close()
	if err := WriteHint(ctx, b, "x/", 12); err != nil {
		t.Fatal(err)
	}
	data, err := b.ReadAll(ctx, "x/_versions/latest_version_hint.json")
	if err != nil || string(data) != `{"version":12}` {
		t.Fatalf("%q %v", data, err)
	}
	if v, err := ReadHint(ctx, b, "x"); err != nil || v != 12 {
		t.Fatalf("ReadHint = %d, %v", v, err)
	}
}

// TestCorpus_LatestAndList opens real datasets of both schemes through
// fileblob: the lance12 datasets carry a hint, historical ones do not.
func TestCorpus_LatestAndList(t *testing.T) {
	root := corpusDir(t)
	ctx := context.Background()
	for _, tc := range []struct {
		dir    string
		scheme NamingScheme
		latest uint64
		n      int
	}{
		{"historical/0.7.5/with_deletions", V1, 2, 2},
		{"lance12/manifest_v1_paths.lance", V1, 3, 3},
		{"lance12/tags.lance", V2, 0, 0},
		{"lance12/cleanup.lance", V2, 9, 2},
	} {
		t.Run(tc.dir, func(t *testing.T) {
			b, err := fileblob.OpenBucket(filepath.Join(root, tc.dir), &fileblob.Options{Metadata: fileblob.MetadataDontWrite})
			if err != nil {
				t.Fatal(err)
			}
			defer b.Close()
			all, err := ListVersions(ctx, b, "")
			if err != nil {
				t.Fatal(err)
			}
			info, err := LatestVersion(ctx, b, "")
			if err != nil {
				t.Fatal(err)
			}
			if info != all[len(all)-1] && (info.Version != all[len(all)-1].Version || info.Path != all[len(all)-1].Path) {
				t.Fatalf("latest %+v != last listed %+v", info, all[len(all)-1])
			}
			if info.Scheme != tc.scheme || (tc.latest != 0 && (info.Version != tc.latest || len(all) != tc.n)) {
				t.Fatalf("latest = %+v, %d listed", info, len(all))
			}
			for _, vi := range all {
				f, err := ReadVersion(ctx, b, "", vi.Version)
				if err != nil || f.Manifest.GetVersion() != vi.Version || f.Size != vi.Size {
					t.Fatalf("version %d: %v", vi.Version, err)
				}
			}
		})
	}
}
