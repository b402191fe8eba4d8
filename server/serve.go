package server

import (
	"context"
	"errors"
	"log/slog"
	"net"
	"net/http"
	"net/netip"
	"os"
	"time"
)

// Serve answers requests on l until ctx is done, then shuts down
// gracefully: it stops accepting connections and waits up to grace for
// in-flight requests to finish (they are not cancelled). Requests still
// running after grace are cancelled and their connections closed, so that
// none outlives Serve by more than the time its work takes to notice.
//
// Without an admin token, a listener that other machines can reach is
// logged as a warning: anybody there can write. Only a listener on a
// loopback IP (127.0.0.1, ::1; "localhost:0" resolves to one) or a Unix
// socket is taken as unreachable; one on every interface (":8095",
// "0.0.0.0:8095") is not.
func (s *Server) Serve(ctx context.Context, l net.Listener, grace time.Duration) error {
	if s.token == "" && !loopbackOnly(l.Addr()) {
		s.log.Warn("no admin token, and the address is not loopback-only: POST /api/index and /api/admin/reload are open to anyone who can reach it, to change the index or reload the pipeline; set a token (the environment variable SEMRANK_ADMIN_TOKEN or semrank serve --admin-token; Config.AdminToken), or listen on a loopback address such as 127.0.0.1:8095",
			"addr", l.Addr().String())
	}
	hs := &http.Server{
		Handler:           s,
		ReadHeaderTimeout: 5 * time.Second,
		ReadTimeout:       30 * time.Second,
		WriteTimeout:      s.limits.Timeout + 30*time.Second,
		IdleTimeout:       2 * time.Minute,
		MaxHeaderBytes:    64 << 10,
		ErrorLog:          slog.NewLogLogger(s.log.Handler(), slog.LevelWarn),
	}
	errc := make(chan error, 1)
	go func() { errc <- hs.Serve(l) }()
	select {
	case err := <-errc:
		return err
	case <-ctx.Done():
	}
	s.log.Info("shutting down; finishing in-flight requests", "grace", grace)
	sctx, cancel := context.WithTimeout(context.Background(), grace)
	defer cancel()
	err := hs.Shutdown(sctx)
	if err != nil {
		// Grace is over: close the connections left, which cancels
		// their requests' contexts.
		hs.Close()
	}
	if serr := <-errc; !errors.Is(serr, http.ErrServerClosed) && err == nil {
		err = serr
	}
	return err
}

// ReloadOn reloads the pipeline whenever a signal arrives on sig (semrank
// serve sends SIGHUP there), until ctx is done or sig is closed. A failed
// reload is logged and the running pipeline stays.
func (s *Server) ReloadOn(ctx context.Context, sig <-chan os.Signal) {
	for {
		select {
		case <-ctx.Done():
			return
		case v, ok := <-sig:
			if !ok {
				return
			}
			if gen, err := s.Reload(ctx); err != nil {
				s.log.Error("reload failed; the previous pipeline keeps serving", "signal", v, "err", err)
			} else {
				s.log.Info("reloaded", "signal", v, "generation", gen)
			}
		}
	}
}

// loopbackOnly reports whether a listener at a, its resolved address
// (net.Listener.Addr), accepts connections from this machine only: a
// loopback IP ("localhost:0" resolves to 127.0.0.1) or a Unix socket. An
// unspecified IP (":8095", "0.0.0.0:8095", "[::]:8095") listens on every
// interface, so it is not.
func loopbackOnly(a net.Addr) bool {
	switch a := a.(type) {
	case *net.TCPAddr:
		return a.IP.IsLoopback()
	case *net.UnixAddr:
		return true
	}
	ap, err := netip.ParseAddrPort(a.String())
	return err == nil && ap.Addr().IsLoopback()
}
