package compat_test

// Corpus (issue 4 §2): our library — inspect over snapshot and manifest,
// datafile and seedio — reports every dataset of ../shared/lance-corpus the
// way its .expect.json says Lance 12 did: versions and timestamps, flag
// words and names, live row counts (or that Lance could not count), the
// Arrow schema, indices, tags and branches, and every data file's format,
// row count, global buffers, schema metadata and seeds. The rows of every
// version (data files 2.0, 2.1, 2.2, 2.3 and legacy v1) are decoded by our
// datafile reader and compared with Lance's through the peer, value by value. (inspect's own TestCorpus_InspectAgreesWithLance12 is
// the package-level version of the first half.)

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"os"
	"path"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"gocloud.dev/blob/fileblob"

	"github.com/lancekeeper/lancekeeper/datafile"
	"github.com/lancekeeper/lancekeeper/inspect"
	"github.com/lancekeeper/lancekeeper/manifest"
	"github.com/lancekeeper/lancekeeper/manifest/pb"
	"github.com/lancekeeper/lancekeeper/seedio"
	"github.com/lancekeeper/lancekeeper/snapshot"
	"github.com/lancekeeper/lancekeeper/tests/peerlance"
)

type corpusExpect struct {
	Format        string                       `json:"format"`
	Dataset       string                       `json:"dataset"`
	OpenError     *string                      `json:"open_error"`
	LatestVersion uint64                       `json:"latest_version"`
	UsesV2Paths   bool                         `json:"uses_v2_manifest_paths"`
	Versions      []corpusVersion              `json:"versions"`
	Tags          map[string]peerlance.TagInfo `json:"tags"`
	Branches      map[string]struct {
		LatestVersion uint64          `json:"latest_version"`
		Versions      []corpusVersion `json:"versions"`
	} `json:"branches"`
	DataFiles []corpusDataFile `json:"data_files"`
}

type corpusVersion struct {
	peerlance.VersionInfo
	Manifest struct {
		Path         string   `json:"path"`
		NamingScheme string   `json:"naming_scheme"`
		ReaderFlags  uint64   `json:"reader_feature_flags"`
		ReaderNames  []string `json:"reader_feature_flag_names"`
		WriterFlags  uint64   `json:"writer_feature_flags"`
		WriterNames  []string `json:"writer_feature_flag_names"`
	} `json:"manifest"`
}

type corpusDataFile struct {
	Path             string            `json:"path"`
	FooterVersion    string            `json:"footer_version"`
	Format           string            `json:"format"`
	FileSize         int64             `json:"file_size"`
	NumRows          uint64            `json:"num_rows"`
	NumGlobalBuffers int               `json:"num_global_buffers"`
	SchemaMetadata   map[string]string `json:"schema_metadata"`
	Seeds            []struct {
		Column        string `json:"column"`
		MetadataValue string `json:"metadata_value"`
		BufferIndex   uint32 `json:"global_buffer_index"`
		RowsPerZone   uint64 `json:"rows_per_zone"`
		Position      uint64 `json:"buffer_position"`
		Size          uint64 `json:"buffer_size"`
		Decoded       struct {
			Zones []struct {
				NullCount  uint64 `json:"null_count"`
				NaNCount   uint64 `json:"nan_count"`
				ZoneLength string `json:"zone_length"`
			} `json:"zones"`
			NullOffsets []uint32 `json:"null_offsets"`
		} `json:"decoded"`
	} `json:"seeds"`
}

