package peerlance

import (
	"context"
	"fmt"
	"math"
	"math/rand/v2"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/memory"
)

// RandomOptions tune MakeRandomDataset. The zero value is usable.
type RandomOptions struct {
	// Ops is the number of operations after the initial create (default 10).
	Ops int
	// StorageVersion is Lance's data storage version for the new table
	// (default "2.0", the file format lancekeeper's spec describes).
	StorageVersion string
	// StableRowIDs creates the table with stable row ids.
	StableRowIDs bool
	// V1Paths creates the table with V1 manifest names ({version}.manifest).
	V1Paths bool
	// MaxBatchRows bounds the rows of the create and of each append (default 24).
	MaxBatchRows int
}

// RandomDataset is a dataset Lance 12 built for MakeRandomDataset, with the
// generator's own model of what every version must contain.
type RandomDataset struct {
	Dir     string
	Seed    uint64
	Options RandomOptions
	// Steps lists the create and every operation in the order they ran.
	Steps []Step
	// Latest is the latest version after the last step.
	Latest uint64
	// Tags maps each live tag to its version.
	Tags map[string]uint64
	// States holds the modelled contents of every version 1..Latest.
	States map[uint64]*State
}

// Step is one driver command the generator ran.
type Step struct {
	Args          []string // driver argv without DIR ("delete", "--where", "id % 3 = 1")
	VersionBefore uint64   // latest version before the step (0 before create)
	VersionAfter  uint64   // latest version after the step
}

func (s Step) String() string {
	return fmt.Sprintf("v%d->v%d %s", s.VersionBefore, s.VersionAfter, strings.Join(s.Args, " "))
}

// Column is a column of the modelled schema.
type Column struct {
	Name     string
	Type     arrow.DataType
	Nullable bool
}

// State is the modelled content of one version: columns, rows (each a slice
// of canonical JSON values in Columns order, see Value) and index names.
type State struct {
	Columns []Column
	Rows    []ModelRow
	Indices []string
}

// ModelRow is one modelled row. ID is the value of the "id" column.
type ModelRow struct {
	ID     int64
	Values []string
}

func (s *State) clone() *State {
	c := &State{
		Columns: slices.Clone(s.Columns),
		Rows:    make([]ModelRow, len(s.Rows)),
		Indices: slices.Clone(s.Indices),
	}
	for i, r := range s.Rows {
		c.Rows[i] = ModelRow{ID: r.ID, Values: slices.Clone(r.Values)}
	}
	return c
}

// SortedRows returns the rows ordered by id.
func (s *State) SortedRows() []ModelRow {
	rs := slices.Clone(s.Rows)
	slices.SortFunc(rs, func(a, b ModelRow) int {
		switch {
		case a.ID < b.ID:
			return -1
		case a.ID > b.ID:
			return 1
		}
		return 0
	})
	return rs
}

// columnKind describes a generated column type.
type columnKind struct {
	name string
	typ  arrow.DataType
}

// kinds is the pool of generated column types.
func kinds() []columnKind {
	return []columnKind{
		{"i8", arrow.PrimitiveTypes.Int8},
		{"i32", arrow.PrimitiveTypes.Int32},
		{"i64", arrow.PrimitiveTypes.Int64},
		{"u64", arrow.PrimitiveTypes.Uint64},
		{"f32", arrow.PrimitiveTypes.Float32},
		{"f64", arrow.PrimitiveTypes.Float64},
		{"str", arrow.BinaryTypes.String},
		{"lstr", arrow.BinaryTypes.LargeString},
		{"bin", arrow.BinaryTypes.Binary},
		{"bool", arrow.FixedWidthTypes.Boolean},
		{"date", arrow.FixedWidthTypes.Date32},
		{"ts", &arrow.TimestampType{Unit: arrow.Microsecond, TimeZone: "UTC"}},
	}
}

// specialF64 and specialF32 are the float bit patterns the generator mixes
// in: NaNs with sign and payload, signed zeros, infinities, subnormals, extremes.
func specialF64() []uint64 {
	return []uint64{
		0x7ff8000000000000, 0xfff8000000000000, 0x7ff8dead0000beef, 0x7ff0000000000001,
		0x8000000000000000, 0x0000000000000000, 0x7ff0000000000000, 0xfff0000000000000,
		0x0000000000000001, 0x800fffffffffffff, 0x7fefffffffffffff, 0xffefffffffffffff,
	}
}

