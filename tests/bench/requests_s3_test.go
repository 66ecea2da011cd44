package main

import (
	"context"
	"fmt"
	"math/bits"
	"strings"
	"testing"

	"github.com/lancekeeper/lancekeeper/commit"
	"github.com/lancekeeper/lancekeeper/manifest"
	"github.com/lancekeeper/lancekeeper/snapshot"
	"github.com/lancekeeper/lancekeeper/store"
	"github.com/lancekeeper/lancekeeper/tests/s3util"
)

// TestOpenRequests_S3_HintO1_NoHintLogN counts, through s3util's counting
// proxy in front of SeaweedFS, the S3 requests of one open of the latest
// version (V2 naming, lance-table-format.md §4.3/§4.5) and of the discovery
// an append makes. Without a hint (lancekeeper writes none on object
// stores) an open is the hint's 404, one list page (the first V2 name
// listed is the newest, §4.3) and the manifest read: constant, and at most
// logarithmic, even past one list page of versions (2,100). With a hint
// left by another writer (Lance on S3 Express, a copied local table) an
// open is the hint, the hinted manifest (its read proves it exists) and a
// HEAD of the next version (which must be missing, §4.5: the hint is never
// trusted alone): exactly 3, at every size.
func TestOpenRequests_S3_HintO1_NoHintLogN(t *testing.T) {
	s3util.Require(t)
	srv := s3util.Start(t, "lkrequests")
	for _, kv := range srv.Env() {
		k, v, _ := strings.Cut(kv, "=")
		t.Setenv(k, v)
	}
	proxy, err := s3util.StartCountingProxy(srv.Endpoint)
	if err != nil {
		t.Fatal(err)
	}
	defer proxy.Close()
	b := &s3Bench{srv: srv, proxy: proxy}
	ctx := context.Background()
	recs := tripleBatches(0, 10, 10)
	defer releaseAll(recs)
	if err := createOurs(ctx, b.url("t", false), recs); err != nil {
		t.Fatal(err)
	}
	st, err := store.Open(ctx, b.url("t", false))
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	versions := 1
	open := func() (int, map[string]int) {
		proxy.Reset()
		s, err := snapshot.Open(ctx, b.url("t", true), snapshot.Options{})
		if err != nil {
			t.Fatal(err)
		}
		_ = s.Dataset.Close()
		c := proxy.Reset()
		n := 0
		for _, v := range c {
			n += v
		}
		t.Logf("open at version %d: %s", s.Manifest().GetVersion(), s3util.Format(c))
		if got := s.Manifest().GetVersion(); got != uint64(versions) {
			t.Errorf("opened version %d, want %d", got, versions)
		}
		return n, c
	}
	openHinted := func(target int) int {
		if err := st.Put(ctx, manifest.VersionsDir+"/"+manifest.HintName, manifest.EncodeHint(uint64(target))); err != nil {
			t.Fatal(err)
		}
		n, c := open()
		if c[s3util.KindHead] != 1 || c[s3util.KindGet] != 2 {
			t.Errorf("%d versions with a hint: %s, want GET 2 (hint, manifest) and HEAD 1 (next version)", target, s3util.Format(c))
		}
		return n
	}
	var hinted, bares []int
	for _, target := range []int{2, 8, 24, 2100} {
		if target > 1000 {
			// Past one list page: copies of the latest manifest under
			// the names of the versions in between (an open reads only
			// the latest), the newest one saying its own version.
			fillVersions(t, ctx, st, uint64(versions), uint64(target))
		} else if _, err := appendOurs(ctx, b.url("t", false), recs, target-versions); err != nil {
			t.Fatal(err)
		}
		versions = target
		_ = st.Delete(ctx, manifest.VersionsDir+"/"+manifest.HintName)
		bare, bc := open()
		bares = append(bares, bare)
		if limit := 4 + 2*bits.Len(uint(target)); bare > limit {
			t.Errorf("%d versions: %d requests without a hint, more than %d (O(log n))", target, bare, limit)
		}
		if bc[s3util.KindList] != 1 {
			t.Errorf("%d versions: %s without a hint, want one list page (§4.3: the first V2 name is the newest)", target, s3util.Format(bc))
		}
		if target > 1000 {
			hinted = append(hinted, openHinted(target))
			continue
		}
		// The discovery of an append (one list page, one manifest read).
		cst, err := store.Open(ctx, b.url("t", true))
		if err != nil {
			t.Fatal(err)
		}
		rdr, err := reader(recs)
		if err != nil {
			t.Fatal(err)
		}
		proxy.Reset()
		w, err := commit.WriteFragments(ctx, cst, rdr, commit.WriteOptions{Mode: commit.ModeAppend})
		rdr.Release()
		if err != nil {
			t.Fatal(err)
		}
		c := proxy.Reset()
		if c[s3util.KindList] != 1 || c[s3util.KindGet] != 1 || c[s3util.KindHead] != 0 {
			t.Errorf("%d versions: append discovery made %s, want one LIST and one GET", target, s3util.Format(c))
		}
		w.Cleanup(ctx)
		_ = cst.Close()
		hinted = append(hinted, openHinted(target))
	}
	for _, n := range hinted {
		if n != 3 {
			t.Errorf("with a hint: %v requests at the sizes tried, want 3 each (O(1))", hinted)
			break
		}
	}
	t.Logf("requests per open at 2, 8, 24, 2100 versions: with a hint %v, without %v", fmt.Sprint(hinted), fmt.Sprint(bares))
}

// fillVersions adds versions from+1 … to to the table: copies of the
// manifest of from, the last one re-encoded with its own version number.
func fillVersions(t *testing.T, ctx context.Context, st *store.Store, from, to uint64) {
	t.Helper()
	rel := manifest.ManifestPath(manifest.V2, from)
	data, err := st.Get(ctx, rel)
	if err != nil {
		t.Fatal(err)
	}
	f, err := manifest.Decode(rel, data)
	if err != nil {
		t.Fatal(err)
	}
	f.Manifest.Version = to
	last, err := manifest.Encode(f.Manifest, f.IndexSection, f.Transaction)
	if err != nil {
		t.Fatal(err)
	}
	sem := make(chan struct{}, 16)
	errs := make(chan error, to-from)
	for v := from + 1; v <= to; v++ {
		body := data
		if v == to {
			body = last
		}
		sem <- struct{}{}
		go func() {
			defer func() { <-sem }()
			errs <- st.Put(ctx, manifest.ManifestPath(manifest.V2, v), body)
		}()
	}
	for v := from + 1; v <= to; v++ {
		if err := <-errs; err != nil {
			t.Fatal(err)
		}
	}
}
