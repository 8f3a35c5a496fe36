package main

import (
	"crypto/rand"
	"crypto/subtle"
	"embed"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"html/template"
	"io/fs"
	"net"
	"net/http"
	"slices"
)

//go:embed page
var pageFiles embed.FS

// tokenHeader carries the per-run token on every action request.
const tokenHeader = "X-Explore-Token"

// server serves the page, its event stream and its actions.
//
// Security, for a page that can cut connections and restart an apiserver:
//   - it listens on loopback only (listen refuses other addresses);
//   - every request must name this server in its Host header, which defeats DNS
//     rebinding (a hostile name resolved to 127.0.0.1 still sends its own Host);
//   - an action must be a POST of JSON from this page's origin (Origin header) and
//     carry the token the page was served with, which no other origin can read.
type server struct {
	hub     *hub
	world   world
	actions []action
	token   string
	hosts   []string // the Host values this server answers to
	local   bool     // faults can be injected
	done    chan struct{}
	page    *template.Template
}

// newServer builds the server for a listener bound to addr (host:port, loopback).
// Closing done ends every event stream.
func newServer(h *hub, w world, addr string, local bool, done chan struct{}) (*server, error) {
	host, port, err := net.SplitHostPort(addr)
	if err != nil {
		return nil, err
	}
	token := make([]byte, 16)
	if _, err := rand.Read(token); err != nil {
		return nil, err
	}
	page, err := template.ParseFS(pageFiles, "page/index.html")
	if err != nil {
		return nil, err
	}
	// The address it listens on, and localhost, which the browser may have typed.
	hosts := []string{net.JoinHostPort(host, port), net.JoinHostPort("localhost", port)}
	return &server{hub: h, world: w, actions: actions(), token: hex.EncodeToString(token), hosts: hosts, local: local, done: done, page: page}, nil
}

// handler is every route, behind the Host check.
func (s *server) handler() http.Handler {
	mux := http.NewServeMux()
	static, _ := fs.Sub(pageFiles, "page")
	mux.Handle("GET /static/", http.StripPrefix("/static/", http.FileServerFS(static)))
	mux.HandleFunc("GET /{$}", s.servePage)
	mux.HandleFunc("GET /events", s.serveEvents)
	mux.HandleFunc("GET /state", s.serveState)
	mux.HandleFunc("GET /journey", s.serveJourney)
	mux.HandleFunc("/api/{action}", s.serveAction)
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if !slices.Contains(s.hosts, r.Host) {
			httpError(w, http.StatusForbidden, fmt.Sprintf("unexpected Host %q: this explorer answers only to http://%s", r.Host, s.hosts[0]))
			return
		}
		w.Header().Set("X-Content-Type-Options", "nosniff")
		w.Header().Set("X-Frame-Options", "DENY")
		mux.ServeHTTP(w, r)
	})
}

// pageData is what index.html is rendered with.
type pageData struct {
	Token     string
	Local     bool
	FaultsOff string // why fault buttons are disabled; "" when they are not
	Actions   []action
	Namespace string
	DocsBase  string
}

func (s *server) servePage(w http.ResponseWriter, _ *http.Request) {
	d := pageData{Token: s.token, Local: s.local, Actions: s.actions, Namespace: namespace, DocsBase: docsBase}
	if !s.local {
		d.FaultsOff = "needs the local control plane: run without $KUBECONFIG"
	}
	w.Header().Set("Content-Type", "text/html; charset=utf-8")
	w.Header().Set("Cache-Control", "no-store")
	w.Header().Set("Content-Security-Policy", "default-src 'self'; style-src 'self'; script-src 'self'; connect-src 'self'; img-src 'self' data:")
	if err := s.page.Execute(w, d); err != nil {
		httpError(w, http.StatusInternalServerError, err.Error())
	}
}

// checkAction refuses a request that is not this page's own action call, writing the
// error; it reports whether the request may go on.
func (s *server) checkAction(w http.ResponseWriter, r *http.Request) bool {
	switch {
	case r.Method != http.MethodPost:
		w.Header().Set("Allow", http.MethodPost)
		httpError(w, http.StatusMethodNotAllowed, "actions are POST requests")
	case r.Header.Get("Origin") != "http://"+r.Host:
		httpError(w, http.StatusForbidden, fmt.Sprintf("cross-origin action refused: Origin %q is not this page's", r.Header.Get("Origin")))
	case subtle.ConstantTimeCompare([]byte(r.Header.Get(tokenHeader)), []byte(s.token)) != 1:
		httpError(w, http.StatusForbidden, "missing or wrong "+tokenHeader+": actions come only from the explorer's own page")
	case r.Header.Get("Content-Type") != "application/json":
		httpError(w, http.StatusUnsupportedMediaType, "an action's body is JSON (Content-Type: application/json)")
	default:
		return true
	}
	return false
}

// httpError writes {"error": msg} with code.
func httpError(w http.ResponseWriter, code int, msg string) {
	writeJSON(w, code, map[string]string{"error": msg})
}

func writeJSON(w http.ResponseWriter, code int, v any) {
	w.Header().Set("Content-Type", "application/json")
	w.Header().Set("Cache-Control", "no-store")
	w.WriteHeader(code)
	_ = json.NewEncoder(w).Encode(v)
}
