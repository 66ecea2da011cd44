package s3util

import (
	"net"
	"net/http"
	"net/http/httputil"
	"net/url"
	"sort"
	"strconv"
	"strings"
	"sync"
)

// CountingProxy is an HTTP reverse proxy in front of an S3 endpoint that
// counts the requests passing through it by kind, so a benchmark can say
// how many object-store requests an operation costs — for any client,
// lancekeeper or Lance 12, pointed at Endpoint instead of the server.
type CountingProxy struct {
	// Endpoint is the proxy's address, http://127.0.0.1:port.
	Endpoint string
	srv      *http.Server
	mu       sync.Mutex
	counts   map[string]int
}

// Request kinds counted by CountingProxy.
const (
	KindGetRange = "GET range" // GET of an object with a Range header
	KindGet      = "GET"       // GET of a whole object
	KindHead     = "HEAD"      // HEAD of an object (stat, existence probe)
	KindList     = "LIST"      // GET of a bucket (a list page)
	KindPut      = "PUT"       // PUT of an object (including conditional creates and multipart parts)
	KindDelete   = "DELETE"
	KindOther    = "other" // POST (multipart create/complete, batch delete), …
)

// RequestKind classifies an S3 request (path-style addressing:
// /bucket/key; a request without a key, or with list-type, is a listing).
func RequestKind(r *http.Request) string {
	path := strings.TrimPrefix(r.URL.Path, "/")
	_, key, _ := strings.Cut(path, "/")
	q := r.URL.Query()
	switch r.Method {
	case http.MethodGet:
		if key == "" || q.Has("list-type") || q.Has("prefix") || q.Has("delimiter") {
			return KindList
		}
		if r.Header.Get("Range") != "" {
			return KindGetRange
		}
		return KindGet
	case http.MethodHead:
		return KindHead
	case http.MethodPut:
		return KindPut
	case http.MethodDelete:
		return KindDelete
	}
	return KindOther
}

// StartCountingProxy starts a counting proxy in front of target (an
// http:// endpoint such as Server.Endpoint) on a free loopback port.
func StartCountingProxy(target string) (*CountingProxy, error) {
	u, err := url.Parse(target)
	if err != nil {
		return nil, err
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return nil, err
	}
	p := &CountingProxy{Endpoint: "http://" + ln.Addr().String(), counts: map[string]int{}}
	rp := &httputil.ReverseProxy{Rewrite: func(pr *httputil.ProxyRequest) {
		pr.SetURL(u)
		// Signatures cover the Host header: keep the client's, which the
		// server checks against the signed one.
		pr.Out.Host = pr.In.Host
	}}
	p.srv = &http.Server{Handler: http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		p.mu.Lock()
		p.counts[RequestKind(r)]++
		p.mu.Unlock()
		rp.ServeHTTP(w, r)
	})}
	go func() { _ = p.srv.Serve(ln) }()
	return p, nil
}

// Reset zeroes the counts and returns the ones before.
func (p *CountingProxy) Reset() map[string]int {
	p.mu.Lock()
	defer p.mu.Unlock()
	old := p.counts
	p.counts = map[string]int{}
	return old
}

// Counts returns a copy of the counts so far.
func (p *CountingProxy) Counts() map[string]int {
	p.mu.Lock()
	defer p.mu.Unlock()
	out := make(map[string]int, len(p.counts))
	for k, v := range p.counts {
		out[k] = v
	}
	return out
}

// Format renders counts as "GET range 3, HEAD 1, LIST 1" in a fixed order.
func Format(counts map[string]int) string {
	var keys []string
	for k := range counts {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	var parts []string
	for _, k := range keys {
		parts = append(parts, k+" "+strconv.Itoa(counts[k]))
	}
	return strings.Join(parts, ", ")
}

// Close stops the proxy.
func (p *CountingProxy) Close() error { return p.srv.Close() }
