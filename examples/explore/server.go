package main

import (
	"crypto/rand"
	"crypto/subtle"
	"embed"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"html/template"
	"io"
	"io/fs"
	"net"
	"net/http"
	"slices"
	"strings"
)

//go:embed page
var pageFiles embed.FS

// tokenHeader carries the per-run token on every action request.
const tokenHeader = "X-Explore-Token"

// server serves the page, its event stream and its actions.
//
// Security, for a page that can cut connections and restart an apiserver. What it
// defends against is a hostile page in the user's browser; all of it is in handler,
// checkSite and checkAction:
//   - it listens on loopback only (listen refuses other addresses);
//   - every request must name this server in its Host header, which defeats DNS
//     rebinding (a hostile name resolved to 127.0.0.1 still sends its own Host);
//   - no request may come from another site or origin, as the browser reports it in
//     Sec-Fetch-Site and Origin (checkSite), GETs included: the stream and the journeys
//     are for this page only;
//   - an action must be a POST of JSON from this page's origin (Origin header), made by
//     a page (Sec-Fetch-Site, when sent, is same-origin), carrying the token the page
//     was served with, which no other origin can read.
//
// Pitfall: none of this stops a local process. It can GET the page, read the token and
// send any Host, Origin and Sec-Fetch-Site it likes; the README's Safety section says
// why that is out of scope.
type server struct {
	hub   *hub
	token string
	hosts []string // the Host values this server answers to
	done  chan struct{}
	page  *template.Template

	// replay is the recording this server replays; nil when it runs live. Set before
	// the server serves; only read after.
	replay *replaySource

	// liveParts are the actions on a cluster, the pipeline switch and repeat-last
	// (server_live.go): empty in the replay-only build (server_replayonly.go).
	//
	// Why a build split: a replay needs none of client-go, and compiling it is most of
	// the first run's time; `go run -tags replayonly` leaves it out (make replay).
	//lint:ignore U1000 empty, and so unused, in the replay-only build
	liveParts
}

