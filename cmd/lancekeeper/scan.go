package main

import (
	"bufio"
	"context"
	"encoding/csv"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/ipc"
	"github.com/apache/arrow-go/v18/parquet"
	"github.com/apache/arrow-go/v18/parquet/pqarrow"

	"github.com/lancekeeper/lancekeeper/datafile"
	"github.com/lancekeeper/lancekeeper/filter"
	"github.com/lancekeeper/lancekeeper/scan"
	"github.com/lancekeeper/lancekeeper/snapshot"
)

func (commands) Scan() command {
	return command{
		name: "scan",
		usage: "DATASET [--where PRED] [--columns a,b.c] [--limit N] [--version N | --tag T] [--branch B] [--with-row-id] [--with-row-addr] " +
			"[--format table|csv|json|jsonl|arrow|parquet] [--output FILE] [--batch-size N] [--no-prune] [--explain] [--progress]",
		summary: "Read rows (pruned by zone write seeds and ZoneMap indices, filtered exactly as Lance 12 filters) and stream them out; --explain prints the plan only.",
		run:     runScan,
	}
}

// scanErrorCode maps scan errors to exit codes: bad predicates, options
// and corrupt data are bad input (2).
func scanErrorCode(err error) int {
	var fe *datafile.FormatError
	switch {
	case errors.Is(err, filter.ErrSyntax), errors.Is(err, filter.ErrType), errors.Is(err, scan.ErrBadOptions),
		errors.Is(err, snapshot.ErrBadOptions), errors.As(err, &fe), errors.Is(err, scan.ErrRowIDs):
		return exitBadInput
	}
	return errorCode(err)
}

func runScan(e *env, args []string) int {
	c := commands{}.Scan()
	fs := newFlagSet(e, c)
	where := fs.String("where", "", "SQL predicate, e.g. \"x > 5 AND (s LIKE 'ab%' OR y IS NULL)\"")
	columns := fs.String("columns", "", "comma-separated columns to output (nested: a.b); default all")
	limit := fs.Int64("limit", 0, "stop after N rows")
	version := fs.Uint64("version", 0, "read this version (default: the latest)")
	tag := fs.String("tag", "", "read the version this tag points at")
	branch := fs.String("branch", "", "read this branch instead of main")
	withRowID := fs.Bool("with-row-id", false, "add the _rowid column (stable row ids when the table has them)")
	withRowAddr := fs.Bool("with-row-addr", false, "add the _rowaddr column (fragment id << 32 | offset)")
	format := fs.String("format", "table", "output format: table, csv, json, jsonl, arrow (IPC stream), parquet")
	output := fs.String("output", "", "write to FILE instead of stdout")
	batch := fs.Int("batch-size", 0, "rows per batch (default 8192)")
	noPrune := fs.Bool("no-prune", false, "read every zone (same answer, full cost)")
	explain := fs.Bool("explain", false, "print the plan (fragments and zones kept per term, bytes to read) without reading data")
	progress := fs.Bool("progress", false, "report rows and bytes read on stderr")
	pos, err := parseArgs(fs, args)
	if err != nil {
		return parseFailed(err)
	}
	if len(pos) != 1 {
		fs.Usage()
		return exitBadInput
	}
	switch *format {
	case "table", "csv", "json", "jsonl", "arrow", "parquet":
	default:
		return fail(e, c.name, exitBadInput, fmt.Errorf("--format %q: want table, csv, json, jsonl, arrow or parquet", *format))
	}
	opts := scan.Options{Ref: snapshot.Ref{Version: *version, Tag: *tag, Branch: *branch}, Filter: *where, Limit: *limit,
		WithRowID: *withRowID, WithRowAddr: *withRowAddr, BatchSize: *batch, NoPrune: *noPrune}
	if *columns != "" {
		for _, col := range strings.Split(*columns, ",") {
			opts.Columns = append(opts.Columns, strings.TrimSpace(col))
		}
	}
	d, err := openDataset(e.ctx, pos[0])
	if err != nil {
		return fail(e, c.name, exitBadInput, err)
	}
	defer d.Close()
	s, err := scan.New(e.ctx, d, opts)
	if err != nil {
		return fail(e, c.name, scanErrorCode(err), fmt.Errorf("%s: %w", pos[0], err))
	}
	defer s.Close()
	if *explain {
		p, err := s.Explain(e.ctx)
		if err != nil {
			return fail(e, c.name, scanErrorCode(err), fmt.Errorf("%s: %w", pos[0], err))
		}
		if err := p.WriteText(e.stdout); err != nil {
			return fail(e, c.name, exitFailure, err)
		}
		return exitOK
	}
	out := e.stdout
	var file *os.File
	if *output != "" {
		if file, err = os.Create(*output); err != nil {
			return fail(e, c.name, exitFailure, err)
		}
		out = file
	}
	bw := bufio.NewWriterSize(out, 1<<20)
	rows, err := streamScan(e.ctx, s, bw, *format, *progress, e.stderr)
	if ferr := bw.Flush(); err == nil {
		err = ferr
	}
	if file != nil {
		if cerr := file.Close(); err == nil {
			err = cerr
		}
		if err != nil {
			os.Remove(*output) // never leave a partial export behind
		}
	}
	if err != nil {
		if errors.Is(err, context.Canceled) {
			fmt.Fprintf(e.stderr, "lancekeeper scan: interrupted after %d rows\n", rows)
			return 130
		}
		return fail(e, c.name, scanErrorCode(err), fmt.Errorf("%s: %w", pos[0], err))
	}
	return exitOK
}

