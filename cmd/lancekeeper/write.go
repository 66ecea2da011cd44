package main

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"sync/atomic"
	"time"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/ipc"
	"github.com/apache/arrow-go/v18/arrow/memory"
	"github.com/apache/arrow-go/v18/parquet/file"
	"github.com/apache/arrow-go/v18/parquet/pqarrow"

	"github.com/lancekeeper/lancekeeper/commit"
	"github.com/lancekeeper/lancekeeper/datafile"
	"github.com/lancekeeper/lancekeeper/flags"
	"github.com/lancekeeper/lancekeeper/inspect"
	"github.com/lancekeeper/lancekeeper/internal/arrowipc"
	"github.com/lancekeeper/lancekeeper/maint"
	"github.com/lancekeeper/lancekeeper/manifest"
	"github.com/lancekeeper/lancekeeper/scan"
	"github.com/lancekeeper/lancekeeper/snapshot"
	"github.com/lancekeeper/lancekeeper/store"
)

// Write is `lancekeeper write`.
func (commands) Write() command {
	return command{
		name:    "write",
		usage:   "DATASET --from FILE|- [--mode create|append|overwrite] [--data-storage-version 2.0|2.1|2.2|2.3] [--seeds all|COL,…] [--rows-per-zone N] [--enable-zone-write-seeds] [--no-index-seeds] [--format auto|arrow|parquet|csv] [--schema COL:TYPE,…] [--delimiter C] [--max-rows-per-file N] [--replace-schema] [--inline-transaction-only] [--branch B] [--progress] [--json] [--coordinator URL [--token T] [--dataset-name NAME]]",
		summary: "Write Arrow IPC, Parquet or CSV rows as Lance data files of the table's storage version (2.0, 2.1, 2.2; new tables 2.2 like Lance 12), optionally with v1 zone write seeds, and commit them.",
		run:     runWrite,
	}
}

// writeJSON is the `write --json` output.
type writeJSON struct {
	Version       uint64          `json:"version"`
	ReadVersion   uint64          `json:"read_version"`
	Mode          string          `json:"mode"`
	Rows          int64           `json:"rows"`
	Files         []writeFileJSON `json:"files"`
	FragmentIDs   []uint64        `json:"fragment_ids"`
	ReaderFlags   uint64          `json:"reader_feature_flags"`
	WriterFlags   uint64          `json:"writer_feature_flags"`
	FlagNames     []string        `json:"reader_feature_flag_names"`
	Attempts      int             `json:"attempts"`
	ManifestPath  string          `json:"manifest_path"`
	ZoneSeedsFlag bool            `json:"zone_write_seeds"`
}

type writeFileJSON struct {
	Path  string   `json:"path"`
	Rows  uint64   `json:"rows"`
	Bytes uint64   `json:"bytes"`
	Seeds []string `json:"seeds"`
}

