package inspect

import (
	"fmt"
	"io"
	"sort"
	"strings"
	"text/tabwriter"
)

// WriteText writes the human-readable form of a summary.
func WriteText(w io.Writer, s *Summary) error {
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	row := func(k, format string, args ...any) {
		fmt.Fprintf(tw, "%s\t%s\n", k, fmt.Sprintf(format, args...))
	}
	row("dataset", "%s", s.Dataset)
	row("version", "%d (branch %s)", s.Version, s.Branch)
	row("manifest", "%s (%d bytes, %s naming)", s.ManifestPath, s.ManifestSize, s.NamingScheme)
	row("timestamp", "%s", orNone(s.Timestamp, "(none recorded)"))
	if s.WriterVer != nil {
		v := s.WriterVer.Version
		if s.WriterVer.Prerelease != nil {
			v += "-" + *s.WriterVer.Prerelease
		}
		if s.WriterVer.BuildMetadata != nil {
			v += "+" + *s.WriterVer.BuildMetadata
		}
		row("writer", "%s %s", s.WriterVer.Library, v)
	} else {
		row("writer", "(none recorded: an old Lance writer)")
	}
	if s.DataFormat != nil {
		row("data format", "%s %s", s.DataFormat.FileFormat, s.DataFormat.Version)
	} else {
		row("data format", "(none recorded; inferred from the data files)")
	}
	row("reader flags", "%d %s", s.ReaderFlags, flagList(s.ReaderFlagNames))
	row("writer flags", "%d %s", s.WriterFlags, flagList(s.WriterFlagNames))
	switch {
	case s.ReadRefused == "" && s.WriteRefused == "":
		row("support", "readable and writable by this build")
	default:
		if s.ReadRefused != "" {
			row("support", "a reader would REFUSE: %s", s.ReadRefused)
		} else {
			row("support", "readable by this build")
		}
		if s.WriteRefused != "" {
			row("", "a writer would REFUSE: %s", s.WriteRefused)
		}
	}
	row("fragments", "%d (%d data files)", s.NumFragments, s.NumDataFiles)
	if s.PhysicalRowsError != "" {
		row("", "physical rows unknown: %s", s.PhysicalRowsError)
	}
	switch {
	case s.NumRows != nil:
		row("rows", "%d live (%d deleted)", *s.NumRows, *s.DeletedRows)
	case s.NumRowsError != "":
		row("rows", "unknown: %s", s.NumRowsError)
	default:
		row("rows", "not counted")
	}
	row("tags", "%s", orNone(strings.Join(s.Tags, ", "), "(none)"))
	if len(s.Config) > 0 {
		keys := make([]string, 0, len(s.Config))
		for k := range s.Config {
			keys = append(keys, k)
		}
		sort.Strings(keys)
		for i, k := range keys {
			label := ""
			if i == 0 {
				label = "config"
			}
			row(label, "%s = %s", k, s.Config[k])
		}
	}
	if err := tw.Flush(); err != nil {
		return err
	}
	fmt.Fprintf(w, "schema (%d fields)\n", len(s.Fields))
	writeTree(w, s.Fields)
	if len(s.Indices) == 0 {
		_, err := fmt.Fprintln(w, "indices: none")
		return err
	}
	fmt.Fprintf(w, "indices (%d)\n", len(s.Indices))
	for _, ix := range s.Indices {
		sys := ""
		if ix.System {
			sys = " [system]"
		}
		fmt.Fprintf(w, "  %s  %s on %s  uuid %s  built at version %d%s\n",
			ix.Name, ix.Type, strings.Join(ix.Fields, ", "), ix.UUID, ix.DatasetVersion, sys)
	}
	return nil
}

func orNone(s, none string) string {
	if s == "" {
		return none
	}
	return s
}

func flagList(names []string) string {
	if len(names) == 0 {
		return "(none)"
	}
	return "(" + strings.Join(names, ", ") + ")"
}

// writeTree prints the flattened schema as an indented tree.
func writeTree(w io.Writer, fields []Field) {
	kids := map[int32][]int{}
	ids := map[int32]bool{}
	for _, f := range fields {
		ids[f.ID] = true
	}
	var roots []int
	for i, f := range fields {
		if f.ParentID < 0 || !ids[f.ParentID] || f.ParentID == f.ID {
			roots = append(roots, i)
		} else {
			kids[f.ParentID] = append(kids[f.ParentID], i)
		}
	}
	seen := map[int]bool{}
	var walk func(i, depth int)
	walk = func(i, depth int) {
		if seen[i] || depth > 64 {
			return
		}
		seen[i] = true
		f := fields[i]
		null := "not null"
		if f.Nullable {
			null = "nullable"
		}
		fmt.Fprintf(w, "%s%s: %s  (%s, id %d, lance %s)\n", strings.Repeat("  ", depth+1), f.Name, f.ArrowType, null, f.ID, f.LogicalType)
		for _, k := range kids[f.ID] {
			walk(k, depth+1)
		}
	}
	for _, r := range roots {
		walk(r, 0)
	}
}
