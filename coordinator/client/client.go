// Package client is the Go client of the lancekeeper commit
// coordinator (`lancekeeper serve`, package coordinator). It sends
// transactions as JSON, retries answers that say the request was not
// processed (429, 503) after their Retry-After, and turns error answers
// into errors that match the commit package's sentinels (errors.Is(err,
// commit.ErrConflict), errors.As(err, *commit.ConflictError), …).
//
// WriteArrow is the client half of `lancekeeper write --coordinator`: it
// writes data files directly to the dataset's store (commit.WriteFragments)
// and asks the coordinator to commit them.
package client

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"time"

	"google.golang.org/protobuf/encoding/protojson"
	"google.golang.org/protobuf/proto"

	"github.com/lancekeeper/lancekeeper/commit"
	coordapi "github.com/lancekeeper/lancekeeper/coordinator/api"
	"github.com/lancekeeper/lancekeeper/manifest"
	"github.com/lancekeeper/lancekeeper/manifest/pb"
	"github.com/lancekeeper/lancekeeper/store"
)

// ErrUnauthorized is wrapped when the coordinator refused the token.
var ErrUnauthorized = errors.New("coordinator: unauthorized")

// ErrBusy is wrapped when the coordinator kept answering 429 or 503 (the
// request was never processed).
var ErrBusy = errors.New("coordinator busy")

// ErrProtocol is wrapped when the coordinator's answer cannot be decoded.
var ErrProtocol = errors.New("coordinator protocol error")

// maxResponseBytes bounds the answers read.
const maxResponseBytes = 64 << 20

// Options configure a Client.
type Options struct {
	// Token is the bearer token ("" sends none).
	Token string
	// Root is the root requests address ("" is the server's default).
	Root string
	// HTTPClient sends the requests (nil: a client with a 2-minute timeout).
	HTTPClient *http.Client
	// BusyRetries is how often an answer 429 or 503 is retried after its
	// Retry-After (0: 8; negative: never).
	BusyRetries int
	// MaxRetryAfter caps the wait of one Retry-After (0: 5 s).
	MaxRetryAfter time.Duration
}

// Client talks to one coordinator. It is safe for concurrent use.
type Client struct {
	base *url.URL
	opts Options
	hc   *http.Client
}

// New returns a client of the coordinator at baseURL (http:// or https://).
func New(baseURL string, opts Options) (*Client, error) {
	u, err := url.Parse(strings.TrimRight(baseURL, "/"))
	if err != nil {
		return nil, fmt.Errorf("coordinator URL %q: %w", baseURL, err)
	}
	if u.Scheme != "http" && u.Scheme != "https" || u.Host == "" {
		return nil, fmt.Errorf("coordinator URL %q: want http://host:port or https://host:port", baseURL)
	}
	if u.RawQuery != "" || u.Fragment != "" || u.User != nil {
		return nil, fmt.Errorf("coordinator URL %q: no user info, query or fragment allowed (the token goes in Options.Token)", baseURL)
	}
	if opts.BusyRetries == 0 {
		opts.BusyRetries = 8
	}
	if opts.MaxRetryAfter <= 0 {
		opts.MaxRetryAfter = 5 * time.Second
	}
	hc := opts.HTTPClient
	if hc == nil {
		hc = &http.Client{Timeout: 2 * time.Minute}
	}
	return &Client{base: u, opts: opts, hc: hc}, nil
}

// Error is an error answer of the coordinator. It unwraps to an error of
// the commit package where one matches the code (a *commit.ConflictError,
// a *commit.RequirementError, commit.ErrDatasetNotFound, …).
type Error struct {
	Status    int
	RequestID string
	Body      coordapi.ErrorBody
}

func (e *Error) Error() string {
	return fmt.Sprintf("coordinator: %d %s: %s", e.Status, e.Body.Code, e.Body.Message)
}