func runWrite(e *env, args []string) int {
	c := commands{}.Write()
	fs := newFlagSet(e, c)
	from := fs.String("from", "", "input file: Arrow IPC (file or stream), Parquet or CSV with a header row; - reads stdin")
	format := fs.String("format", "auto", "input format: auto (by content, .csv/.tsv by name), arrow, parquet, csv")
	csvSchema := fs.String("schema", "", "CSV: column types as name:type,… (e.g. id:int64,name:utf8,ts:timestamp[us]; a trailing ! means not nullable); unnamed columns are inferred")
	delim := fs.String("delimiter", "", "CSV: the field delimiter, one character (\\t for tab; default , or tab for .tsv)")
	modeS := fs.String("mode", "", "create, append or overwrite (default: create if the dataset does not exist, else append)")
	seeds := fs.String("seeds", "", "columns that get v1 zone write seeds: all, or a comma-separated list (default: none)")
	rpz := fs.Uint64("rows-per-zone", 0, "rows per seed zone (default 8192)")
	enable := fs.Bool("enable-zone-write-seeds", false, "explicitly allow this write to set FLAG_ZONE_WRITE_SEEDS (old Lance readers then refuse the dataset)")
	noIndexSeeds := fs.Bool("no-index-seeds", false, "do not add the seeds the dataset's ZoneMap indices ask for (by default an append does, v0 on tables without FLAG_ZONE_WRITE_SEEDS)")
	branch := fs.String("branch", "", "write to this branch (it must exist: `lancekeeper branch create`) instead of main")
	maxRows := fs.Int("max-rows-per-file", 0, "rows per data file / fragment (default 1048576)")
	progress := fs.Bool("progress", false, "show a progress bar on stderr even when it is not a terminal")
	asJSON := fs.Bool("json", false, "print the result as JSON")
	dsv := fs.String("data-storage-version", "", "data storage version of a new table: 2.0, 2.1, 2.2 (stable) or 2.3 (next) (default 2.2, like Lance 12); an append writes the table's version, an overwrite keeps it unless this is given")
	replaceSchema := fs.Bool("replace-schema", false, "overwrite: replace the table's schema with the input's (by default an overwrite keeps the table's types, nullability and field ids)")
	inlineTxn := fs.Bool("inline-transaction-only", false, "write no _transactions/*.txn file: the transaction only inline in the manifest (writer flag DISABLE_TRANSACTION_FILE); one file and its fsyncs fewer per commit; Lance writers older than the flag refuse to write to the table while such a version is the latest")
	var cw coordinatorWrite
	fs.StringVar(&cw.url, "coordinator", "", "commit through the coordinator at URL; data files are still written directly to DATASET (docs/coordinator.md)")
	fs.StringVar(&cw.token, "token", "", "bearer token for --coordinator (default $"+tokenEnv+")")
	fs.StringVar(&cw.dataset, "dataset-name", "", "the dataset's name at the coordinator (default: DATASET relative to the coordinator root it lies under)")
	pos, err := parseArgs(fs, args)
	if err != nil {
		return parseFailed(err)
	}
	if len(pos) != 1 || *from == "" {
		fs.Usage()
		return exitBadInput
	}
	if flagSet(fs, "rows-per-zone") && *rpz == 0 {
		// Issue 15 item 12: 0 silently became the default.
		return fail(e, c.name, exitBadInput, errors.New("--rows-per-zone must be at least 1"))
	}
	if *inlineTxn && cw.url != "" {
		return fail(e, c.name, exitBadInput, errors.New("--inline-transaction-only cannot be combined with --coordinator (the coordinator commits)"))
	}
	st, err := store.Open(e.ctx, pos[0])
	if err != nil {
		return fail(e, c.name, exitBadInput, err)
	}
	defer st.Close()
	if b := strings.TrimSpace(*branch); b != "" && b != snapshot.MainBranch {
		if cw.url != "" {
			return fail(e, c.name, exitBadInput, errors.New("--branch cannot be combined with --coordinator"))
		}
		if err := snapshot.ValidateBranchName(b); err != nil {
			return fail(e, c.name, exitBadInput, err)
		}
		bst, err := st.Sub(snapshot.BranchRoot(b))
		if err != nil {
			return fail(e, c.name, exitBadInput, err)
		}
		exists, err := datasetExists(e.ctx, bst)
		if err != nil {
			return fail(e, c.name, exitFailure, err)
		}
		if !exists {
			return fail(e, c.name, exitBadInput, fmt.Errorf("%s has no branch %q (create it with `lancekeeper branch create`)", pos[0], b))
		}
		if *modeS == "create" {
			return fail(e, c.name, exitBadInput, fmt.Errorf("--mode create on branch %q: a branch always exists already (use append or overwrite)", b))
		}
		st = bst
	}

	opts := commit.WriteOptions{RowsPerZone: *rpz, MaxRowsPerFile: *maxRows, NoDeclaredSeeds: *noIndexSeeds, Commit: commit.Options{EnableZoneWriteSeeds: *enable, InlineTransactionOnly: *inlineTxn},
		DataStorageVersion: strings.TrimSpace(*dsv), ReplaceSchema: *replaceSchema}
	// Lance's automatic cleanup (lance.auto_cleanup.* table config) after
	// the commit; its errors are reported, never fail the write.
	opts.Commit.AfterCommit = maint.AfterCommit(st, func(f string, a ...any) { fmt.Fprintf(e.stderr, "lancekeeper write: "+f+"\n", a...) })
	switch strings.TrimSpace(*seeds) {
	case "":
	case "all", "*":
		opts.SeedAllColumns = true
	default:
		for _, col := range strings.Split(*seeds, ",") {
			if col = strings.TrimSpace(col); col != "" {
				opts.SeedColumns = append(opts.SeedColumns, col)
			}
		}
	}
	if *modeS == "" {
		exists, err := datasetExists(e.ctx, st)
		if err != nil {
			return fail(e, c.name, exitFailure, err)
		}
		opts.Mode = commit.ModeCreate
		if exists {
			opts.Mode = commit.ModeAppend
		}
	} else if opts.Mode, err = commit.ParseMode(*modeS); err != nil {
		return fail(e, c.name, exitBadInput, err)
	}

	var co csvOptions
	if *delim != "" {
		if co.comma, err = parseDelimiter(*delim); err != nil {
			return fail(e, c.name, exitBadInput, err)
		}
	}
	if strings.TrimSpace(*csvSchema) != "" {
		if co.schema, err = parseCSVSchema(*csvSchema); err != nil {
			return fail(e, c.name, exitBadInput, err)
		}
	}
	if opts.Mode == commit.ModeAppend || (opts.Mode == commit.ModeOverwrite && !*replaceSchema) {
		// CSV values are cast to the table's column types (an int32
		// column takes CSV integers that fit).
		if m, _, err := manifest.LoadLatest(e.ctx, st.Bucket(), st.KeyPrefix()); err == nil {
			if ts, err := scan.TableSchema(m.Manifest); err == nil {
				co.target = ts
			}
		}
	}
	stdin := e.stdin
	if stdin == nil {
		stdin = os.Stdin
	}
	in, err := openInput(e.ctx, *from, *format, co, stdin)
	if err != nil {
		return fail(e, c.name, exitBadInput, err)
	}
	defer in.Close()
	if _, isCSV := in.rdr.(*csvRecords); !isCSV && (co.schema != nil || co.comma != 0) {
		return fail(e, c.name, exitBadInput, errors.New("--schema and --delimiter apply to CSV input only"))
	}
	var bar *progressBar
	if *progress || (isTerminal(os.Stderr) && in.size >= 8<<20) {
		bar = newProgressBar(e.stderr, in)
		opts.Progress = bar.update
	}
	var res *commit.WriteResult
	if cw.url != "" {
		res, err = writeViaCoordinator(e.ctx, st, pos[0], in.rdr, opts, cw)
	} else {
		res, err = commit.WriteArrow(e.ctx, st, in.rdr, opts)
	}
	if bar != nil {
		bar.done(err == nil)
	}
	if err != nil {
		return fail(e, c.name, writeErrorCode(err), fmt.Errorf("%s: %w", pos[0], err))
	}
	m := res.Manifest
	if *asJSON {
		out := writeJSON{
			Version: res.Version, ReadVersion: res.ReadVersion, Mode: opts.Mode.String(), Rows: res.Rows,
			FragmentIDs: res.FragmentIDs, ReaderFlags: m.GetReaderFeatureFlags(), WriterFlags: m.GetWriterFeatureFlags(),
			FlagNames: inspect.FlagNames(m.GetReaderFeatureFlags()), Attempts: res.Attempts, ManifestPath: res.ManifestPath,
			ZoneSeedsFlag: commit.HasZoneWriteSeeds(m), Files: []writeFileJSON{},
		}
		if out.FragmentIDs == nil {
			out.FragmentIDs = []uint64{}
		}
		for _, f := range res.Files {
			out.Files = append(out.Files, writeFileJSON{Path: f.Path, Rows: f.Rows, Bytes: f.Bytes, Seeds: seededColumns(f.Seeds)})
		}
		b, err := json.MarshalIndent(out, "", "  ")
		if err != nil {
			return fail(e, c.name, exitFailure, err)
		}
		fmt.Fprintf(e.stdout, "%s\n", b)
		return exitOK
	}
	fmt.Fprintf(e.stdout, "committed version %d (%s, read version %d): %d rows in %d data file(s)\n",
		res.Version, opts.Mode, res.ReadVersion, res.Rows, len(res.Files))
	for _, f := range res.Files {
		s := "no seeds"
		if cols := seededColumns(f.Seeds); len(cols) > 0 {
			s = fmt.Sprintf("v%d seeds: %s", seedVersionOf(f.Seeds), strings.Join(cols, ", "))
		}
		fmt.Fprintf(e.stdout, "  %s  %d rows  %d bytes  %s\n", f.Path, f.Rows, f.Bytes, s)
		for _, sr := range f.Seeds {
			if sr.Err != nil {
				fmt.Fprintf(e.stdout, "    no seed for %s: %s\n", sr.Column, oneLine(sr.Err.Error()))
			}
		}
	}
	fmt.Fprintf(e.stdout, "feature flags: reader %d %v, writer %d %v\n", m.GetReaderFeatureFlags(), flags.Names(m.GetReaderFeatureFlags()),
		m.GetWriterFeatureFlags(), flags.Names(m.GetWriterFeatureFlags()))
	if res.Attempts > 1 {
		fmt.Fprintf(e.stdout, "committed after %d attempts (concurrent writers)\n", res.Attempts)
	}
	return exitOK
}

