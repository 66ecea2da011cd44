package inspect

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/lancekeeper/lancekeeper/snapshot"
	"github.com/lancekeeper/lancekeeper/tests/peerlance"
)

// The expect.json files of the shared corpus record what Lance 12 reports
// for every version of every dataset (../shared/lance-corpus/README.md).

type expectFile struct {
	Format        string                  `json:"format"`
	Dataset       string                  `json:"dataset"`
	LatestVersion uint64                  `json:"latest_version"`
	UsesV2Paths   bool                    `json:"uses_v2_manifest_paths"`
	Versions      []expectVersion         `json:"versions"`
	Tags          map[string]expectTag    `json:"tags"`
	Branches      map[string]expectBranch `json:"branches"`
}

type expectTag struct {
	Version uint64 `json:"version"`
}

type expectBranch struct {
	LatestVersion uint64          `json:"latest_version"`
	Versions      []expectVersion `json:"versions"`
}

type expectVersion struct {
	Version       uint64         `json:"version"`
	TimestampUS   int64          `json:"timestamp_us"`
	RowCount      *uint64        `json:"row_count"`
	RowCountError string         `json:"row_count_error"`
	Schema        *expectSchema  `json:"schema"`
	Indices       []expectIndex  `json:"indices"`
	NumFragments  *int           `json:"num_fragments"` // absent when Lance's stats() failed
	Tags          []string       `json:"tags"`
	Manifest      expectManifest `json:"manifest"`
}

type expectSchema struct {
	Fields []expectArrowField `json:"fields"`
}

type expectArrowField struct {
	Name     string `json:"name"`
	Type     string `json:"type"`
	Nullable bool   `json:"nullable"`
}

type expectIndex struct {
	Name          string   `json:"name"`
	IndexType     string   `json:"index_type"`
	Columns       []string `json:"columns"`
	IndexUUID     string   `json:"index_uuid"`
	IndexedRows   *uint64  `json:"num_indexed_rows"`
	UnindexedRows *uint64  `json:"num_unindexed_rows"`
}

type expectManifest struct {
	Path          string   `json:"path"`
	NamingScheme  string   `json:"naming_scheme"`
	Version       uint64   `json:"version"`
	ReaderFlags   uint64   `json:"reader_feature_flags"`
	ReaderNames   []string `json:"reader_feature_flag_names"`
	WriterFlags   uint64   `json:"writer_feature_flags"`
	WriterNames   []string `json:"writer_feature_flag_names"`
	WriterVersion *struct {
		Library string `json:"library"`
		Version string `json:"version"`
	} `json:"writer_version"`
	DataFormat *DataFormat `json:"data_format"`
	Timestamp  struct {
		Seconds int64 `json:"seconds"`
		Nanos   int64 `json:"nanos"`
	} `json:"timestamp"`
	Fields []struct {
		ID          int32  `json:"id"`
		ParentID    int32  `json:"parent_id"`
		Name        string `json:"name"`
		LogicalType string `json:"logical_type"`
		Nullable    bool   `json:"nullable"`
	} `json:"fields"`
	Summary struct {
		NumFragments int    `json:"num_fragments"`
		PhysicalRows uint64 `json:"physical_rows"`
	} `json:"summary"`
}

// corpusRoot returns the shared Lance corpus (peerlance.CorpusDir) or
// skips the test loudly when it is missing.
func corpusRoot(t *testing.T) string {
	t.Helper()
	c, err := peerlance.CorpusDir()
	if err != nil {
		t.Skipf("!!! SHARED LANCE CORPUS NOT FOUND: corpus tests skipped (CI always has it): %v !!!", err)
	}
	return c
}

func loadExpects(t *testing.T, root string) map[string]*expectFile {
	t.Helper()
	paths, err := filepath.Glob(filepath.Join(root, "*", "*", "*.expect.json"))
	if err != nil {
		t.Fatal(err)
	}
	more, _ := filepath.Glob(filepath.Join(root, "*", "*.expect.json"))
	paths = append(paths, more...)
	out := map[string]*expectFile{}
	for _, p := range paths {
		data, err := os.ReadFile(p)
		if err != nil {
			t.Fatal(err)
		}
		var e expectFile
		if err := json.Unmarshal(data, &e); err != nil {
			t.Fatalf("%s: %v", p, err)
		}
		if e.Format != "lance-corpus-expect/1" {
			t.Fatalf("%s: unknown format %q", p, e.Format)
		}
		out[e.Dataset] = &e
	}
	if len(out) < 10 {
		t.Fatalf("only %d expect files under %s", len(out), root)
	}
	return out
}

