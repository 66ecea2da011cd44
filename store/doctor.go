package store

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/google/uuid"
)

// DoctorPrefix is the key prefix (under the store root) of the doctor's
// probe keys; each run uses DoctorPrefix + "<uuid>/" and deletes it.
const DoctorPrefix = "_lancekeeper_doctor/"

// Target is what the doctor probes; *Store implements it.
type Target interface {
	Put(ctx context.Context, key string, data []byte) error
	CreateIfAbsent(ctx context.Context, key string, data []byte) error
	Get(ctx context.Context, key string) ([]byte, error)
	GetRange(ctx context.Context, key string, offset, length int64) ([]byte, error)
	Size(ctx context.Context, key string) (int64, error)
	List(ctx context.Context, prefix string, opts ListOptions) ([]ObjectInfo, error)
	Delete(ctx context.Context, key string) error
	Guarantees() Guarantees
	String() string
}

// DoctorOptions tunes the probes. Zero values take the defaults.
type DoctorOptions struct {
	// Contenders: concurrent conditional creates per round (default 8, max 64).
	Contenders int
	// Rounds: rounds of the concurrent create probe (default 20, max 1000).
	Rounds int
	// SharedClient: run every contender through one store handle. By
	// default Doctor opens one handle per contender (independent HTTP
	// clients for object stores); mem:// always shares (each Open of mem://
	// is a new bucket).
	SharedClient bool
	// Keep leaves the probe keys in place instead of deleting them.
	Keep bool
}

// Doctor check names, in report order.
const (
	CheckDeclared    = "backend declares an atomic create-if-absent"
	CheckReadBack    = "a written key reads back"
	CheckRefuse      = "conditional create refuses an existing key"
	CheckRace        = "concurrent conditional creates: exactly one winner"
	CheckList        = "a listing sees a just-written key"
	CheckRange       = "range reads return the right bytes"
	CheckCleanup     = "cleanup of the probe's keys"
	maxDoctorRounds  = 1000
	maxDoctorClients = 64
)

// Result of one check.
type Result string

// Check results.
const (
	Pass   Result = "PASS"
	Fail   Result = "FAIL"
	NotRun Result = "NOT RUN"
)

// DoctorCheck is one row of the report.
type DoctorCheck struct {
	Guarantee string
	Result    Result
	Detail    string
	Elapsed   time.Duration
}

// DoctorReport is the outcome of Doctor.
type DoctorReport struct {
	Store      string
	Guarantees Guarantees
	Prefix     string // probe prefix used (under the store root)
	Options    DoctorOptions
	Checks     []DoctorCheck
}

// OK reports whether every check passed.
func (r *DoctorReport) OK() bool {
	for _, c := range r.Checks {
		if c.Result != Pass {
			return false
		}
	}
	return len(r.Checks) > 0
}

// Check returns the row for a guarantee (CheckRace, …).
func (r *DoctorReport) Check(guarantee string) (DoctorCheck, bool) {
	for _, c := range r.Checks {
		if c.Guarantee == guarantee {
			return c, true
		}
	}
	return DoctorCheck{}, false
}

func (o DoctorOptions) withDefaults() (DoctorOptions, error) {
	if o.Contenders == 0 {
		o.Contenders = 8
	}
	if o.Rounds == 0 {
		o.Rounds = 20
	}
	if o.Contenders < 2 || o.Contenders > maxDoctorClients {
		return o, fmt.Errorf("doctor: %w: contenders %d out of range [2, %d]", ErrInvalidOptions, o.Contenders, maxDoctorClients)
	}
	if o.Rounds < 1 || o.Rounds > maxDoctorRounds {
		return o, fmt.Errorf("doctor: %w: rounds %d out of range [1, %d]", ErrInvalidOptions, o.Rounds, maxDoctorRounds)
	}
	return o, nil
}

// Doctor opens the store at rawURL and probes the guarantees commits rely
// on. The error is non-nil only when the probe could not run at all (bad
// URL, bad options); failed guarantees are FAIL rows of the report.
func Doctor(ctx context.Context, rawURL string, opts DoctorOptions) (*DoctorReport, error) {
	opts, err := opts.withDefaults()
	if err != nil {
		return nil, err
	}
	s, err := Open(ctx, rawURL)
	if err != nil {
		return nil, fmt.Errorf("doctor: %w", err)
	}
	defer s.Close()
	contenders := []Target{s}
	if !opts.SharedClient && s.Kind() != KindMemory {
		for range opts.Contenders - 1 {
			c, err := Open(ctx, rawURL)
			if err != nil {
				return nil, fmt.Errorf("doctor: open contender: %w", err)
			}
			defer c.Close()
			contenders = append(contenders, c)
		}
	}
	return doctor(ctx, s, contenders, opts)
}

