package scan

import (
	"context"
	"fmt"
	"io"
	"strings"
)

// Plan is what a scan will read, computed from metadata and seeds only
// (Explain reads no data page).
type Plan struct {
	Version   uint64
	Filter    string
	Flagged   bool // FLAG_ZONE_WRITE_SEEDS: v1 seeds usable (R61)
	Columns   []string
	Fragments []FragmentPlan
	// Totals over the fragments.
	FragmentsKept, FragmentsPruned int
	RowsTotal, RowsKept            uint64
	BytesFull, BytesToRead         int64
	// IndexProblems lists ZoneMap segments found unusable (ignored).
	IndexProblems []string
	// SeedsUnused: the filter can fail (filter.Filter.MayFail: a division
	// by a column, an overflow), so no zone is skipped by seeds — Lance 12
	// evaluates every zone it does not skip by an index.
	SeedsUnused bool
}

// FragmentPlan is the plan of one fragment.
type FragmentPlan struct {
	ID          uint64
	Rows        uint64 // physical rows
	DeletedRows uint64
	RowsKept    uint64 // rows in kept ranges
	Pruned      bool   // nothing to read
	// BytesFull is the size of the data files the scan needs; BytesToRead
	// estimates the share of it the kept ranges cover.
	BytesFull, BytesToRead int64
	Terms                  []TermPlan
}

// TermPlan is what pruning learnt for one filter term in one fragment.
type TermPlan struct {
	Term                  string
	Sources               []string // "seed v0", "seed v1", "zonemap index …"
	ZonesTotal, ZonesKept int
}

// Explain computes the plan without reading data pages: the fragments and
// zones kept and pruned per filter term, and the bytes to read versus a
// full scan of the needed files.
func (s *Scanner) Explain(ctx context.Context) (*Plan, error) {
	p := &Plan{Version: s.snap.Version, Flagged: s.flagged, Columns: append([]string(nil), s.read...), SeedsUnused: s.noSeeds}
	if s.filter != nil {
		p.Filter = s.filter.String()
	}
	for _, f := range s.m.GetFragments() {
		if err := ctx.Err(); err != nil {
			return nil, err
		}
		fr, err := s.prepare(ctx, f)
		if err != nil {
			return nil, err
		}
		fr.close()
		p.Fragments = append(p.Fragments, fr.plan)
		if fr.plan.Pruned {
			p.FragmentsPruned++
		} else {
			p.FragmentsKept++
		}
		p.RowsTotal += fr.plan.Rows
		p.RowsKept += fr.plan.RowsKept
		p.BytesFull += fr.plan.BytesFull
		p.BytesToRead += fr.plan.BytesToRead
	}
	if s.idx != nil {
		for _, e := range s.idx.Problems() {
			p.IndexProblems = append(p.IndexProblems, e.Error())
		}
	}
	return p, nil
}

// WriteText prints the plan for people.
func (p *Plan) WriteText(w io.Writer) error {
	var sb strings.Builder
	fmt.Fprintf(&sb, "version %d", p.Version)
	if p.Filter != "" {
		fmt.Fprintf(&sb, ", filter: %s", p.Filter)
	}
	fmt.Fprintf(&sb, "\nreads columns: %s; zone write seeds flag: %v (v1 seeds %s)\n", strings.Join(p.Columns, ", "), p.Flagged, map[bool]string{true: "usable", false: "ignored, R61"}[p.Flagged])
	if p.SeedsUnused {
		sb.WriteString("seeds: not used — the filter can fail (a division by a column, an overflow) and Lance 12 evaluates every zone an index does not skip\n")
	}
	fmt.Fprintf(&sb, "fragments: %d kept, %d pruned of %d\n", p.FragmentsKept, p.FragmentsPruned, len(p.Fragments))
	fmt.Fprintf(&sb, "rows: %d of %d in kept zones (%s)\n", p.RowsKept, p.RowsTotal, pctU(p.RowsKept, p.RowsTotal))
	fmt.Fprintf(&sb, "bytes: ~%d to read of %d for a full scan (%s)\n", p.BytesToRead, p.BytesFull, pctU(uint64(p.BytesToRead), uint64(p.BytesFull)))
	// per term totals
	type agg struct {
		zt, zk, frags int
		src           map[string]bool
	}
	var order []string
	terms := map[string]*agg{}
	for _, f := range p.Fragments {
		for _, t := range f.Terms {
			a := terms[t.Term]
			if a == nil {
				a = &agg{src: map[string]bool{}}
				terms[t.Term] = a
				order = append(order, t.Term)
			}
			a.zt += t.ZonesTotal
			a.zk += t.ZonesKept
			if len(t.Sources) > 0 {
				a.frags++
			}
			for _, s := range t.Sources {
				a.src[s] = true
			}
		}
	}
	for _, t := range order {
		a := terms[t]
		var src []string
		for s := range a.src {
			src = append(src, s)
		}
		if len(src) == 0 {
			src = []string{"no usable seed or index: every zone kept"}
		}
		fmt.Fprintf(&sb, "term %s: zones kept %d, pruned %d of %d (statistics in %d of %d fragments; %s)\n",
			t, a.zk, a.zt-a.zk, a.zt, a.frags, len(p.Fragments), strings.Join(sortedStrings(src), ", "))
	}
	fmt.Fprintf(&sb, "%-10s %12s %12s %12s %8s\n", "fragment", "rows", "deleted", "rows kept", "status")
	for _, f := range p.Fragments {
		st := "read"
		if f.Pruned {
			st = "pruned"
		}
		fmt.Fprintf(&sb, "%-10d %12d %12d %12d %8s\n", f.ID, f.Rows, f.DeletedRows, f.RowsKept, st)
	}
	for _, e := range p.IndexProblems {
		fmt.Fprintf(&sb, "index ignored: %s\n", e)
	}
	_, err := io.WriteString(w, sb.String())
	return err
}

func pctU(a, b uint64) string {
	if b == 0 {
		return "-"
	}
	return fmt.Sprintf("%.1f%%", 100*float64(a)/float64(b))
}

func sortedStrings(s []string) []string {
	for i := 1; i < len(s); i++ {
		for j := i; j > 0 && s[j] < s[j-1]; j-- {
			s[j], s[j-1] = s[j-1], s[j]
		}
	}
	return s
}
