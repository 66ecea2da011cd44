package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/lancekeeper/lancekeeper/store"
)

// Doctor is `lancekeeper doctor`.
func (commands) Doctor() command {
	return command{
		name:  "doctor",
		usage: "URL [--contenders N] [--rounds K] [--shared-client] [--keep] [--json]",
		summary: "Probe a store before trusting it with commits: conditional create refuses an existing key and has exactly one winner " +
			"under concurrency, listings see new keys, range reads are right, probe keys are cleaned up. Exit 1 when a guarantee fails.",
		run: func(e *env, args []string) int { return runDoctor(e, args, store.Doctor) },
	}
}

// doctorFunc probes the store at a URL; store.Doctor in the program, a
// double over a deliberately broken store in tests.
type doctorFunc func(ctx context.Context, rawURL string, opts store.DoctorOptions) (*store.DoctorReport, error)

// doctorJSON is the `doctor --json` output (docs/cli.md).
type doctorJSON struct {
	Store        string            `json:"store"`
	Kind         string            `json:"kind"`
	OK           bool              `json:"ok"`
	ProbePrefix  string            `json:"probe_prefix"`
	Contenders   int               `json:"contenders"`
	Rounds       int               `json:"rounds"`
	SharedClient bool              `json:"shared_client"`
	Guarantees   doctorGuarantees  `json:"guarantees"`
	Checks       []doctorCheckJSON `json:"checks"`
}

type doctorGuarantees struct {
	AtomicCreate    bool   `json:"atomic_create"`
	CreateMechanism string `json:"create_mechanism"`
	Scope           string `json:"scope"`
	Durability      string `json:"durability"`
	Listing         string `json:"listing"`
	Caveats         string `json:"caveats"`
}

type doctorCheckJSON struct {
	Guarantee string  `json:"guarantee"`
	Result    string  `json:"result"`
	ElapsedMS float64 `json:"elapsed_ms"`
	Detail    string  `json:"detail"`
}

func runDoctor(e *env, args []string, probe doctorFunc) int {
	c := commands{}.Doctor()
	fs := newFlagSet(e, c)
	contenders := fs.Int("contenders", 8, "concurrent conditional creates of one key per round (2..64)")
	rounds := fs.Int("rounds", 20, "rounds of the concurrent create probe (1..1000)")
	shared := fs.Bool("shared-client", false, "run every contender through one client instead of one client (connection pool) each")
	keep := fs.Bool("keep", false, "leave the probe keys (under "+store.DoctorPrefix+"<uuid>/) in place")
	asJSON := fs.Bool("json", false, "print the report as JSON")
	pos, err := parseArgs(fs, args)
	if err != nil {
		return parseFailed(err)
	}
	if len(pos) != 1 {
		fs.Usage()
		return exitBadInput
	}
	if *contenders <= 0 || *rounds <= 0 {
		return fail(e, c.name, exitBadInput, fmt.Errorf("--contenders and --rounds must be positive (got %d and %d)", *contenders, *rounds))
	}
	opts := store.DoctorOptions{Contenders: *contenders, Rounds: *rounds, SharedClient: *shared, Keep: *keep}
	rep, err := probe(e.ctx, pos[0], opts)
	if err != nil {
		code := exitFailure
		if errors.Is(err, store.ErrInvalidURL) || errors.Is(err, store.ErrInvalidOptions) {
			code = exitBadInput
		}
		return fail(e, c.name, code, err)
	}
	if *asJSON {
		g := rep.Guarantees
		out := doctorJSON{
			Store: rep.Store, Kind: string(g.Kind), OK: rep.OK(), ProbePrefix: rep.Prefix,
			Contenders: rep.Options.Contenders, Rounds: rep.Options.Rounds, SharedClient: rep.Options.SharedClient,
			Guarantees: doctorGuarantees{AtomicCreate: g.AtomicCreate, CreateMechanism: g.CreateMechanism, Scope: g.Scope,
				Durability: g.Durability, Listing: g.Listing, Caveats: g.Caveats},
			Checks: make([]doctorCheckJSON, len(rep.Checks)),
		}
		for i, ch := range rep.Checks {
			out.Checks[i] = doctorCheckJSON{Guarantee: ch.Guarantee, Result: string(ch.Result),
				ElapsedMS: float64(ch.Elapsed.Microseconds()) / 1000, Detail: ch.Detail}
		}
		if code := printJSON(e, c.name, out); code != exitOK {
			return code
		}
	} else if err := writeDoctorTable(e.stdout, rep); err != nil {
		return fail(e, c.name, exitFailure, err)
	}
	if rep.OK() {
		return exitOK
	}
	var failed []string
	for _, ch := range rep.Checks {
		if ch.Result != store.Pass {
			failed = append(failed, fmt.Sprintf("%s (%s)", ch.Guarantee, ch.Result))
		}
	}
	return fail(e, c.name, exitFailure, fmt.Errorf("%s: %d of %d guarantees not confirmed, do not commit to this store: %s",
		rep.Store, len(failed), len(rep.Checks), strings.Join(failed, "; ")))
}

// writeDoctorTable prints the report as an aligned table (the text output
// of `lancekeeper doctor`, docs/cli.md).
func writeDoctorTable(w io.Writer, r *store.DoctorReport) error {
	verdict := "PASS: safe for commits"
	if !r.OK() {
		verdict = "FAIL: do not commit to this store"
	}
	if _, err := fmt.Fprintf(w, "store %s (%s)\n", r.Store, r.Guarantees.Kind); err != nil {
		return err
	}
	tw := tabwriter.NewWriter(w, 0, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "GUARANTEE\tRESULT\tTIME\tDETAIL")
	for _, c := range r.Checks {
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\n", c.Guarantee, c.Result, c.Elapsed.Round(time.Millisecond), strings.ReplaceAll(c.Detail, "\n", " "))
	}
	if err := tw.Flush(); err != nil {
		return err
	}
	_, err := fmt.Fprintln(w, verdict)
	return err
}