// TestCorpus_InspectAgreesWithLance12 compares Summarize with what Lance 12
// reported for every version of every dataset (and branch) of the corpus:
// flags (words and names), naming scheme, writer version, data format,
// fragment count, live row count (or that it cannot be computed), the
// flattened schema, the Arrow types of the top-level fields, listed
// indices, tags and the version list with timestamps.
func TestCorpus_InspectAgreesWithLance12(t *testing.T) {
	root := corpusRoot(t)
	ctx := context.Background()
	expects := loadExpects(t, root)
	names := make([]string, 0, len(expects))
	for n := range expects {
		names = append(names, n)
	}
	sort.Strings(names)
	checked := 0
	for _, name := range names {
		e := expects[name]
		t.Run(name, func(t *testing.T) {
			d, err := snapshot.OpenDataset(ctx, filepath.Join(root, filepath.FromSlash(e.Dataset)))
			if err != nil {
				t.Fatal(err)
			}
			defer d.Close()
			checkVersionList(t, ctx, d, "", e.Versions, e.LatestVersion)
			for _, v := range e.Versions {
				checkVersion(t, ctx, d, "", v)
				checked++
			}
			for bname, b := range e.Branches {
				checkVersionList(t, ctx, d, bname, b.Versions, b.LatestVersion)
				for _, v := range b.Versions {
					checkVersion(t, ctx, d, bname, v)
					checked++
				}
			}
			latest, err := Summarize(ctx, d, Options{SkipRowCount: true})
			if err != nil {
				t.Fatal(err)
			}
			if latest.Version != e.LatestVersion {
				t.Errorf("latest version %d, Lance says %d", latest.Version, e.LatestVersion)
			}
			if (latest.NamingScheme == "V2") != e.UsesV2Paths {
				t.Errorf("naming %s, Lance uses_v2_manifest_paths=%v", latest.NamingScheme, e.UsesV2Paths)
			}
			for tag, want := range e.Tags {
				s, err := Summarize(ctx, d, Options{Tag: tag, SkipRowCount: true})
				if err != nil || s.Version != want.Version {
					t.Errorf("tag %s: %v (version %v), want version %d", tag, err, s, want.Version)
				}
			}
		})
	}
	t.Logf("%d versions of %d datasets agree with Lance 12", checked, len(expects))
}

func checkVersionList(t *testing.T, ctx context.Context, d *snapshot.Dataset, branch string, want []expectVersion, latest uint64) {
	t.Helper()
	got, err := Versions(ctx, d, branch)
	if err != nil {
		t.Fatalf("branch %q: versions: %v", branch, err)
	}
	if len(got) != len(want) {
		t.Fatalf("branch %q: %d versions, Lance lists %d", branch, len(got), len(want))
	}
	for i, v := range want {
		g := got[i]
		if g.Version != v.Version {
			t.Errorf("branch %q: version[%d] = %d, Lance %d", branch, i, g.Version, v.Version)
			continue
		}
		ts, err := time.Parse(time.RFC3339Nano, g.Timestamp)
		if err != nil {
			t.Errorf("version %d: timestamp %q: %v", v.Version, g.Timestamp, err)
			continue
		}
		if us := ts.UnixMicro(); us != v.TimestampUS {
			t.Errorf("version %d: timestamp %d µs, Lance %d µs", v.Version, us, v.TimestampUS)
		}
		if g.NamingScheme != v.Manifest.NamingScheme {
			t.Errorf("version %d: naming %s, want %s", v.Version, g.NamingScheme, v.Manifest.NamingScheme)
		}
	}
	if got[len(got)-1].Version != latest {
		t.Errorf("branch %q: last listed %d, Lance latest %d", branch, got[len(got)-1].Version, latest)
	}
}

