package main

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	chromedpbrowser "github.com/engine-dev/engine/plugins/chromedp"
)

// The README's examples are part of the contract: every fenced block runs as
// written, or is marked with what the test does with it instead. A marker is
// an HTML comment on the line before the fence:
//
//	<!-- readme-test: MODE (why) -->
//
// MODE is one of
//
//	parse-only  every engine and make command line in it must name commands,
//	            subcommands and flags that exist (engine CMD --help; the
//	            Makefile); the block is not run (a synopsis, or it needs an
//	            API key, a cluster, a site of the reader's)
//	with-server the block runs (sh, or python3) while `engine serve --listen
//	            127.0.0.1:0` holds the default data dir, with ENGINE_SERVER
//	            and ENGINE_TOKEN set to reach it, as in another terminal
//	output of CMD  CMD runs; the block's lines must appear, in order and
//	            together, in its stdout
//	serve       the block's engine serve command runs with port 7070 made a
//	            free one, and each "# engine: …" comment line must match a
//	            line it prints (7070 any port, … any token)
//	same-as FILE  the block is FILE (a path from the repository's root)
//	            as it is, which another test runs (an example in a language
//	            this test does not run)
//	mcp-config  an MCP host's configuration: each server in it is started as
//	            a host would (the SDK's client over its stdio, /home/me read
//	            as the test's HOME) and must list exactly the memory_* tools
//	            the section names
//
// An unmarked sh block runs with sh -e; its `make` lines are not run (they
// are what runs this test) but must name Makefile targets. Any other block
// without a marker fails the test: a new one must say how it is checked.
// The prose's code spans are checked too: `make TARGET` names a target and
// `bin/engine ...` parses.
//
// Each section runs in a fresh directory with its own HOME (so the default
// data dir is new), no ENGINE_* variable from outside but ENGINE_CHROMIUM,
// `engine` and `engine-agent` (the test binary) on PATH and as bin/engine
// and bin/engine-agent, and actions.jsonl (an action log, the reader's own
// in the examples that read one). curl reads a .curlrc in that HOME that
// makes an HTTP error status a failure.

// readmePath is the README, from this package's directory.
const readmePath = "../../README.md"

// mdBlock is one fenced block of the README.
type mdBlock struct {
	lang   string // the fence's info string
	marker string // the readme-test marker before it ("" for none)
	body   string
	line   int // of the opening fence
}

// mdSection is the text under one "## " heading (the first: above any).
type mdSection struct {
	title  string
	prose  string // the lines outside blocks
	blocks []mdBlock
}

var markerRe = regexp.MustCompile(`^<!-- readme-test: (.+?)(?: \((.*)\))? -->$`)

// parseREADME splits the README into sections and blocks; a marker not
// followed by a fence, or a fence never closed, is an error.
func parseREADME(text string) ([]mdSection, error) {
	secs := []mdSection{{title: "intro"}}
	lines := strings.Split(text, "\n")
	marker := ""
	for i := 0; i < len(lines); i++ {
		l := lines[i]
		cur := &secs[len(secs)-1]
		if m := markerRe.FindStringSubmatch(l); m != nil {
			if i+1 >= len(lines) || !strings.HasPrefix(lines[i+1], "```") {
				return nil, fmt.Errorf("README.md:%d: a readme-test marker not followed by a fence", i+1)
			}
			marker = m[1]
			continue
		}
		if strings.HasPrefix(l, "```") {
			b := mdBlock{lang: strings.TrimSpace(strings.TrimPrefix(l, "```")), marker: marker, line: i + 1}
			marker = ""
			var body []string
			for i++; i < len(lines) && lines[i] != "```"; i++ {
				body = append(body, lines[i])
			}
			if i == len(lines) {
				return nil, fmt.Errorf("README.md:%d: a fence never closed", b.line)
			}
			b.body = strings.Join(body, "\n") + "\n"
			cur.blocks = append(cur.blocks, b)
			continue
		}
		if t, ok := strings.CutPrefix(l, "## "); ok {
			secs = append(secs, mdSection{title: t})
			continue
		}
		cur.prose += l + "\n"
	}
	return secs, nil
}

