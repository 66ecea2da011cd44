package main

import (
	"encoding/binary"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/lancekeeper/lancekeeper/internal/arrowipc"
)

// TestItem13_HostileIPCLengths (issue 15 item 13, found by
// commit.FuzzWriteIPCInput): an Arrow IPC input whose schema claims 2^31
// fields made arrow-go allocate tens of GB and the process die ("fatal
// error: runtime: out of memory", no recover possible). `write` checks the
// stream (arrowipc.GuardStream) and the file (arrowipc.CheckFileAt) first:
// exit 2, one line naming the schema.
func TestItem13_HostileIPCLengths(t *testing.T) {
	tmp := t.TempDir()
	stream, err := os.ReadFile(filepath.Join("..", "..", "internal", "arrowipc", "testdata", "stream", "schema-field-count-2e31.arrows"))
	if err != nil {
		t.Fatal(err)
	}
	good := filepath.Join(tmp, "good.arrow")
	shortBoolIPC(t, good, 10, 10)
	file, err := os.ReadFile(good)
	if err != nil {
		t.Fatal(err)
	}
	pf, err := arrowipc.ParseFile(file)
	if err != nil {
		t.Fatal(err)
	}
	st, _, err := pf.Schema()
	if err != nil {
		t.Fatal(err)
	}
	fstart, _, _, err := st.Vector(1, 4) // the schema's fields
	if err != nil {
		t.Fatal(err)
	}
	binary.LittleEndian.PutUint32(file[pf.FooterStart+fstart-4:], 1<<31-1)
	for name, b := range map[string][]byte{"stream.arrows": stream, "file.arrow": file} {
		in := filepath.Join(tmp, name)
		if err := os.WriteFile(in, b, 0o644); err != nil {
			t.Fatal(err)
		}
		code, _, errs := runCLI(t, "write", filepath.Join(tmp, "ds-"+name), "--from", in)
		if code != exitBadInput || strings.Count(strings.TrimSpace(errs), "\n") != 0 || !strings.Contains(errs, "schema") {
			t.Fatalf("%s: exit %d\n%s", name, code, errs)
		}
		t.Logf("%s: %s", name, strings.TrimSpace(errs))
	}
}
