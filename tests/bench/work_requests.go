package main

import (
	"context"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"github.com/lancekeeper/lancekeeper/commit"
	"github.com/lancekeeper/lancekeeper/maint"
	"github.com/lancekeeper/lancekeeper/manifest"
	"github.com/lancekeeper/lancekeeper/snapshot"
	"github.com/lancekeeper/lancekeeper/store"
	"github.com/lancekeeper/lancekeeper/tests/s3util"
	"google.golang.org/protobuf/types/known/timestamppb"
)

// Object-store requests per operation on S3 (SeaweedFS), lancekeeper and
// Lance 12 alike: both talk to the server through s3util.CountingProxy,
// which counts every request by kind; a sample's metrics are the requests
// of its one operation (GET range, GET, HEAD, LIST, PUT, …). The time
// column is the operation's wall time through the proxy on loopback.
func init() {
	for _, n := range []int{1_000, 10_000, 100_000} {
		Register(Workload{
			Name:  fmt.Sprintf("requests/s3-count-%dk-fragments", n/1000),
			About: fmt.Sprintf("S3 (SeaweedFS): requests of one fresh open of the latest version + count rows, %d fragments, %d versions", n, openCommits+1),
			Base:  BaseLance,
			Setup: func(ctx context.Context, env *Env) (*Pair, error) { return setupS3Count(ctx, env, n) },
		})
	}
	Register(Workload{
		Name:  fmt.Sprintf("requests/s3-cleanup-%dk-versions", s3CleanupVersions/1000),
		About: fmt.Sprintf("S3 (SeaweedFS): requests and wall time of cleaning up all but the latest of %d versions (each an overwrite; 30 with -short), Lance 12's optimize({cleanupOlderThan}) on an identical copy", s3CleanupVersions),
		Base:  BaseLance,
		Setup: setupS3Cleanup,
	})
	Register(Workload{
		Name:  "requests/s3-append",
		About: "S3 (SeaweedFS): requests of one 10-row append (data file + commit) on a table with one version",
		Base:  BaseLance,
		Setup: setupS3Append,
	})
}

// s3Bench is a SeaweedFS server with a counting proxy in front of it.
type s3Bench struct {
	srv   *s3util.Server
	proxy *s3util.CountingProxy
}

func startS3Bench(env *Env) (*s3Bench, error) {
	bin, err := s3util.Binary()
	if err != nil {
		return nil, fmt.Errorf("requests workloads need the weed binary (bash tests/s3/seaweed.sh): %w", err)
	}
	dir, err := env.TempDir("s3-")
	if err != nil {
		return nil, err
	}
	srv, err := s3util.StartBinary(bin, dir, "lkbench")
	if err != nil {
		return nil, err
	}
	for _, kv := range srv.Env() {
		k, v, _ := strings.Cut(kv, "=")
		if err := os.Setenv(k, v); err != nil {
			return nil, err
		}
	}
	proxy, err := s3util.StartCountingProxy(srv.Endpoint)
	if err != nil {
		_ = srv.Stop()
		return nil, err
	}
	return &s3Bench{srv: srv, proxy: proxy}, nil
}

func (b *s3Bench) close() error {
	_ = b.proxy.Close()
	return b.srv.Stop()
}

// url is the store URL of prefix, through the proxy (counted) or not.
func (b *s3Bench) url(prefix string, counted bool) string {
	u := b.srv.URL(prefix)
	if counted {
		u = strings.Replace(u, "endpoint="+urlQueryEscape(b.srv.Endpoint), "endpoint="+urlQueryEscape(b.proxy.Endpoint), 1)
	}
	return u
}

func urlQueryEscape(s string) string {
	return strings.NewReplacer(":", "%3A", "/", "%2F").Replace(s)
}

// lanceArgs are the peer's arguments for the table NAME under prefix,
// through the proxy.
func (b *s3Bench) lanceArgs(prefix, name string) []string {
	return []string{
		"s3://" + b.srv.Bucket + "/" + prefix, name,
		"--storage-option", "aws_endpoint=" + b.proxy.Endpoint,
		"--storage-option", "allow_http=true",
		"--storage-option", "aws_access_key_id=" + s3util.AccessKey,
		"--storage-option", "aws_secret_access_key=" + s3util.SecretKey,
		"--storage-option", "aws_region=" + s3util.Region,
		"--storage-option", "aws_virtual_hosted_style_request=false",
	}
}

