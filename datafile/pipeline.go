package datafile

import (
	"runtime"
	"sync"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
)

// The Writer's concurrent pipeline. Write validates a record and hands it
// to lanes: one per 2.1+ leaf column (shred, and encode a page when one is
// full) and one per seed collector (observe). The lanes of one record run
// concurrently, at most GOMAXPROCS at a time; each lane processes the
// records strictly in order (a lane waits for its own previous record).
// A writer step per record waits for all its lanes and for the previous
// record's writer step, then writes the record's encoded pages in (shred
// step, leaf) order — the order the sequential writer used — so the file's
// bytes do not depend on scheduling. Write returns once the record is
// queued; at most maxInflight records are queued (retained) at a time.
// Close waits for every queued record, then encodes the last pages of every
// leaf and finishes the seeds concurrently, and writes them in leaf order.
//
// Every goroutine ends on its own once its record is processed, so a
// Writer that is dropped without Close leaks nothing; an error in a lane
// is sticky and returned by the next Write or by Close.

// maxInflight bounds the records queued in the pipeline.
const maxInflight = 4

// encodedPage is one page encoded by a lane, not yet written.
type encodedPage struct {
	bufs     [][]byte
	enc      []byte
	rows     uint64
	priority uint64
}

// pipeline is the Writer's lane scheduling state.
type pipeline struct {
	cpu      chan struct{} // GOMAXPROCS tokens for lane work
	inflight chan struct{} // queued records
	last     *pipeBatch    // the most recent record queued
	// inline is the work bound of inline processing (inlineWork; tests
	// set -1 to force the lanes).
	inline int64

	mu  sync.Mutex
	err error // first lane or write error
}

// pipeBatch is one record in the pipeline.
type pipeBatch struct {
	rec      arrow.RecordBatch
	leafDone []chan struct{} // closed when leaf i has processed rec
	seedDone []chan struct{} // closed when seed j has observed rec
	pages    [][][]encodedPage
	written  chan struct{} // closed when the pages are written, rec released
}

func newPipeline() pipeline {
	return pipeline{
		cpu:      make(chan struct{}, max(1, runtime.GOMAXPROCS(0))),
		inflight: make(chan struct{}, maxInflight),
		inline:   inlineWork,
	}
}

func (p *pipeline) fail(err error) {
	p.mu.Lock()
	if p.err == nil {
		p.err = err
	}
	p.mu.Unlock()
}

func (p *pipeline) failed() error {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.err
}

// work runs f holding a CPU token.
func (p *pipeline) work(f func()) {
	p.cpu <- struct{}{}
	defer func() { <-p.cpu }()
	f()
}

// inlineWork bounds the work (rows × leaf and seed lanes) of a record the
// pipeline processes in the caller's goroutine instead of in lanes: for a
// small record (a 10-row append) starting goroutines, growing their stacks
// and handing the pages over costs more than the work itself. The file's
// bytes are the same either way (pages are written in the same order).
const inlineWork = 1 << 14

// submit queues rec (already validated) for the lanes, or processes it at
// once when it is small and nothing is queued (inlineWork).
func (w *Writer) submit(rec arrow.RecordBatch) {
	p := &w.pipe
	if p.last != nil {
		select {
		case <-p.last.written:
			p.last = nil // done: nothing is queued
		default:
		}
	}
	if p.last == nil && rec.NumRows()*int64(len(w.leaves)+len(w.seeds)) <= p.inline {
		w.processInline(rec)
		return
	}
	p.inflight <- struct{}{}
	rec.Retain()
	b := &pipeBatch{
		rec:      rec,
		leafDone: make([]chan struct{}, len(w.leaves)),
		seedDone: make([]chan struct{}, len(w.seeds)),
		pages:    make([][][]encodedPage, len(w.leaves)),
		written:  make(chan struct{}),
	}
	prev := p.last
	p.last = b
	for i := range w.leaves {
		b.leafDone[i] = make(chan struct{})
		go w.leafLane(b, prev, i)
	}
	for j := range w.seeds {
		b.seedDone[j] = make(chan struct{})
		go w.seedLane(b, prev, j)
	}
	go w.writeLane(b, prev)
}

// processInline is what the lanes and the write step do with rec, done in
// the caller's goroutine (nothing is queued before rec).
func (w *Writer) processInline(rec arrow.RecordBatch) {
	pages := make([][][]encodedPage, len(w.leaves))
	for i, l := range w.leaves {
		if w.pipe.failed() != nil {
			break
		}
		pg, err := w.shredLeaf(l, rec)
		if err != nil {
			w.pipe.fail(err)
			break
		}
		pages[i] = pg
	}
	for _, s := range w.seeds {
		if s.err == nil {
			s.err = s.observe(rec.Column(s.top))
		}
	}
	if w.pipe.failed() != nil {
		return
	}
	if err := w.writeSteps(pages); err != nil {
		w.pipe.fail(err)
	}
}

func (w *Writer) leafLane(b, prev *pipeBatch, i int) {
	defer close(b.leafDone[i])
	if prev != nil {
		<-prev.leafDone[i]
	}
	if w.pipe.failed() != nil {
		return
	}
	w.pipe.work(func() {
		pages, err := w.shredLeaf(w.leaves[i], b.rec)
		if err != nil {
			w.pipe.fail(err)
			return
		}
		b.pages[i] = pages
	})
}