func seededColumns(seeds []datafile.SeedResult) []string {
	out := []string{}
	for _, s := range seeds {
		if s.BufferIndex != 0 && s.Err == nil {
			out = append(out, s.Column)
		}
	}
	return out
}

// seedVersionOf is the version of the seeds a file got (one write writes
// one version: v0 for ZoneMap declarations on an unflagged table, else v1).
func seedVersionOf(seeds []datafile.SeedResult) int {
	for _, s := range seeds {
		if s.BufferIndex != 0 && s.Err == nil {
			return s.Version
		}
	}
	return 1
}

// writeErrorCode: problems with the input or the request are exit 2, the
// rest (I/O, conflicts) exit 1 (fail makes a feature-flag refusal 3).
func writeErrorCode(err error) int {
	switch {
	case errors.Is(err, commit.ErrSchemaMismatch), errors.Is(err, commit.ErrSeedsNotEnabled), errors.Is(err, commit.ErrStorageVersion),
		errors.Is(err, commit.ErrDatasetExists), errors.Is(err, commit.ErrDatasetNotFound),
		errors.Is(err, commit.ErrInvalidTransaction), errors.Is(err, datafile.ErrInvalidSchema),
		errors.Is(err, datafile.ErrInvalidData), errors.Is(err, errInput), errors.Is(err, errCoordinatorUsage):
		return exitBadInput
	}
	return exitFailure
}