func checkVersion(t *testing.T, ctx context.Context, d *snapshot.Dataset, branch string, v expectVersion) {
	t.Helper()
	s, err := Summarize(ctx, d, Options{Version: v.Version, Branch: branch})
	if err != nil {
		t.Errorf("branch %q version %d: %v", branch, v.Version, err)
		return
	}
	at := func(format string, args ...any) {
		t.Helper()
		t.Errorf("branch %q version %d: "+format, append([]any{branch, v.Version}, args...)...)
	}
	m := v.Manifest
	if s.Version != v.Version || s.ManifestPath != m.Path || s.NamingScheme != m.NamingScheme {
		at("version %d at %s (%s), want %s (%s)", s.Version, s.ManifestPath, s.NamingScheme, m.Path, m.NamingScheme)
	}
	if s.ReaderFlags != m.ReaderFlags || s.WriterFlags != m.WriterFlags {
		at("flags %d/%d, want %d/%d", s.ReaderFlags, s.WriterFlags, m.ReaderFlags, m.WriterFlags)
	}
	if strings.Join(s.ReaderFlagNames, ",") != strings.Join(m.ReaderNames, ",") || strings.Join(s.WriterFlagNames, ",") != strings.Join(m.WriterNames, ",") {
		at("flag names %v/%v, want %v/%v", s.ReaderFlagNames, s.WriterFlagNames, m.ReaderNames, m.WriterNames)
	}
	if (s.WriterVer == nil) != (m.WriterVersion == nil) || (s.WriterVer != nil && (s.WriterVer.Library != m.WriterVersion.Library || s.WriterVer.Version != m.WriterVersion.Version)) {
		at("writer_version %+v, want %+v", s.WriterVer, m.WriterVersion)
	}
	if (s.DataFormat == nil) != (m.DataFormat == nil) || (s.DataFormat != nil && *s.DataFormat != *m.DataFormat) {
		at("data_format %+v, want %+v", s.DataFormat, m.DataFormat)
	}
	if s.NumFragments != m.Summary.NumFragments || (v.NumFragments != nil && s.NumFragments != *v.NumFragments) {
		at("%d fragments, Lance %v (manifest %d)", s.NumFragments, v.NumFragments, m.Summary.NumFragments)
	}
	if s.PhysicalRows != m.Summary.PhysicalRows {
		at("physical_rows %d, manifest says %d", s.PhysicalRows, m.Summary.PhysicalRows)
	}
	switch {
	case v.RowCount != nil:
		if s.NumRows == nil {
			at("live rows unknown (%s), Lance counts %d", s.NumRowsError, *v.RowCount)
		} else if *s.NumRows != *v.RowCount {
			at("%d live rows, Lance counts %d", *s.NumRows, *v.RowCount)
		}
	case v.RowCountError != "":
		// Lance could not count (e.g. 0.5.9: no data files); neither may we.
		if s.NumRows != nil {
			at("counted %d rows, but Lance failed: %s", *s.NumRows, v.RowCountError)
		}
	}
	if len(s.Fields) != len(m.Fields) {
		at("%d fields, manifest has %d", len(s.Fields), len(m.Fields))
	} else {
		for i, f := range m.Fields {
			g := s.Fields[i]
			if g.ID != f.ID || g.ParentID != f.ParentID || g.Name != f.Name || g.LogicalType != f.LogicalType || g.Nullable != f.Nullable {
				at("field %d = %+v, want %+v", i, g, f)
			}
		}
	}
	if v.Schema != nil {
		var top []Field
		for _, f := range s.Fields {
			if f.ParentID < 0 {
				top = append(top, f)
			}
		}
		if len(top) != len(v.Schema.Fields) {
			at("%d top-level fields, Lance's Arrow schema has %d", len(top), len(v.Schema.Fields))
		} else {
			for i, f := range v.Schema.Fields {
				if top[i].Name != f.Name || top[i].ArrowType != f.Type || top[i].Nullable != f.Nullable {
					at("top-level field %d = %s %s nullable=%v, Lance: %s %s nullable=%v", i, top[i].Name, top[i].ArrowType, top[i].Nullable, f.Name, f.Type, f.Nullable)
				}
			}
		}
	}
	for _, want := range v.Indices {
		found := false
		for _, ix := range s.Indices {
			if ix.Name != want.Name {
				continue
			}
			found = true
			if strings.Join(ix.Fields, ",") != strings.Join(want.Columns, ",") {
				at("index %s on %v, Lance says %v", ix.Name, ix.Fields, want.Columns)
			}
			// Lance names vector indices by their IVF kind, read from the
			// index files, and recognises detail-less legacy indices the
			// same way; the manifest alone says only Vector / Unknown.
			if ix.Type != want.IndexType && ix.Type != "Unknown" {
				at("index %s type %s, Lance says %s", ix.Name, ix.Type, want.IndexType)
			}
			// Lance's index statistics: rows of the fragments in the
			// stored bitmaps (§5.2 e: an old writer's as stored).
			if want.IndexedRows != nil && (ix.IndexedRows == nil || *ix.IndexedRows != *want.IndexedRows ||
				ix.UnindexedRows == nil || want.UnindexedRows == nil || *ix.UnindexedRows != *want.UnindexedRows) {
				at("index %s indexed/unindexed rows %v/%v, Lance says %d/%v", ix.Name, ptrStr(ix.IndexedRows), ptrStr(ix.UnindexedRows), *want.IndexedRows, ptrStr(want.UnindexedRows))
			}
		}
		if !found {
			at("index %s listed by Lance is missing", want.Name)
		}
	}
	if strings.Join(s.Tags, ",") != strings.Join(v.Tags, ",") {
		at("tags %v, Lance %v", s.Tags, v.Tags)
	}
}

func ptrStr(p *uint64) string {
	if p == nil {
		return "none"
	}
	return fmt.Sprint(*p)
}