func TestCorpus_OurLibraryMatchesExpect(t *testing.T) {
	corpus, err := peerlance.CorpusDir()
	if err != nil {
		t.Skipf("\n!!!!! LANCE CORPUS NOT FOUND (%v): our library was NOT checked against the corpus !!!!!", err)
	}
	p := peerlance.ServeForTest(t)
	expFiles := expectFiles(t, corpus)
	if len(expFiles) < 20 {
		t.Fatalf("found only %d .expect.json files under %s", len(expFiles), corpus)
	}
	var versions, rowVersions, files, uncompared int
	for _, rel := range expFiles {
		t.Run(strings.TrimSuffix(rel, ".expect.json"), func(t *testing.T) {
			record(t, catCorpus)
			ctx := peerContext(t)
			raw, err := os.ReadFile(filepath.Join(corpus, rel))
			if err != nil {
				t.Fatal(err)
			}
			var exp corpusExpect
			if err := json.Unmarshal(raw, &exp); err != nil {
				t.Fatalf("%s: %v", rel, err)
			}
			if exp.Format != "lance-corpus-expect/1" || exp.OpenError != nil {
				t.Fatalf("%s: format %q, open_error %v", rel, exp.Format, exp.OpenError)
			}
			// A scratch copy: the peer must not see (or touch) the shared corpus.
			dir := filepath.Join(t.TempDir(), filepath.Base(exp.Dataset))
			if err := peerlance.CopyDir(filepath.Join(corpus, exp.Dataset), dir); err != nil {
				t.Fatal(err)
			}
			d, err := snapshot.OpenDataset(ctx, dir)
			if err != nil {
				t.Fatal(err)
			}
			defer d.Close()
			corpusVersions(ctx, t, d, "", exp.Versions, exp.LatestVersion)
			versions += len(exp.Versions)
			for name, b := range exp.Branches {
				corpusVersions(ctx, t, d, name, b.Versions, b.LatestVersion)
				versions += len(b.Versions)
			}
			tags, err := d.ListTags(ctx)
			if err != nil {
				t.Fatal(err)
			}
			if len(tags) != len(exp.Tags) {
				t.Errorf("tags: ours %d, Lance %v", len(tags), exp.Tags)
			}
			for _, tg := range tags {
				if e, ok := exp.Tags[tg.Name]; !ok || e.Version != tg.Version || uint64(e.ManifestSize) != tg.ManifestSize {
					t.Errorf("tag %s: ours v%d size %d, Lance %+v", tg.Name, tg.Version, tg.ManifestSize, e)
				}
			}
			corpusDataFiles(ctx, t, dir, exp.DataFiles)
			// Rows of every version of main and of every branch, compared
			// with Lance's; compared[base name] marks the data files whose
			// rows were compared that way.
			compared := map[string]bool{}
			var lastFields []*pb.Field // schema of the last version compared
			type branchVersion struct {
				branch string
				v      corpusVersion
			}
			var all []branchVersion
			for _, v := range exp.Versions {
				all = append(all, branchVersion{"", v})
			}
			for _, name := range slices.Sorted(maps.Keys(exp.Branches)) {
				for _, v := range exp.Branches[name].Versions {
					all = append(all, branchVersion{name, v})
				}
			}
			// A branch's manifests name the dataset root by the absolute
			// path the corpus was made at (base paths, flag 16): Lance and
			// we read the branch's inherited fragments there, so the table
			// is copied to that path for the branch's rows (when it is
			// free; the copy is removed at the end).
			branchDir := map[string]string{}
			for name := range exp.Branches {
				branchDir[name] = dir
				_, m, err := readOurRowsAt(ctx, dir, snapshot.Ref{Branch: name})
				if err == nil || m == nil {
					continue
				}
				for _, bp := range m.GetBasePaths() {
					stage := strings.TrimPrefix(bp.GetPath(), "file://")
					if !bp.GetIsDatasetRoot() || !filepath.IsAbs(stage) || stage == dir {
						continue
					}
					if err := os.MkdirAll(filepath.Dir(stage), 0o755); err != nil {
						t.Fatal(err)
					}
					if err := peerlance.CopyDir(filepath.Join(corpus, exp.Dataset), stage); err != nil {
						if !errors.Is(err, os.ErrExist) {
							os.RemoveAll(stage)
						}
						t.Errorf("branch %s names its dataset root %s; a copy there failed, so its rows cannot be compared: %v", name, stage, err)
						break
					}
					t.Cleanup(func() {
						os.RemoveAll(stage)
						for d := filepath.Dir(stage); d != os.TempDir() && d != "/"; d = filepath.Dir(d) {
							if os.Remove(d) != nil { // only empty parents
								break
							}
						}
					})
					branchDir[name] = stage
				}
			}
			for _, bv := range all {
				v := bv.v
				if v.RowCount == nil {
					continue
				}
				vdir := dir
				if bv.branch != "" {
					vdir = branchDir[bv.branch]
				}
				ref := snapshot.Ref{Version: v.Version, Branch: bv.branch}
				lopts := []peerlance.ReadOption{peerlance.AtVersion(v.Version)}
				if bv.branch != "" {
					lopts = append(lopts, peerlance.OnBranch(bv.branch))
				}
				ours, m, err := readOurRowsAt(ctx, vdir, ref)
				if manifest.IsNotFound(err) {
					// A data file is missing (0.29.0 stored none): Lance
					// counts rows from the manifest but cannot read them
					// either.
					var le *peerlance.LanceError
					if _, lerr := p.Rows(ctx, vdir, lopts...); !errors.As(lerr, &le) || !strings.Contains(le.Message, "Not found") {
						t.Errorf("%s: we miss a data file (%v) but Lance's rows say %v", ref, err, lerr)
					}
					continue
				}
				if err != nil {
					t.Errorf("%s: our read: %v", ref, err)
					continue
				}
				if ours.NotDecodable != "" {
					// Every data file Lance ever wrote in the corpus decodes
					// (2.0, 2.1, 2.2, 2.3 and legacy v1; issue 12 item 1).
					t.Errorf("%s: not decodable by us: %s", ref, ours.NotDecodable)
					continue
				}
				lr, _, err := lanceRowsCanonical(ctx, p, vdir, lopts...)
				if err != nil {
					t.Errorf("%s: Lance rows: %v", ref, err)
					continue
				}
				if diff := diffRows("ours", ours, "Lance", lr); diff != "" {
					t.Errorf("%s rows:\n%s", ref, diff)
					continue
				}
				lastFields = m.GetFields()
				for _, fr := range m.GetFragments() {
					for _, df := range fr.GetFiles() {
						compared[path.Base(df.GetPath())] = true
					}
				}
				rowVersions++
			}
			// Every data file of the corpus had its rows compared in some
			// version (files no version references are decoded whole
			// here, but Lance has no way to read them for comparison).
			for _, e := range exp.DataFiles {
				if !compared[path.Base(e.Path)] {
					n, err := decodeWholeFile(ctx, filepath.Join(dir, e.Path), e.Format == "legacy", lastFields)
					t.Logf("%s (%s): in no version whose rows were compared; decoded on its own: %d rows, %v", e.Path, e.Format, n, err)
					if err != nil {
						t.Errorf("%s (%s): %v", e.Path, e.Format, err)
					}
					uncompared++
				}
				files++
			}
		})
	}
	t.Logf("%d data files, %d of them in no version whose rows could be compared with Lance's", files, uncompared)
	t.Logf("%d datasets, %d versions agree with their expect files; rows of %d versions (every data file version) equal Lance's", len(expFiles), versions, rowVersions)
}

