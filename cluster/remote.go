package cluster

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strings"
	"time"

	"github.com/blevesearch/bleve/v2"
	"github.com/blevesearch/bleve/v2/mapping"
	"github.com/blevesearch/bleve/v2/search"
	index "github.com/blevesearch/bleve_index_api"
)

// ErrRemote is the error of the bleve.Index methods a Remote does not
// offer: writes (a coordinator sends them to their shard's /api/index)
// and the index's internals.
var ErrRemote = errors.New("not supported on a remote shard")

// maxAnswer bounds a shard's answer, read whole into memory.
const maxAnswer = 256 << 20

// Remote is a shard served by semrank serve at a URL, as a bleve.Index:
// the methods bleve.IndexAlias and rerank.Wrap call (searches, document
// count, fields, mapping) ask the shard over HTTP; the others return
// ErrRemote. Each call gives up after the Remote's timeout.
type Remote struct {
	url     string // without a trailing slash
	name    string
	client  *http.Client
	timeout time.Duration
	token   string
	mapping mapping.IndexMapping
}

// NewRemote returns the shard at base (http://host:port), whose calls
// give up after timeout. token, when set, is sent as a bearer token with
// writes.
func NewRemote(base string, client *http.Client, timeout time.Duration, token string) (*Remote, error) {
	u, err := url.Parse(base)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return nil, fmt.Errorf("cluster: shard address %q: want http://host:port", base)
	}
	if client == nil {
		client = http.DefaultClient
	}
	base = strings.TrimRight(base, "/")
	return &Remote{url: base, name: base, client: client, timeout: timeout, token: token}, nil
}

// call sends a request to the shard's path with body (JSON; none when nil)
// and decodes its JSON answer into out.
func (r *Remote) call(ctx context.Context, method, path string, body, out any) error {
	_, err := r.do(ctx, method, path, body, out)
	return err
}

// do is call, returning the answer's header too.
func (r *Remote) do(ctx context.Context, method, path string, body, out any) (http.Header, error) {
	raw, h, err := r.send(ctx, method, path, body, "")
	if err != nil {
		return nil, err
	}
	if err := json.Unmarshal(raw, out); err != nil {
		return nil, fmt.Errorf("shard %s: its answer to %s: %w", r.name, path, err)
	}
	return h, nil
}

// send sends a request to the shard's path with body (encoded as JSON,
// unless it is a json.RawMessage; none when nil), listing accept, when set, in its Accept header, and returns the
// answer's body and header: an error unless the shard answered 200.
func (r *Remote) send(ctx context.Context, method, path string, body any, accept string) ([]byte, http.Header, error) {
	ctx, cancel := context.WithTimeout(ctx, r.timeout)
	defer cancel()
	var rd io.Reader
	if b, ok := body.(json.RawMessage); ok {
		rd = bytes.NewReader(b)
	} else if body != nil {
		b, err := json.Marshal(body)
		if err != nil {
			return nil, nil, err
		}
		rd = bytes.NewReader(b)
	}
	req, err := http.NewRequestWithContext(ctx, method, r.url+path, rd)
	if err != nil {
		return nil, nil, err
	}
	if body != nil {
		req.Header.Set("Content-Type", "application/json")
	}
	if accept != "" {
		req.Header.Set("Accept", accept)
	}
	if r.token != "" {
		req.Header.Set("Authorization", "Bearer "+r.token)
	}
	resp, err := r.client.Do(req)
	if err != nil {
		if ctx.Err() != nil && errors.Is(err, context.DeadlineExceeded) {
			return nil, nil, fmt.Errorf("shard %s did not answer within %s", r.name, r.timeout)
		}
		return nil, nil, fmt.Errorf("shard %s: %w", r.name, err)
	}
	defer resp.Body.Close()
	raw, err := readAnswer(resp)
	if err != nil {
		return nil, nil, fmt.Errorf("shard %s: %w", r.name, err)
	}
	if resp.StatusCode != http.StatusOK {
		var e struct{ Error string }
		if json.Unmarshal(raw, &e) != nil || e.Error == "" {
			e.Error = strings.TrimSpace(string(raw[:min(len(raw), 200)]))
		}
		return nil, nil, &ShardError{Shard: r.name, Status: resp.StatusCode, Msg: e.Error}
	}
	return raw, resp.Header, nil
}

// readAnswer reads resp's body whole, within maxAnswer bytes: into a
// buffer of its Content-Length when it gives one.
func readAnswer(resp *http.Response) ([]byte, error) {
	if n := resp.ContentLength; n >= 0 && n <= maxAnswer {
		raw := make([]byte, n)
		if _, err := io.ReadFull(resp.Body, raw); err != nil {
			return nil, fmt.Errorf("reading its answer: %w", err)
		}
		return raw, nil
	}
	raw, err := io.ReadAll(io.LimitReader(resp.Body, maxAnswer+1))
	if err != nil {
		return nil, fmt.Errorf("reading its answer: %w", err)
	}
	if len(raw) > maxAnswer {
		return nil, fmt.Errorf("its answer is larger than %d bytes", maxAnswer)
	}
	return raw, nil
}

// ShardError is a shard's refusal of a request, with its status.
type ShardError struct {
	Shard  string
	Status int
	Msg    string
}

func (e *ShardError) Error() string {
	return fmt.Sprintf("shard %s answered %d: %s", e.Shard, e.Status, e.Msg)
}

// info asks the shard to describe itself.
func (r *Remote) info(ctx context.Context) (*Info, error) {
	var in Info
	if err := r.call(ctx, http.MethodGet, "/api/shard/info", nil, &in); err != nil {
		return nil, err
	}
	return &in, nil
}