func datasetExists(ctx context.Context, st *store.Store) (bool, error) {
	objs, err := st.List(ctx, "_versions/", store.ListOptions{Shallow: true})
	if err != nil {
		if errors.Is(err, store.ErrNotFound) {
			return false, nil
		}
		return false, err
	}
	for _, o := range objs {
		if strings.HasSuffix(o.Key, ".manifest") {
			return true, nil
		}
	}
	return false, nil
}

// errInput marks failures to read the input file.
var errInput = errors.New("cannot read input")

// input is an opened input file as a record reader, with a byte counter for
// the progress bar.
type input struct {
	rdr   array.RecordReader
	size  int64
	read  *atomic.Int64
	rows  int64 // total rows when the format says (Parquet), else -1
	close []func() error
}

func (in *input) Close() error {
	var first error
	for i := len(in.close) - 1; i >= 0; i-- {
		if err := in.close[i](); err != nil && first == nil {
			first = err
		}
	}
	return first
}

// countingFile counts the bytes read through Read and ReadAt.
type countingFile struct {
	*os.File
	n *atomic.Int64
}

func (c countingFile) Read(p []byte) (int, error) {
	n, err := c.File.Read(p)
	c.n.Add(int64(n))
	return n, err
}

func (c countingFile) ReadAt(p []byte, off int64) (int, error) {
	n, err := c.File.ReadAt(p, off)
	c.n.Add(int64(n))
	return n, err
}