// DoctorTarget probes t; every contender uses t.
func DoctorTarget(ctx context.Context, t Target, opts DoctorOptions) (*DoctorReport, error) {
	opts, err := opts.withDefaults()
	if err != nil {
		return nil, err
	}
	return doctor(ctx, t, []Target{t}, opts)
}

func doctor(ctx context.Context, t Target, contenders []Target, opts DoctorOptions) (*DoctorReport, error) {
	base := DoctorPrefix + uuid.NewString() + "/"
	rep := &DoctorReport{Store: t.String(), Guarantees: t.Guarantees(), Prefix: base, Options: opts}
	run := func(name string, f func() (bool, string)) bool {
		start := time.Now()
		ok, detail := f()
		res := Fail
		if ok {
			res = Pass
		}
		rep.Checks = append(rep.Checks, DoctorCheck{Guarantee: name, Result: res, Detail: detail, Elapsed: time.Since(start)})
		return ok
	}
	skip := func(names ...string) {
		for _, n := range names {
			rep.Checks = append(rep.Checks, DoctorCheck{Guarantee: n, Result: NotRun, Detail: "the store could not write and read back a key"})
		}
	}
	p := &prober{t: t, contenders: contenders, base: base, opts: opts}

	run(CheckDeclared, func() (bool, string) {
		g := rep.Guarantees
		if g.AtomicCreate {
			return true, fmt.Sprintf("%s; scope: %s", g.CreateMechanism, g.Scope)
		}
		return false, fmt.Sprintf("%s; %s", g.CreateMechanism, g.Caveats)
	})
	if !run(CheckReadBack, func() (bool, string) { return p.readBack(ctx) }) {
		skip(CheckRefuse, CheckRace, CheckList, CheckRange)
	} else {
		run(CheckRefuse, func() (bool, string) { return p.refuse(ctx) })
		run(CheckRace, func() (bool, string) { return p.race(ctx) })
		run(CheckList, func() (bool, string) { return p.list(ctx) })
		run(CheckRange, func() (bool, string) { return p.rangeReads(ctx) })
	}
	if opts.Keep {
		rep.Checks = append(rep.Checks, DoctorCheck{Guarantee: CheckCleanup, Result: NotRun, Detail: "kept probe keys under " + base})
		return rep, nil
	}
	cctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 2*time.Minute)
	defer cancel()
	run(CheckCleanup, func() (bool, string) { return p.cleanup(cctx) })
	return rep, nil
}

type prober struct {
	t          Target
	contenders []Target
	base       string
	opts       DoctorOptions
}

func (p *prober) readBack(ctx context.Context) (bool, string) {
	key := p.base + "readback"
	want := []byte("lancekeeper doctor read-back probe " + p.base)
	if err := p.t.Put(ctx, key, want); err != nil {
		return false, fmt.Sprintf("put %s: %v", key, err)
	}
	got, err := p.t.Get(ctx, key)
	if err != nil {
		return false, fmt.Sprintf("get %s: %v", key, err)
	}
	if !bytes.Equal(got, want) {
		return false, fmt.Sprintf("get %s returned %d bytes that differ from the %d written", key, len(got), len(want))
	}
	n, err := p.t.Size(ctx, key)
	if err != nil {
		return false, fmt.Sprintf("size %s: %v", key, err)
	}
	if n != int64(len(want)) {
		return false, fmt.Sprintf("size %s is %d, wrote %d bytes", key, n, len(want))
	}
	return true, fmt.Sprintf("put, get and size of %d bytes agree", len(want))
}

