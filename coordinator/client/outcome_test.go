package client_test

import (
	"context"
	"errors"
	"io"
	"log/slog"
	"net"
	"net/http"
	"net/http/httptest"
	"testing"

	"github.com/lancekeeper/lancekeeper/commit"
	"github.com/lancekeeper/lancekeeper/coordinator"
	coordapi "github.com/lancekeeper/lancekeeper/coordinator/api"
	coordclient "github.com/lancekeeper/lancekeeper/coordinator/client"
	"github.com/lancekeeper/lancekeeper/manifest"
)

// lossyServer is a coordinator whose commit answers are replaced after
// the commit ran: mode "drop" closes the connection without an answer (the
// coordinator killed after publishing, a reset connection), "502" answers
// a proxy's bare 502, "refuse" answers nothing ran (a definite 409 without
// running the commit).
func lossyServer(t *testing.T, mode string) (*coordclient.Client, string) {
	t.Helper()
	dir := t.TempDir() + "/root"
	s, err := coordinator.New(context.Background(), coordinator.Config{Roots: []coordinator.Root{{URL: dir}},
		Logger: slog.New(slog.NewTextHandler(io.Discard, nil))})
	if err != nil {
		t.Fatal(err)
	}
	inner := s.Handler()
	lossy := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path != coordapi.PathCommit {
			inner.ServeHTTP(w, r)
			return
		}
		if mode == "refuse" {
			w.Header().Set("Content-Type", "application/json")
			w.WriteHeader(http.StatusConflict)
			_, _ = io.WriteString(w, `{"error":{"code":"conflict","message":"refused by the test"}}`)
			return
		}
		rec := httptest.NewRecorder()
		inner.ServeHTTP(rec, r) // the commit runs and lands
		if rec.Code != http.StatusOK {
			t.Errorf("the inner commit failed: %d %s", rec.Code, rec.Body)
		}
		switch mode {
		case "drop":
			conn, _, err := http.NewResponseController(w).Hijack()
			if err == nil {
				if tc, ok := conn.(*net.TCPConn); ok {
					_ = tc.SetLinger(0)
				}
				conn.Close()
			}
		case "502":
			w.WriteHeader(http.StatusBadGateway)
			_, _ = io.WriteString(w, "bad gateway")
		}
	})
	hs := httptest.NewServer(lossy)
	t.Cleanup(func() { hs.Close(); s.Close() })
	c, err := coordclient.New(hs.URL, coordclient.Options{})
	if err != nil {
		t.Fatal(err)
	}
	return c, dir
}

// TestWriteArrow_LostAnswerKeepsCommittedFiles is issue 15 item 1: the
// coordinator committed, the answer was lost (connection dropped, or a
// proxy's bare 502). Before the fix the client deleted its own committed
// data files and the version referenced missing files; now it finds its
// files in the versions after its read version and reports the commit.
func TestWriteArrow_LostAnswerKeepsCommittedFiles(t *testing.T) {
	for _, mode := range []string{"drop", "502"} {
		t.Run(mode, func(t *testing.T) {
			ctx := context.Background()
			c, dir := lossyServer(t, mode)
			st := openStore(t, dir+"/ds")
			// The create is an Overwrite (not batchable); the append is batchable.
			if _, err := c.WriteArrow(ctx, st, "ds", records(schemaXS, 4, 0), commit.WriteOptions{Mode: commit.ModeCreate}); err != nil {
				t.Fatalf("create with a lost answer: %v", err)
			}
			r, err := c.WriteArrow(ctx, st, "ds", records(schemaXS, 6, 4), commit.WriteOptions{Mode: commit.ModeAppend})
			if err != nil {
				t.Fatalf("append with a lost answer: %v", err)
			}
			if r.Version != 2 || len(r.FragmentIDs) != 1 || r.FragmentIDs[0] != 1 {
				t.Fatalf("resolved result: version %d ids %v", r.Version, r.FragmentIDs)
			}
			mf, _, err := manifest.LoadLatest(ctx, st.Bucket(), st.KeyPrefix())
			if err != nil {
				t.Fatal(err)
			}
			for _, f := range mf.Manifest.GetFragments() {
				for _, df := range f.GetFiles() {
					if ok, err := st.Exists(ctx, manifest.DataDir+"/"+df.GetPath()); err != nil || !ok {
						t.Fatalf("version %d references %s, which is gone (%v)", mf.Manifest.GetVersion(), df.GetPath(), err)
					}
				}
			}
		})
	}
}

