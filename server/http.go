package server

import (
	"bytes"
	"context"
	"crypto/subtle"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"mime"
	"net"
	"net/http"
	"reflect"
	"runtime/debug"
	"strings"
	"time"
	"unicode/utf16"
	"unicode/utf8"

	"github.com/semrank/semrank/rerank"
)

// routes wires the endpoints. Paths are registered without methods so that
// a wrong method gets a JSON 405 from allow rather than the mux's plain text.
func (s *Server) routes() http.Handler {
	mux := http.NewServeMux()
	api := func(pattern, endpoint, method string, h func(w http.ResponseWriter, r *http.Request) error) {
		mux.Handle(pattern, s.instrument(endpoint, func(w http.ResponseWriter, r *http.Request) error {
			if err := allow(w, r, method); err != nil {
				return err
			}
			return h(w, r)
		}))
	}
	api("/api/search", "search", http.MethodPost, s.handleSearch)
	api("/api/index", "index", http.MethodPost, s.handleIndex)
	api("/api/doc/{id...}", "doc", http.MethodGet, s.handleDoc)
	api("/api/admin/reload", "reload", http.MethodPost, s.handleReload)
	api("/healthz", "healthz", http.MethodGet, s.handleHealth)
	if s.store != nil {
		s.shardRoutes(api)
	}
	mux.Handle("/api/", s.instrument("unknown", func(_ http.ResponseWriter, r *http.Request) error {
		return &apiError{Status: http.StatusNotFound, Msg: fmt.Sprintf("no endpoint %s %s", r.Method, r.URL.Path)}
	}))
	mux.Handle("/metrics", getOnly(s.metrics.handler()))
	mux.Handle("/", getOnly(s.pageHandler()))
	return mux
}

// apiError is an error with the HTTP status it answers with. Its message
// is shown to the client, so it says what is wrong with the request.
type apiError struct {
	Status int
	Msg    string
	Allow  string // for 405: the method to use
	// Header holds response headers the status calls for
	// (WWW-Authenticate for 401, Retry-After for 503).
	Header map[string]string
}

func (e *apiError) Error() string { return e.Msg }

func badRequest(format string, args ...any) *apiError {
	return &apiError{Status: http.StatusBadRequest, Msg: fmt.Sprintf(format, args...)}
}

// ErrorBody is the JSON body of every error answer.
type ErrorBody struct {
	Error  string `json:"error"`  // what went wrong, for a person to read
	Status int    `json:"status"` // the HTTP status code, again
}

// statusWriter remembers the status code for metrics.
type statusWriter struct {
	http.ResponseWriter
	code int
}

func (w *statusWriter) WriteHeader(code int) {
	if w.code == 0 {
		w.code = code
	}
	w.ResponseWriter.WriteHeader(code)
}

func (w *statusWriter) Write(b []byte) (int, error) {
	if w.code == 0 {
		w.code = http.StatusOK
	}
	return w.ResponseWriter.Write(b)
}

// instrument runs h with the request timeout, turns its error into a JSON
// answer, and records the request in the metrics.
func (s *Server) instrument(endpoint string, h func(w http.ResponseWriter, r *http.Request) error) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		start := time.Now()
		s.metrics.inflight.Inc()
		defer s.metrics.inflight.Dec()
		ctx, cancel := context.WithTimeout(r.Context(), s.limits.Timeout)
		defer cancel()
		sw := &statusWriter{ResponseWriter: w}
		if err := recovered(h, sw, r.WithContext(ctx)); err != nil {
			s.writeError(sw, r, err)
		}
		if sw.code == 0 {
			sw.code = http.StatusOK
		}
		s.metrics.observeRequest(endpoint, sw.code, time.Since(start))
	})
}

// handlerPanic is the error for a handler that panicked: a bug, in
// semrank or underneath it (Bleve's query parser panics on some malformed
// geo shapes).
type handlerPanic struct {
	value any
	stack []byte
}

func (e *handlerPanic) Error() string { return fmt.Sprintf("internal error: %v", e.value) }

// recovered runs h, returning a panic in it as a *handlerPanic, so that the
// client gets a JSON answer and the request is counted, rather than a
// dropped connection (net/http's recovery).
func recovered(h func(http.ResponseWriter, *http.Request) error, w http.ResponseWriter, r *http.Request) (err error) {
	defer func() {
		if v := recover(); v != nil {
			if v == http.ErrAbortHandler {
				panic(v) // the deliberate abort net/http knows
			}
			err = &handlerPanic{value: v, stack: debug.Stack()}
		}
	}()
	return h(w, r)
}