// Unwrap returns the library error the code stands for.
func (e *Error) Unwrap() error {
	b := e.Body
	switch b.Code {
	case coordapi.CodeConflict:
		if c := b.Conflict; c != nil {
			return &commit.ConflictError{Op: c.Operation, ConcurrentOp: c.ConcurrentOperation, Version: c.Version, Retryable: c.Retryable, Reason: c.Reason}
		}
		return commit.ErrConflict
	case coordapi.CodeRequirementFailed:
		if r := b.Requirement; r != nil {
			return &commit.RequirementError{Requirement: r.Requirement, Latest: r.Latest, Detail: r.Detail}
		}
		return commit.ErrRequirement
	case coordapi.CodeTooManyRetries:
		return commit.ErrTooManyRetries
	case coordapi.CodeCommitOutcome:
		return commit.ErrCommitOutcomeUnknown
	case coordapi.CodeDatasetExists:
		return commit.ErrDatasetExists
	case coordapi.CodeDatasetNotFound:
		return commit.ErrDatasetNotFound
	case coordapi.CodeSeedsNotEnabled:
		return commit.ErrSeedsNotEnabled
	case coordapi.CodeInvalidTransaction, coordapi.CodeDataFileNotFound:
		return commit.ErrInvalidTransaction
	case coordapi.CodeTagExists:
		return manifest.ErrRefExists
	case coordapi.CodeInvalidDatasetName:
		return coordapi.ErrInvalidDatasetName
	case coordapi.CodeUnauthorized:
		return ErrUnauthorized
	case coordapi.CodeTooManyRequests, coordapi.CodeShuttingDown:
		return ErrBusy
	}
	if e.Status == http.StatusNotFound && b.Code == coordapi.CodeNotFound {
		return manifest.ErrRefNotFound
	}
	return nil
}

// do sends one request and decodes a 2xx answer into out (nil: discard).
// 429 and 503 answers are retried after their Retry-After: the server
// answers them before doing anything.
func (c *Client) do(ctx context.Context, method, path string, query url.Values, in, out any) error {
	return c.send(ctx, method, path, query, in, out, c.opts.BusyRetries)
}

// send is do with an explicit number of busy retries (negative: none).
func (c *Client) send(ctx context.Context, method, path string, query url.Values, in, out any, busyRetries int) error {
	var body []byte
	if in != nil {
		var err error
		if body, err = json.Marshal(in); err != nil {
			return err
		}
	}
	u := *c.base
	u.RawPath = c.base.EscapedPath() + path
	u.Path = c.base.Path + mustUnescape(path)
	if len(query) > 0 {
		u.RawQuery = query.Encode()
	}
	for attempt := 0; ; attempt++ {
		req, err := http.NewRequestWithContext(ctx, method, u.String(), bytes.NewReader(body))
		if err != nil {
			return err
		}
		if in != nil {
			req.Header.Set("Content-Type", "application/json")
		}
		req.Header.Set("Accept", "application/json")
		if c.opts.Token != "" {
			req.Header.Set("Authorization", "Bearer "+c.opts.Token)
		}
		resp, err := c.hc.Do(req)
		if err != nil {
			return fmt.Errorf("coordinator %s %s: %w", method, path, err)
		}
		data, rerr := io.ReadAll(io.LimitReader(resp.Body, maxResponseBytes))
		resp.Body.Close()
		if rerr != nil {
			return fmt.Errorf("coordinator %s %s: reading the answer: %w", method, path, rerr)
		}
		if resp.StatusCode >= 200 && resp.StatusCode < 300 {
			if out == nil || resp.StatusCode == http.StatusNoContent {
				return nil
			}
			if err := json.Unmarshal(data, out); err != nil {
				return fmt.Errorf("%w: %s %s: %d answer: %v", ErrProtocol, method, path, resp.StatusCode, err)
			}
			return nil
		}
		e := &Error{Status: resp.StatusCode, RequestID: resp.Header.Get(coordapi.HeaderRequestID)}
		var er coordapi.ErrorResponse
		if json.Unmarshal(data, &er) == nil && er.Error.Code != "" {
			e.Body = er.Error
		} else {
			e.Body = coordapi.ErrorBody{Code: "http_" + strconv.Itoa(resp.StatusCode), Message: strings.TrimSpace(string(data[:min(len(data), 512)]))}
		}
		busy := resp.StatusCode == http.StatusTooManyRequests || resp.StatusCode == http.StatusServiceUnavailable
		if !busy || busyRetries < 0 || attempt >= busyRetries {
			if busy {
				return fmt.Errorf("%w after %d attempts: %w", ErrBusy, attempt+1, e)
			}
			return e
		}
		wait := time.Second
		if s, err := strconv.Atoi(resp.Header.Get("Retry-After")); err == nil && s >= 0 {
			wait = time.Duration(s) * time.Second
		}
		wait = min(wait, c.opts.MaxRetryAfter)
		select {
		case <-ctx.Done():
			return fmt.Errorf("%w: %w", ctx.Err(), e)
		case <-time.After(wait):
		}
	}
}