// sniffFormat tells the input format from its first bytes (and the name
// for CSV).
func sniffFormat(head []byte, name string) (string, error) {
	switch {
	case bytes.HasPrefix(head, []byte("ARROW1")):
		return "arrow-file", nil
	case bytes.HasPrefix(head, []byte("PAR1")):
		return "parquet", nil
	case len(head) >= 8 && bytes.Equal(head[:4], []byte{0xff, 0xff, 0xff, 0xff}):
		return "arrow-stream", nil // continuation marker of an IPC stream message
	}
	switch strings.ToLower(filepath.Ext(name)) {
	case ".csv", ".tsv":
		return "csv", nil
	case ".arrows", ".stream":
		return "arrow-stream", nil
	}
	return "", fmt.Errorf("%w %s: not Arrow IPC (no ARROW1 magic or stream marker), not Parquet (no PAR1 magic), and not named .csv/.tsv; use --format", errInput, name)
}

// openInput opens an Arrow IPC file or stream, a Parquet file or a CSV file
// (header row, types from --schema, the table, or a sample of rows) as a record reader.
func openInput(ctx context.Context, name, format string, co csvOptions, stdin io.Reader) (*input, error) {
	if name == "-" {
		return openStdin(ctx, format, co, stdin)
	}
	f, err := os.Open(name)
	if err != nil {
		return nil, fmt.Errorf("%w: %v", errInput, err)
	}
	fi, err := f.Stat()
	if err != nil || fi.IsDir() {
		f.Close()
		if err == nil {
			err = errors.New("is a directory")
		}
		return nil, fmt.Errorf("%w %s: %v", errInput, name, err)
	}
	in := &input{size: fi.Size(), read: &atomic.Int64{}, rows: -1, close: []func() error{f.Close}}
	cf := countingFile{File: f, n: in.read}
	fail := func(err error) (*input, error) {
		in.Close()
		return nil, fmt.Errorf("%w %s: %v", errInput, name, err)
	}
	if format == "" || format == "auto" {
		head := make([]byte, 8)
		n, _ := io.ReadFull(f, head)
		if format, err = sniffFormat(head[:n], name); err != nil {
			in.Close()
			return nil, err
		}
		if _, err := f.Seek(0, io.SeekStart); err != nil {
			return fail(err)
		}
	}
	switch format {
	case "arrow", "arrow-file", "arrow-stream", "ipc":
		if format != "arrow-stream" {
			// arrowipc.CheckFileAt checks the footer and every block
			// before arrow-go allocates by them (read from f: the progress
			// counts the data read once).
			if fr, err := openIPCFile(f, cf, fi.Size()); err == nil {
				in.rdr = &ipcFileRecords{fr: fr}
				in.close = append(in.close, func() error { return fr.Close() })
				return in, nil
			} else if format == "arrow-file" || isArrowFile(f) {
				return fail(err)
			}
			if _, err := f.Seek(0, io.SeekStart); err != nil {
				return fail(err)
			}
		}
		r, err := arrowipc.NewStreamReader(bufio.NewReaderSize(cf, 1<<20))
		if err != nil {
			return fail(streamErr(err))
		}
		in.rdr = r
		in.close = append(in.close, func() error { r.Release(); return nil })
		return in, nil
	case "parquet":
		pf, err := file.NewParquetReader(cf)
		if err != nil {
			return fail(err)
		}
		in.close = append(in.close, pf.Close)
		fr, err := pqarrow.NewFileReader(pf, pqarrow.ArrowReadProperties{BatchSize: 64 << 10}, memory.DefaultAllocator)
		if err != nil {
			return fail(err)
		}
		rr, err := fr.GetRecordReader(ctx, nil, nil)
		if err != nil {
			return fail(err)
		}
		in.rdr = rr
		in.rows = pf.NumRows()
		in.close = append(in.close, func() error { rr.Release(); return nil })
		return in, nil
	case "csv", "tsv":
		if co.comma == 0 && (format == "tsv" || strings.EqualFold(filepath.Ext(name), ".tsv")) {
			co.comma = '\t'
		}
		r, err := newCSVRecords(bufio.NewReaderSize(cf, 1<<20), name, co)
		if err != nil {
			return fail(err)
		}
		in.rdr = r
		in.close = append(in.close, func() error { r.Release(); return nil })
		return in, nil
	}
	in.Close()
	return nil, fmt.Errorf("%w: unknown --format %q (want auto, arrow, parquet or csv)", errInput, format)
}