func (s *Server) writeError(w http.ResponseWriter, r *http.Request, err error) {
	var ae *apiError
	var mbe *http.MaxBytesError
	switch {
	case errors.As(err, &ae):
	case errors.As(err, &mbe):
		ae = &apiError{Status: http.StatusRequestEntityTooLarge, Msg: fmt.Sprintf("request body is larger than the limit of %d bytes", mbe.Limit)}
	case errors.Is(err, context.DeadlineExceeded):
		ae = &apiError{Status: http.StatusServiceUnavailable, Msg: fmt.Sprintf("request took longer than the limit of %s", s.limits.Timeout)}
	case errors.Is(err, context.Canceled):
		// The client went away; nobody reads the answer.
		ae = &apiError{Status: 499, Msg: "request canceled"}
	default:
		attrs := []any{"method", r.Method, "path", r.URL.Path, "err", err}
		if sp := (*rerank.StagePanic)(nil); errors.As(err, &sp) {
			attrs = append(attrs, "stack", string(sp.Stack))
		}
		if hp := (*handlerPanic)(nil); errors.As(err, &hp) {
			attrs = append(attrs, "stack", string(hp.stack))
		}
		s.log.Error("request failed", attrs...)
		ae = &apiError{Status: http.StatusInternalServerError, Msg: err.Error()}
	}
	if pw := (*partialWrite)(nil); errors.As(err, &pw) {
		ae = &apiError{Status: ae.Status, Msg: ae.Msg + "; " + pw.note()}
	}
	if ae.Allow != "" {
		w.Header().Set("Allow", ae.Allow)
	}
	for k, v := range ae.Header {
		w.Header().Set(k, v)
	}
	_ = writeJSON(w, ae.Status, ErrorBody{Error: ae.Msg, Status: ae.Status}) // a string and an int always encode
}

func allow(_ http.ResponseWriter, r *http.Request, method string) error {
	if r.Method == method || (method == http.MethodGet && r.Method == http.MethodHead) {
		return nil
	}
	return &apiError{Status: http.StatusMethodNotAllowed, Allow: method,
		Msg: fmt.Sprintf("%s %s: method not allowed; use %s", r.Method, r.URL.Path, method)}
}

// getOnly refuses methods other than GET and HEAD.
func getOnly(h http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Method != http.MethodGet && r.Method != http.MethodHead {
			w.Header().Set("Allow", "GET, HEAD")
			http.Error(w, "method not allowed; use GET", http.StatusMethodNotAllowed)
			return
		}
		h.ServeHTTP(w, r)
	})
}

// writeJSON answers v as JSON with status. It encodes v in full before
// writing anything, so that a value encoding/json refuses (a non-finite
// number) is returned as an error, for the handler to return and the
// client to get as a logged 500, rather than a 200 with an empty or cut
// body. An error writing the answer (the client went away) is not
// returned: nobody is left to answer.
func writeJSON(w http.ResponseWriter, status int, v any) error {
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(v); err != nil {
		return fmt.Errorf("encoding the answer: %w", err)
	}
	w.Header().Set("Content-Type", "application/json; charset=utf-8")
	w.Header().Set("X-Content-Type-Options", "nosniff")
	w.WriteHeader(status)
	_, _ = w.Write(buf.Bytes())
	return nil
}

// decodeBody reads a JSON body of at most limit bytes into v, refusing a
// Content-Type other than JSON, unknown fields and trailing data, and names
// the problem when it fails.
func decodeBody(w http.ResponseWriter, r *http.Request, limit int64, v any) error {
	raw, err := readBody(w, r, limit)
	if err != nil {
		return err
	}
	return decodeJSON(raw, v)
}

