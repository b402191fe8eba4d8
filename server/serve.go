package server

import (
	"context"
	"errors"
	"log/slog"
	"net"
	"net/http"
	"os"
	"time"
)

// Serve answers requests on l until ctx is done, then shuts down
// gracefully: it stops accepting connections and waits up to grace for
// in-flight requests to finish (they are not cancelled). Requests still
// running after grace are cancelled and their connections closed, so that
// none outlives Serve by more than the time its work takes to notice.
func (s *Server) Serve(ctx context.Context, l net.Listener, grace time.Duration) error {
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
