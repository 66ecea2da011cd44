package main

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/apache/arrow-go/v18/arrow"

	"github.com/lancekeeper/lancekeeper/manifest"
	"github.com/lancekeeper/lancekeeper/scan"
	"github.com/lancekeeper/lancekeeper/store"
)

// csvLines makes a CSV body: header, then rows produced by f(i) for i < n.
func csvLines(header string, n int, f func(i int) string) string {
	var b strings.Builder
	b.WriteString(header + "\n")
	for i := 0; i < n; i++ {
		b.WriteString(f(i) + "\n")
	}
	return b.String()
}

func writeText(t *testing.T, dir, name, body string) string {
	t.Helper()
	p := filepath.Join(dir, name)
	if err := os.WriteFile(p, []byte(body), 0o644); err != nil {
		t.Fatal(err)
	}
	return p
}

func tableSchemaOf(t *testing.T, ds string) *arrow.Schema {
	t.Helper()
	st, err := store.Open(context.Background(), ds)
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	m, _, err := manifest.LoadLatest(context.Background(), st.Bucket(), st.KeyPrefix())
	if err != nil {
		t.Fatal(err)
	}
	s, err := scan.TableSchema(m.Manifest)
	if err != nil {
		t.Fatal(err)
	}
	return s
}

// TestCSVInfer_SampleNotFirstRow: types come from a sample of rows (an empty
// field is null and never decides), widening int → float → string; bool,
// date and timestamp are kept.
func TestCSVInfer_SampleNotFirstRow(t *testing.T) {
	cases := []struct {
		name string
		body string
		want string // type of column v
	}{
		{"empty first field is null, later ints decide", csvLines("v,k", 10, func(i int) string {
			if i == 0 {
				return ",1"
			}
			return fmt.Sprint(i) + ",1"
		}), "int64"},
		{"int widens to float at row 500", csvLines("v,k", 800, func(i int) string {
			if i == 500 {
				return "1.5,1"
			}
			return fmt.Sprint(i) + ",1"
		}), "float64"},
		{"int then text widens to string", csvLines("v,k", 20, func(i int) string {
			if i == 19 {
				return "abc,1"
			}
			return fmt.Sprint(i) + ",1"
		}), "utf8"},
		{"float then int stays float", "v,k\n1.5,1\n2,1\n", "float64"},
		{"bool", "v,k\ntrue,1\n,1\nfalse,1\n", "bool"},
		{"date", "v,k\n2024-01-02,1\n,1\n2024-12-31,1\n", "date32"},
		{"timestamp", "v,k\n2024-01-02 03:04:05,1\n2024-01-02 03:04:06,1\n", "timestamp[s]"},
		{"timestamp with fraction", "v,k\n2024-01-02 03:04:05,1\n2024-01-02 03:04:06.5,1\n", "timestamp[ns]"},
		{"bool and int mix to string", "v,k\ntrue,1\n1,1\n", "utf8"},
		{"only nulls", "v,k\n,1\nNULL,1\n", "utf8"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			r, err := newCSVRecords(strings.NewReader(tc.body), "in.csv", csvOptions{})
			if err != nil {
				t.Fatal(err)
			}
			defer r.Release()
			if got := r.Schema().Field(0).Type.String(); got != tc.want {
				t.Fatalf("type %s, want %s", got, tc.want)
			}
			rows := 0
			for r.Next() {
				rows += int(r.RecordBatch().NumRows())
			}
			if err := r.Err(); err != nil {
				t.Fatal(err)
			}
			if want := strings.Count(tc.body, "\n") - 1; rows != want {
				t.Fatalf("%d rows, want %d", rows, want)
			}
		})
	}
}