// decodeJSON decodes raw, a request body, into v as decodeBody does. A body
// that is not valid UTF-8, or holds an escaped lone UTF-16 surrogate, is
// refused: encoding/json would read either as U+FFFD, the replacement
// character, silently changing the text.
func decodeJSON(raw []byte, v any) error {
	if off, surrogate := badText(raw); off >= 0 {
		return badRequest("request body: %s", describeBadText(raw, off, surrogate, "the body"))
	}
	if len(bytes.TrimSpace(raw)) == 0 {
		return badRequest("request body is empty; send a JSON object")
	}
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.DisallowUnknownFields()
	if err := dec.Decode(v); err != nil {
		return badRequest("malformed JSON: %s", describeJSONError(raw, reflect.TypeOf(v), err))
	}
	if dec.More() {
		return badRequest("malformed JSON: data after the request object")
	}
	return nil
}

// badText returns the offset in raw, JSON, of the first byte that is not
// valid UTF-8, or of the first \u escape of a UTF-16 surrogate that is not
// one of a pair (surrogate is then true); -1 if there is neither.
func badText(raw []byte) (off int, surrogate bool) {
	for i := 0; i < len(raw); {
		switch c := raw[i]; {
		case c >= utf8.RuneSelf:
			r, size := utf8.DecodeRune(raw[i:])
			if r == utf8.RuneError && size == 1 {
				return i, false
			}
			i += size
		case c == '\\' && i+1 < len(raw) && raw[i+1] == 'u':
			r, ok := hex4(raw[i+2:])
			if !ok || !utf16.IsSurrogate(r) {
				i += 2 // encoding/json judges the escape
				continue
			}
			if r < 0xdc00 && len(raw) >= i+12 && raw[i+6] == '\\' && raw[i+7] == 'u' {
				if r2, ok := hex4(raw[i+8:]); ok && r2 >= 0xdc00 && r2 < 0xe000 {
					i += 12 // a high surrogate, then a low one: a pair
					continue
				}
			}
			return i, true
		case c == '\\':
			i += 2 // an escape: the next byte is not a backslash of its own
		default:
			i++
		}
	}
	return -1, false
}

// hex4 reads the four hex digits at the start of b.
func hex4(b []byte) (rune, bool) {
	if len(b) < 4 {
		return 0, false
	}
	var r rune
	for _, c := range b[:4] {
		switch {
		case '0' <= c && c <= '9':
			r = r<<4 | rune(c-'0')
		case 'a' <= c && c <= 'f':
			r = r<<4 | rune(c-'a'+10)
		case 'A' <= c && c <= 'F':
			r = r<<4 | rune(c-'A'+10)
		default:
			return 0, false
		}
	}
	return r, true
}

// describeBadText says what badText found at off in raw, part of where.
func describeBadText(raw []byte, off int, surrogate bool, where string) string {
	if surrogate {
		return fmt.Sprintf("%s is half of a UTF-16 surrogate pair, without the other half (at offset %d of %s)", raw[off:off+6], off, where)
	}
	return fmt.Sprintf("not valid UTF-8 (byte 0x%02x at offset %d of %s)", raw[off], off, where)
}

// readBody reads a body of at most limit bytes declared as JSON, or not
// declared at all.
func readBody(w http.ResponseWriter, r *http.Request, limit int64) ([]byte, error) {
	if err := checkJSONType(r); err != nil {
		return nil, err
	}
	return readLimited(w, r, limit)
}

// readLimited reads a body of at most limit bytes.
func readLimited(w http.ResponseWriter, r *http.Request, limit int64) ([]byte, error) {
	raw, err := io.ReadAll(http.MaxBytesReader(w, r.Body, limit))
	if err != nil {
		var mbe *http.MaxBytesError
		if errors.As(err, &mbe) {
			return nil, err
		}
		if ne := net.Error(nil); errors.As(err, &ne) && ne.Timeout() {
			// The client sent its body too slowly.
			return nil, &apiError{Status: http.StatusRequestTimeout, Msg: fmt.Sprintf("reading request body: %v", err)}
		}
		return nil, badRequest("reading request body: %v", err)
	}
	return raw, nil
}

// checkJSONType refuses a body whose Content-Type says it is not JSON (a
// form, plain text), as HTML forms send; a request without a Content-Type
// is read as JSON (checkWrite refuses it on the write endpoints).
func checkJSONType(r *http.Request) error {
	ct := r.Header.Get("Content-Type")
	if ct == "" {
		return nil
	}
	if mt, _, err := mime.ParseMediaType(ct); err == nil && (mt == "application/json" || strings.HasSuffix(mt, "+json")) {
		return nil
	}
	return &apiError{Status: http.StatusUnsupportedMediaType,
		Msg: fmt.Sprintf("Content-Type %s is not JSON; send the body as application/json", quote(ct))}
}

