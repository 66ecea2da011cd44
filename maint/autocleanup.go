package maint

import (
	"context"
	"fmt"
	"math"
	"strconv"
	"strings"
	"time"

	"github.com/lancekeeper/lancekeeper/commit"
	"github.com/lancekeeper/lancekeeper/store"
)

// Table config keys of Lance's automatic cleanup (§5.2 step 4).
const (
	AutoCleanupInterval       = "lance.auto_cleanup.interval"
	AutoCleanupOlderThan      = "lance.auto_cleanup.older_than"
	AutoCleanupRetainVersions = "lance.auto_cleanup.retain_versions"
)

// humantime units (the duration syntax Lance's config uses, e.g. "14days",
// "1h 30m", "2weeks").
var units = []struct {
	names []string
	d     float64 // seconds
}{
	{[]string{"nsec", "ns"}, 1e-9},
	{[]string{"usec", "us", "µs"}, 1e-6},
	{[]string{"msec", "ms", "millis"}, 1e-3},
	{[]string{"seconds", "second", "secs", "sec", "s"}, 1},
	{[]string{"minutes", "minute", "mins", "min", "m"}, 60},
	{[]string{"hours", "hour", "hrs", "hr", "h"}, 3600},
	{[]string{"days", "day", "d"}, 86400},
	{[]string{"weeks", "week", "w"}, 7 * 86400},
	{[]string{"months", "month", "M"}, 30.44 * 86400},
	{[]string{"years", "year", "y"}, 365.25 * 86400},
}

// ParseDuration parses a duration as Lance's config (humantime) writes
// it: integers followed by a unit, optionally separated by spaces —
// "14days", "14d", "1h 30min", "2weeks", "90s". Go's own syntax ("36h",
// "1h30m0s") is a subset.
func ParseDuration(s string) (time.Duration, error) {
	in := strings.TrimSpace(s)
	if in == "" {
		return 0, fmt.Errorf("%w: empty duration", ErrInvalidOptions)
	}
	var total float64
	for in != "" {
		i := 0
		for i < len(in) && in[i] >= '0' && in[i] <= '9' {
			i++
		}
		if i == 0 {
			return 0, fmt.Errorf("%w: duration %q: expected a number at %q", ErrInvalidOptions, s, in)
		}
		n, err := strconv.ParseUint(in[:i], 10, 64)
		if err != nil {
			return 0, fmt.Errorf("%w: duration %q: %v", ErrInvalidOptions, s, err)
		}
		in = strings.TrimLeft(in[i:], " ")
		j := 0
		for j < len(in) && !(in[j] >= '0' && in[j] <= '9') && in[j] != ' ' {
			j++
		}
		unit := in[:j]
		in = strings.TrimLeft(in[j:], " ")
		found := false
		for _, u := range units {
			for _, name := range u.names {
				if unit == name {
					total += float64(n) * u.d
					found = true
				}
			}
		}
		if !found {
			return 0, fmt.Errorf("%w: duration %q: unknown unit %q", ErrInvalidOptions, s, unit)
		}
	}
	if total*1e9 > math.MaxInt64 {
		return 0, fmt.Errorf("%w: duration %q is too long", ErrInvalidOptions, s)
	}
	return time.Duration(total * 1e9), nil
}

// AutoCleanup runs the cleanup a commit's table config asks for, as Lance
// does after every successful commit (§5.2 step 4): when
// lance.auto_cleanup.interval is k > 0 and the committed version is a
// multiple of k, versions older than lance.auto_cleanup.older_than
// (default 14 days) and outside the newest
// lance.auto_cleanup.retain_versions are cleaned up, tagged versions kept
// without error. ran says whether a cleanup was due. The caller logs the
// error and never fails the commit for it.
func AutoCleanup(ctx context.Context, st *store.Store, res *commit.Result) (cr *CleanupResult, ran bool, err error) {
	if res == nil || res.Manifest == nil {
		return nil, false, nil
	}
	cfg := res.Manifest.GetConfig()
	iv, ok := cfg[AutoCleanupInterval]
	if !ok {
		return nil, false, nil
	}
	k, err := strconv.ParseUint(strings.TrimSpace(iv), 10, 64)
	if err != nil || k == 0 {
		return nil, false, fmt.Errorf("%w: %s = %q is not a positive integer", ErrInvalidOptions, AutoCleanupInterval, iv)
	}
	if res.Version%k != 0 {
		return nil, false, nil
	}
	age := 14 * 24 * time.Hour
	if s, ok := cfg[AutoCleanupOlderThan]; ok {
		if age, err = ParseDuration(s); err != nil {
			return nil, true, fmt.Errorf("%s: %w", AutoCleanupOlderThan, err)
		}
	}
	opts := CleanupOptions{Before: time.Now().Add(-age), KeepTaggedOldVersions: true}
	if s, ok := cfg[AutoCleanupRetainVersions]; ok {
		if opts.RetainVersions, err = strconv.ParseUint(strings.TrimSpace(s), 10, 64); err != nil {
			return nil, true, fmt.Errorf("%w: %s = %q", ErrInvalidOptions, AutoCleanupRetainVersions, s)
		}
	}
	cr, err = Cleanup(ctx, st, opts)
	return cr, true, err
}

// AfterCommit returns a commit.Options.AfterCommit hook running
// AutoCleanup on st; logf (nil: discard) receives its outcome.
func AfterCommit(st *store.Store, logf func(format string, args ...any)) func(ctx context.Context, res *commit.Result) {
	return func(ctx context.Context, res *commit.Result) {
		cr, ran, err := AutoCleanup(ctx, st, res)
		if logf == nil {
			return
		}
		switch {
		case err != nil:
			logf("auto cleanup after version %d failed: %v", res.Version, err)
		case ran:
			logf("auto cleanup after version %d removed %d version(s), %d file(s)", res.Version, len(cr.RemovedVersions), len(cr.RemovedFiles))
		}
	}
}
