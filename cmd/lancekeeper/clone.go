package main

import (
	"errors"
	"fmt"
	"io"
	"os"
	"strings"
	"time"

	"github.com/lancekeeper/lancekeeper/inspect"
	"github.com/lancekeeper/lancekeeper/snapshot"
	"github.com/lancekeeper/lancekeeper/store"
)

// Clone is `lancekeeper clone`.
func (commands) Clone() command {
	return command{
		name:    "clone",
		usage:   "SRC DST [--version N | --tag T] [--branch B] [--deep] [--progress] [--json]",
		summary: "Clone a version to a new dataset: shallow (references the source's files) or --deep (copies them; resumable).",
		run:     runClone,
	}
}

// cloneJSON is the `clone --json` output.
type cloneJSON struct {
	Source       string   `json:"source"`
	Target       string   `json:"target"`
	Deep         bool     `json:"deep"`
	Version      uint64   `json:"version"`
	ManifestPath string   `json:"manifest_path"`
	ReaderFlags  uint64   `json:"reader_feature_flags"`
	WriterFlags  uint64   `json:"writer_feature_flags"`
	FlagNames    []string `json:"reader_feature_flag_names"`
	BasePaths    []string `json:"base_paths"`
	FilesCopied  int      `json:"files_copied"`
	FilesSkipped int      `json:"files_skipped"`
	BytesCopied  int64    `json:"bytes_copied"`
}

func runClone(e *env, args []string) int {
	c := commands{}.Clone()
	fs := newFlagSet(e, c)
	version := fs.Uint64("version", 0, "clone this version (default: the latest)")
	tag := fs.String("tag", "", "clone the version this tag points at")
	branch := fs.String("branch", "", "clone from this branch (default: main)")
	deep := fs.Bool("deep", false, "copy every referenced file instead of referencing the source")
	progress := fs.Bool("progress", false, "show the copy progress bar on stderr even when it is not a terminal")
	asJSON := fs.Bool("json", false, "print JSON")
	pos, err := parseArgs(fs, args)
	if err != nil {
		return parseFailed(err)
	}
	if len(pos) != 2 {
		fs.Usage()
		return exitBadInput
	}
	if *version != 0 && *tag != "" {
		return fail(e, c.name, exitBadInput, errors.New("give --version or --tag, not both"))
	}
	src, err := openDataset(e.ctx, pos[0])
	if err != nil {
		return fail(e, c.name, exitBadInput, err)
	}
	defer src.Close()
	dstStore, err := store.Open(e.ctx, pos[1])
	if err != nil {
		return fail(e, c.name, exitBadInput, err)
	}
	dst := snapshot.NewDataset(pos[1], dstStore)
	defer dstStore.Close()
	opts := snapshot.CloneOptions{Source: snapshot.Ref{Version: *version, Tag: *tag, Branch: *branch}, Deep: *deep}
	var bar *copyBar
	if *deep && (*progress || isTerminal(os.Stderr)) {
		bar = &copyBar{w: e.stderr, start: time.Now()}
		opts.Progress = bar.update
	}
	res, err := src.CloneTo(e.ctx, dst, opts)
	if bar != nil {
		bar.done(err == nil)
	}
	if err != nil {
		return fail(e, c.name, snapshotCode(err), err)
	}
	m := res.Snapshot.Manifest()
	if *asJSON {
		out := cloneJSON{Source: pos[0], Target: pos[1], Deep: *deep, Version: res.Snapshot.Version, ManifestPath: res.Snapshot.Path,
			ReaderFlags: m.GetReaderFeatureFlags(), WriterFlags: m.GetWriterFeatureFlags(), FlagNames: inspect.FlagNames(m.GetReaderFeatureFlags()),
			BasePaths: []string{}, FilesCopied: res.Copied, FilesSkipped: res.Skipped, BytesCopied: res.Bytes}
		for _, bp := range m.GetBasePaths() {
			out.BasePaths = append(out.BasePaths, bp.GetPath())
		}
		return printJSON(e, c.name, out)
	}
	kind := "shallow"
	if *deep {
		kind = "deep"
	}
	fmt.Fprintf(e.stdout, "%s clone of %s version %d -> %s (reader flags %d, writer flags %d)\n",
		kind, pos[0], res.Snapshot.Version, pos[1], m.GetReaderFeatureFlags(), m.GetWriterFeatureFlags())
	if *deep {
		fmt.Fprintf(e.stdout, "copied %d files (%d bytes), %d already present\n", res.Copied, res.Bytes, res.Skipped)
	}
	return exitOK
}

// copyBar draws "[=====>    ]  45%  12/30 files  1.2 MB/s" on one line.
type copyBar struct {
	w     io.Writer
	start time.Time
	last  snapshot.CopyProgress
	drawn time.Time
}

func (b *copyBar) update(p snapshot.CopyProgress) {
	b.last = p
	if p.FilesDone < p.FilesTotal && time.Since(b.drawn) < 100*time.Millisecond {
		return
	}
	b.draw()
}

func (b *copyBar) draw() {
	b.drawn = time.Now()
	p := b.last
	frac := 1.0
	if p.BytesTotal > 0 {
		frac = float64(p.BytesDone) / float64(p.BytesTotal)
	} else if p.FilesTotal > 0 {
		frac = float64(p.FilesDone) / float64(p.FilesTotal)
	}
	const width = 30
	n := int(frac * width)
	bar := strings.Repeat("=", n)
	if n < width {
		bar += ">" + strings.Repeat(" ", width-n-1)
	}
	rate := float64(p.BytesDone) / max(time.Since(b.start).Seconds(), 1e-3) / 1e6
	fmt.Fprintf(b.w, "\r[%s] %3.0f%%  %d/%d files  %.1f MB/s", bar, frac*100, p.FilesDone, p.FilesTotal, rate)
}

func (b *copyBar) done(ok bool) {
	if p := b.last; p.FilesDone < p.FilesTotal || p.FilesTotal == 0 {
		b.draw()
	}
	if ok {
		fmt.Fprintln(b.w)
	} else {
		fmt.Fprintln(b.w, "  (interrupted; run the same command again to resume)")
	}
}