// TestCSVSchemaFlag: --schema name:type,… parses, overrides inference and
// is refused (exit 2) when malformed.
func TestCSVSchemaFlag(t *testing.T) {
	good := []struct{ in, want string }{
		{"id:int32,name:utf8", "id: int32, name: utf8"},
		{" id : int16! , t:timestamp[us]", "id: int16, t: timestamp[us]"},
		{"b:bool,f:float32,d:date32,u:uint8", "b: bool, f: float32, d: date32, u: uint8"},
	}
	for _, tc := range good {
		s, err := parseCSVSchema(tc.in)
		if err != nil {
			t.Fatalf("%q: %v", tc.in, err)
		}
		var parts []string
		for _, f := range s.Fields() {
			parts = append(parts, f.Name+": "+f.Type.String())
		}
		if got := strings.Join(parts, ", "); got != tc.want {
			t.Fatalf("%q: %s, want %s", tc.in, got, tc.want)
		}
	}
	tmp := t.TempDir()
	in := writeText(t, tmp, "in.csv", "id,name\n1,a\n2,b\n")
	bad := []struct{ name, schema, want string }{
		{"unknown type", "id:int128", `unknown type "int128"`},
		{"no type", "id", "want name:type"},
		{"twice", "id:int32,id:int64", "given twice"},
		{"column not in header", "nope:int32", `"nope"`},
	}
	for _, tc := range bad {
		t.Run(tc.name, func(t *testing.T) {
			code, _, errs := runCLI(t, "write", filepath.Join(tmp, "ds-"+strings.ReplaceAll(tc.name, " ", "_")), "--from", in, "--schema", tc.schema)
			if code != exitBadInput || !strings.Contains(errs, tc.want) {
				t.Fatalf("exit %d, stderr %q; want 2 and %q", code, errs, tc.want)
			}
		})
	}
	ds := filepath.Join(tmp, "typed")
	if code, _, errs := runCLI(t, "write", ds, "--from", in, "--schema", "id:int32!"); code != exitOK {
		t.Fatalf("exit %d: %s", code, errs)
	}
	s := tableSchemaOf(t, ds)
	if got := s.Field(0).Type.ID(); got != arrow.INT32 || s.Field(0).Nullable {
		t.Fatalf("id: %s nullable=%v, want int32 not null", s.Field(0).Type, s.Field(0).Nullable)
	}
	if got := s.Field(1).Type.ID(); got != arrow.STRING {
		t.Fatalf("name: %s, want utf8 (inferred)", s.Field(1).Type)
	}
}

// TestCSVDelimiterFlag: --delimiter takes one character; \t means tab.
func TestCSVDelimiterFlag(t *testing.T) {
	tmp := t.TempDir()
	cases := []struct {
		name, delim, body string
		code              int
		want              string
	}{
		{"semicolon", ";", "a;b\n1;x\n2;y\n", exitOK, "2 rows"},
		{"backslash t", `\t`, "a\tb\n1\tx\n", exitOK, "1 rows"},
		{"pipe", "|", "a|b\n1|x\n", exitOK, "1 rows"},
		{"two characters", "ab", "a,b\n1,x\n", exitBadInput, "one character"},
		{"quote", `"`, "a,b\n1,x\n", exitBadInput, "one character"},
	}
	for i, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			in := writeText(t, tmp, fmt.Sprintf("in%d.csv", i), tc.body)
			code, out, errs := runCLI(t, "write", filepath.Join(tmp, fmt.Sprint("ds", i)), "--from", in, "--delimiter", tc.delim)
			if code != tc.code || !strings.Contains(out+errs, tc.want) {
				t.Fatalf("exit %d, out %q, stderr %q; want %d and %q", code, out, errs, tc.code, tc.want)
			}
			if code == exitOK {
				if n := len(tableSchemaOf(t, filepath.Join(tmp, fmt.Sprint("ds", i))).Fields()); n != 2 {
					t.Fatalf("%d columns, want 2", n)
				}
			}
		})
	}
}

