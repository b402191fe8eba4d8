package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"os"
	"os/signal"
	"syscall"
	"time"

	"github.com/blevesearch/bleve/v2"
	"github.com/spf13/cobra"

	"github.com/semrank/semrank/cluster"
	"github.com/semrank/semrank/index"
	_ "github.com/semrank/semrank/rerank/stages" // registers the stage types pipeline files name
	"github.com/semrank/semrank/server"
)

// serveOptions are the flags of semrank serve.
type serveOptions struct {
	indexPath, pipelinePath, addr string
	remote                        []string
	shardTimeout                  time.Duration
	readOnly                      bool
	token                         func() string // set by adminTokenFlag below
	grace                         time.Duration
	limits                        server.Limits
}

// newServeCmd returns semrank serve.
func newServeCmd() *cobra.Command {
	var o serveOptions
	cmd := &cobra.Command{
		Use:   "serve (--index PATH | --remote URL,URL,...) --pipeline FILE [--addr 127.0.0.1:8095]",
		Short: "Serve search with reranking over HTTP: JSON API, metrics and a web page",
		Long: `Serve an index over HTTP. POST /api/search takes a Bleve-style request
({"query": "text" or a Bleve query object, "size", "from", "fields", "explain",
"highlight", "rerank": {"enabled", "window", "compare"}}) and answers
Bleve-style results with each hit's first-stage rank and stage scores (and,
with "highlight", its fragments with the query's words marked, chosen from
each field's first 256 matches). POST /api/index adds, updates and
deletes documents, computing the pipeline's payloads
({"add": [{"_id": "d1", "title": "…", "text": "…", "metadata": {…}}],
"delete": ["d7"]}), GET /api/doc/{id} returns one, GET /healthz and GET /metrics (Prometheus) report, and / is a web page that
shows the first-stage and reranked lists side by side. Bodies are JSON
(Content-Type application/json, or none for a search; other types get 415).
The write endpoints, /api/index and /api/admin/reload, require
Content-Type application/json (a reload's body may be empty) and refuse
with 403 a request a browser marks as sent by a page on another site
(Sec-Fetch-Site, or an Origin that is not this server).

` + adminTokenHelp + `

SIGHUP or POST /api/admin/reload rebuilds the pipeline file (e.g. after
retraining its models) and swaps it in without dropping requests; a reload
that meets a model changed since the pipeline file was written (a recipe
publishing into its folder) answers 503 with Retry-After and keeps the
running pipeline. SIGINT or SIGTERM stops accepting connections and
finishes in-flight requests.

--read-only opens the index read-only, so several servers, searches and runs
can share it (without it the server holds the index alone); POST /api/index
then answers 403.

Limits (flags below): request headers must arrive within 5 s and the body
within 30 s (408 after), each request's work within --timeout (503 after),
and idle connections close after 2 minutes. /api/index computes every
payload of every document it is sent: on a small machine a batch of
thousands of long documents takes seconds, so keep batches well inside
--timeout. Indexing one document cannot be interrupted, so --max-doc bounds
how far a write runs past --timeout (413 for a larger document), and
--max-index-queue the memory that /api/index bodies waiting for their turn
hold (503 with Retry-After past it).

Sharded serving: a server of a semrank index is also a shard (it answers a
coordinator under /api/shard/). --remote URL,URL,... serves instead the
collection whose shards those servers serve, in shard order (shard I of N,
as semrank index --shard I/N built them): the same API, each search's
statistics gathered from every shard so that scores are those of one index
of every document, the merged window reranked once here, and each
/api/index document sent to its shard. A shard that does not answer within
--shard-timeout leaves it out: the answer says "partial": true and names
it under "failed". A coordinator keeps nothing of its own; run as many as
you like. --admin-token is also sent to the shards with writes.`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error { return runServe(cmd, o) },
	}
	o.token = adminTokenFlag(cmd)
	f := cmd.Flags()
	f.StringVar(&o.indexPath, "index", "", "index path")
	f.StringVar(&o.pipelinePath, "pipeline", "", "pipeline file, or a directory holding pipeline.yaml (rebuilt on reload)")
	f.StringSliceVar(&o.remote, "remote", nil, "serve the collection whose shards these servers serve (URLs, comma-separated, in shard order) instead of --index")
	f.DurationVar(&o.shardTimeout, "shard-timeout", 2*time.Second, "with --remote: how long a shard may take to answer before the answer leaves it out (partial)")
	f.StringVar(&o.addr, "addr", "127.0.0.1:8095", "listen address")
	f.BoolVar(&o.readOnly, "read-only", false, "open the index read-only: POST /api/index answers 403, and other readers (searches, runs, more servers) may share the index")
	f.DurationVar(&o.grace, "grace", 30*time.Second, "how long shutdown waits for in-flight requests")
	d := server.DefaultLimits
	f.Int64Var(&o.limits.MaxBodyBytes, "max-body", d.MaxBodyBytes, "largest search request body, bytes")
	f.Int64Var(&o.limits.MaxIndexBodyBytes, "max-index-body", d.MaxIndexBodyBytes, "largest /api/index request body, bytes")
	f.IntVar(&o.limits.MaxQueryBytes, "max-query", d.MaxQueryBytes, "longest query, bytes")
	f.IntVar(&o.limits.MaxSize, "max-size", d.MaxSize, "most hits per page")
	f.IntVar(&o.limits.MaxWindow, "max-window", d.MaxWindow, "largest rerank window a request may ask for")
	f.IntVar(&o.limits.MaxFrom, "max-from", d.MaxFrom, "largest paging offset (from)")
	f.IntVar(&o.limits.MaxFields, "max-fields", d.MaxFields, "most stored fields a request may ask for")
	f.IntVar(&o.limits.MaxIndexDocs, "max-index-docs", d.MaxIndexDocs, "most documents (added plus deleted) per /api/index request")
	f.Int64Var(&o.limits.MaxDocBytes, "max-doc", d.MaxDocBytes, "largest document /api/index takes (title, text and metadata), bytes; a larger one gets 413")
	f.Int64Var(&o.limits.MaxQueuedIndexBytes, "max-index-queue", 0, "most bytes of /api/index bodies held at once, waiting or being written; past it a request gets 503 (default twice --max-index-body)")
	f.DurationVar(&o.limits.Timeout, "timeout", d.Timeout, "longest time one request may take")
	_ = cmd.MarkFlagRequired("pipeline")
	return cmd
}