// TestREADME runs the README's examples (see the comment above mdBlock).
func TestREADME(t *testing.T) {
	text, err := os.ReadFile(readmePath)
	if err != nil {
		t.Fatal(err)
	}
	secs, err := parseREADME(string(text))
	if err != nil {
		t.Fatal(err)
	}
	r := newReadmeRunner(t)
	nblocks := 0
	for _, sec := range secs {
		nblocks += len(sec.blocks)
		t.Run(sec.title, func(t *testing.T) {
			w := r.workDir(t)
			r.checkProse(t, w, sec)
			for _, b := range sec.blocks {
				t.Run(fmt.Sprintf("line%d", b.line), func(t *testing.T) { r.check(t, w, sec, b) })
			}
		})
	}
	if nblocks < 10 {
		t.Fatalf("README.md has %d fenced blocks; the parser missed some", nblocks)
	}
}

// readmeRunner holds what every section shares: the binaries, the Makefile's
// targets, and the --help of each command path, read once.
type readmeRunner struct {
	engine, agent string          // the test binary as engine and engine-agent
	targets       map[string]bool // the Makefile's
	helps         map[string]*cmdHelp
}

func newReadmeRunner(t *testing.T) *readmeRunner {
	r := &readmeRunner{targets: map[string]bool{}, helps: map[string]*cmdHelp{}}
	var err error
	if r.engine, err = exec.LookPath("engine"); err != nil {
		t.Fatal(err)
	}
	if r.agent, err = exec.LookPath("engine-agent"); err != nil {
		t.Fatal(err)
	}
	mk, err := os.ReadFile("../../Makefile")
	if err != nil {
		t.Fatal(err)
	}
	for _, m := range regexp.MustCompile(`(?m)^([A-Za-z0-9_-]+):`).FindAllStringSubmatch(string(mk), -1) {
		r.targets[m[1]] = true
	}
	return r
}

// readmeWork is a section's directory and environment.
type readmeWork struct {
	dir, home string
	env       []string
}

// actionLog is the actions.jsonl the examples read: a fill that failed and
// the click that recovered, which learning turns into a lesson.
const actionLog = `{"step": 1, "command": "goto https://shop.example/", "execution_result": "ok", "stdout": "", "stderr": ""}
{"step": 2, "command": "fill e37 padel rackets", "execution_result": "error", "stdout": "", "stderr": "element is not an input"}
{"step": 3, "command": "click e37", "execution_result": "ok", "stdout": "", "stderr": ""}
`