// newServer builds the server for a listener bound to addr (host:port, loopback),
// without actions: a replay's. Closing done ends every event stream.
func newServer(h *hub, addr string, done chan struct{}) (*server, error) {
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
	return &server{hub: h, token: hex.EncodeToString(token), hosts: hosts, done: done, page: page}, nil
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
	mux.HandleFunc("GET /plots", s.servePlots)
	mux.HandleFunc("GET /around", s.serveAround)
	mux.HandleFunc("/api/replay", s.serveReplay)
	s.liveRoutes(mux)
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if !slices.Contains(s.hosts, r.Host) {
			httpError(w, http.StatusForbidden, fmt.Sprintf("unexpected Host %q: this explorer answers only to http://%s", r.Host, s.hosts[0]))
			return
		}
		if !checkSite(w, r) {
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
	Actions   any    // the buttons: []action, set by livePage
	Namespace string
	DocsBase  string
	// Pipeline is the running one; Pipelines every one, for the switch's buttons;
	// PipelineReading the book's sections on the two.
	Pipeline        pipelineLabel
	Pipelines       []pipelineLabel
	PipelineReading []string
	// Replay is the recording the page replays; nil when it runs live. ActionsOff
	// says why every action is off ("" live).
	Replay     *replayState
	ActionsOff string
}

func (s *server) servePage(w http.ResponseWriter, _ *http.Request) {
	d := pageData{Token: s.token, Pipeline: s.hub.runningPipeline()}
	s.livePage(&d)
	if s.replay != nil {
		st := s.replay.player.state(s.replay.file)
		d.Replay, d.ActionsOff, d.FaultsOff = &st, actionsOff, actionsOff
	}
	w.Header().Set("Content-Type", "text/html; charset=utf-8")
	w.Header().Set("Cache-Control", "no-store")
	w.Header().Set("Content-Security-Policy", "default-src 'self'; style-src 'self'; script-src 'self'; connect-src 'self'; img-src 'self' data:")
	if err := s.page.Execute(w, d); err != nil {
		httpError(w, http.StatusInternalServerError, err.Error())
	}
}

// checkSite refuses, with 403 and the reason, a request a browser made for a page of
// another site or origin; it reports whether the request may go on. r.Host has been
// checked: it names this server.
//
// It reads what the browser says and a page cannot forge:
//   - Sec-Fetch-Site must be same-origin, or none (the user typed the address or
//     opened a bookmark). cross-site and same-site are refused — Pitfall: another port
//     of localhost is the same site, so same-site is no safer than cross-site here.
//   - Origin, when sent, must be this server's own.
//
// A client that sends neither (curl, a script, an old browser) passes: these headers
// tell a browser's requests apart, they do not authenticate anyone.
//
// Why one exception, a top-level navigation to the page (a link to it on another
// site): the browser shows the page in its own tab, as this origin, and the linking
// page can read none of it; X-Frame-Options stops it being framed. Every other
// cross-site request — a fetch, a script tag, a frame, a link to /events — is refused.
func checkSite(w http.ResponseWriter, r *http.Request) bool {
	origin := r.Header.Get("Origin")
	switch site := r.Header.Get("Sec-Fetch-Site"); {
	case site != "" && site != "same-origin" && site != "none" && !pageNavigation(r):
		httpError(w, http.StatusForbidden, fmt.Sprintf("request from another site refused: Sec-Fetch-Site is %q; the explorer answers only its own page at http://%s/", site, r.Host))
	case origin != "" && origin != "http://"+r.Host:
		httpError(w, http.StatusForbidden, fmt.Sprintf("cross-origin request refused: Origin %q is not this page's", origin))
	default:
		return true
	}
	return false
}

// pageNavigation reports whether r is the browser opening the page itself in a tab.
func pageNavigation(r *http.Request) bool {
	return r.Method == http.MethodGet && r.URL.Path == "/" &&
		r.Header.Get("Sec-Fetch-Mode") == "navigate" && r.Header.Get("Sec-Fetch-Dest") == "document"
}

// checkAction refuses a request that is not this page's own action call, writing the
// error; it reports whether the request may go on.
func (s *server) checkAction(w http.ResponseWriter, r *http.Request) bool {
	return s.checkCaller(w, r) && s.checkLive(w, r)
}

// checkLive refuses an action on the cluster while the server replays a recording:
// there is no cluster. The replay's own controls (/api/replay) do not ask it.
func (s *server) checkLive(w http.ResponseWriter, r *http.Request) bool {
	if s.replay != nil && r.URL.Path != "/api/replay" {
		httpError(w, http.StatusConflict, strings.TrimPrefix(r.URL.Path, "/api/")+": "+actionsOff)
		return false
	}
	return true
}

// checkCaller refuses a request that is not this page's own POST of JSON with the
// page's token, writing the error; it reports whether the request may go on.
func (s *server) checkCaller(w http.ResponseWriter, r *http.Request) bool {
	switch site := r.Header.Get("Sec-Fetch-Site"); {
	case r.Method != http.MethodPost:
		w.Header().Set("Allow", http.MethodPost)
		httpError(w, http.StatusMethodNotAllowed, "actions are POST requests")
	case r.Header.Get("Origin") != "http://"+r.Host:
		httpError(w, http.StatusForbidden, fmt.Sprintf("cross-origin action refused: Origin %q is not this page's", r.Header.Get("Origin")))
	// Why stricter than checkSite: the page's fetch sends same-origin; none would be a
	// request the user made without a page (a bookmarklet), which no button does.
	case site != "" && site != "same-origin":
		httpError(w, http.StatusForbidden, fmt.Sprintf("action refused: Sec-Fetch-Site is %q; actions come only from the explorer's own page", site))
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

// maxBody bounds a request's JSON body: an action's inputs, a replay control.
const maxBody = 4 << 10

// decodeBody decodes the request's body, one JSON object of v's fields and nothing
// else, into v; on failure it answers 400 and reports false.
func decodeBody(w http.ResponseWriter, r *http.Request, v any) bool {
	dec := json.NewDecoder(http.MaxBytesReader(w, r.Body, maxBody))
	dec.DisallowUnknownFields()
	if err := dec.Decode(v); err != nil {
		httpError(w, http.StatusBadRequest, "the body must be one JSON object of the action's fields: "+err.Error())
		return false
	}
	if dec.Decode(&struct{}{}) != io.EOF {
		httpError(w, http.StatusBadRequest, "the body must be one JSON object, with nothing after it")
		return false
	}
	return true
}