// openStdin reads the input from standard input: CSV and Arrow IPC streams
// are streamed; Parquet and Arrow IPC files need random access and are
// copied to a temporary file first (removed once opened).
func openStdin(ctx context.Context, format string, co csvOptions, stdin io.Reader) (*input, error) {
	in := &input{size: -1, read: &atomic.Int64{}, rows: -1}
	br := bufio.NewReaderSize(stdin, 1<<20)
	fail := func(err error) (*input, error) {
		in.Close()
		return nil, fmt.Errorf("%w stdin: %v", errInput, err)
	}
	if format == "" || format == "auto" {
		head, _ := br.Peek(8)
		var err error
		if format, err = sniffFormat(head, "-"); err != nil {
			return nil, fmt.Errorf("%w stdin: not Arrow IPC and not Parquet by its first bytes; give --format csv|arrow|parquet", errInput)
		}
	}
	switch format {
	case "csv", "tsv":
		if co.comma == 0 && format == "tsv" {
			co.comma = '\t'
		}
		r, err := newCSVRecords(br, "stdin", co)
		if err != nil {
			return fail(err)
		}
		in.rdr = r
		in.close = append(in.close, func() error { r.Release(); return nil })
		return in, nil
	case "arrow-stream":
		r, err := arrowipc.NewStreamReader(br)
		if err != nil {
			return fail(streamErr(err))
		}
		in.rdr = r
		in.close = append(in.close, func() error { r.Release(); return nil })
		return in, nil
	case "arrow", "arrow-file", "ipc", "parquet":
		head, _ := br.Peek(8)
		if (format == "arrow" || format == "ipc") && len(head) >= 4 && bytes.Equal(head[:4], []byte{0xff, 0xff, 0xff, 0xff}) {
			return openStdin(ctx, "arrow-stream", co, br)
		}
		f, err := os.CreateTemp("", "lancekeeper-stdin-*")
		if err != nil {
			return fail(err)
		}
		tmp := f.Name()
		_, werr := io.Copy(f, br) // to disk, not memory: stdin may be large
		if cerr := f.Close(); werr == nil {
			werr = cerr
		}
		if werr != nil {
			os.Remove(tmp)
			return fail(werr)
		}
		defer os.Remove(tmp) // the open file stays readable on Unix
		if format == "ipc" {
			format = "arrow"
		}
		return openInput(ctx, tmp, format, co, nil)
	}
	return nil, fmt.Errorf("%w: unknown --format %q (want auto, arrow, parquet or csv)", errInput, format)
}