// rowSink writes record batches in one output format.
type rowSink interface {
	write(rec arrow.RecordBatch) error
	close() error
}

func streamScan(ctx context.Context, s *scan.Scanner, w io.Writer, format string, progress bool, stderr io.Writer) (int64, error) {
	rd := s.Reader(ctx)
	defer rd.Release()
	var sink rowSink
	var err error
	switch format {
	case "table":
		sink = &tableSink{w: w, sch: s.Schema()}
	case "csv":
		sink, err = newCSVSink(w, s.Schema())
	case "json", "jsonl":
		sink = &jsonSink{w: w, lines: format == "jsonl"}
	case "arrow":
		sink = &ipcSink{w: ipc.NewWriter(w, ipc.WithSchema(s.Schema()))}
	case "parquet":
		var pw *pqarrow.FileWriter
		pw, err = pqarrow.NewFileWriter(s.Schema(), w, parquet.NewWriterProperties(), pqarrow.DefaultWriterProps())
		sink = &parquetSink{w: pw}
	}
	if err != nil {
		return 0, err
	}
	var rows int64
	last := time.Now()
	start := last
	report := func(final bool) {
		req, b := s.BytesRead()
		el := time.Since(start).Seconds()
		end := "\r"
		if final {
			end = "\n"
		}
		fmt.Fprintf(stderr, "scan: %d rows, %d bytes read in %d requests, %.1fs%s", rows, b, req, el, end)
	}
	for rd.Next() {
		rec := rd.RecordBatch()
		if err := sink.write(rec); err != nil {
			return rows, err
		}
		rows += rec.NumRows()
		if progress && time.Since(last) > time.Second {
			report(false)
			last = time.Now()
		}
	}
	if err := rd.Err(); err != nil {
		if progress {
			report(true)
		}
		return rows, err
	}
	if progress {
		report(true)
	}
	return rows, sink.close()
}

func cellString(a arrow.Array, i int) string {
	if a.IsNull(i) {
		return ""
	}
	return a.ValueStr(i)
}

type tableSink struct {
	w      io.Writer
	sch    *arrow.Schema
	header bool
}