// describeJSONError names what is wrong with raw, which failed to decode
// into a value of type into with err.
func describeJSONError(raw []byte, into reflect.Type, err error) string {
	var se *json.SyntaxError
	var te *json.UnmarshalTypeError
	switch {
	case errors.As(err, &se):
		return fmt.Sprintf("%v (at byte %d)", se, se.Offset)
	case errors.As(err, &te):
		field := te.Field
		if field == "" {
			field = "the request"
		}
		if te.Field != "" && inArray(into, te.Field, te.Type) {
			// encoding/json names an element's error by its array.
			field = "each element of " + field
		}
		kind := te.Type.Kind().String()
		if strings.HasPrefix(te.Value, "number") && (strings.HasPrefix(kind, "int") || strings.HasPrefix(kind, "uint")) {
			// A number that is not an integer, or does not fit one.
			return fmt.Sprintf("%s must be an integer in range, not %s", field, te.Value)
		}
		return fmt.Sprintf("%s must be %s, not %s", field, jsonKind(kind), te.Value)
	case errors.Is(err, io.ErrUnexpectedEOF), errors.Is(err, io.EOF):
		return fmt.Sprintf("unexpected end of input after %d bytes", len(raw))
	}
	return err.Error()
}

// inArray reports whether the field at path (dotted JSON names, as
// json.UnmarshalTypeError.Field gives them) in a value of type t is an
// array whose elements are of type elem: the type error was in one of
// its elements, not in the field itself.
func inArray(t reflect.Type, path string, elem reflect.Type) bool {
	for name := range strings.SplitSeq(path, ".") {
		for t.Kind() == reflect.Pointer || t.Kind() == reflect.Slice || t.Kind() == reflect.Array {
			t = t.Elem() // the path goes through arrays without naming an index
		}
		if t.Kind() != reflect.Struct {
			return false
		}
		f, ok := jsonField(t, name)
		if !ok {
			return false
		}
		t = f.Type
	}
	for t.Kind() == reflect.Pointer {
		t = t.Elem()
	}
	return (t.Kind() == reflect.Slice || t.Kind() == reflect.Array) && t.Elem() == elem
}

// jsonField returns the field of struct type t that encoding/json decodes
// the key name into.
func jsonField(t reflect.Type, name string) (reflect.StructField, bool) {
	for i := range t.NumField() {
		f := t.Field(i)
		tag, _, _ := strings.Cut(f.Tag.Get("json"), ",")
		if tag == name || tag == "" && f.Name == name {
			return f, true
		}
	}
	return reflect.StructField{}, false
}

func jsonKind(goKind string) string {
	switch goKind {
	case "int", "int64", "float64":
		return "a number"
	case "bool":
		return "true or false"
	case "string":
		return "a string"
	case "slice":
		return "an array"
	case "struct", "map":
		return "an object"
	}
	return goKind
}

// crossOrigin is net/http's check that a request is not one a page on
// another site made a browser send (by Sec-Fetch-Site, or else by an
// Origin whose host is not the request's Host).
var crossOrigin = http.NewCrossOriginProtection()

// checkWrite guards the endpoints that write, /api/index and
// /api/admin/reload, against a page on another site. Without an admin
// token (the default) such a page can make its visitor's browser POST to
// a server on the visitor's machine: a form, or fetch with mode "no-cors"
// and a body of no type or a plain-text one, which the browser sends
// without asking the server first. Writes are refused with 403 when the
// browser marks them as coming from another site, and with 415 unless
// their Content-Type is JSON, which a page on another site can send only
// with the server's consent (a CORS preflight, which this server never
// gives). Clients other than browsers send neither mark; they need only
// the header. The admin token, when set, is checked too.
func (s *Server) checkWrite(r *http.Request) error {
	if err := crossOrigin.Check(r); err != nil {
		return &apiError{Status: http.StatusForbidden,
			Msg: fmt.Sprintf("%s: refused a write from a page on another site (Origin %s, Sec-Fetch-Site %s, Host %s)",
				r.URL.Path, quote(r.Header.Get("Origin")), quote(r.Header.Get("Sec-Fetch-Site")), quote(r.Host))}
	}
	if err := s.checkAdmin(r); err != nil {
		return err
	}
	if r.Header.Get("Content-Type") == "" {
		return &apiError{Status: http.StatusUnsupportedMediaType,
			Msg: r.URL.Path + ": writes require Content-Type application/json (with an empty body for a reload), so that a page on another site cannot send one"}
	}
	return checkJSONType(r)
}

