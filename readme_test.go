package lancekeeper

import (
	"os"
	"strings"
	"testing"
)

// TestREADMESnippetIsThisExample keeps the Go snippet of README.md ("From
// Go") identical to the body of Example in example_test.go (which go test
// compiles and runs), and the output README shows identical to Example's
// // Output: lines.
func TestREADMESnippetIsThisExample(t *testing.T) {
	readme, err := os.ReadFile("README.md")
	if err != nil {
		t.Fatal(err)
	}
	src, err := os.ReadFile("example_test.go")
	if err != nil {
		t.Fatal(err)
	}
	_, sec, ok := strings.Cut(string(readme), "\n## From Go\n")
	if !ok {
		t.Fatal(`README.md has no "## From Go" section`)
	}
	blocks := strings.Split(sec, "```")
	if len(blocks) < 4 || !strings.HasPrefix(blocks[1], "go\n") {
		t.Fatal(`README.md's "From Go" section does not start with a go code block followed by an output block`)
	}
	snippet := strings.Split(strings.TrimSuffix(strings.TrimPrefix(blocks[1], "go\n"), "\n"), "\n")
	output := strings.Split(strings.Trim(blocks[3], "\n"), "\n")

	_, body, ok := strings.Cut(string(src), "\nfunc Example() {\n")
	if !ok {
		t.Fatal("example_test.go has no func Example")
	}
	body, out, ok := strings.Cut(body, "\t// Output:\n")
	if !ok {
		t.Fatal("Example has no // Output:")
	}
	var code []string
	for _, l := range strings.Split(body, "\n") {
		code = append(code, strings.TrimPrefix(l, "\t"))
	}
	if !containsRun(code, snippet) {
		t.Errorf("README.md's Go snippet is not a contiguous part of Example's body; snippet:\n%s", strings.Join(snippet, "\n"))
	}
	var want []string
	for _, l := range strings.Split(out, "\n") {
		l, ok := strings.CutPrefix(l, "\t// ")
		if !ok {
			break
		}
		want = append(want, l)
	}
	if strings.Join(output, "\n") != strings.Join(want, "\n") {
		t.Errorf("README.md shows output\n%s\nExample's Output is\n%s", strings.Join(output, "\n"), strings.Join(want, "\n"))
	}
}

// containsRun reports whether run occurs in lines as consecutive lines.
func containsRun(lines, run []string) bool {
	if len(run) == 0 {
		return false
	}
	for i := 0; i+len(run) <= len(lines); i++ {
		match := true
		for j := range run {
			if lines[i+j] != run[j] {
				match = false
				break
			}
		}
		if match {
			return true
		}
	}
	return false
}