func specialF32() []uint32 {
	return []uint32{
		0x7fc00000, 0xffc00000, 0x7fc0beef, 0x7f800001, 0x80000000, 0x00000000,
		0x7f800000, 0xff800000, 0x00000001, 0x807fffff, 0x7f7fffff, 0xff7fffff,
	}
}

// sampleStrings are the generator's strings: empty, ASCII, multi-byte UTF-8,
// quotes, and text that looks like other values.
func sampleStrings() []string {
	return []string{
		"", "a", "héllo wörld", "日本語テキスト", "emoji 😀🎉", "ü-umlaut", "Ω≈ç√∫", "tab\there",
		"quote ' and \" both", "null", "NaN", "-0", "ʻokina", "ß", "\u00a0nbsp", "zzz",
	}
}

type generator struct {
	rng    *rand.Rand
	opts   RandomOptions
	dir    string
	tmp    string
	nextID int64
	files  int
	cur    *State
	ds     *RandomDataset
	peer   *Peer
	tagSeq int
	addSeq int
}

// MakeRandomDataset has Lance 12 build a dataset at dir (which must not
// exist yet, or be empty) from seed, and returns the generator's model of it.
//
// The schema is an int64 "id" column (not nullable, unique, increasing across
// appends) plus 3..6 nullable columns drawn from int8, int32, int64, uint64,
// float32, float64, utf8, large_utf8, binary, bool, date32 and
// timestamp[us, UTC]. Values include nulls (~10%), float specials (NaN with
// sign and payload, ±0, ±Inf, subnormals, extremes), multi-byte UTF-8 and
// integer extremes.
//
// After create, Options.Ops operations are drawn at random: append (most
// often), delete and update by id predicates, tag create/update/delete,
// btree/bitmap index create and drop, restore to an earlier version,
// optimize (compaction) and adding an SQL column (`id * 2`). Every step
// goes through the driver, so Lance decides the versions; the model tracks the
// expected rows, columns and index names of every version, and the live tags.
// The same seed and options give the same operations and data.
func MakeRandomDataset(ctx context.Context, p *Peer, dir string, seed uint64, opts RandomOptions) (*RandomDataset, error) {
	if opts.Ops == 0 {
		opts.Ops = 10
	}
	if opts.StorageVersion == "" {
		opts.StorageVersion = "2.0"
	}
	if opts.MaxBatchRows <= 0 {
		opts.MaxBatchRows = 24
	}
	tmp, err := os.MkdirTemp("", "peerlance-gen-")
	if err != nil {
		return nil, fmt.Errorf("peerlance: %w", err)
	}
	defer os.RemoveAll(tmp)
	g := &generator{
		rng:  rand.New(rand.NewPCG(seed, seed^0x9e3779b97f4a7c15)),
		opts: opts,
		dir:  dir,
		tmp:  tmp,
		peer: p,
		ds: &RandomDataset{
			Dir: dir, Seed: seed, Options: opts,
			Tags:   map[string]uint64{},
			States: map[uint64]*State{},
		},
	}
	if err := g.create(ctx); err != nil {
		return nil, err
	}
	for i := 0; i < opts.Ops; i++ {
		if err := g.randomOp(ctx); err != nil {
			return nil, fmt.Errorf("peerlance: random dataset seed %d, op %d: %w", seed, i+1, err)
		}
	}
	return g.ds, nil
}

func (g *generator) create(ctx context.Context) error {
	pool := kinds()
	g.rng.Shuffle(len(pool), func(i, j int) { pool[i], pool[j] = pool[j], pool[i] })
	n := 3 + g.rng.IntN(4)
	cols := []Column{{Name: "id", Type: arrow.PrimitiveTypes.Int64}}
	for i, k := range pool[:n] {
		cols = append(cols, Column{Name: fmt.Sprintf("c%d_%s", i+1, k.name), Type: k.typ, Nullable: true})
	}
	g.cur = &State{Columns: cols}
	file, rows, err := g.batch(1 + g.rng.IntN(g.opts.MaxBatchRows))
	if err != nil {
		return err
	}
	args := []string{"create", "--ipc", file, "--storage-version", g.opts.StorageVersion}
	if g.opts.StableRowIDs {
		args = append(args, "--stable-row-ids")
	}
	if g.opts.V1Paths {
		args = append(args, "--v1-paths")
	}
	return g.run(ctx, args, func() { g.cur.Rows = append(g.cur.Rows, rows...) })
}

