package peerlance

import (
	"context"
	"encoding/json"
	"fmt"
)

// RowsMany runs `rows-many DIR --sql W...`: the Rows answer of a `rows
// --where W` read for every predicate in wheres, on one table handle (one
// peer request for all; an empty W reads every row). The result i is
// either rows[i] or, when Lance refused predicate i, errs[i] (a
// *LanceError); err is for the request itself.
func (p *Peer) RowsMany(ctx context.Context, dir string, wheres []string, opts ...ReadOption) (rows []*Rows, errs []error, err error) {
	args := []string{"rows-many", dir}
	for _, w := range wheres {
		args = append(args, "--sql", w)
	}
	args = withOpts(args, opts)
	var out struct {
		Results []json.RawMessage `json:"results"`
	}
	if err := p.RunJSON(ctx, &out, args...); err != nil {
		return nil, nil, err
	}
	if len(out.Results) != len(wheres) {
		return nil, nil, &DriverError{Args: args[:2], Err: fmt.Errorf("%d results for %d predicates", len(out.Results), len(wheres))}
	}
	rows, errs = make([]*Rows, len(wheres)), make([]error, len(wheres))
	for i, raw := range out.Results {
		var e struct {
			Error *string `json:"error"`
			Op    string  `json:"op"`
		}
		if err := json.Unmarshal(raw, &e); err != nil {
			return nil, nil, &DriverError{Args: args[:2], Err: err}
		}
		if e.Error != nil {
			errs[i] = &LanceError{Args: []string{"rows-many", dir, "--sql", wheres[i]}, Op: e.Op, Message: *e.Error, Step: -1}
			continue
		}
		var r Rows
		if err := json.Unmarshal(raw, &r); err != nil {
			return nil, nil, &DriverError{Args: args[:2], Err: err}
		}
		if len(r.Rows) != r.NumRows {
			return nil, nil, &DriverError{Args: args[:2], Err: fmt.Errorf("predicate %d: num_rows %d but %d rows", i, r.NumRows, len(r.Rows))}
		}
		rows[i] = &r
	}
	return rows, errs, nil
}