func (w *Writer) seedLane(b, prev *pipeBatch, j int) {
	defer close(b.seedDone[j])
	if prev != nil {
		<-prev.seedDone[j]
	}
	s := w.seeds[j]
	if s.err != nil {
		return
	}
	w.pipe.work(func() { s.err = s.observe(b.rec.Column(s.top)) })
}

// observe feeds a to the seed's collector, relabelled with the stored type
// when the file stores another one (R15).
func (s *seedState) observe(a arrow.Array) error {
	if s.cast {
		d := a.Data()
		nd := array.NewData(s.collector.Field().Type, d.Len(), d.Buffers(), d.Children(), d.NullN(), d.Offset())
		a = array.MakeFromData(nd)
		defer a.Release()
		defer nd.Release()
	}
	return s.collector.Observe(a)
}

func (w *Writer) writeLane(b, prev *pipeBatch) {
	defer close(b.written)
	for _, c := range b.leafDone {
		<-c
	}
	for _, c := range b.seedDone {
		<-c
	}
	if prev != nil {
		<-prev.written
	}
	b.rec.Release()
	b.rec = nil
	<-w.pipe.inflight
	if w.pipe.failed() != nil {
		return
	}
	if err := w.writeSteps(b.pages); err != nil {
		w.pipe.fail(err)
	}
}

// writeSteps writes pages[leaf][step] in (step, leaf) order.
func (w *Writer) writeSteps(pages [][][]encodedPage) error {
	steps := 0
	for _, p := range pages {
		steps = max(steps, len(p))
	}
	for s := range steps {
		for i, p := range pages {
			if s >= len(p) {
				continue
			}
			for _, pg := range p[s] {
				if err := w.writeEncoded(w.leaves[i], pg); err != nil {
					return err
				}
			}
		}
	}
	return nil
}

// writeEncoded writes one encoded page of l and records it.
func (w *Writer) writeEncoded(l *leaf21, pg encodedPage) error {
	p := Page{Length: pg.rows, Priority: pg.priority}
	if len(pg.bufs) > 0 {
		p.Buffers = make([]BufferRange, 0, len(pg.bufs))
	}
	for _, b := range pg.bufs {
		r, err := w.writeBuffer(b)
		if err != nil {
			return err
		}
		p.Buffers = append(p.Buffers, r)
	}
	l.pages = append(l.pages, p)
	l.encs = append(l.encs, pg.enc)
	return nil
}

// drain waits for every queued record and returns the pipeline's error.
func (w *Writer) drain() error {
	if w.pipe.last != nil {
		<-w.pipe.last.written
		w.pipe.last = nil
	}
	return w.pipe.failed()
}

// finishLanes encodes the last pages of every leaf and finishes every seed
// concurrently, then writes the pages in leaf order. seedFinish is called
// once per seed, in its own goroutine — or, for a small file (at most
// inlineWork rows × lanes), all in the caller's goroutine one after the
// other, which writes the same bytes.
func (w *Writer) finishLanes(seedFinish func(j int)) error {
	if int64(w.rows)*int64(len(w.leaves)+len(w.seeds)) <= w.pipe.inline {
		last := make([][][]encodedPage, len(w.leaves))
		for i, l := range w.leaves {
			pages, err := w.flushLeaf(l)
			if err != nil {
				w.pipe.fail(err)
				continue
			}
			last[i] = [][]encodedPage{pages}
		}
		for j := range w.seeds {
			seedFinish(j)
		}
		if err := w.pipe.failed(); err != nil {
			return err
		}
		return w.writeSteps(last)
	}
	var wg sync.WaitGroup
	last := make([][][]encodedPage, len(w.leaves))
	for i, l := range w.leaves {
		wg.Add(1)
		go func() {
			defer wg.Done()
			w.pipe.work(func() {
				pages, err := w.flushLeaf(l)
				if err != nil {
					w.pipe.fail(err)
					return
				}
				last[i] = [][]encodedPage{pages}
			})
		}()
	}
	for j := range w.seeds {
		wg.Add(1)
		go func() {
			defer wg.Done()
			w.pipe.work(func() { seedFinish(j) })
		}()
	}
	wg.Wait()
	if err := w.pipe.failed(); err != nil {
		return err
	}
	return w.writeSteps(last)
}

// settleArrays makes every lazily computed part of a read-only: unknown null
// counts (cached in the shared ArrayData) and dictionary arrays (built on
// first use), so that lanes may read the same arrays concurrently.
func settleArrays(a arrow.Array, depth int) {
	if a == nil || depth > maxEncodingDepth {
		return
	}
	if depth == 0 {
		settleNullCounts(a.Data(), 0)
	}
	// Arrays built over slices of the data (a struct's fields at an
	// offset) have their own ArrayData.
	a.NullN()
	switch t := a.(type) {
	case *array.Dictionary:
		settleArrays(t.Dictionary(), depth+1)
		settleArrays(t.Indices(), depth+1)
	case *array.Struct:
		for i := range t.NumField() {
			settleArrays(t.Field(i), depth+1)
		}
	case array.ListLike:
		settleArrays(t.ListValues(), depth+1)
	}
}