// checkAdmin enforces the admin token, when one is configured, on the
// endpoints that write: reloading the pipeline and changing documents.
func (s *Server) checkAdmin(r *http.Request) error {
	if s.token == "" {
		return nil
	}
	// The scheme name is case-insensitive (RFC 9110, section 11.1).
	scheme, got, ok := strings.Cut(r.Header.Get("Authorization"), " ")
	if !ok || !strings.EqualFold(scheme, "Bearer") || subtle.ConstantTimeCompare([]byte(strings.TrimSpace(got)), []byte(s.token)) != 1 {
		return &apiError{Status: http.StatusUnauthorized, Msg: r.URL.Path + ": missing or wrong bearer token (this server requires the admin token for writes)",
			Header: map[string]string{"WWW-Authenticate": `Bearer realm="semrank admin"`}}
	}
	return nil
}

// ReloadResponse answers /api/admin/reload.
type ReloadResponse struct {
	Generation int      `json:"generation"` // of the pipeline now in use (see Server.Reload)
	Stages     []string `json:"stages"`     // its stage names, in order
	Window     int      `json:"window"`     // its rerank window: first-stage hits reranked
}

func (s *Server) handleReload(w http.ResponseWriter, r *http.Request) error {
	if err := s.checkWrite(r); err != nil {
		return err
	}
	// The body, if any, must be empty, null or an empty object: a reload
	// takes no parameters, in particular no file path.
	raw, err := readLimited(w, r, s.limits.MaxBodyBytes)
	if err != nil {
		return err
	}
	if t := bytes.TrimSpace(raw); len(t) > 0 {
		var params map[string]json.RawMessage
		if json.Unmarshal(t, &params) != nil || len(params) > 0 {
			return badRequest("reload takes no parameters; it rebuilds the pipeline file the server was started with")
		}
	}
	cur, err := s.reload(r.Context())
	if err != nil {
		// As a reload on SIGHUP is (ReloadOn): the answer goes to the
		// client alone, and whoever runs the server must see it too.
		s.log.Error("reload failed; the previous pipeline keeps serving", "endpoint", r.URL.Path, "err", err)
	}
	switch {
	case errors.Is(err, context.DeadlineExceeded), errors.Is(err, context.Canceled):
		return err // waited too long for a reload or an index batch to finish
	case errors.Is(err, rerank.ErrModelChanged):
		// Met mid-publish: loading again once it is done will work.
		return &apiError{Status: http.StatusServiceUnavailable, Msg: err.Error() + " (the previous pipeline keeps serving)",
			Header: map[string]string{"Retry-After": "1"}}
	case err != nil:
		return &apiError{Status: http.StatusInternalServerError, Msg: err.Error() + " (the previous pipeline keeps serving)"}
	}
	return writeJSON(w, http.StatusOK, ReloadResponse{Generation: cur.generation, Stages: cur.pipeline.StageNames(), Window: cur.pipeline.WindowSize()})
}

// Health answers /healthz.
type Health struct {
	Status     string    `json:"status"`             // "ok"
	Documents  uint64    `json:"documents"`          // in the index
	Generation int       `json:"generation"`         // of the pipeline in use (see Server.Reload)
	Stages     []string  `json:"stages"`             // its stage names, in order
	Window     int       `json:"window"`             // its rerank window: first-stage hits reranked
	LoadedAt   time.Time `json:"loaded_at"`          // when it was loaded
	Examples   []string  `json:"examples,omitempty"` // Config.Examples
}

func (s *Server) handleHealth(w http.ResponseWriter, _ *http.Request) error {
	n, err := s.idx.DocCount()
	if err != nil {
		return err
	}
	cur := s.current.Load()
	return writeJSON(w, http.StatusOK, Health{Status: "ok", Documents: n, Generation: cur.generation,
		Stages: cur.pipeline.StageNames(), Window: cur.pipeline.WindowSize(), LoadedAt: cur.at, Examples: s.examples})
}