// run executes one driver step, applies the model change, and records the
// resulting state for every version the step created.
func (g *generator) run(ctx context.Context, args []string, apply func()) error {
	before := g.ds.Latest
	res, err := g.peer.Exec(ctx, args[0], g.dir, args[1:]...)
	if err != nil {
		return err
	}
	if res.Version < before {
		return fmt.Errorf("peerlance: %s went from version %d back to %d", args[0], before, res.Version)
	}
	if apply != nil {
		apply()
	}
	for v := before + 1; v <= res.Version; v++ {
		g.ds.States[v] = g.cur.clone()
	}
	g.ds.Latest = res.Version
	g.ds.Steps = append(g.ds.Steps, Step{Args: args, VersionBefore: before, VersionAfter: res.Version})
	return nil
}

func (g *generator) randomOp(ctx context.Context) error {
	type op struct {
		weight int
		fn     func(context.Context) error
	}
	ops := []op{
		{8, g.opAppend}, {4, g.opDelete}, {4, g.opUpdate}, {3, g.opTagCreate},
		{1, g.opTagUpdate}, {1, g.opTagDelete}, {2, g.opCreateIndex}, {1, g.opDropIndex},
		{2, g.opRestore}, {2, g.opOptimize}, {1, g.opAddColumn},
	}
	total := 0
	for _, o := range ops {
		total += o.weight
	}
	r := g.rng.IntN(total)
	for _, o := range ops {
		if r < o.weight {
			return o.fn(ctx)
		}
		r -= o.weight
	}
	panic("unreachable")
}

func (g *generator) opAppend(ctx context.Context) error {
	file, rows, err := g.batch(1 + g.rng.IntN(g.opts.MaxBatchRows))
	if err != nil {
		return err
	}
	return g.run(ctx, []string{"append", "--ipc", file}, func() { g.cur.Rows = append(g.cur.Rows, rows...) })
}

// idPredicate returns a Lance SQL predicate over id and its Go equivalent.
func (g *generator) idPredicate() (string, func(int64) bool) {
	hi := max(g.nextID, 1)
	switch g.rng.IntN(3) {
	case 0:
		m := int64(2 + g.rng.IntN(4))
		r := g.rng.Int64N(m)
		return fmt.Sprintf("id %% %d = %d", m, r), func(id int64) bool { return id%m == r }
	case 1:
		a := g.rng.Int64N(hi)
		b := a + 1 + g.rng.Int64N(8)
		return fmt.Sprintf("id >= %d AND id < %d", a, b), func(id int64) bool { return id >= a && id < b }
	default:
		x := g.rng.Int64N(hi)
		return fmt.Sprintf("id = %d", x), func(id int64) bool { return id == x }
	}
}

func (g *generator) opDelete(ctx context.Context) error {
	pred, match := g.idPredicate()
	return g.run(ctx, []string{"delete", "--where", pred}, func() {
		g.cur.Rows = slices.DeleteFunc(g.cur.Rows, func(r ModelRow) bool { return match(r.ID) })
	})
}

// updatable reports whether the generator updates columns of type t.
func updatable(t arrow.DataType) bool {
	switch t.ID() {
	case arrow.INT8, arrow.INT32, arrow.INT64, arrow.STRING, arrow.LARGE_STRING, arrow.BOOL:
		return true
	}
	return false
}

// updateLiteral returns an SQL literal for a column of type t and the
// canonical value it stores, or ok=false when the type is not updated.
func (g *generator) updateLiteral(t arrow.DataType) (sql, val string, ok bool) {
	if !updatable(t) {
		return "", "", false
	}
	if g.rng.IntN(5) == 0 {
		return "NULL", "null", true
	}
	switch t.ID() {
	case arrow.INT8:
		v := int64(g.rng.IntN(256) - 128)
		return strconv.FormatInt(v, 10), strconv.FormatInt(v, 10), true
	case arrow.INT32:
		v := int64(int32(g.rng.Uint32()))
		return strconv.FormatInt(v, 10), strconv.FormatInt(v, 10), true
	case arrow.INT64:
		v := g.rng.Int64N(1<<40) - 1<<39
		return strconv.FormatInt(v, 10), `"` + strconv.FormatInt(v, 10) + `"`, true
	case arrow.STRING, arrow.LARGE_STRING:
		s := pick(g.rng, sampleStrings()) + "-upd"
		c, _ := encodeCanonical(s)
		return "'" + strings.ReplaceAll(s, "'", "''") + "'", c, true
	case arrow.BOOL:
		if g.rng.IntN(2) == 0 {
			return "false", "false", true
		}
		return "true", "true", true
	}
	return "", "", false
}