// corpusVersions checks a branch's ("" = main) version list and every
// version's summary against the expect file.
func corpusVersions(ctx context.Context, t *testing.T, d *snapshot.Dataset, branch string, want []corpusVersion, latest uint64) {
	t.Helper()
	got, err := inspect.Versions(ctx, d, branch)
	if err != nil {
		t.Fatalf("branch %q: versions: %v", branch, err)
	}
	if len(got) != len(want) {
		t.Fatalf("branch %q: %d versions, Lance lists %d", branch, len(got), len(want))
	}
	if got[len(got)-1].Version != latest {
		t.Errorf("branch %q: latest %d, Lance %d", branch, got[len(got)-1].Version, latest)
	}
	for i, v := range want {
		g := got[i]
		ts, err := time.Parse(time.RFC3339Nano, g.Timestamp)
		if g.Version != v.Version || err != nil || ts.UnixMicro() != v.TimestampUS || g.NamingScheme != v.Manifest.NamingScheme {
			t.Errorf("branch %q version[%d]: ours v%d at %q (%s), Lance v%d at %d µs (%s)", branch, i, g.Version, g.Timestamp, g.NamingScheme, v.Version, v.TimestampUS, v.Manifest.NamingScheme)
			continue
		}
		s, err := inspect.Summarize(ctx, d, inspect.Options{Version: v.Version, Branch: branch})
		if err != nil {
			t.Errorf("branch %q version %d: %v", branch, v.Version, err)
			continue
		}
		m := v.Manifest
		if s.ReaderFlags != m.ReaderFlags || s.WriterFlags != m.WriterFlags ||
			strings.Join(s.ReaderFlagNames, ",") != strings.Join(m.ReaderNames, ",") || strings.Join(s.WriterFlagNames, ",") != strings.Join(m.WriterNames, ",") {
			t.Errorf("branch %q version %d: flags %d %v / %d %v, expect %d %v / %d %v", branch, v.Version,
				s.ReaderFlags, s.ReaderFlagNames, s.WriterFlags, s.WriterFlagNames, m.ReaderFlags, m.ReaderNames, m.WriterFlags, m.WriterNames)
		}
		if s.ManifestPath != m.Path {
			t.Errorf("branch %q version %d: manifest %s, expect %s", branch, v.Version, s.ManifestPath, m.Path)
		}
		if v.Schema == nil {
			t.Errorf("branch %q version %d: expect has no schema (%s)", branch, v.Version, v.SchemaError)
			continue
		}
		checkSummary(t, s, v.VersionInfo)
	}
}