// TestWriteFromStdin: --from - reads standard input; CSV needs --format
// (it has no magic bytes).
func TestWriteFromStdin(t *testing.T) {
	tmp := t.TempDir()
	cases := []struct {
		name string
		args []string
		code int
		want string
	}{
		{"csv with --format", []string{"--format", "csv"}, exitOK, "3 rows"},
		{"csv without --format", nil, exitBadInput, "--format"},
	}
	for i, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			var out, errb strings.Builder
			args := append([]string{"write", filepath.Join(tmp, fmt.Sprint("ds", i)), "--from", "-"}, tc.args...)
			code := run(&env{ctx: context.Background(), stdout: &out, stderr: &errb, stdin: strings.NewReader("x,s\n1,a\n2,b\n3,c\n")}, args)
			if code != tc.code || !strings.Contains(out.String()+errb.String(), tc.want) {
				t.Fatalf("exit %d, out %q, stderr %q; want %d and %q", code, out.String(), errb.String(), tc.code, tc.want)
			}
		})
	}
	// An Arrow IPC stream and Parquet on stdin are recognised by their bytes.
	src := filepath.Join(tmp, "src")
	if code, _, errs := runCLI(t, "write", src, "--from", writeText(t, tmp, "s.csv", "x\n1\n2\n")); code != exitOK {
		t.Fatal(errs)
	}
	for _, f := range []string{"arrow", "parquet"} {
		code, data, errs := runCLI(t, "scan", src, "--format", f)
		if code != exitOK {
			t.Fatal(errs)
		}
		var out, errb strings.Builder
		code = run(&env{ctx: context.Background(), stdout: &out, stderr: &errb, stdin: strings.NewReader(data)}, []string{"write", filepath.Join(tmp, "from-"+f), "--from", "-"})
		if code != exitOK || !strings.Contains(out.String(), "2 rows") {
			t.Fatalf("%s on stdin: exit %d, %q %q", f, code, out.String(), errb.String())
		}
		errb.Reset()
		code = run(&env{ctx: context.Background(), stdout: &out, stderr: &errb, stdin: strings.NewReader(data)}, []string{"write", filepath.Join(tmp, "schema-"+f), "--from", "-", "--schema", "x:int32"})
		if code != exitBadInput || !strings.Contains(errb.String(), "CSV input only") {
			t.Fatalf("--schema with %s input: exit %d, %q", f, code, errb.String())
		}
	}
}

// FuzzCSVRecords: hostile CSV never panics; it reads or fails with an error.
func FuzzCSVRecords(f *testing.F) {
	for _, s := range []string{"a,b\n1,2\n", "a\n\"x\n", "a,b\n1\n", "v,k\n1.5,1\n2,1\nx,1\n", "t\n2024-01-02 03:04:05\n", "a\n\n\n", "\"", ""} {
		f.Add(s, "")
		f.Add(s, "a:int8!")
	}
	f.Fuzz(func(t *testing.T, body, schema string) {
		var o csvOptions
		if schema != "" {
			s, err := parseCSVSchema(schema)
			if err != nil {
				return
			}
			o.schema = s
		}
		r, err := newCSVRecords(strings.NewReader(body), "fuzz", o)
		if err != nil {
			return
		}
		defer r.Release()
		for r.Next() {
		}
	})
}