func (g *generator) opUpdate(ctx context.Context) error {
	var candidates []int
	for i, c := range g.cur.Columns {
		// id and the `id * 2` columns (not nullable, derived) are not updated.
		if !c.Nullable {
			continue
		}
		if updatable(c.Type) {
			candidates = append(candidates, i)
		}
	}
	if len(candidates) == 0 {
		return g.opAppend(ctx)
	}
	col := candidates[g.rng.IntN(len(candidates))]
	sql, val, _ := g.updateLiteral(g.cur.Columns[col].Type)
	pred, match := g.idPredicate()
	args := []string{"update", "--where", pred, "--set", g.cur.Columns[col].Name + "=" + sql}
	return g.run(ctx, args, func() {
		for i := range g.cur.Rows {
			if match(g.cur.Rows[i].ID) {
				g.cur.Rows[i].Values[col] = val
			}
		}
	})
}

func pick[T any](r *rand.Rand, xs []T) T { return xs[r.IntN(len(xs))] }

func (g *generator) randomVersion() uint64 { return 1 + g.rng.Uint64N(g.ds.Latest) }

func (g *generator) tagNames() []string {
	names := make([]string, 0, len(g.ds.Tags))
	for n := range g.ds.Tags {
		names = append(names, n)
	}
	slices.Sort(names)
	return names
}

func (g *generator) opTagCreate(ctx context.Context) error {
	g.tagSeq++
	name := fmt.Sprintf("tag%d", g.tagSeq)
	v := g.randomVersion()
	return g.run(ctx, []string{"tag-create", name, strconv.FormatUint(v, 10)}, func() { g.ds.Tags[name] = v })
}

func (g *generator) opTagUpdate(ctx context.Context) error {
	names := g.tagNames()
	if len(names) == 0 {
		return g.opTagCreate(ctx)
	}
	name := names[g.rng.IntN(len(names))]
	v := g.randomVersion()
	return g.run(ctx, []string{"tag-update", name, strconv.FormatUint(v, 10)}, func() { g.ds.Tags[name] = v })
}

func (g *generator) opTagDelete(ctx context.Context) error {
	names := g.tagNames()
	if len(names) == 0 {
		return g.opTagCreate(ctx)
	}
	name := names[g.rng.IntN(len(names))]
	return g.run(ctx, []string{"tag-delete", name}, func() { delete(g.ds.Tags, name) })
}

func (g *generator) opCreateIndex(ctx context.Context) error {
	type cand struct {
		col int
		typ IndexType
	}
	var cands []cand
	for i, c := range g.cur.Columns {
		switch c.Type.ID() {
		case arrow.INT8, arrow.INT32, arrow.INT64, arrow.UINT64, arrow.DATE32, arrow.TIMESTAMP:
			cands = append(cands, cand{i, IndexBTree})
		case arrow.STRING:
			cands = append(cands, cand{i, IndexBTree}, cand{i, IndexBitmap})
		}
	}
	g.rng.Shuffle(len(cands), func(i, j int) { cands[i], cands[j] = cands[j], cands[i] })
	for _, c := range cands {
		// At most one index per column: its name is "<column>__<type>".
		col := g.cur.Columns[c.col].Name
		name := col + "__" + string(c.typ)
		if slices.ContainsFunc(g.cur.Indices, func(n string) bool { return strings.HasPrefix(n, col+"__") }) {
			continue
		}
		args := []string{"create-index", g.cur.Columns[c.col].Name, "--type", string(c.typ), "--name", name}
		return g.run(ctx, args, func() { g.cur.Indices = append(g.cur.Indices, name) })
	}
	return g.opAppend(ctx)
}

func (g *generator) opDropIndex(ctx context.Context) error {
	if len(g.cur.Indices) == 0 {
		return g.opCreateIndex(ctx)
	}
	name := g.cur.Indices[g.rng.IntN(len(g.cur.Indices))]
	return g.run(ctx, []string{"drop-index", name}, func() {
		g.cur.Indices = slices.DeleteFunc(g.cur.Indices, func(n string) bool { return n == name })
	})
}

func (g *generator) opRestore(ctx context.Context) error {
	if g.ds.Latest < 2 {
		return g.opAppend(ctx)
	}
	v := 1 + g.rng.Uint64N(g.ds.Latest-1)
	return g.run(ctx, []string{"restore", strconv.FormatUint(v, 10)}, func() { g.cur = g.ds.States[v].clone() })
}

func (g *generator) opOptimize(ctx context.Context) error {
	return g.run(ctx, []string{"optimize"}, nil)
}