// SearchInContext implements bleve.Index: the shard searches req, with
// the collection's statistics when a Coordinator's search put them in
// ctx. Each hit names the Remote as its index, and its place in the
// shard's list as its HitNumber, so that an alias orders tied hits the
// same way every time. A shard that failed the coordinator's presearch
// is not asked again: its error is returned, and the alias's answer
// lists it as failed.
func (r *Remote) SearchInContext(ctx context.Context, req *bleve.SearchRequest) (*bleve.SearchResult, error) {
	if _, pre := ctx.Value(search.PreSearchKey).(bool); pre {
		return nil, fmt.Errorf("shard %s: Bleve's presearch: %w (a Coordinator gathers the statistics)", r.name, ErrRemote)
	}
	st, _ := ctx.Value(stateKey{}).(*searchState)
	if err := st.failed(r.name); err != nil {
		return nil, err
	}
	body, err := st.body(req)
	if err != nil {
		return nil, err
	}
	raw, h, err := r.send(ctx, http.MethodPost, "/api/shard/search", body, ResultType+", application/json")
	if err != nil {
		return nil, err
	}
	res, err := decodeAnswer(raw, h)
	if err != nil {
		return nil, fmt.Errorf("shard %s: its answer to a search: %w", r.name, err)
	}
	st.answered(r.name, h.Get(EpochHeader), res)
	for i, h := range res.Hits {
		h.Index = r.name
		h.HitNumber = uint64(i)
	}
	return res, nil
}

// decodeAnswer decodes a shard's answer to a search, compact (ResultType)
// or Bleve's JSON, as its Content-Type says.
func decodeAnswer(raw []byte, h http.Header) (*bleve.SearchResult, error) {
	if mt, _, _ := strings.Cut(h.Get("Content-Type"), ";"); strings.EqualFold(strings.TrimSpace(mt), ResultType) {
		return DecodeResult(raw)
	}
	var res bleve.SearchResult
	if err := json.Unmarshal(raw, &res); err != nil {
		return nil, err
	}
	return &res, nil
}

// Search implements bleve.Index.
func (r *Remote) Search(req *bleve.SearchRequest) (*bleve.SearchResult, error) {
	return r.SearchInContext(context.Background(), req)
}

// DocCount implements bleve.Index.
func (r *Remote) DocCount() (uint64, error) {
	in, err := r.info(context.Background())
	if err != nil {
		return 0, err
	}
	return in.Docs, nil
}

// Fields implements bleve.Index.
func (r *Remote) Fields() ([]string, error) {
	in, err := r.info(context.Background())
	if err != nil {
		return nil, err
	}
	return in.Fields, nil
}

// Mapping implements bleve.Index: the shard's mapping, as the Coordinator
// read it when it started.
func (r *Remote) Mapping() mapping.IndexMapping { return r.mapping }

// Name implements bleve.Index: the shard's URL, unless SetName changed it.
func (r *Remote) Name() string { return r.name }

// SetName implements bleve.Index.
func (r *Remote) SetName(name string) { r.name = name }

// Close implements bleve.Index; a Remote holds nothing open.
func (r *Remote) Close() error { return nil }

// StatsMap implements bleve.Index.
func (r *Remote) StatsMap() map[string]any { return map[string]any{"remote": r.url} }

// Stats implements bleve.Index: a Remote keeps no Bleve statistics.
func (r *Remote) Stats() *bleve.IndexStat { return nil }

// NewBatch implements bleve.Index: nil, since a Remote takes no batches
// (Batch returns ErrRemote).
func (r *Remote) NewBatch() *bleve.Batch { return nil }

func (r *Remote) unsupported(what string) error {
	return fmt.Errorf("shard %s: %s: %w", r.name, what, ErrRemote)
}

// Index implements bleve.Index (ErrRemote).
func (r *Remote) Index(string, any) error { return r.unsupported("Index") }

// Delete implements bleve.Index (ErrRemote).
func (r *Remote) Delete(string) error { return r.unsupported("Delete") }

// Batch implements bleve.Index (ErrRemote).
func (r *Remote) Batch(*bleve.Batch) error { return r.unsupported("Batch") }

// Document implements bleve.Index (ErrRemote; a search by id returns a
// document's stored fields).
func (r *Remote) Document(string) (index.Document, error) {
	return nil, r.unsupported("Document")
}

// FieldDict implements bleve.Index (ErrRemote).
func (r *Remote) FieldDict(string) (index.FieldDict, error) {
	return nil, r.unsupported("FieldDict")
}

// FieldDictRange implements bleve.Index (ErrRemote).
func (r *Remote) FieldDictRange(string, []byte, []byte) (index.FieldDict, error) {
	return nil, r.unsupported("FieldDictRange")
}

// FieldDictPrefix implements bleve.Index (ErrRemote).
func (r *Remote) FieldDictPrefix(string, []byte) (index.FieldDict, error) {
	return nil, r.unsupported("FieldDictPrefix")
}

// GetInternal implements bleve.Index (ErrRemote).
func (r *Remote) GetInternal([]byte) ([]byte, error) { return nil, r.unsupported("GetInternal") }

// SetInternal implements bleve.Index (ErrRemote).
func (r *Remote) SetInternal([]byte, []byte) error { return r.unsupported("SetInternal") }

// DeleteInternal implements bleve.Index (ErrRemote).
func (r *Remote) DeleteInternal([]byte) error { return r.unsupported("DeleteInternal") }

// Advanced implements bleve.Index (ErrRemote).
func (r *Remote) Advanced() (index.Index, error) { return nil, r.unsupported("Advanced") }

var _ bleve.Index = (*Remote)(nil)