// metrics turns the proxy's counts into sample metrics.
func requestMetrics(counts map[string]int) map[string]float64 {
	m := map[string]float64{}
	total := 0
	for k, v := range counts {
		m["req_"+strings.ReplaceAll(strings.ToLower(k), " ", "_")] = float64(v)
		total += v
	}
	m["requests"] = float64(total)
	return m
}

// upload copies the files under dir's subdirectories subs to the store at
// u, 32 at a time.
func upload(ctx context.Context, u, dir string, subs ...string) error {
	st, err := store.Open(ctx, u)
	if err != nil {
		return err
	}
	defer st.Close()
	var rels []string
	for _, sub := range subs {
		err := filepath.WalkDir(filepath.Join(dir, sub), func(p string, d fs.DirEntry, err error) error {
			if err != nil || d.IsDir() {
				return err
			}
			rel, err := filepath.Rel(dir, p)
			if err != nil {
				return err
			}
			rels = append(rels, rel)
			return nil
		})
		if err != nil {
			return err
		}
	}
	errs := make(chan error, len(rels))
	sem := make(chan struct{}, 32)
	for _, rel := range rels {
		sem <- struct{}{}
		go func() {
			defer func() { <-sem }()
			data, err := os.ReadFile(filepath.Join(dir, rel))
			if err == nil {
				err = st.Put(ctx, filepath.ToSlash(rel), data)
			}
			errs <- err
		}()
	}
	var first error
	for range rels {
		if err := <-errs; err != nil && first == nil {
			first = err
		}
	}
	return first
}

func setupS3Count(ctx context.Context, env *Env, frags int) (*Pair, error) {
	p, err := env.Peer()
	if err != nil {
		return nil, err
	}
	if env.Short {
		frags = min(frags, 100)
	}
	dir, err := openTable(ctx, env, frags)
	if err != nil {
		return nil, err
	}
	b, err := startS3Bench(env)
	if err != nil {
		return nil, err
	}
	// Counting rows needs the manifests only (physical_rows), on both sides.
	if err := upload(ctx, b.url("count/t.lance", false), dir, "_versions", "_transactions"); err != nil {
		_ = b.close()
		return nil, err
	}
	want := uint64(frags * 10)
	return &Pair{
		Ours: func(ctx context.Context) (Sample, error) {
			b.proxy.Reset()
			start := now()
			s, err := snapshot.Open(ctx, b.url("count/t.lance", true), snapshot.Options{})
			if err != nil {
				return Sample{}, err
			}
			var n uint64
			for _, f := range s.Manifest().GetFragments() {
				n += f.GetPhysicalRows() - f.GetDeletionFile().GetNumDeletedRows()
			}
			el := since(start)
			_ = s.Dataset.Close()
			if n != want {
				return Sample{}, fmt.Errorf("counted %d rows, want %d", n, want)
			}
			return Sample{Time: el, Ops: 1, Metrics: requestMetrics(b.proxy.Reset())}, nil
		},
		Base: func(ctx context.Context) (Sample, error) {
			b.proxy.Reset()
			s, err := LanceTimed(ctx, p, append([]string{"bench-count-uri"}, append(b.lanceArgs("count", "t"), "--n", "1")...)...)
			if err != nil {
				return Sample{}, err
			}
			if uint64(s.Metrics["rows"]) != want {
				return Sample{}, fmt.Errorf("Lance counted %v rows, want %d", s.Metrics["rows"], want)
			}
			s.Metrics = requestMetrics(b.proxy.Reset())
			return s, nil
		},
		Close: b.close,
	}, nil
}

