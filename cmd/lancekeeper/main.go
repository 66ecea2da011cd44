// Command lancekeeper manages Lance datasets at the table layer: it
// inspects versions, lists them, and (through further subcommands) writes,
// tags, clones and serves them. See docs/cli.md.
//
// Adding a subcommand is a one-file change: create <name>.go in this
// directory with a method `func (commands) <Name>() command` returning the
// command; main finds every such method through reflection, so there is no
// package-level registry to edit and no package-level mutable state.
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"os/signal"
	"reflect"
	"sort"
	"strings"

	"github.com/lancekeeper/lancekeeper/flags"
	"github.com/lancekeeper/lancekeeper/snapshot"
)

// Exit codes shared by every subcommand.
const (
	exitOK       = 0
	exitFailure  = 1 // an operation failed for a reason outside the input (I/O, network, …)
	exitBadInput = 2 // bad usage or bad input: missing dataset, corrupt manifest, unknown ref
	exitRefused  = 3 // this build refuses to read or write the dataset (feature flags); inspect --check: it would
)

// env is what a command runs with.
type env struct {
	ctx    context.Context
	stdout io.Writer
	stderr io.Writer
	stdin  io.Reader // nil: os.Stdin
}

// command is one subcommand.
type command struct {
	name    string
	usage   string // argument synopsis, e.g. "DATASET [--json]"
	summary string // one line
	// run executes the command with the arguments after its name and
	// returns the process exit code.
	run func(e *env, args []string) int
}

// commands is the receiver of one method per subcommand; each lives in the
// subcommand's own file.
type commands struct{}

// registry collects the subcommands: every exported method of commands
// that returns a command.
func registry() map[string]command {
	out := map[string]command{}
	v := reflect.ValueOf(commands{})
	cmdType := reflect.TypeOf(command{})
	for i := 0; i < v.NumMethod(); i++ {
		m := v.Method(i)
		if m.Type().NumIn() != 0 || m.Type().NumOut() != 1 || m.Type().Out(0) != cmdType {
			continue
		}
		c := m.Call(nil)[0].Interface().(command)
		out[c.name] = c
	}
	return out
}

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt)
	code := run(&env{ctx: ctx, stdout: os.Stdout, stderr: os.Stderr}, os.Args[1:])
	stop()
	os.Exit(code)
}

// run dispatches to a subcommand. A panic is reported as one line, never
// as a stack trace.
func run(e *env, args []string) (code int) {
	defer func() {
		if r := recover(); r != nil {
			fmt.Fprintf(e.stderr, "lancekeeper: internal error: %s\n", oneLine(fmt.Sprint(r)))
			code = exitFailure
		}
	}()
	reg := registry()
	if len(args) == 0 || args[0] == "-h" || args[0] == "--help" || args[0] == "help" {
		usage(e.stderr, reg)
		if len(args) == 0 {
			return exitBadInput
		}
		return exitOK
	}
	c, ok := reg[args[0]]
	if !ok {
		fmt.Fprintf(e.stderr, "lancekeeper: unknown command %q (run 'lancekeeper help')\n", args[0])
		return exitBadInput
	}
	return c.run(e, args[1:])
}

func usage(w io.Writer, reg map[string]command) {
	names := make([]string, 0, len(reg))
	for n := range reg {
		names = append(names, n)
	}
	sort.Strings(names)
	fmt.Fprintln(w, "usage: lancekeeper COMMAND [arguments]")
	fmt.Fprintln(w, "\ncommands:")
	for _, n := range names {
		fmt.Fprintf(w, "  %-10s %s\n", n, reg[n].summary)
	}
	fmt.Fprintln(w, "\nRun 'lancekeeper COMMAND -h' for a command's options. See docs/cli.md.")
}

// parseArgs parses flags that may appear before, between or after the
// positional arguments (the standard flag package stops at the first
// positional one) and returns the positional arguments. "--" ends flags.
func parseArgs(fs *flag.FlagSet, args []string) ([]string, error) {
	var pos []string
	for {
		if err := fs.Parse(args); err != nil {
			return nil, err
		}
		rest := fs.Args()
		if len(rest) == 0 {
			return pos, nil
		}
		if len(args) > 0 && len(rest) < len(args) && args[len(args)-len(rest)-1] == "--" {
			return append(pos, rest...), nil
		}
		pos = append(pos, rest[0])
		args = rest[1:]
	}
}

// parseFailed is the exit code of a command whose arguments did not parse:
// 0 after -h/--help printed the usage, else 2 (the flag package has
// printed the problem and the usage).
func parseFailed(err error) int {
	if errors.Is(err, flag.ErrHelp) {
		return exitOK
	}
	return exitBadInput
}

// newFlagSet returns a flag set that reports errors to e.stderr and does
// not exit.
func newFlagSet(e *env, c command) *flag.FlagSet {
	fs := flag.NewFlagSet(c.name, flag.ContinueOnError)
	fs.SetOutput(e.stderr)
	fs.Usage = func() {
		fmt.Fprintf(e.stderr, "usage: lancekeeper %s %s\n%s\n\noptions:\n", c.name, c.usage, c.summary)
		fs.PrintDefaults()
	}
	return fs
}

// fail prints one line "lancekeeper CMD: message" and returns the exit
// code: code as the command classified err, except that a feature-flag
// refusal is exitRefused in every command (see refused).
func fail(e *env, cmd string, code int, err error) int {
	fmt.Fprintf(e.stderr, "lancekeeper %s: %s\n", cmd, oneLine(err.Error()))
	if refused(err) {
		return exitRefused
	}
	return code
}

// refused reports whether err is a feature-flag refusal: a bit this build
// does not support (flags.ErrUnsupported) or a paired bit set in only one
// word (flags.ErrHalfSet).
func refused(err error) bool {
	return errors.Is(err, flags.ErrUnsupported) || errors.Is(err, flags.ErrHalfSet)
}

func oneLine(s string) string {
	return strings.Join(strings.Fields(s), " ")
}

// openDataset opens the dataset a command argument names: a local path
// (which must be an existing directory) or a gocloud.dev/blob URL.
func openDataset(ctx context.Context, uri string) (*snapshot.Dataset, error) {
	local := uri
	if strings.HasPrefix(uri, "file://") {
		local = strings.TrimPrefix(uri, "file://")
	} else if strings.Contains(uri, "://") {
		local = ""
	}
	if local != "" {
		st, err := os.Stat(local)
		if err != nil {
			if errors.Is(err, os.ErrNotExist) {
				return nil, badInput{fmt.Errorf("%s: no such dataset directory", uri)}
			}
			return nil, badInput{err}
		}
		if !st.IsDir() {
			return nil, badInput{fmt.Errorf("%s: not a directory (a Lance dataset is a directory)", uri)}
		}
	}
	d, err := snapshot.OpenDataset(ctx, uri)
	if err != nil {
		return nil, badInput{err}
	}
	return d, nil
}

// badInput marks an error caused by the command's input.
type badInput struct{ error }

func (b badInput) Unwrap() error { return b.error }

// flagSet reports whether the flag name was given on the command line.
func flagSet(fs *flag.FlagSet, name string) bool {
	set := false
	fs.Visit(func(f *flag.Flag) {
		if f.Name == name {
			set = true
		}
	})
	return set
}
