package main

import (
	"encoding/binary"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestScanCLI_CorruptPage: data files whose column (page) metadata is
// damaged give exit 2, an error naming the file, the column and the
// offset, and nothing printed (not even the CSV header) (issue 13, "Bad input").
func TestScanCLI_CorruptPage(t *testing.T) {
	ds := seededDataset(t)
	ents, err := os.ReadDir(filepath.Join(ds, "data"))
	if err != nil || len(ents) == 0 {
		t.Fatal(err)
	}
	for _, e := range ents {
		p := filepath.Join(ds, "data", e.Name())
		b, err := os.ReadFile(p)
		if err != nil {
			t.Fatal(err)
		}
		// Footer: column metadata start, its offset table; corrupt every
		// column's metadata bytes after the first few (the page table).
		foot := b[len(b)-40:]
		cmoTable := binary.LittleEndian.Uint64(foot[8:])
		ncols := binary.LittleEndian.Uint32(foot[28:])
		for c := uint32(0); c < ncols; c++ {
			pos := binary.LittleEndian.Uint64(b[cmoTable+16*uint64(c):])
			n := binary.LittleEndian.Uint64(b[cmoTable+16*uint64(c)+8:])
			for i := pos + 2; i < pos+n && i < pos+14; i++ {
				b[i] = 0xff
			}
		}
		if err := os.WriteFile(p, b, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	code, out, errs := runCLI(t, "scan", ds, "--format", "csv")
	if code != exitBadInput || !strings.Contains(errs, ".lance") || !strings.Contains(errs, "column 0 metadata") || out != "" {
		t.Fatalf("exit %d\nstdout %q\nstderr %s", code, out, errs)
	}
}