func setupS3Append(ctx context.Context, env *Env) (*Pair, error) {
	p, err := env.Peer()
	if err != nil {
		return nil, err
	}
	b, err := startS3Bench(env)
	if err != nil {
		return nil, err
	}
	dir, err := env.TempDir("s3append-")
	if err != nil {
		return nil, err
	}
	recs := tripleBatches(0, 10, 10)
	ipc, err := writeIPC(dir, "rows10.arrow", recs)
	if err != nil {
		return nil, err
	}
	round := 0
	return &Pair{
		Ours: func(ctx context.Context) (Sample, error) {
			round++
			prefix := fmt.Sprintf("append/ours-%d.lance", round)
			if err := createOurs(ctx, b.url(prefix, false), recs); err != nil {
				return Sample{}, err
			}
			st, err := store.Open(ctx, b.url(prefix, true))
			if err != nil {
				return Sample{}, err
			}
			defer st.Close()
			rdr, err := reader(recs)
			if err != nil {
				return Sample{}, err
			}
			defer rdr.Release()
			b.proxy.Reset()
			start := now()
			if _, err := commit.WriteArrow(ctx, st, rdr, commit.WriteOptions{Mode: commit.ModeAppend}); err != nil {
				return Sample{}, err
			}
			el := since(start)
			return Sample{Time: el, Ops: 1, Metrics: requestMetrics(b.proxy.Reset())}, nil
		},
		Base: func(ctx context.Context) (Sample, error) {
			round++
			name := fmt.Sprintf("lance-%d", round)
			if err := createOurs(ctx, b.url("append/"+name+".lance", false), recs); err != nil {
				return Sample{}, err
			}
			// bench-append-uri opens the table before its clock starts;
			// the count covers the open too, so subtract a bare open.
			b.proxy.Reset()
			if _, err := LanceTimed(ctx, p, append([]string{"bench-append-uri"}, append(b.lanceArgs("append", name), "--ipc", ipc, "--n", "0")...)...); err != nil {
				return Sample{}, err
			}
			open := b.proxy.Reset()
			s, err := LanceTimed(ctx, p, append([]string{"bench-append-uri"}, append(b.lanceArgs("append", name), "--ipc", ipc, "--n", "1")...)...)
			if err != nil {
				return Sample{}, err
			}
			counts := b.proxy.Reset()
			for k, v := range open {
				counts[k] -= v
			}
			s.Metrics = requestMetrics(counts)
			return s, nil
		},
		Close: func() error { releaseAll(recs); return b.close() },
	}, nil
}

// s3CleanupVersions is the size of the S3 cleanup table: every round
// uploads two copies of it (3 objects per version), which SeaweedFS on
// this machine takes in at a few hundred objects a second, so it is
// smaller than maint/cleanup-10k-versions' local table.
const s3CleanupVersions = 1000