// corpusDataFiles opens every data file the expect file lists.
func corpusDataFiles(ctx context.Context, t *testing.T, dir string, want []corpusDataFile) {
	t.Helper()
	b, err := fileblob.OpenBucket(dir, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer b.Close()
	for _, e := range want {
		f, err := datafile.Open(ctx, b, e.Path, datafile.OpenOptions{})
		if e.Format == "legacy" {
			if !errors.Is(err, datafile.ErrLegacyFormat) {
				t.Errorf("%s (legacy, footer %s): %v, want ErrLegacyFormat", e.Path, e.FooterVersion, err)
			}
			continue
		}
		if err != nil {
			t.Errorf("%s: %v", e.Path, err)
			continue
		}
		major, minor := f.Version().FooterVersion()
		footer := strconv.Itoa(int(major)) + "." + strconv.Itoa(int(minor))
		if footer != e.FooterVersion || f.Version().String() != e.Format {
			t.Errorf("%s: footer %s format %s, expect %s %s", e.Path, footer, f.Version(), e.FooterVersion, e.Format)
		}
		if f.Size() != e.FileSize || f.NumRows() != e.NumRows || len(f.GlobalBuffers()) != e.NumGlobalBuffers {
			t.Errorf("%s: %d bytes, %d rows, %d global buffers; expect %d, %d, %d", e.Path, f.Size(), f.NumRows(), len(f.GlobalBuffers()), e.FileSize, e.NumRows, e.NumGlobalBuffers)
		}
		if fmt.Sprint(f.Metadata()) != fmt.Sprint(nonNil(e.SchemaMetadata)) {
			t.Errorf("%s: schema metadata %v, expect %v", e.Path, f.Metadata(), e.SchemaMetadata)
		}
		seeds, err := f.Seeds(ctx, seedio.DecodeOptions{})
		if err != nil {
			t.Fatal(err)
		}
		if len(seeds) != len(e.Seeds) {
			t.Errorf("%s: %d seeds, expect %d", e.Path, len(seeds), len(e.Seeds))
			continue
		}
		for i, s := range seeds {
			es := e.Seeds[i]
			if s.Err != nil {
				t.Errorf("%s seed %s: %v", e.Path, s.Column, s.Err)
				continue
			}
			if s.Column != es.Column || s.Value != es.MetadataValue || s.Locator.BufferIndex != es.BufferIndex || s.Locator.RowsPerZone != es.RowsPerZone ||
				s.Buffer.Pos != es.Position || s.Buffer.Len != es.Size || len(s.Seed.Zones) != len(es.Decoded.Zones) {
				t.Errorf("%s seed %d: %s=%q buffer %+v, %d zones; expect %s=%q buffer %d at %d+%d, %d zones", e.Path, i, s.Column, s.Value, s.Buffer, len(s.Seed.Zones),
					es.Column, es.MetadataValue, es.BufferIndex, es.Position, es.Size, len(es.Decoded.Zones))
				continue
			}
			for z, ez := range es.Decoded.Zones {
				g := s.Seed.Zones[z]
				if g.NullCount != ez.NullCount || g.NaNCount != ez.NaNCount || strconv.FormatUint(g.Rows, 10) != ez.ZoneLength {
					t.Errorf("%s seed %s zone %d: %d nulls %d NaNs %d rows; expect %d %d %s", e.Path, s.Column, z, g.NullCount, g.NaNCount, g.Rows, ez.NullCount, ez.NaNCount, ez.ZoneLength)
				}
			}
			if s.Seed.NullBitmap == nil || !slices.Equal(s.Seed.NullBitmap.ToArray(), nonNilU32(es.Decoded.NullOffsets)) {
				t.Errorf("%s seed %s: null bitmap %v, expect %v", e.Path, s.Column, s.Seed.NullBitmap, es.Decoded.NullOffsets)
			}
		}
	}
}

func nonNil(m map[string]string) map[string]string {
	if m == nil {
		return map[string]string{}
	}
	return m
}

func nonNilU32(s []uint32) []uint32 {
	if s == nil {
		return []uint32{}
	}
	return s
}

// decodeWholeFile reads every row of every column of one data file with
// our reader and returns the row count; a legacy v1 file is read with the
// table schema fields (a legacy file has no schema of its own).
func decodeWholeFile(ctx context.Context, p string, legacy bool, fields []*pb.Field) (int64, error) {
	bucket, err := fileblob.OpenBucket(filepath.Dir(p), nil)
	if err != nil {
		return 0, err
	}
	defer bucket.Close()
	opts := datafile.OpenOptions{}
	if legacy {
		if len(fields) == 0 {
			return 0, errors.New("a legacy v1 file of a table without a readable schema")
		}
		opts.LegacyFields = fields
		for _, f := range fields {
			opts.LegacyFieldIDs = append(opts.LegacyFieldIDs, f.GetId())
		}
	}
	f, err := datafile.Open(ctx, bucket, filepath.Base(p), opts)
	if err != nil {
		return 0, err
	}
	rec, err := f.ReadRows(ctx, datafile.ReadRequest{})
	if err != nil {
		return 0, err
	}
	defer rec.Release()
	return rec.NumRows(), nil
}