func (p *prober) refuse(ctx context.Context) (bool, string) {
	// A key created by CreateIfAbsent, then created again.
	key := p.base + "refuse/created"
	first, second := []byte("first "+key), []byte("second "+key)
	if err := p.t.CreateIfAbsent(ctx, key, first); err != nil {
		return false, fmt.Sprintf("create of new key %s failed: %v", key, err)
	}
	if err := p.t.CreateIfAbsent(ctx, key, second); !errors.Is(err, ErrAlreadyExists) {
		return false, fmt.Sprintf("second create of %s: want an already-exists error, got %v", key, err)
	}
	if got, err := p.t.Get(ctx, key); err != nil || !bytes.Equal(got, first) {
		return false, fmt.Sprintf("after the refused create, %s holds %q (err %v), want the first bytes", key, got, err)
	}
	// A key written by a plain put, then created.
	key2 := p.base + "refuse/put"
	if err := p.t.Put(ctx, key2, first); err != nil {
		return false, fmt.Sprintf("put %s: %v", key2, err)
	}
	if err := p.t.CreateIfAbsent(ctx, key2, second); !errors.Is(err, ErrAlreadyExists) {
		return false, fmt.Sprintf("create over put key %s: want an already-exists error, got %v", key2, err)
	}
	if got, err := p.t.Get(ctx, key2); err != nil || !bytes.Equal(got, first) {
		return false, fmt.Sprintf("after the refused create, %s holds %q (err %v), want the put bytes", key2, got, err)
	}
	return true, "a second create and a create over a put key were refused; contents unchanged"
}

func racePayload(base string, round, contender int) []byte {
	return []byte(base + " round " + strconv.Itoa(round) + " contender " + strconv.Itoa(contender))
}

func (p *prober) race(ctx context.Context) (bool, string) {
	n := p.opts.Contenders
	var failures []string
	badRounds := 0
	for r := range p.opts.Rounds {
		key := p.base + "race/" + strconv.Itoa(r)
		errs := make([]error, n)
		start := make(chan struct{})
		var wg sync.WaitGroup
		for c := range n {
			t := p.contenders[c%len(p.contenders)]
			wg.Add(1)
			go func() {
				defer wg.Done()
				<-start
				errs[c] = t.CreateIfAbsent(ctx, key, racePayload(p.base, r, c))
			}()
		}
		close(start)
		wg.Wait()
		var winners []int
		var other error
		for c, err := range errs {
			switch {
			case err == nil:
				winners = append(winners, c)
			case errors.Is(err, ErrAlreadyExists):
			case other == nil:
				other = fmt.Errorf("contender %d: %w", c, err)
			}
		}
		problem := ""
		switch {
		case other != nil:
			problem = fmt.Sprintf("round %d: unexpected error: %v", r, other)
		case len(winners) != 1:
			problem = fmt.Sprintf("round %d: %d winners %v", r, len(winners), winners)
		default:
			got, err := p.t.Get(ctx, key)
			if err != nil {
				problem = fmt.Sprintf("round %d: reading the key: %v", r, err)
			} else if want := racePayload(p.base, r, winners[0]); !bytes.Equal(got, want) {
				problem = fmt.Sprintf("round %d: winner was contender %d but the key holds %q", r, winners[0], got)
			}
		}
		if problem != "" {
			badRounds++
			if len(failures) < 3 {
				failures = append(failures, problem)
			}
		}
		if ctx.Err() != nil {
			return false, fmt.Sprintf("interrupted after %d rounds: %v", r+1, ctx.Err())
		}
	}
	clients := "one shared client"
	if len(p.contenders) > 1 {
		clients = fmt.Sprintf("%d independent clients", len(p.contenders))
	}
	if badRounds > 0 {
		return false, fmt.Sprintf("%d of %d rounds (%d contenders, %s) broke the guarantee: %s",
			badRounds, p.opts.Rounds, n, clients, strings.Join(failures, "; "))
	}
	return true, fmt.Sprintf("%d rounds x %d contenders (%s): one winner every round, its bytes stored", p.opts.Rounds, n, clients)
}