// TestCSVErrorsNameLineAndColumn: a bad CSV value or row fails with exit 2
// and names the line (1-based, header = line 1) and the column.
func TestCSVErrorsNameLineAndColumn(t *testing.T) {
	tmp := t.TempDir()
	ints := csvLines("a,b", 1500, func(i int) string {
		if i == 1200 {
			return "x,7"
		}
		return fmt.Sprintf("%d,7", i)
	})
	cases := []struct {
		name, body string
		args       []string
		want       string
	}{
		{"value after the sample", ints, nil, `line 1202, column "a": "x" is not an integer (int64)`},
		{"--schema type", "a,b\n1,2\n1,zz\n", []string{"--schema", "b:int16"}, `line 3, column "b": "zz" is not an integer (int16)`},
		{"does not fit --schema", "a,b\n1,2\n1,40000\n", []string{"--schema", "b:int16"}, `line 3, column "b": 40000 does not fit in int16`},
		{"wrong field count", "a,b\n1,2\n3\n", nil, "line 3"},
		{"bad quote", "a,b\n1,2\n3,\"x\"y\n", nil, "line 3"},
		{"quoted newline counts lines", "a,b\n1,\"two\nlines\"\nq,2\n", []string{"--schema", "a:int32"}, `line 4, column "a"`},
		{"null in non-nullable", "a,b\n1,2\n,3\n", []string{"--schema", "a:int32!"}, `line 3, column "a": null`},
	}
	for i, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			in := writeText(t, tmp, fmt.Sprintf("in%d.csv", i), tc.body)
			ds := filepath.Join(tmp, fmt.Sprint("ds", i))
			code, _, errs := runCLI(t, append([]string{"write", ds, "--from", in}, tc.args...)...)
			if code != exitBadInput || !strings.Contains(errs, tc.want) {
				t.Fatalf("exit %d, stderr %q; want 2 and %q", code, errs, tc.want)
			}
			if ok, _ := datasetExistsAt(ds); ok {
				t.Fatal("a version was committed")
			}
		})
	}
}

func datasetExistsAt(ds string) (bool, error) {
	st, err := store.Open(context.Background(), ds)
	if err != nil {
		return false, err
	}
	defer st.Close()
	return datasetExists(context.Background(), st)
}

// TestCSVAppendCastsToTableTypes: on append, CSV values are cast to the
// table's column types; a value that does not fit is exit 2 naming line and
// column, and nothing is committed.
func TestCSVAppendCastsToTableTypes(t *testing.T) {
	tmp := t.TempDir()
	ds := filepath.Join(tmp, "ds")
	if code, _, errs := runCLI(t, "write", ds, "--from", writeText(t, tmp, "c.csv", "id,f,u,s\n1,1.5,1,a\n"),
		"--schema", "id:int32,f:float32,u:uint8,s:utf8"); code != exitOK {
		t.Fatal(errs)
	}
	cases := []struct {
		name, body string
		code       int
		want       string
	}{
		{"fits", "id,f,u,s\n2147483647,2,255,b\n-5,,0,\n", exitOK, "2 rows"},
		{"columns in another order", "s,u,f,id\nz,3,0.25,7\n", exitOK, "1 rows"},
		{"int32 overflow", "id,f,u,s\n1,1,1,a\n2147483648,1,1,a\n", exitBadInput, `line 3, column "id": 2147483648 does not fit in int32`},
		{"uint8 negative", "id,f,u,s\n1,1,-1,a\n", exitBadInput, `line 2, column "u": -1 does not fit in uint8`},
		{"text in float32", "id,f,u,s\n1,x,1,a\n", exitBadInput, `line 2, column "f": "x" is not a float32`},
	}
	for i, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			in := writeText(t, tmp, fmt.Sprintf("a%d.csv", i), tc.body)
			code, out, errs := runCLI(t, "write", ds, "--from", in, "--mode", "append")
			if code != tc.code || !strings.Contains(out+errs, tc.want) {
				t.Fatalf("exit %d, out %q, stderr %q; want %d and %q", code, out, errs, tc.code, tc.want)
			}
		})
	}
	s := tableSchemaOf(t, ds)
	for i, want := range []arrow.Type{arrow.INT32, arrow.FLOAT32, arrow.UINT8, arrow.STRING} {
		if s.Field(i).Type.ID() != want {
			t.Fatalf("column %d is %s after the appends", i, s.Field(i).Type)
		}
	}
	code, out, errs := runCLI(t, "scan", ds, "--format", "csv", "--columns", "id")
	if code != exitOK {
		t.Fatal(errs)
	}
	if got := strings.Fields(out); strings.Join(got, " ") != "id 1 2147483647 -5 7" {
		t.Fatalf("scan: %q", got)
	}
}
