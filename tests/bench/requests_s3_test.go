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
// version (V2 naming, lance-table-format.md §4.5) and of the discovery an
// append makes: without a hint (lancekeeper writes none on object stores)
// they grow at most logarithmically with the versions; with a hint left by
// another writer (Lance on S3 Express, a copied local table) they stay
// constant.
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
	open := func() int {
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
		return n
	}
	versions := 1
	var hinted []int
	for _, target := range []int{2, 8, 24} {
		if _, err := appendOurs(ctx, b.url("t", false), recs, target-versions); err != nil {
			t.Fatal(err)
		}
		versions = target
		_ = st.Delete(ctx, manifest.VersionsDir+"/"+manifest.HintName)
		bare := open()
		if limit := 4 + 2*bits.Len(uint(target)); bare > limit {
			t.Errorf("%d versions: %d requests without a hint, more than %d (O(log n))", target, bare, limit)
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
		if err := st.Put(ctx, manifest.VersionsDir+"/"+manifest.HintName, manifest.EncodeHint(uint64(target))); err != nil {
			t.Fatal(err)
		}
		hinted = append(hinted, open())
	}
	for i, n := range hinted {
		if n != hinted[0] {
			t.Errorf("with a hint: %v requests at the sizes tried, not O(1)", hinted)
			break
		}
		_ = i
	}
	t.Logf("with a hint: %v requests per open (2, 8, 24 versions)", fmt.Sprint(hinted))
}