func (p *prober) list(ctx context.Context) (bool, string) {
	dir := p.base + "list/"
	keys := []string{dir + "b", dir + "a", dir + "sub/c"}
	for _, k := range keys {
		if err := p.t.Put(ctx, k, []byte(k)); err != nil {
			return false, fmt.Sprintf("put %s: %v", k, err)
		}
	}
	deep, err := p.t.List(ctx, dir, ListOptions{})
	if err != nil {
		return false, fmt.Sprintf("list %s: %v", dir, err)
	}
	if got, want := infoKeys(deep), []string{dir + "a", dir + "b", dir + "sub/c"}; !slices.Equal(got, want) {
		return false, fmt.Sprintf("recursive list of %s returned %v, want %v", dir, got, want)
	}
	for _, o := range deep {
		if o.Size != int64(len(o.Key)) {
			return false, fmt.Sprintf("list of %s reports size %d for %s, wrote %d bytes", dir, o.Size, o.Key, len(o.Key))
		}
	}
	shallow, err := p.t.List(ctx, dir, ListOptions{Shallow: true})
	if err != nil {
		return false, fmt.Sprintf("shallow list %s: %v", dir, err)
	}
	if got, want := infoKeys(shallow), []string{dir + "a", dir + "b", dir + "sub/"}; !slices.Equal(got, want) {
		return false, fmt.Sprintf("shallow list of %s returned %v, want %v", dir, got, want)
	}
	if !shallow[2].IsDir || shallow[0].IsDir {
		return false, fmt.Sprintf("shallow list of %s: directory flags wrong: %+v", dir, shallow)
	}
	// The newest key must be visible immediately.
	late := dir + "late"
	if err := p.t.Put(ctx, late, []byte(late)); err != nil {
		return false, fmt.Sprintf("put %s: %v", late, err)
	}
	again, err := p.t.List(ctx, dir, ListOptions{Shallow: true})
	if err != nil {
		return false, fmt.Sprintf("list %s: %v", dir, err)
	}
	if !slices.Equal(infoKeys(again), []string{dir + "a", dir + "b", dir + "late", dir + "sub/"}) {
		return false, fmt.Sprintf("list right after writing %s returned %v", late, infoKeys(again))
	}
	return true, "recursive and shallow listings are complete, sorted and see a key written just before"
}

func (p *prober) rangeReads(ctx context.Context) (bool, string) {
	key := p.base + "range"
	const size = 256 << 10
	data := make([]byte, size)
	rng := rand.New(rand.NewPCG(uint64(time.Now().UnixNano()), 0x6c616e6365))
	for i := range data {
		data[i] = byte(rng.Uint32())
	}
	if err := p.t.Put(ctx, key, data); err != nil {
		return false, fmt.Sprintf("put %s: %v", key, err)
	}
	type rg struct{ off, n int64 }
	ranges := []rg{{0, 1}, {0, 4096}, {100_003, 65_536}, {size - 10, 10}, {size - 1, 1}, {12_345, -1}, {0, size}}
	for _, r := range ranges {
		got, err := p.t.GetRange(ctx, key, r.off, r.n)
		if err != nil {
			return false, fmt.Sprintf("range [%d,+%d) of %s: %v", r.off, r.n, key, err)
		}
		end := int64(size)
		if r.n >= 0 {
			end = r.off + r.n
		}
		if !bytes.Equal(got, data[r.off:end]) {
			return false, fmt.Sprintf("range [%d,+%d) of %s returned %d bytes that differ from what was written", r.off, r.n, key, len(got))
		}
	}
	return true, fmt.Sprintf("%d ranges of a %d-byte object (first, middle, last byte, to end, whole) match", len(ranges), size)
}

func (p *prober) cleanup(ctx context.Context) (bool, string) {
	objs, err := p.t.List(ctx, p.base, ListOptions{})
	if err != nil {
		return false, fmt.Sprintf("list %s: %v", p.base, err)
	}
	var errs []string
	for _, o := range objs {
		if err := p.t.Delete(ctx, o.Key); err != nil && !errors.Is(err, ErrNotFound) {
			errs = append(errs, err.Error())
		}
	}
	if len(errs) > 0 {
		return false, fmt.Sprintf("%d of %d deletes failed, first: %s", len(errs), len(objs), errs[0])
	}
	left, err := p.t.List(ctx, p.base, ListOptions{})
	if err != nil {
		return false, fmt.Sprintf("list %s after delete: %v", p.base, err)
	}
	if len(left) > 0 {
		return false, fmt.Sprintf("%d keys remain under %s after deleting, first %s", len(left), p.base, left[0].Key)
	}
	if pr, ok := p.t.(interface {
		PruneEmptyDirs(context.Context, string) error
	}); ok {
		if err := pr.PruneEmptyDirs(ctx, DoctorPrefix); err != nil {
			return false, fmt.Sprintf("removing empty probe directories: %v", err)
		}
	}
	return true, fmt.Sprintf("deleted %d keys under %s; none remain", len(objs), p.base)
}

func infoKeys(objs []ObjectInfo) []string {
	out := make([]string, len(objs))
	for i, o := range objs {
		out[i] = o.Key
	}
	return out
}
