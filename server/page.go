package server

import (
	"embed"
	"io/fs"
	"net/http"
	"strings"
)

// assets is the web page: plain HTML, CSS and JavaScript, no build step.
//
//go:embed assets
var assets embed.FS

func (s *Server) pageHandler() http.Handler {
	sub, err := fs.Sub(assets, "assets")
	if err != nil {
		panic(err) // the embedded directory is fixed at compile time
	}
	files := http.FileServerFS(sub)
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Security-Policy", "default-src 'self'; style-src 'self'; script-src 'self'; img-src 'self' data:")
		w.Header().Set("X-Content-Type-Options", "nosniff")
		w.Header().Set("Cache-Control", "no-cache")
		files.ServeHTTP(w, r)
	})
}

// oneLine returns texts with each run of white space made one space. The
// page's search box is an <input>, which drops line breaks, so an example
// such as "... in december\nHi all" would otherwise be searched as
// "... in decemberHi all".
func oneLine(texts []string) []string {
	var out []string
	for _, t := range texts {
		out = append(out, strings.Join(strings.Fields(t), " "))
	}
	return out
}