// streamErr is what arrowipc.GuardStream refused, without arrow-go's
// wrapping ("could not read continuation indicator: …"), when it refused.
func streamErr(err error) error {
	var se *arrowipc.StreamError
	if errors.As(err, &se) {
		return se
	}
	return err
}

// openIPCFile opens an Arrow IPC file after arrowipc.CheckFileAt passed.
func openIPCFile(f *os.File, cf countingFile, size int64) (*ipc.FileReader, error) {
	if err := arrowipc.CheckFileAt(f, size, arrowipc.MaxDecompressedBuffer); err != nil {
		return nil, err
	}
	return ipc.NewFileReader(cf, ipc.WithAllocator(memory.DefaultAllocator))
}

// isArrowFile reports whether f starts with the Arrow IPC file magic (a
// file whose check failed is reported as such, not retried as a stream).
func isArrowFile(f *os.File) bool {
	head := make([]byte, len(arrowipc.Magic))
	n, _ := f.ReadAt(head, 0)
	return string(head[:n]) == arrowipc.Magic
}

// ipcFileRecords iterates the record batches of an IPC file.
type ipcFileRecords struct {
	fr  *ipc.FileReader
	i   int
	cur arrow.RecordBatch
	err error
}

func (r *ipcFileRecords) Retain()               {}
func (r *ipcFileRecords) Release()              {}
func (r *ipcFileRecords) Schema() *arrow.Schema { return r.fr.Schema() }
func (r *ipcFileRecords) Err() error            { return r.err }
func (r *ipcFileRecords) Next() bool {
	if r.err != nil || r.i >= r.fr.NumRecords() {
		return false
	}
	rec, err := r.fr.RecordBatch(r.i)
	if err != nil {
		r.err = err
		return false
	}
	r.i++
	r.cur = rec
	return true
}
func (r *ipcFileRecords) RecordBatch() arrow.RecordBatch { return r.cur }
func (r *ipcFileRecords) Record() arrow.RecordBatch      { return r.cur }

func isTerminal(f *os.File) bool {
	fi, err := f.Stat()
	return err == nil && fi.Mode()&os.ModeCharDevice != 0
}

// progressBar draws "[=====>    ]  45%  1234567 rows  12.3 MB/s" on one
// stderr line, at most ten times a second.
type progressBar struct {
	w     io.Writer
	in    *input
	start time.Time
	last  time.Time
	rows  int64
}

func newProgressBar(w io.Writer, in *input) *progressBar {
	return &progressBar{w: w, in: in, start: time.Now()}
}

func (p *progressBar) update(rows int64) {
	p.rows = rows
	if time.Since(p.last) < 100*time.Millisecond {
		return
	}
	p.last = time.Now()
	p.draw()
}

func (p *progressBar) draw() {
	frac := 0.0
	switch {
	case p.in.rows > 0:
		frac = float64(p.rows) / float64(p.in.rows)
	case p.in.size > 0:
		frac = float64(p.in.read.Load()) / float64(p.in.size)
	}
	frac = min(max(frac, 0), 1)
	const width = 30
	fill := int(frac * width)
	bar := strings.Repeat("=", fill) + strings.Repeat(" ", width-fill)
	if fill < width {
		bar = bar[:fill] + ">" + bar[fill+1:]
	}
	secs := time.Since(p.start).Seconds()
	rate := 0.0
	if secs > 0 {
		rate = float64(p.in.read.Load()) / secs / 1e6
	}
	fmt.Fprintf(p.w, "\r[%s] %3.0f%%  %d rows  %.1f MB/s", bar, frac*100, p.rows, rate)
}

func (p *progressBar) done(ok bool) {
	if ok {
		p.in.read.Store(p.in.size)
		if p.in.rows > 0 {
			p.rows = p.in.rows
		}
	}
	p.draw()
	fmt.Fprintln(p.w)
}