// setupS3Cleanup: each round uploads the cached table of
// s3CleanupVersions versions (maint/cleanup-10k-versions' kind) to a fresh
// prefix for each side (not timed, not counted), then counts one cleanup
// of every version but the latest, with the cutoff one second in the
// future. Lance's count has the requests of opening the table subtracted
// (bench-optimize-uri --n 0 on the same copy first).
func setupS3Cleanup(ctx context.Context, env *Env) (*Pair, error) {
	p, err := env.Peer()
	if err != nil {
		return nil, err
	}
	versions := s3CleanupVersions
	if env.Short {
		versions = 30
	}
	src, err := cleanupTable(ctx, env, versions)
	if err != nil {
		return nil, err
	}
	b, err := startS3Bench(env)
	if err != nil {
		return nil, err
	}
	round := 0
	cp := func(side string) (string, error) {
		round++
		name := fmt.Sprintf("%s-%d", side, round)
		u := b.url("cleanup/"+name+".lance", false)
		if err := upload(ctx, u, src, "_transactions", "data"); err != nil {
			return "", err
		}
		// Both cleanups keep files modified after the oldest kept
		// manifest's timestamp (a write may be in flight), and an upload
		// makes every file recent: the manifests go last, stamped after
		// the files, as if the versions had been committed just now.
		time.Sleep(1100 * time.Millisecond)
		return name, uploadManifests(ctx, u, src, time.Now())
	}
	left := func(name string) (int, error) {
		st, err := store.Open(ctx, b.url("cleanup/"+name+".lance", false))
		if err != nil {
			return 0, err
		}
		defer st.Close()
		objs, err := st.List(ctx, "", store.ListOptions{})
		return len(objs), err
	}
	return &Pair{
		Ours: func(ctx context.Context) (Sample, error) {
			name, err := cp("ours")
			if err != nil {
				return Sample{}, err
			}
			st, err := store.Open(ctx, b.url("cleanup/"+name+".lance", true))
			if err != nil {
				return Sample{}, err
			}
			defer st.Close()
			b.proxy.Reset()
			start := now()
			res, err := maint.Cleanup(ctx, st, maint.CleanupOptions{Before: time.Now().Add(time.Second)})
			el := since(start)
			counts := b.proxy.Reset()
			if err != nil {
				return Sample{}, err
			}
			if len(res.RemovedVersions) != versions-1 {
				return Sample{}, fmt.Errorf("removed %d versions, want %d", len(res.RemovedVersions), versions-1)
			}
			m := requestMetrics(counts)
			m["versions_removed"] = float64(len(res.RemovedVersions))
			// The latest version's manifest, transaction, data file and
			// the hint the local writer left.
			if n, err := left(name); err != nil || n != 4 {
				return Sample{}, fmt.Errorf("after our cleanup %d objects are left (%v), want 4", n, err)
			}
			return Sample{Time: el, Ops: 1, Metrics: m}, nil
		},
		Base: func(ctx context.Context) (Sample, error) {
			name, err := cp("lance")
			if err != nil {
				return Sample{}, err
			}
			args := append([]string{"bench-optimize-uri"}, b.lanceArgs("cleanup", name)...)
			args = append(args, "--cleanup-older-than-ms", strconv.FormatInt(time.Now().Add(time.Second).UnixMilli(), 10))
			b.proxy.Reset()
			if _, err := LanceTimed(ctx, p, append(args, "--n", "0")...); err != nil {
				return Sample{}, err
			}
			open := b.proxy.Reset()
			s, err := LanceTimed(ctx, p, append(args, "--n", "1")...)
			if err != nil {
				return Sample{}, err
			}
			counts := b.proxy.Reset()
			for k, v := range open {
				counts[k] -= v
			}
			m := requestMetrics(counts)
			m["versions_removed"] = s.Metrics["versions_removed"]
			m["cpu_s"] = s.Metrics["cpu_s"]
			s.Metrics = m
			if n, err := left(name); err != nil || n > 4 {
				return Sample{}, fmt.Errorf("after Lance's cleanup %d objects are left (%v); its requests %s, metrics %v", n, err, s3util.Format(counts), m)
			}
			return s, nil
		},
		Close: b.close,
	}, nil
}

// uploadManifests copies the manifests (and the hint) of the table in dir
// to the store at u, each manifest's timestamp set to stamp plus its
// version in microseconds (so they stay ordered).
func uploadManifests(ctx context.Context, u, dir string, stamp time.Time) error {
	st, err := store.Open(ctx, u)
	if err != nil {
		return err
	}
	defer st.Close()
	ents, err := os.ReadDir(filepath.Join(dir, manifest.VersionsDir))
	if err != nil {
		return err
	}
	errs := make(chan error, len(ents))
	sem := make(chan struct{}, 32)
	for _, e := range ents {
		sem <- struct{}{}
		go func() {
			defer func() { <-sem }()
			rel := manifest.VersionsDir + "/" + e.Name()
			data, err := os.ReadFile(filepath.Join(dir, filepath.FromSlash(rel)))
			if err == nil {
				if _, _, ok := manifest.ParseManifestName(e.Name()); ok {
					var f *manifest.File
					if f, err = manifest.Decode(rel, data); err == nil {
						f.Manifest.Timestamp = timestamppb.New(stamp.Add(time.Duration(f.Manifest.GetVersion()) * time.Microsecond))
						data, err = manifest.Encode(f.Manifest, f.IndexSection, f.Transaction)
					}
				}
			}
			if err == nil {
				err = st.Put(ctx, rel, data)
			}
			errs <- err
		}()
	}
	var first error
	for range ents {
		if err := <-errs; err != nil && first == nil {
			first = err
		}
	}
	return first
}