func (r *readmeRunner) workDir(t *testing.T) *readmeWork {
	w := &readmeWork{dir: t.TempDir()}
	w.home = filepath.Join(w.dir, "home")
	bin := filepath.Join(w.dir, "bin")
	for _, d := range []string{w.home, bin} {
		if err := os.MkdirAll(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	for name, target := range map[string]string{"engine": r.engine, "engine-agent": r.agent} {
		if err := os.Symlink(target, filepath.Join(bin, name)); err != nil {
			t.Fatal(err)
		}
	}
	files := map[string]string{
		filepath.Join(w.dir, "actions.jsonl"): actionLog,
		filepath.Join(w.home, ".curlrc"):      curlrc(),
	}
	for p, s := range files {
		if err := os.WriteFile(p, []byte(s), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	for _, v := range os.Environ() {
		k, _, _ := strings.Cut(v, "=")
		if (strings.HasPrefix(k, "ENGINE_") && k != "ENGINE_CHROMIUM") || strings.HasPrefix(k, "XDG_") || k == "HOME" || k == "PATH" {
			continue
		}
		w.env = append(w.env, v)
	}
	w.env = append(w.env, "HOME="+w.home, "PATH="+bin+string(filepath.ListSeparator)+os.Getenv("PATH"))
	return w
}

// curlrc makes curl fail on an HTTP error status, showing the problem
// body when it can (--fail-with-body is curl 7.76+), and keeps the progress
// meter out of the output.
func curlrc() string {
	out, _ := exec.Command("curl", "--version").Output()
	var major, minor int
	fmt.Sscanf(string(out), "curl %d.%d", &major, &minor)
	if major > 7 || major == 7 && minor >= 76 {
		return "fail-with-body\nsilent\nshow-error\n"
	}
	return "fail\nsilent\nshow-error\n"
}

// check checks one block as its marker says.
func (r *readmeRunner) check(t *testing.T, w *readmeWork, sec mdSection, b mdBlock) {
	mode, arg, _ := strings.Cut(b.marker, " ")
	switch {
	case mode == "" && b.lang == "sh":
		var run []string
		for _, l := range strings.Split(b.body, "\n") {
			if f := strings.Fields(l); len(f) > 0 && f[0] == "make" {
				r.checkMake(t, f[1:])
				continue
			}
			run = append(run, l)
		}
		if strings.TrimSpace(strings.Join(run, "")) != "" {
			w.run(t, b, strings.Join(run, "\n"), w.env)
		}
	case mode == "parse-only":
		n := r.checkSynopsis(t, w, b.body)
		if n == 0 {
			t.Fatalf("README.md:%d: a parse-only block with no engine command line", b.line)
		}
		t.Logf("README.md:%d: %d engine command lines parse", b.line, n)
	case mode == "with-server":
		r.withServer(t, w, func(env []string) { w.run(t, b, b.body, env) })
	case mode == "output" && strings.HasPrefix(arg, "of "):
		r.checkOutput(t, w, strings.TrimPrefix(arg, "of "), b)
	case mode == "serve":
		r.checkServe(t, w, b)
	case mode == "mcp-config" && b.lang == "json":
		r.checkMCPConfig(t, w, sec, b)
	case mode == "same-as" && arg != "":
		want, err := os.ReadFile(filepath.Join("../..", arg))
		if err != nil {
			t.Fatalf("README.md:%d: %v", b.line, err)
		}
		if strings.TrimSpace(b.body) != strings.TrimSpace(string(want)) {
			t.Fatalf("README.md:%d: the block is not %s as it is: copy the file into the block", b.line, arg)
		}
	default:
		t.Fatalf("README.md:%d: a ```%s block with marker %q: the test does not know how to check it (see readme_test.go)", b.line, b.lang, b.marker)
	}
}

// run runs a sh or python block in the section's directory; a failure
// shows the block's output.
func (w *readmeWork) run(t *testing.T, b mdBlock, script string, env []string) string {
	var cmd *exec.Cmd
	switch b.lang {
	case "sh":
		if strings.Contains(script, "curl ") {
			if _, err := exec.LookPath("curl"); err != nil {
				t.Skipf("README.md:%d: no curl on PATH", b.line)
			}
		}
		cmd = exec.Command("sh", "-e", "-c", script)
	case "python":
		py, err := exec.LookPath("python3")
		if err != nil {
			t.Skipf("README.md:%d: no python3 on PATH", b.line)
		}
		cmd = exec.Command(py, "-")
		cmd.Stdin = strings.NewReader(script)
	default:
		t.Fatalf("README.md:%d: cannot run a ```%s block", b.line, b.lang)
	}
	cmd.Dir, cmd.Env = w.dir, env
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	if err := cmd.Run(); err != nil {
		t.Fatalf("README.md:%d: the block failed: %v\nstdout:\n%s\nstderr:\n%s", b.line, err, stdout.String(), stderr.String())
	}
	return stdout.String()
}

func (r *readmeRunner) checkMake(t *testing.T, args []string) {
	targets := 0
	for _, a := range args {
		if strings.HasPrefix(a, "#") {
			break
		}
		if strings.Contains(a, "=") || strings.HasPrefix(a, "-") {
			continue
		}
		targets++
		if !r.targets[a] {
			t.Errorf("make %s: the Makefile has no target %q", strings.Join(args, " "), a)
		}
	}
	if targets == 0 {
		t.Errorf("make %s: names no target", strings.Join(args, " "))
	}
}

var inlineCode = regexp.MustCompile("`([^`\n]+)`")

// checkProse checks the commands the prose shows in `code`: make targets
// exist, and bin/engine command lines parse.
func (r *readmeRunner) checkProse(t *testing.T, w *readmeWork, sec mdSection) {
	for _, m := range inlineCode.FindAllStringSubmatch(sec.prose, -1) {
		f := strings.Fields(m[1])
		switch {
		case len(f) > 1 && f[0] == "make":
			r.checkMake(t, f[1:])
		case len(f) > 1 && (f[0] == "bin/engine" || f[0] == "./bin/engine"):
			r.checkSynopsis(t, w, m[1])
		}
	}
}

// cmdHelp is what `engine PATH --help` says about PATH.
type cmdHelp struct {
	usage []string        // the Usage: lines
	subs  map[string]bool // Available Commands
	flags map[string]bool // long and short names, local and global; true: takes a value
}

var flagLine = regexp.MustCompile(`^\s+(?:-([A-Za-z]), )?--([a-z0-9-]+)(?: (\S+))?(?:\s{2,}|$)`)

// help runs `engine PATH --help` (once per path) and parses it; ok is false
// when PATH is not a command (cobra then shows a parent's help).
func (r *readmeRunner) help(t *testing.T, w *readmeWork, path []string) (h *cmdHelp, ok bool) {
	key := strings.Join(path, " ")
	h = r.helps[key]
	if h == nil {
		cmd := exec.Command(r.engine, append(slices.Clone(path), "--help")...)
		cmd.Dir, cmd.Env = w.dir, w.env
		out, err := cmd.CombinedOutput()
		if err != nil {
			t.Fatalf("engine %s --help: %v\n%s", key, err, out)
		}
		h = &cmdHelp{subs: map[string]bool{}, flags: map[string]bool{}}
		section := ""
		for _, l := range strings.Split(string(out), "\n") {
			if l != "" && !strings.HasPrefix(l, " ") {
				section = l
				continue
			}
			switch section {
			case "Usage:":
				if s := strings.TrimSpace(l); s != "" {
					h.usage = append(h.usage, s)
				}
			case "Available Commands:":
				if f := strings.Fields(l); len(f) > 0 {
					h.subs[f[0]] = true
				}
			case "Flags:", "Global Flags:":
				if m := flagLine.FindStringSubmatch(l); m != nil {
					h.flags[m[2]] = m[3] != ""
					if m[1] != "" {
						h.flags[m[1]] = m[3] != ""
					}
				}
			}
		}
		r.helps[key] = h
	}
	want := cmdName(path)
	for _, u := range h.usage {
		if u == want || strings.HasPrefix(u, want+" ") {
			return h, true
		}
	}
	return h, false
}

// checkSynopsis checks every engine command line in text (a block or a
// code span, in synopsis notation: [optional], a|b, placeholders): its
// subcommands exist and each --flag is one the command takes. make lines
// name Makefile targets; other programs' lines are not checked.
func (r *readmeRunner) checkSynopsis(t *testing.T, w *readmeWork, text string) int {
	checked := 0
	for _, cmdline := range synopsisCommands(text) {
		words := cmdline
		for len(words) > 0 && regexp.MustCompile(`^[A-Z_][A-Z0-9_]*=`).MatchString(words[0]) {
			words = words[1:]
		}
		if len(words) == 0 {
			continue
		}
		switch words[0] {
		case "make":
			r.checkMake(t, words[1:])
			continue
		case "engine", "bin/engine", "./bin/engine":
		default:
			continue
		}
		checked++
		r.checkEngineLine(t, w, strings.Join(cmdline, " "), words[1:])
	}
	return checked
}

// checkEngineLine checks one engine command line's words (after "engine").
func (r *readmeRunner) checkEngineLine(t *testing.T, w *readmeWork, line string, words []string) {
	root, _ := r.help(t, w, nil)
	// Global flags before the command.
	for len(words) > 0 && strings.HasPrefix(words[0], "-") {
		name, _, hasValue := strings.Cut(strings.TrimLeft(words[0], "-"), "=")
		takes, ok := root.flags[name]
		if !ok {
			t.Errorf("%s: engine has no global flag %s", line, words[0])
			return
		}
		words = words[1:]
		if takes && !hasValue && len(words) > 0 {
			words = words[1:]
		}
	}
	paths := [][]string{nil}
	for len(words) > 0 {
		wd := strings.Trim(words[0], "[]")
		if wd == "" || strings.HasPrefix(wd, "-") || wd != words[0] {
			break
		}
		alts := strings.Split(wd, "|")
		var next [][]string
		for _, p := range paths {
			h, _ := r.help(t, w, p)
			n := 0
			for _, a := range alts {
				if h.subs[a] {
					n++
					next = append(next, append(slices.Clone(p), a))
				}
			}
			switch {
			case n == 0 && len(h.subs) > 0 && !takesArgs(h, p):
				t.Errorf("%s: %s has no subcommand %q", line, cmdName(p), wd)
				return
			case n != 0 && n != len(alts):
				t.Errorf("%s: %s: not every one of %q is a subcommand", line, cmdName(p), wd)
				return
			}
		}
		if next == nil {
			break
		}
		paths = next
		words = words[1:]
	}
	for _, p := range paths {
		h, ok := r.help(t, w, p)
		if !ok {
			t.Errorf("%s: %s is not a command", line, cmdName(p))
			continue
		}
		for _, wd := range words {
			for _, a := range strings.Split(strings.Trim(wd, "[]"), "|") {
				if !strings.HasPrefix(a, "-") || a == "-" {
					continue
				}
				name, _, _ := strings.Cut(strings.TrimLeft(a, "-"), "=")
				if _, ok := h.flags[name]; !ok {
					t.Errorf("%s: %s has no flag %s", line, cmdName(p), a)
				}
			}
		}
	}
}

// cmdName is the command a path names: "engine query facts".
func cmdName(path []string) string {
	return strings.Join(append([]string{"engine"}, path...), " ")
}

// takesArgs reports whether a command with subcommands also takes
// arguments of its own (its usage shows more than [flags] / [command]).
func takesArgs(h *cmdHelp, path []string) bool {
	base := cmdName(path)
	for _, u := range h.usage {
		rest := strings.TrimSpace(strings.TrimPrefix(u, base))
		if rest != "[flags]" && rest != "[command]" {
			return true
		}
	}
	return false
}

// synopsisCommands splits text into command lines of words: backslash
// continuations joined, comments and heredoc bodies dropped, `;` separating
// commands; quotes group words (and are removed).
func synopsisCommands(text string) [][]string {
	var out [][]string
	lines := strings.Split(text, "\n")
	for i := 0; i < len(lines); i++ {
		l := lines[i]
		for strings.HasSuffix(l, `\`) && i+1 < len(lines) {
			i++
			l = strings.TrimSuffix(l, `\`) + " " + lines[i]
		}
		if m := regexp.MustCompile(`<<'?(\w+)'?`).FindStringSubmatch(l); m != nil {
			for i+1 < len(lines) && lines[i+1] != m[1] {
				i++
			}
			i++
		}
		var words []string
		var cur strings.Builder
		inWord := false
		flush := func() {
			if inWord {
				words = append(words, cur.String())
			}
			cur.Reset()
			inWord = false
		}
	scan:
		for j := 0; j < len(l); j++ {
			c := l[j]
			switch {
			case c == '\'' || c == '"':
				end := strings.IndexByte(l[j+1:], c)
				if end < 0 {
					end = len(l) - j - 1
				}
				cur.WriteString(l[j+1 : j+1+end])
				inWord = true
				j += end + 1
			case c == '\\' && j+1 < len(l):
				cur.WriteByte(l[j+1])
				inWord = true
				j++
			case c == ' ' || c == '\t':
				flush()
			case c == '#' && !inWord:
				break scan
			case c == ';':
				flush()
				out = append(out, words)
				words = nil
			default:
				cur.WriteByte(c)
				inWord = true
			}
		}
		flush()
		out = append(out, words)
	}
	return out
}

// startedServer is an `engine serve` the test started.
type startedServer struct {
	cmd    *exec.Cmd
	lines  chan string // its stderr, line by line, until it closes
	exited chan error
	// stopped is set by the first stop (the test's goroutine only).
	stopped bool
	mu      sync.Mutex
	stderr  bytes.Buffer // all of it so far
}

// output is its stderr so far.
func (s *startedServer) output() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.stderr.String()
}

// startReadmeServer runs engine with args in the section's directory and reads
// its stderr until a line matches want (or it exits, or the bound passes).
func startReadmeServer(t *testing.T, w *readmeWork, env []string, want *regexp.Regexp, args ...string) (*startedServer, []string) {
	s := &startedServer{lines: make(chan string, 100), exited: make(chan error, 1)}
	s.cmd = exec.Command(filepath.Join(w.dir, "bin", "engine"), args...)
	s.cmd.Dir, s.cmd.Env = w.dir, env
	pr, pw := io.Pipe()
	s.cmd.Stderr = pw
	if err := s.cmd.Start(); err != nil {
		t.Fatal(err)
	}
	go func() {
		sc := bufio.NewScanner(pr)
		for sc.Scan() {
			s.mu.Lock()
			s.stderr.WriteString(sc.Text() + "\n")
			s.mu.Unlock()
			s.lines <- sc.Text()
		}
		close(s.lines)
	}()
	cmd := s.cmd
	go func() { err := cmd.Wait(); pw.Close(); s.exited <- err }()
	t.Cleanup(func() { s.stop(t) })
	deadline := time.After(waitForBound)
	for {
		select {
		case l, ok := <-s.lines:
			if !ok {
				t.Fatalf("engine %s ended before printing %s:\n%s", strings.Join(args, " "), want, s.output())
			}
			if m := want.FindStringSubmatch(l); m != nil {
				return s, m
			}
		case <-deadline:
			t.Fatalf("engine %s printed no line matching %s within %v:\n%s", strings.Join(args, " "), want, waitForBound, s.output())
		}
	}
}

// stop ends the server with SIGTERM and fails the test unless it exits
// cleanly; a second call does nothing.
func (s *startedServer) stop(t *testing.T) {
	if s.stopped {
		return
	}
	s.stopped = true
	cmd := s.cmd
	cmd.Process.Signal(syscall.SIGTERM)
	go func() {
		for range s.lines {
		}
	}()
	select {
	case err := <-s.exited:
		if err != nil {
			t.Errorf("engine serve after SIGTERM: %v\n%s", err, s.output())
		}
	case <-time.After(waitForBound):
		cmd.Process.Kill()
		t.Errorf("engine serve did not stop within %v of SIGTERM", waitForBound)
	}
}

var inspectorLine = regexp.MustCompile(`^engine: inspector: (http://127\.0\.0\.1:\d+)/\?token=([0-9a-f]+)$`)

// withServer runs f while engine serve holds the section's default data
// dir, listening on a free port, with ENGINE_SERVER and ENGINE_TOKEN set.
func (r *readmeRunner) withServer(t *testing.T, w *readmeWork, f func(env []string)) {
	s, m := startReadmeServer(t, w, w.env, inspectorLine, "serve", "--listen", "127.0.0.1:0")
	py, err := filepath.Abs("../../clients/python") // the Python client's package, for the blocks that import it
	if err != nil {
		t.Fatal(err)
	}
	f(append(slices.Clone(w.env), "ENGINE_SERVER="+m[1], "ENGINE_TOKEN="+m[2], "PYTHONPATH="+py))
	s.stop(t)
}

// checkOutput runs command (sh -c, in the section's directory) and wants
// the block's lines, in order and together, in its stdout.
func (r *readmeRunner) checkOutput(t *testing.T, w *readmeWork, command string, b mdBlock) {
	if strings.Contains(command, " demo") {
		if _, err := chromedpbrowser.FindChromium(os.Getenv("ENGINE_CHROMIUM")); err != nil {
			t.Skipf("README.md:%d: %s needs chromium: run scripts/install-deps.sh", b.line, command)
		}
	}
	out := w.run(t, mdBlock{lang: "sh", line: b.line}, command, w.env)
	var got []string
	for _, l := range strings.Split(out, "\n") {
		got = append(got, strings.TrimRight(l, " "))
	}
	want := strings.Split(strings.TrimSuffix(b.body, "\n"), "\n")
	for i := range got {
		if i+len(want) <= len(got) && slices.Equal(got[i:i+len(want)], want) {
			return
		}
	}
	t.Errorf("README.md:%d: the output of %s does not hold the block\nwant:\n%s\ngot:\n%s", b.line, command, b.body, out)
}

// checkServe runs the block's one engine serve line with port 7070 made a
// free one (0), and matches each "# engine: …" comment line against what
// it prints (up to the comment's own gap of 3 spaces).
func (r *readmeRunner) checkServe(t *testing.T, w *readmeWork, b mdBlock) {
	var args []string
	var wants []*regexp.Regexp
	for _, l := range strings.Split(b.body, "\n") {
		if c, ok := strings.CutPrefix(l, "# "); ok {
			c, _, _ = strings.Cut(c, "   ")
			q := regexp.QuoteMeta(strings.TrimSpace(c))
			q = strings.ReplaceAll(q, "7070", `\d+`)
			q = strings.ReplaceAll(q, "…", `[0-9a-f]+`)
			wants = append(wants, regexp.MustCompile("^"+q+"$"))
			continue
		}
		if f := strings.Fields(l); len(f) > 0 {
			if args != nil || f[0] != "engine" {
				t.Fatalf("README.md:%d: a serve block holds one engine command: %q", b.line, l)
			}
			args = f[1:]
		}
	}
	if len(args) == 0 || args[0] != "serve" || len(wants) == 0 {
		t.Fatalf("README.md:%d: a serve block is an engine serve line and the lines it prints", b.line)
	}
	for i, a := range args {
		args[i] = strings.ReplaceAll(a, ":7070", ":0")
	}
	s, _ := startReadmeServer(t, w, w.env, wants[0], args...)
	for _, want := range wants[1:] {
		found := false
		for l := range s.lines {
			if want.MatchString(l) {
				found = true
				break
			}
		}
		if !found {
			t.Errorf("README.md:%d: engine %s printed no line matching %s:\n%s", b.line, strings.Join(args, " "), want, s.output())
		}
	}
	s.stop(t)
}

var toolName = regexp.MustCompile("`(memory_[a-z0-9_]+)`")

// mcpServerConfig is one server of an MCP host's configuration.
type mcpServerConfig struct {
	Type    string            `json:"type"` // VS Code's: stdio
	Command string            `json:"command"`
	Args    []string          `json:"args"`
	Env     map[string]string `json:"env"`
}

// mcpHostConfig is an MCP host's configuration, in either form.
type mcpHostConfig struct {
	MCPServers map[string]mcpServerConfig `json:"mcpServers"`
	Servers    map[string]mcpServerConfig `json:"servers"` // VS Code's form
}

// checkPrintConfig checks that engine mcp --print-config prints, for each
// of hosts, the README's servers as they stand (the reader's install path
// for this binary's, /home/me for the test's HOME): one source for both.
func (r *readmeRunner) checkPrintConfig(t *testing.T, w *readmeWork, b mdBlock, servers map[string]mcpServerConfig, hosts ...string) {
	for name, s := range servers {
		if len(s.Args) == 0 || s.Args[0] != "mcp" {
			t.Fatalf("README.md:%d: %s: args %q do not start engine mcp", b.line, name, s.Args)
		}
		for _, host := range hosts {
			args := append([]string{"mcp", "--print-config", host}, s.Args[1:]...)
			if host == "claude-code" {
				args = append(args, "--json")
			}
			cmd := exec.Command(r.engine, args...)
			cmd.Dir, cmd.Env = w.dir, w.env
			out, err := cmd.Output()
			if err != nil {
				t.Fatalf("engine %s: %v", strings.Join(args, " "), err)
			}
			var printed mcpHostConfig
			dec := json.NewDecoder(bytes.NewReader(out))
			dec.DisallowUnknownFields()
			if err := dec.Decode(&printed); err != nil {
				t.Fatalf("engine %s: %v\n%s", strings.Join(args, " "), err, out)
			}
			got, ok := printed.MCPServers[name]
			if host == "vscode" {
				got, ok = printed.Servers[name]
			}
			if !ok || len(printed.MCPServers)+len(printed.Servers) != 1 {
				t.Errorf("README.md:%d: engine %s prints\n%s\nnot the one server %s", b.line, strings.Join(args, " "), out, name)
				continue
			}
			if !filepath.IsAbs(got.Command) || filepath.Base(got.Command) != filepath.Base(s.Command) {
				t.Errorf("README.md:%d: engine %s: command %q, want an absolute path to %s", b.line, strings.Join(args, " "), got.Command, filepath.Base(s.Command))
			}
			got.Command = s.Command
			for k, v := range got.Env {
				got.Env[k] = strings.ReplaceAll(v, w.home, "/home/me")
			}
			if g, want := fmt.Sprintf("%+v", got), fmt.Sprintf("%+v", s); g != want {
				t.Errorf("README.md:%d: engine %s prints %s; the README has %s", b.line, strings.Join(args, " "), g, want)
			}
		}
	}
}

// checkMCPConfig starts each server of an MCP host's configuration over
// stdio and wants the tools the section names, no more and no fewer.
func (r *readmeRunner) checkMCPConfig(t *testing.T, w *readmeWork, sec mdSection, b mdBlock) {
	var conf mcpHostConfig
	dec := json.NewDecoder(strings.NewReader(b.body))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&conf); err != nil || len(conf.MCPServers)+len(conf.Servers) == 0 {
		t.Fatalf("README.md:%d: not an MCP host configuration: %v", b.line, err)
	}
	r.checkPrintConfig(t, w, b, conf.MCPServers, "claude-desktop", "cursor", "claude-code")
	r.checkPrintConfig(t, w, b, conf.Servers, "vscode")
	for name, s := range conf.Servers {
		if s.Type != "stdio" {
			t.Fatalf("README.md:%d: %s: type %q, want stdio", b.line, name, s.Type)
		}
		if conf.MCPServers == nil {
			conf.MCPServers = map[string]mcpServerConfig{}
		}
		conf.MCPServers[name] = s
	}
	var named []string
	for _, m := range toolName.FindAllStringSubmatch(sec.prose, -1) {
		named = append(named, m[1])
	}
	slices.Sort(named)
	named = slices.Compact(named) // named twice is named
	if len(named) == 0 {
		t.Fatalf("the %s section names no memory_ tool", sec.title)
	}
	for name, s := range conf.MCPServers {
		exe, err := exec.LookPath(s.Command) // the test's PATH has engine on it
		if err != nil && filepath.IsAbs(s.Command) {
			// The reader's install path: the test's engine is on its PATH.
			exe, err = exec.LookPath(filepath.Base(s.Command))
		}
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		cmd := exec.Command(exe, s.Args...)
		cmd.Dir, cmd.Env = w.dir, slices.Clone(w.env)
		for k, v := range s.Env {
			cmd.Env = append(cmd.Env, k+"="+strings.ReplaceAll(v, "/home/me", w.home))
		}
		var stderr bytes.Buffer
		cmd.Stderr = &stderr
		ctx := context.Background()
		cs, err := sdk.NewClient(&sdk.Implementation{Name: "readme"}, nil).Connect(ctx, &sdk.CommandTransport{Command: cmd, TerminateDuration: hang}, nil)
		if err != nil {
			t.Fatalf("%s: %v\n%s", name, err, stderr.String())
		}
		tools, err := cs.ListTools(ctx, nil)
		if err != nil {
			t.Fatalf("%s: tools/list: %v\n%s", name, err, stderr.String())
		}
		var got []string
		for _, tl := range tools.Tools {
			if strings.HasPrefix(tl.Name, "memory_") { // the browser tools are named in prose too, but not counted
				got = append(got, tl.Name)
			}
		}
		slices.Sort(got)
		if !slices.Equal(got, named) {
			t.Errorf("%s lists the tools %v; the README names %v", name, got, named)
		}
		if err := cs.Close(); err != nil {
			t.Errorf("%s after the host closed its stdin: %v\n%s", name, err, stderr.String())
		}
		if dataDir := s.Env["ENGINE_DATA_DIR"]; dataDir != "" {
			if _, err := os.Stat(filepath.Join(strings.ReplaceAll(dataDir, "/home/me", w.home), "db")); err != nil {
				t.Errorf("%s did not use its ENGINE_DATA_DIR: %v", name, err)
			}
		}
	}
}
