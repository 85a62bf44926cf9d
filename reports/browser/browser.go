// Package browser opens a report in a real headless browser (Chromium), takes
// a screenshot of it and reads back what the page rendered.
//
// The report marks its <body> once every image has finished loading
// (data-rendered="ok" or "broken", data-images-loaded, data-images-broken); the
// browser runs the page with a virtual-time budget, so that script has run
// before the DOM is dumped. One launch does both the DOM dump and the
// screenshot. Each launch gets a fresh profile directory, removed afterwards,
// and the flags that keep Chromium off the network.
package browser

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"golang.org/x/net/html"
)

// Candidates are the executables Find looks for on PATH, in order.
var Candidates = []string{"chromium", "chromium-browser", "google-chrome", "google-chrome-stable", "chrome"}

// ErrNotFound is returned by Find when no browser is installed.
var ErrNotFound = errors.New("no headless browser found on PATH (looked for " + strings.Join(Candidates, ", ") +
	"); on Debian: apt-get install chromium")

// Find returns the path of an installed Chromium.
func Find() (string, error) {
	for _, c := range Candidates {
		if p, err := exec.LookPath(c); err == nil {
			return p, nil
		}
	}
	return "", ErrNotFound
}

// Options configure a rendering.
type Options struct {
	// Browser is the browser's executable; empty: Find.
	Browser string
	// Screenshot is the PNG to write; empty: none.
	Screenshot string
	// Width and Height are the window's size in pixels; the screenshot shows
	// this much of the page's top. Defaults 1120 and 2400.
	Width, Height int
	// Budget is the virtual time the page may run before the DOM is read.
	// Default 10s.
	Budget time.Duration
	// Timeout bounds the whole launch. Default 90s.
	Timeout time.Duration
}

func (o Options) withDefaults() Options {
	if o.Width == 0 {
		o.Width = 1120
	}
	if o.Height == 0 {
		o.Height = 2400
	}
	if o.Budget == 0 {
		o.Budget = 10 * time.Second
	}
	if o.Timeout == 0 {
		o.Timeout = 90 * time.Second
	}
	return o
}

// Page is what a browser rendered.
type Page struct {
	// DOM is the document after its scripts ran.
	DOM string
	// Overall is the text of the element with id "overall" (the verdict).
	Overall string
	// Headline is the text of the element with id "headline".
	Headline string
	// Verdicts maps each check of the verdict table to its result.
	Verdicts map[string]string
	// Images counts the <img> elements; Loaded and Broken are the counts the
	// page's script reported, Rendered its mark ("ok", "broken", or "" when
	// the script did not finish).
	Images         int
	Loaded, Broken int
	Rendered       string
}

// Render opens the HTML file at path in a headless browser and returns what
// it rendered, writing a screenshot when o.Screenshot is set.
func Render(path string, o Options) (Page, error) {
	o = o.withDefaults()
	if o.Browser == "" {
		b, err := Find()
		if err != nil {
			return Page{}, err
		}
		o.Browser = b
	}
	abs, err := filepath.Abs(path)
	if err != nil {
		return Page{}, fmt.Errorf("render %s: %w", path, err)
	}
	profile, err := os.MkdirTemp("", "locklab-browser-*")
	if err != nil {
		return Page{}, fmt.Errorf("render %s: %w", path, err)
	}
	defer os.RemoveAll(profile)
	args := []string{"--headless", "--no-sandbox", "--disable-gpu", "--no-first-run",
		"--disable-background-networking", "--disable-component-update", "--disable-sync", "--disable-quic",
		"--user-data-dir=" + profile, "--hide-scrollbars", "--run-all-compositor-stages-before-draw",
		fmt.Sprintf("--window-size=%d,%d", o.Width, o.Height),
		fmt.Sprintf("--virtual-time-budget=%d", o.Budget.Milliseconds()), "--dump-dom"}
	if o.Screenshot != "" {
		shot, err := filepath.Abs(o.Screenshot)
		if err != nil {
			return Page{}, fmt.Errorf("render %s: %w", path, err)
		}
		args = append(args, "--screenshot="+shot)
	}
	args = append(args, "file://"+abs)
	ctx, cancel := context.WithTimeout(context.Background(), o.Timeout)
	defer cancel()
	cmd := exec.CommandContext(ctx, o.Browser, args...)
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	if err := cmd.Run(); err != nil {
		return Page{}, fmt.Errorf("render %s with %s: %w\n%s", path, o.Browser, err, lastLines(stderr.String(), 8))
	}
	if o.Screenshot != "" {
		if st, err := os.Stat(o.Screenshot); err != nil || st.Size() == 0 {
			return Page{}, fmt.Errorf("render %s with %s: no screenshot written to %s\n%s", path, o.Browser, o.Screenshot, lastLines(stderr.String(), 8))
		}
	}
	return Inspect(stdout.String())
}

// Inspect reads what a rendered report shows from its DOM.
func Inspect(dom string) (Page, error) {
	doc, err := html.Parse(strings.NewReader(dom))
	if err != nil {
		return Page{}, fmt.Errorf("parse the rendered DOM: %w", err)
	}
	p := Page{DOM: dom, Verdicts: map[string]string{}}
	for n := range doc.Descendants() {
		if n.Type != html.ElementNode {
			continue
		}
		switch {
		case n.Data == "body":
			p.Rendered = attr(n, "data-rendered")
			p.Loaded, _ = strconv.Atoi(attr(n, "data-images-loaded"))
			p.Broken, _ = strconv.Atoi(attr(n, "data-images-broken"))
		case n.Data == "img":
			p.Images++
		case attr(n, "id") == "overall":
			p.Overall = strings.TrimSpace(textOf(n))
		case attr(n, "id") == "headline":
			p.Headline = strings.TrimSpace(textOf(n))
		case n.Data == "tr" && attr(n, "data-check") != "":
			p.Verdicts[attr(n, "data-check")] = attr(n, "data-result")
		}
	}
	return p, nil
}

func attr(n *html.Node, key string) string {
	for _, a := range n.Attr {
		if a.Key == key {
			return a.Val
		}
	}
	return ""
}

func textOf(n *html.Node) string {
	var b strings.Builder
	for d := range n.Descendants() {
		if d.Type == html.TextNode {
			b.WriteString(d.Data)
		}
	}
	return b.String()
}

// lastLines keeps the last n lines of s, for error messages.
func lastLines(s string, n int) string {
	lines := strings.Split(strings.TrimRight(s, "\n"), "\n")
	if len(lines) > n {
		lines = lines[len(lines)-n:]
	}
	return strings.Join(lines, "\n")
}
