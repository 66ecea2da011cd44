package main

import (
	"errors"
	"fmt"

	"github.com/lancekeeper/lancekeeper/inspect"
	"github.com/lancekeeper/lancekeeper/snapshot"
)

// Restore is `lancekeeper restore`.
func (commands) Restore() command {
	return command{
		name:    "restore",
		usage:   "DATASET (--version N | --tag T) [--branch B] [--json]",
		summary: "Make an old version the new head (content of the old version, sticky flags kept from the head).",
		run:     runRestore,
	}
}

// restoreJSON is the `restore --json` output.
type restoreJSON struct {
	Version         uint64   `json:"version"`
	RestoredVersion uint64   `json:"restored_version"`
	ReadVersion     uint64   `json:"read_version"`
	Branch          *string  `json:"branch"`
	ManifestPath    string   `json:"manifest_path"`
	ReaderFlags     uint64   `json:"reader_feature_flags"`
	WriterFlags     uint64   `json:"writer_feature_flags"`
	FlagNames       []string `json:"reader_feature_flag_names"`
	Attempts        int      `json:"attempts"`
}

func runRestore(e *env, args []string) int {
	c := commands{}.Restore()
	fs := newFlagSet(e, c)
	version := fs.Uint64("version", 0, "restore this version")
	tag := fs.String("tag", "", "restore the version this tag points at (on the tag's branch)")
	branch := fs.String("branch", "", "restore on this branch (default: main)")
	asJSON := fs.Bool("json", false, "print JSON")
	pos, err := parseArgs(fs, args)
	if err != nil {
		return parseFailed(err)
	}
	if len(pos) != 1 {
		fs.Usage()
		return exitBadInput
	}
	if (*version == 0) == (*tag == "") {
		return fail(e, c.name, exitBadInput, errors.New("give exactly one of --version N or --tag T"))
	}
	d, err := openDataset(e.ctx, pos[0])
	if err != nil {
		return fail(e, c.name, exitBadInput, err)
	}
	defer d.Close()
	s, res, err := d.Restore(e.ctx, snapshot.Ref{Version: *version, Tag: *tag, Branch: *branch}, snapshot.RestoreOptions{})
	if err != nil {
		return fail(e, c.name, snapshotCode(err), err)
	}
	m := s.Manifest()
	target := res.Transaction.GetRestore().GetVersion()
	if *asJSON {
		out := restoreJSON{Version: s.Version, RestoredVersion: target, ReadVersion: res.ReadVersion,
			ManifestPath: snapshot.BranchRoot(s.Branch), ReaderFlags: m.GetReaderFeatureFlags(),
			WriterFlags: m.GetWriterFeatureFlags(), FlagNames: inspect.FlagNames(m.GetReaderFeatureFlags()), Attempts: res.Attempts}
		if out.ManifestPath != "" {
			out.ManifestPath += "/"
		}
		out.ManifestPath += s.Path
		if s.Branch != "" {
			b := s.Branch
			out.Branch = &b
		}
		return printJSON(e, c.name, out)
	}
	fmt.Fprintf(e.stdout, "restored %s version %d as version %d (reader flags %d, writer flags %d)\n",
		branchName(s.Branch), target, s.Version, m.GetReaderFeatureFlags(), m.GetWriterFeatureFlags())
	return exitOK
}