func mustUnescape(p string) string {
	s, err := url.PathUnescape(p)
	if err != nil {
		return p
	}
	return s
}

// datasetPath builds /v1/datasets/{dataset}{suffix}, the name as one
// escaped segment.
func datasetPath(dataset, suffix string) string {
	return "/v1/datasets/" + url.PathEscape(dataset) + suffix
}

func (c *Client) rootQuery() url.Values {
	if c.opts.Root == "" {
		return nil
	}
	return url.Values{"root": {c.opts.Root}}
}

// Commit sends a commit request as is (Root defaults to the client's).
func (c *Client) Commit(ctx context.Context, req coordapi.CommitRequest) (*coordapi.CommitResponse, error) {
	if err := coordapi.ValidateDatasetName(req.Dataset); err != nil {
		return nil, err
	}
	if req.Root == "" {
		req.Root = c.opts.Root
	}
	out := &coordapi.CommitResponse{}
	if err := c.do(ctx, http.MethodPost, coordapi.PathCommit, nil, req, out); err != nil {
		return nil, err
	}
	return out, nil
}

// AppendOptions tune Append.
type AppendOptions struct {
	// AllowBatching lets the coordinator merge this Append with concurrent
	// ones into one version.
	AllowBatching bool
	// EnableZoneWriteSeeds is the explicit opt-in for v1 seeds (R56).
	EnableZoneWriteSeeds bool
	// Requirements are added to the request. Append always adds
	// data_files_absent, so that a resend after an unknown outcome cannot
	// commit the same files twice.
	Requirements []coordapi.Requirement
	Properties   map[string]string
}

// Append commits fragments whose data files the caller wrote under the
// dataset's data/ directory.
func (c *Client) Append(ctx context.Context, dataset string, readVersion uint64, frags []*pb.DataFragment, o AppendOptions) (*coordapi.CommitResponse, error) {
	raw, err := EncodeMessages(frags)
	if err != nil {
		return nil, err
	}
	req := coordapi.CommitRequest{
		Dataset: dataset, ReadVersion: readVersion, Operation: coordapi.Operation{Append: &coordapi.AppendOp{Fragments: raw}},
		AllowBatching: o.AllowBatching, EnableZoneWriteSeeds: o.EnableZoneWriteSeeds, Properties: o.Properties,
		Requirements: append(append([]coordapi.Requirement(nil), o.Requirements...), coordapi.Requirement{Type: coordapi.RequireDataFilesAbsent}),
	}
	return c.Commit(ctx, req)
}

var protoOut = protojson.MarshalOptions{UseProtoNames: true}

// EncodeMessages encodes protobuf messages (fragments, fields, index
// metadata) as the protojson values the API carries.
func EncodeMessages[M proto.Message](msgs []M) ([]json.RawMessage, error) {
	out := make([]json.RawMessage, 0, len(msgs))
	for i, m := range msgs {
		b, err := protoOut.Marshal(m)
		if err != nil {
			return nil, fmt.Errorf("encode message %d: %w", i, err)
		}
		out = append(out, b)
	}
	return out, nil
}

// Summary returns the latest version of a dataset and its manifest summary.
func (c *Client) Summary(ctx context.Context, dataset string) (*coordapi.DatasetSummary, error) {
	out := &coordapi.DatasetSummary{}
	if err := c.do(ctx, http.MethodGet, datasetPath(dataset, ""), c.rootQuery(), nil, out); err != nil {
		return nil, err
	}
	return out, nil
}

// Versions returns up to limit versions after version after (0, 0: the
// first page of the server's default size).
func (c *Client) Versions(ctx context.Context, dataset string, after uint64, limit int) (*coordapi.VersionsResponse, error) {
	q := c.rootQuery()
	if q == nil {
		q = url.Values{}
	}
	if after > 0 {
		q.Set("after", strconv.FormatUint(after, 10))
	}
	if limit > 0 {
		q.Set("limit", strconv.Itoa(limit))
	}
	out := &coordapi.VersionsResponse{}
	if err := c.do(ctx, http.MethodGet, datasetPath(dataset, "/versions"), q, nil, out); err != nil {
		return nil, err
	}
	return out, nil
}