func (t *tableSink) write(rec arrow.RecordBatch) error {
	tw := tabwriter.NewWriter(t.w, 0, 0, 2, ' ', 0)
	if !t.header {
		names := make([]string, len(t.sch.Fields()))
		for i, f := range t.sch.Fields() {
			names[i] = f.Name
		}
		fmt.Fprintln(tw, strings.Join(names, "\t"))
		t.header = true
	}
	row := make([]string, rec.NumCols())
	for i := 0; i < int(rec.NumRows()); i++ {
		for j := range row {
			if rec.Column(j).IsNull(i) {
				row[j] = "null"
			} else {
				row[j] = strings.NewReplacer("\t", "\\t", "\n", "\\n").Replace(rec.Column(j).ValueStr(i))
			}
		}
		fmt.Fprintln(tw, strings.Join(row, "\t"))
	}
	return tw.Flush()
}

func (t *tableSink) close() error {
	if !t.header {
		return t.write(array.NewRecordBatch(t.sch, emptyColumns(t.sch), 0))
	}
	return nil
}

func emptyColumns(sch *arrow.Schema) []arrow.Array {
	out := make([]arrow.Array, len(sch.Fields()))
	for i, f := range sch.Fields() {
		out[i] = array.MakeArrayOfNull(nil, f.Type, 0)
	}
	return out
}

type csvSink struct{ w *csv.Writer }

func newCSVSink(w io.Writer, sch *arrow.Schema) (*csvSink, error) {
	c := csv.NewWriter(w)
	names := make([]string, len(sch.Fields()))
	for i, f := range sch.Fields() {
		names[i] = f.Name
	}
	return &csvSink{w: c}, c.Write(names)
}

func (c *csvSink) write(rec arrow.RecordBatch) error {
	row := make([]string, rec.NumCols())
	for i := 0; i < int(rec.NumRows()); i++ {
		for j := range row {
			row[j] = cellString(rec.Column(j), i)
		}
		if err := c.w.Write(row); err != nil {
			return err
		}
	}
	c.w.Flush()
	return c.w.Error()
}

func (c *csvSink) close() error { c.w.Flush(); return c.w.Error() }

type jsonSink struct {
	w       io.Writer
	lines   bool
	started bool
}

func (j *jsonSink) write(rec arrow.RecordBatch) error {
	names := rec.Schema().Fields()
	for i := 0; i < int(rec.NumRows()); i++ {
		var sb strings.Builder
		sb.WriteByte('{')
		for c := range names {
			if c > 0 {
				sb.WriteByte(',')
			}
			k, _ := json.Marshal(names[c].Name)
			sb.Write(k)
			sb.WriteByte(':')
			v, err := json.Marshal(rec.Column(c).GetOneForMarshal(i))
			if err != nil {
				return err
			}
			sb.Write(v)
		}
		sb.WriteByte('}')
		sep := "\n"
		if !j.lines {
			sep = ",\n"
			if !j.started {
				sep = "[\n"
			}
			j.started = true
			if _, err := io.WriteString(j.w, sep); err != nil {
				return err
			}
			sep = ""
		}
		if _, err := io.WriteString(j.w, sb.String()+map[bool]string{true: "\n", false: ""}[j.lines]); err != nil {
			return err
		}
	}
	return nil
}

func (j *jsonSink) close() error {
	if j.lines {
		return nil
	}
	if !j.started {
		_, err := io.WriteString(j.w, "[]\n")
		return err
	}
	_, err := io.WriteString(j.w, "\n]\n")
	return err
}

type ipcSink struct{ w *ipc.Writer }

func (s *ipcSink) write(rec arrow.RecordBatch) error { return s.w.Write(rec) }
func (s *ipcSink) close() error                      { return s.w.Close() }

type parquetSink struct{ w *pqarrow.FileWriter }

func (s *parquetSink) write(rec arrow.RecordBatch) error { return s.w.WriteBuffered(rec) }
func (s *parquetSink) close() error                      { return s.w.Close() }