func (g *generator) opAddColumn(ctx context.Context) error {
	g.addSeq++
	name := fmt.Sprintf("added%d_i64", g.addSeq)
	return g.run(ctx, []string{"add-columns", "--sql", name + "=id * 2"}, func() {
		// Lance derives the column's nullability from the expression: id is
		// not nullable, so neither is id * 2.
		g.cur.Columns = append(g.cur.Columns, Column{Name: name, Type: arrow.PrimitiveTypes.Int64, Nullable: false})
		for i := range g.cur.Rows {
			g.cur.Rows[i].Values = append(g.cur.Rows[i].Values, `"`+strconv.FormatInt(2*g.cur.Rows[i].ID, 10)+`"`)
		}
	})
}

// batch builds n rows of the current schema, writes them as an IPC file and
// returns the file and the modelled rows.
func (g *generator) batch(n int) (string, []ModelRow, error) {
	mem := memory.NewGoAllocator()
	fields := make([]arrow.Field, len(g.cur.Columns))
	for i, c := range g.cur.Columns {
		fields[i] = arrow.Field{Name: c.Name, Type: c.Type, Nullable: c.Nullable}
	}
	schema := arrow.NewSchema(fields, nil)
	b := array.NewRecordBuilder(mem, schema)
	defer b.Release()
	for r := 0; r < n; r++ {
		id := g.nextID
		g.nextID++
		for i, c := range g.cur.Columns {
			g.appendValue(b.Field(i), c, id)
		}
	}
	rec := b.NewRecordBatch()
	defer rec.Release()
	rows := make([]ModelRow, n)
	for r := 0; r < n; r++ {
		vals := make([]string, len(g.cur.Columns))
		for i := range g.cur.Columns {
			v, err := Value(rec.Column(i), r)
			if err != nil {
				return "", nil, err
			}
			vals[i] = v
		}
		id := rec.Column(0).(*array.Int64).Value(r)
		rows[r] = ModelRow{ID: id, Values: vals}
	}
	g.files++
	file := filepath.Join(g.tmp, fmt.Sprintf("batch%03d.arrow", g.files))
	if err := WriteIPCFile(file, schema, rec); err != nil {
		return "", nil, err
	}
	return file, rows, nil
}

func (g *generator) appendValue(b array.Builder, c Column, id int64) {
	if c.Name == "id" {
		b.(*array.Int64Builder).Append(id)
		return
	}
	if strings.HasPrefix(c.Name, "added") {
		// Columns added as `id * 2` keep that meaning for appended rows too.
		b.(*array.Int64Builder).Append(2 * id)
		return
	}
	if g.rng.IntN(10) == 0 {
		b.AppendNull()
		return
	}
	r := g.rng
	switch bb := b.(type) {
	case *array.Int8Builder:
		bb.Append(int8(r.IntN(256) - 128))
	case *array.Int32Builder:
		bb.Append([]int32{math.MinInt32, math.MaxInt32, 0, -1, int32(r.Uint32())}[r.IntN(5)])
	case *array.Int64Builder:
		bb.Append([]int64{math.MinInt64, math.MaxInt64, 0, -1, int64(r.Uint64())}[r.IntN(5)])
	case *array.Uint64Builder:
		bb.Append([]uint64{math.MaxUint64, 0, 1, r.Uint64(), r.Uint64N(1000)}[r.IntN(5)])
	case *array.Float32Builder:
		if r.IntN(3) == 0 {
			bb.Append(math.Float32frombits(pick(r, specialF32())))
		} else {
			bb.Append(float32(r.NormFloat64() * 1000))
		}
	case *array.Float64Builder:
		if r.IntN(3) == 0 {
			bb.Append(math.Float64frombits(pick(r, specialF64())))
		} else {
			bb.Append(r.NormFloat64() * 1e6)
		}
	case *array.StringBuilder:
		bb.Append(pick(r, sampleStrings()) + strconv.Itoa(r.IntN(100)))
	case *array.LargeStringBuilder:
		bb.Append(pick(r, sampleStrings()))
	case *array.BinaryBuilder:
		v := make([]byte, r.IntN(9))
		for i := range v {
			v[i] = byte(r.Uint32())
		}
		bb.Append(v)
	case *array.BooleanBuilder:
		bb.Append(r.IntN(2) == 0)
	case *array.Date32Builder:
		bb.Append(arrow.Date32(r.Int32N(200000) - 100000))
	case *array.TimestampBuilder:
		bb.Append(arrow.Timestamp(r.Int64N(2e15) - 1e15))
	default:
		panic(fmt.Sprintf("peerlance: generator has no values for %T", b))
	}
}