// runServe runs semrank serve.
func runServe(cmd *cobra.Command, o serveOptions) error {
	o.pipelinePath = pipelineFile(o.pipelinePath)
	if err := checkServeFlags(cmd, o); err != nil {
		return err
	}
	if len(o.remote) > 0 {
		return serveRemote(cmd, o)
	}
	var idx bleve.Index
	var err error
	if o.readOnly {
		idx, err = index.OpenAny(o.indexPath)
	} else if idx, err = index.Open(o.indexPath); errors.Is(err, index.ErrNotSemrank) {
		err = fmt.Errorf("%w: serve another Bleve index with --read-only (searched with the pipeline's fields; your application writes it)", err)
	}
	if err != nil {
		return err
	}
	defer idx.Close()
	l, err := listen(o.addr)
	if err != nil {
		return err
	}
	return serve(cmd.Context(), cmd.OutOrStdout(), server.Config{
		Index: idx, PipelinePath: o.pipelinePath, Limits: o.limits, AdminToken: o.token(),
	}, l, o.grace, nil)
}

// checkServeFlags refuses, before any work, flag values serve cannot use.
func checkServeFlags(cmd *cobra.Command, o serveOptions) error {
	// The server reads a zero limit as its default; on the command
	// line zero or less is a mistake, not a request for the default.
	if err := checkPositive(cmd, "max-body", "max-index-body", "max-query", "max-size", "max-window", "max-from", "max-fields", "max-index-docs", "max-doc"); err != nil {
		return err
	}
	if cmd.Flags().Changed("max-index-queue") && o.limits.MaxQueuedIndexBytes <= 0 {
		return fmt.Errorf("--max-index-queue %d: want a positive number", o.limits.MaxQueuedIndexBytes)
	}
	if o.limits.Timeout <= 0 {
		return fmt.Errorf("--timeout %s: want a positive duration", o.limits.Timeout)
	}
	if o.grace < 0 {
		return fmt.Errorf("--grace %s: want zero (do not wait) or more", o.grace)
	}
	if (o.indexPath == "") == (len(o.remote) == 0) {
		return errors.New("give --index PATH, the index to serve, or --remote URL,URL,..., the shards of a collection to serve as one")
	}
	if len(o.remote) > 0 {
		if o.readOnly {
			return errors.New("--read-only is for --index: a coordinator (--remote) writes only through its shards' servers")
		}
		if o.shardTimeout <= 0 {
			return fmt.Errorf("--shard-timeout %s: want a positive duration", o.shardTimeout)
		}
	}
	return nil
}