// TestWriteArrow_DefiniteRefusalCleansUp: a definite refusal (a 409 with
// its code) still removes the files, which no version references.
func TestWriteArrow_DefiniteRefusalCleansUp(t *testing.T) {
	ctx := context.Background()
	c, dir := lossyServer(t, "refuse")
	st := openStore(t, dir+"/ds")
	_, err := c.WriteArrow(ctx, st, "ds", records(schemaXS, 4, 0), commit.WriteOptions{Mode: commit.ModeCreate})
	if !errors.Is(err, commit.ErrConflict) {
		t.Fatalf("got %v, want a conflict", err)
	}
	if n := dataFiles(t, st); n != 0 {
		t.Fatalf("%d data files left after a definite refusal", n)
	}
}

// TestWriteArrow_UnknownOutcomeNotLandedKeepsFiles: no answer and no
// version references the files (the request may still be queued): the
// files stay and the error is ErrCommitOutcomeUnknown.
func TestWriteArrow_UnknownOutcomeNotLandedKeepsFiles(t *testing.T) {
	ctx := context.Background()
	c, dir := serve(t)
	st := openStore(t, dir+"/ds")
	if _, err := c.WriteArrow(ctx, st, "ds", records(schemaXS, 4, 0), commit.WriteOptions{Mode: commit.ModeCreate}); err != nil {
		t.Fatal(err)
	}
	down := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		conn, _, err := http.NewResponseController(w).Hijack()
		if err == nil {
			conn.Close()
		}
	}))
	defer down.Close()
	dc, err := coordclient.New(down.URL, coordclient.Options{Token: token})
	if err != nil {
		t.Fatal(err)
	}
	_, err = dc.WriteArrow(ctx, st, "ds", records(schemaXS, 3, 0), commit.WriteOptions{Mode: commit.ModeAppend})
	if !errors.Is(err, commit.ErrCommitOutcomeUnknown) {
		t.Fatalf("got %v, want ErrCommitOutcomeUnknown", err)
	}
	if n := dataFiles(t, st); n != 2 {
		t.Fatalf("%d data files, want 2 (the unknown outcome's file kept)", n)
	}
}

// TestRefused classifies answers: only definite refusals allow deleting.
func TestRefused(t *testing.T) {
	for _, c := range []struct {
		err  error
		want bool
	}{
		{&coordclient.Error{Status: 409, Body: coordapi.ErrorBody{Code: coordapi.CodeConflict}}, true},
		{&coordclient.Error{Status: 400, Body: coordapi.ErrorBody{Code: coordapi.CodeInvalidTransaction}}, true},
		{&coordclient.Error{Status: 502, Body: coordapi.ErrorBody{Code: coordapi.CodeStorage}}, true},
		{&coordclient.Error{Status: 502, Body: coordapi.ErrorBody{Code: "http_502"}}, false},
		{&coordclient.Error{Status: 500, Body: coordapi.ErrorBody{Code: coordapi.CodeCommitOutcome}}, false},
		{&coordclient.Error{Status: 500, Body: coordapi.ErrorBody{Code: coordapi.CodeInternal}}, false},
		{&coordclient.Error{Status: 408, Body: coordapi.ErrorBody{Code: "http_408"}}, false},
		{context.Canceled, false},
		{context.DeadlineExceeded, false},
		{errors.New("connection reset by peer"), false},
	} {
		if got := coordclient.Refused(c.err); got != c.want {
			t.Errorf("Refused(%v) = %v, want %v", c.err, got, c.want)
		}
	}
}