// AllVersions pages through every version.
func (c *Client) AllVersions(ctx context.Context, dataset string) ([]coordapi.Version, error) {
	var out []coordapi.Version
	var after uint64
	for {
		page, err := c.Versions(ctx, dataset, after, 10000)
		if err != nil {
			return nil, err
		}
		out = append(out, page.Versions...)
		if page.NextAfter == 0 {
			return out, nil
		}
		after = page.NextAfter
	}
}

// Tags lists the dataset's tags.
func (c *Client) Tags(ctx context.Context, dataset string) ([]coordapi.Tag, error) {
	out := &coordapi.TagsResponse{}
	if err := c.do(ctx, http.MethodGet, datasetPath(dataset, "/tags"), c.rootQuery(), nil, out); err != nil {
		return nil, err
	}
	return out.Tags, nil
}

// CreateTag tags a version of main (0: the latest).
func (c *Client) CreateTag(ctx context.Context, dataset, name string, version uint64, metadata map[string]string) (*coordapi.Tag, error) {
	out := &coordapi.Tag{}
	in := coordapi.CreateTagRequest{Name: name, Version: version, Metadata: metadata}
	if err := c.do(ctx, http.MethodPost, datasetPath(dataset, "/tags"), c.rootQuery(), in, out); err != nil {
		return nil, err
	}
	return out, nil
}

// DeleteTag deletes a tag.
func (c *Client) DeleteTag(ctx context.Context, dataset, name string) error {
	return c.do(ctx, http.MethodDelete, datasetPath(dataset, "/tags/"+url.PathEscape(name)), c.rootQuery(), nil, nil)
}

// EnableZoneWriteSeeds commits the explicit activation of
// FLAG_ZONE_WRITE_SEEDS. expectedVersion, when non-zero, must still be the
// latest version. AlreadyEnabled in the answer says nothing was written.
func (c *Client) EnableZoneWriteSeeds(ctx context.Context, dataset string, expectedVersion uint64) (*coordapi.CommitResponse, error) {
	out := &coordapi.CommitResponse{}
	in := coordapi.EnableSeedsRequest{ExpectedVersion: expectedVersion}
	if err := c.do(ctx, http.MethodPost, datasetPath(dataset, "/seeds/enable"), c.rootQuery(), in, out); err != nil {
		return nil, err
	}
	return out, nil
}

// Roots lists the coordinator's roots.
func (c *Client) Roots(ctx context.Context) ([]coordapi.RootInfo, error) {
	out := &coordapi.RootsResponse{}
	if err := c.do(ctx, http.MethodGet, coordapi.PathRoots, nil, nil, out); err != nil {
		return nil, err
	}
	return out.Roots, nil
}

// Health returns the coordinator's health status ("ok" or "draining").
func (c *Client) Health(ctx context.Context) (string, error) {
	out := &coordapi.Health{}
	err := c.send(ctx, http.MethodGet, coordapi.PathHealth, nil, nil, out, -1)
	if errors.Is(err, ErrBusy) {
		return "draining", nil
	}
	return out.Status, err
}

// BaseURL returns the coordinator URL the client talks to.
func (c *Client) BaseURL() string { return c.base.String() }

// DatasetName finds the root a dataset URL (a local path or a store URL, as
// the client opens it) lies under and returns the root's name and the
// dataset's name relative to it. Both sides are compared in
// store.RootPath form (absolute local paths; scheme://host/path without
// query), so that "the client's dataset URL" and "the coordinator's root
// plus the dataset name" are checked to be the same place.
func DatasetName(roots []coordapi.RootInfo, datasetURL string) (root, name string, err error) {
	p, err := store.RootPath(datasetURL)
	if err != nil {
		return "", "", err
	}
	for _, r := range roots {
		rp, err := store.RootPath(r.URL)
		if err != nil {
			continue
		}
		rp = strings.TrimRight(rp, "/")
		if rest, ok := strings.CutPrefix(p, rp+"/"); ok {
			rest = strings.Trim(rest, "/")
			if err := coordapi.ValidateDatasetName(rest); err != nil {
				return "", "", fmt.Errorf("dataset %s lies under root %q (%s), but %w", datasetURL, r.Name, r.URL, err)
			}
			return r.Name, rest, nil
		}
	}
	var have []string
	for _, r := range roots {
		have = append(have, r.Name+"="+r.URL)
	}
	return "", "", fmt.Errorf("dataset %s (%s) is not under any root of the coordinator (%s); write to a location under one of them, or name the dataset explicitly", datasetURL, p, strings.Join(have, ", "))
}