// serveRemote serves the collection of the --remote shards through a
// coordinator.
func serveRemote(cmd *cobra.Command, o serveOptions) error {
	coord, err := cluster.NewCoordinator(cmd.Context(), o.remote, cluster.Options{Timeout: o.shardTimeout, Token: o.token()})
	if err != nil {
		return err
	}
	l, err := listen(o.addr)
	if err != nil {
		return err
	}
	return serve(cmd.Context(), cmd.OutOrStdout(), server.Config{
		Index: coord, PipelinePath: o.pipelinePath, Limits: o.limits, AdminToken: o.token(),
	}, l, o.grace, nil)
}

// adminTokenEnv names the environment variable that gives the admin token
// when --admin-token is not set.
const adminTokenEnv = "SEMRANK_ADMIN_TOKEN"

// adminTokenHelp is the paragraph of serve's and demo's help on the token.
const adminTokenHelp = `With an admin token (--admin-token, or the environment variable
` + adminTokenEnv + `, which keeps it out of ps), POST /api/index and
/api/admin/reload require "Authorization: Bearer TOKEN"; without one anybody
who can reach the address can change the index, so keep the default
loopback address (on another one, the server warns at start).`

// adminTokenFlag adds --admin-token to cmd, for the commands that serve,
// and returns what gives the token once the flags are parsed: the flag's
// value when it is set (to "" for none), else $SEMRANK_ADMIN_TOKEN.
func adminTokenFlag(cmd *cobra.Command) func() string {
	var token string
	cmd.Flags().StringVar(&token, "admin-token", "", "bearer token required by the write endpoints, /api/index and /api/admin/reload (default: $"+adminTokenEnv+", else none)")
	return func() string {
		if cmd.Flags().Changed("admin-token") {
			return token
		}
		return os.Getenv(adminTokenEnv)
	}
}

// listen listens on addr. An address in use is the usual failure (a demo
// or server already running), so its error says so and how to pick another.
func listen(addr string) (net.Listener, error) {
	l, err := net.Listen("tcp", addr)
	if errors.Is(err, syscall.EADDRINUSE) {
		return nil, fmt.Errorf("cannot listen on %s: the address is in use (another semrank demo or server?); stop that, or pass --addr with a free port, such as 127.0.0.1:0 for any", addr)
	}
	return l, err
}

// serve runs a server on l until SIGINT or SIGTERM, reloading on SIGHUP,
// and closes l. After the line naming the URL it prints next(url), what
// to try, when next is not nil.
func serve(ctx context.Context, out io.Writer, cfg server.Config, l net.Listener, grace time.Duration, next func(url string) string) error {
	if ctx == nil {
		ctx = context.Background()
	}
	cfg.Logger = slog.New(slog.NewTextHandler(os.Stderr, nil))
	srv, err := server.New(cfg)
	if err != nil {
		l.Close()
		return err
	}
	// Not signal.NotifyContext: it would hold the signals until serve
	// returns, so a second Ctrl-C could not cut the grace period short.
	ctx, stop := notifyInterrupt(ctx, io.Discard)
	defer stop()
	hup := make(chan os.Signal, 1)
	signal.Notify(hup, syscall.SIGHUP)
	defer signal.Stop(hup)
	go srv.ReloadOn(ctx, hup)
	url := fmt.Sprintf("http://%s/", l.Addr())
	fmt.Fprintf(out, "semrank serving on %s  (Ctrl-C stops; SIGHUP reloads the pipeline)\n", url)
	if next != nil {
		fmt.Fprint(out, next(url))
	}
	return srv.Serve(ctx, l, grace)
}
